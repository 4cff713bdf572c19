#include "alert_policy.h"

#include <algorithm>

namespace tg::ui {

std::optional<AlertNotice> AlertPolicy::notice(AlertKind kind, const Event& e, GroupAlerts& g, EpochMs quietSinceMs) {
  const auto i = static_cast<std::size_t>(kind);
  if (!enabled_[i]) return std::nullopt;
  // Time going backwards (a clock step) never silences alerts for good.
  const bool clockStepped = g.noticed[i] && e.tsMs < g.lastNoticeMs[i];
  if (g.noticed[i] && !clockStepped && e.tsMs - quietSinceMs < kRepeatMs) return std::nullopt;  // the same incident
  g.noticed[i] = true;
  g.lastNoticeMs[i] = e.tsMs;
  const auto recent = [&](EpochMs at) { return e.tsMs >= at && e.tsMs - at < kCoalesceMs; };
  // Folded: the same kind was shown lately for another group (the tooltip counts the groups), or a more severe kind
  // came lately for this one (its 429s came with its exhausted quota). A lesser kind elsewhere is news.
  if (lastShownMs_[i] && recent(*lastShownMs_[i])) return std::nullopt;
  for (std::size_t j = i + 1; j < g.noticed.size(); ++j)
    if (g.noticed[j] && recent(g.lastNoticeMs[j])) return std::nullopt;
  lastShownMs_[i] = e.tsMs;
  return AlertNotice{kind, e.tsMs, e.group};
}

std::optional<AlertNotice> AlertPolicy::onEvent(const Event& e) {
  GroupAlerts& g = groups_[e.group];
  auto& active = g.lastActiveMs;
  switch (e.kind) {
    case EventKind::Burst429Start: {
      const EpochMs quietSince = active[0];
      g.bursting = true;
      active[0] = e.tsMs;
      return notice(AlertKind::Incident, e, g, quietSince);
    }
    case EventKind::Burst429End:
      g.bursting = false;
      active[0] = e.tsMs;
      return std::nullopt;
    case EventKind::BreakerTransition: {
      // Half-open is still not serving: its probes may time out for as long as the upstream hangs.
      const std::string to = e.detail.is_object() ? e.detail.value("to", std::string("closed")) : "closed";
      const bool was = g.breakerOpen;
      const EpochMs quietSince = active[1];
      g.breakerOpen = to != "closed";
      active[1] = e.tsMs;
      return to == "open" && !was ? notice(AlertKind::BreakerOpen, e, g, quietSince) : std::nullopt;
    }
    case EventKind::QuotaExhausted: {
      const EpochMs until = e.detail.is_object() ? e.detail.value("until_ms", EpochMs{0}) : 0;
      // An exhaustion that named no time is shown for a minute.
      const EpochMs shownUntil = until > e.tsMs ? until : e.tsMs + kRepeatMs;
      const bool fresh = g.exhaustedUntilMs <= e.tsMs;
      const EpochMs quietSince = std::max(active[2], std::min(g.exhaustedUntilMs, e.tsMs));
      g.exhaustedUntilMs = std::max(g.exhaustedUntilMs, shownUntil);
      active[2] = e.tsMs;
      return fresh ? notice(AlertKind::QuotaExhausted, e, g, quietSince) : std::nullopt;
    }
    case EventKind::EngineStart:
    case EventKind::EngineStop:
      clear();
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

AlertLevel AlertPolicy::level(EpochMs nowMs, std::string* group, int* groups) const {
  AlertLevel worst = AlertLevel::Fine;
  std::string where;
  int count = 0;
  for (const auto& [name, g] : groups_) {
    AlertLevel l = AlertLevel::Fine;
    if (g.exhaustedUntilMs > nowMs) l = AlertLevel::QuotaExhausted;
    else if (g.breakerOpen) l = AlertLevel::BreakerOpen;
    else if (g.bursting) l = AlertLevel::RateLimited;
    if (l > worst) {
      worst = l;
      where = name;
      count = 0;
    }
    if (l == worst && l != AlertLevel::Fine) ++count;
  }
  if (group) *group = where;
  if (groups) *groups = count;
  return worst;
}

void AlertPolicy::clear() {
  groups_.clear();
  lastShownMs_.fill(std::nullopt);
}

}  // namespace tg::ui
