#include "burst_tracker.h"

#include <algorithm>

namespace tg {

std::optional<BurstEvent> BurstTracker::onRateLimited(const QuotaReading& r, const QuotaVerdict& v, TimePoint now) {
  if (now - secondStart_ > std::chrono::seconds(1)) {
    secondStart_ = now;
    secondCount_ = 0;
  }
  ++secondCount_;
  peak_ = std::max(peak_, secondCount_);
  last_ = now;
  ++count_;
  if (active_) return std::nullopt;
  active_ = true;
  start_ = now;
  count_ = 1;
  peak_ = 1;

  const std::string cls(verdictClassName(v.classification));
  BurstEvent e;
  e.kind = EventKind::Burst429Start;
  e.detail = {{"classification", cls}, {"reason", v.reason}};
  if (r.retryAfterS) e.detail["retry_after_s"] = *r.retryAfterS;
  for (const auto& s : r.scopes) {
    if (s.resetInS) e.detail["reset_in_s"] = *s.resetInS;
    if (known(s.remaining)) e.detail["remaining"] = s.remaining;
    if (known(s.limit)) e.detail["limit"] = s.limit;
    if (s.dimension == Dimension::Requests) break;
  }
  const bool exhausted = v.classification == VerdictClass::QuotaExhausted;
  e.severity = exhausted ? Severity::Warn : Severity::Info;
  const std::string reason = v.reason.empty() ? "" : ": " + v.reason;
  e.message = std::string("429 ") +
              (exhausted ? "quota exhausted" : v.classification == VerdictClass::Burst ? "burst" : "(no quota headers)") +
              reason;
  e.logLine = "429 " + cls + reason;
  e.logAsWarning = exhausted;
  return e;
}

std::optional<BurstEvent> BurstTracker::sweep(TimePoint now) {
  if (!active_ || now - last_ <= fromSeconds(kQuietS)) return std::nullopt;
  active_ = false;
  const double dur = toSeconds(last_ - start_);
  BurstEvent e;
  e.kind = EventKind::Burst429End;
  e.severity = Severity::Info;
  e.message = "429 burst over: " + std::to_string(count_) + " in " + std::to_string(static_cast<int>(dur + 0.5)) +
              " s, peak " + std::to_string(peak_) + "/s";
  e.detail = {{"count", count_}, {"duration_s", dur}, {"peak_per_s", peak_}};
  e.logLine = "429 burst ended: " + std::to_string(count_) + " responses";
  return e;
}

}  // namespace tg
