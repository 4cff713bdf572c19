#include "alert_policy.h"

#include <algorithm>

namespace tg::ui {

std::optional<AlertNotice> AlertPolicy::notice(AlertKind kind, const Event& e, GroupAlerts& g) {
  const auto i = static_cast<std::size_t>(kind);
  if (!enabled_[i]) return std::nullopt;
  if (g.noticed[i] && e.tsMs - g.lastNoticeMs[i] < kRepeatMs && e.tsMs >= g.lastNoticeMs[i]) return std::nullopt;
  g.noticed[i] = true;
  g.lastNoticeMs[i] = e.tsMs;
  return AlertNotice{kind, e.tsMs, e.group};
}

std::optional<AlertNotice> AlertPolicy::onEvent(const Event& e) {
  GroupAlerts& g = groups_[e.group];
  switch (e.kind) {
    case EventKind::Burst429Start:
      g.bursting = true;
      return notice(AlertKind::Incident, e, g);
    case EventKind::Burst429End:
      g.bursting = false;
      return std::nullopt;
    case EventKind::BreakerTransition: {
      const bool open = e.detail.is_object() && e.detail.value("to", std::string()) == "open";
      const bool wasOpen = g.breakerOpen;
      g.breakerOpen = open;
      return open && !wasOpen ? notice(AlertKind::BreakerOpen, e, g) : std::nullopt;
    }
    case EventKind::QuotaExhausted: {
      const EpochMs until = e.detail.is_object() ? e.detail.value("until_ms", EpochMs{0}) : 0;
      // An exhaustion that named no time is shown for a minute.
      const EpochMs shownUntil = until > e.tsMs ? until : e.tsMs + kRepeatMs;
      const bool fresh = g.exhaustedUntilMs <= e.tsMs;
      g.exhaustedUntilMs = std::max(g.exhaustedUntilMs, shownUntil);
      return fresh ? notice(AlertKind::QuotaExhausted, e, g) : std::nullopt;
    }
    case EventKind::EngineStart:
    case EventKind::EngineStop:
      clear();
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

AlertLevel AlertPolicy::level(EpochMs nowMs, std::string* group) const {
  AlertLevel worst = AlertLevel::Fine;
  std::string where;
  for (const auto& [name, g] : groups_) {
    AlertLevel l = AlertLevel::Fine;
    if (g.exhaustedUntilMs > nowMs) l = AlertLevel::QuotaExhausted;
    else if (g.breakerOpen) l = AlertLevel::BreakerOpen;
    else if (g.bursting) l = AlertLevel::RateLimited;
    if (l > worst) {
      worst = l;
      where = name;
    }
  }
  if (group) *group = where;
  return worst;
}

void AlertPolicy::clear() { groups_.clear(); }

}  // namespace tg::ui
