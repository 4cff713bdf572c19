// A group's 429 bursts: when one starts, how many it held, its peak per second, when it went quiet.
// Returns the events to emit instead of emitting them, so it is tested with hand-set time.
#pragma once

#include "event.h"
#include "quota_reading.h"
#include "quota_verdict.h"
#include "types.h"

#include <optional>
#include <string>

namespace tg {

// An event for the engine to emit (kind, severity, message, detail) and the log line that goes with it.
struct BurstEvent {
  EventKind kind = EventKind::Burst429Start;
  Severity severity = Severity::Info;
  std::string message;
  nlohmann::json detail = nlohmann::json::object();
  std::string logLine;
  bool logAsWarning = false;
};

// Not thread-safe: one per group, used on the engine thread.
class BurstTracker {
 public:
  static constexpr double kQuietS = 2;  // a burst ends after this long without a rate-limited response

  // A rate-limited response at `now`. Returns the start event when it opens a burst.
  std::optional<BurstEvent> onRateLimited(const QuotaReading& reading, const QuotaVerdict& verdict, TimePoint now);
  // Returns the end event once `now` is more than kQuietS past the last rate-limited response.
  std::optional<BurstEvent> sweep(TimePoint now);

  bool active() const { return active_; }
  int count() const { return count_; }
  int peakPerSecond() const { return peak_; }

 private:
  bool active_ = false;
  TimePoint start_{}, last_{}, secondStart_{};
  int count_ = 0, secondCount_ = 0, peak_ = 0;
};

}  // namespace tg
