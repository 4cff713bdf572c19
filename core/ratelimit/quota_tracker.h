// The quota picture of one API key: what the upstream last said per dimension (limit, remaining,
// reset), what we predict from it (remaining minus what we sent since, replenished at the reset),
// a local token bucket at a fraction of the known rate, and any server-directed block (Retry-After).
// Answers "can `cost` go now, and if not, when and why". Time is an argument; not thread-safe.
#pragma once

#include "quota_reading.h"
#include "snapshot.h"
#include "token_bucket.h"

#include <array>
#include <optional>
#include <string>

namespace tg {

struct QuotaWait {
  Duration wait = Duration::zero();  // zero = may send now
  std::string reason;                // "Retry-After until 12:03:41", "tokens: 3.2 s", "requests: reset in 0.4 s"
  bool exhausted = false;            // blocked beyond the cap (daily quota): surfaced, not retried early
};

struct QuotaChange {
  Dimension dimension;
  double before, after;
};

class QuotaTracker {
 public:
  // configuredPerMinute: per-dimension quota known from config (0 = learn from headers).
  QuotaTracker(double bucketFraction, std::array<double, kDimensionCount> configuredPerMinute, TimePoint now);

  QuotaWait check(std::array<double, kDimensionCount> cost, TimePoint now, EpochMs nowEpoch);
  void onSend(std::array<double, kDimensionCount> cost, TimePoint now);

  // Applies what a response said. `inFlightOthers`: requests on this key still in flight, which the
  // server may not have counted yet. Returns a limit change worth an event, if any.
  std::optional<QuotaChange> onResponse(const QuotaReading& r, int inFlightOthers, TimePoint now,
                                        EpochMs nowEpoch);
  // Server-directed wait (Retry-After or an exhausted window). exhausted: beyond the cap.
  void blockUntil(TimePoint until, EpochMs untilEpoch, std::string why, bool exhausted);
  // A bare 429 (nothing said): back off min(cap, base * 2^n) for the n-th in a row.
  Duration onBare429(double baseS, double capS, TimePoint now, EpochMs nowEpoch);
  void onSuccess() { consecutiveBare429_ = 0; }
  void refund(Dimension d, double amount, TimePoint now);

  DimensionState state(Dimension d, TimePoint now);
  // Capacity left for ordering keys: the smaller of the request-dimension estimates (or bucket).
  double headroom(TimePoint now);
  TimePoint blockedUntil() const { return blockedUntil_; }
  bool exhausted(TimePoint now) const { return exhausted_ && now < blockedUntil_; }

 private:
  struct Dim {
    double limit = kUnknown;
    double remaining = kUnknown;  // estimate: reported minus what we sent since
    bool hasReset = false;
    TimePoint resetAt{};
    EpochMs resetAtEpochMs = 0;
    double windowS = 0;       // 0 = unknown
    double maxResetInS = 0;   // longest reset seen: an estimate of the window when none is reported
    bool windowReported = false;
    double configuredPerMinute = 0;
    TokenBucket bucket;
  };
  void retuneBucket(Dim& d, TimePoint now);
  static const QuotaScope* pick(const QuotaReading& r, Dimension d);

  double fraction_;
  std::array<Dim, kDimensionCount> dims_;
  TimePoint blockedUntil_{};
  EpochMs blockedUntilEpoch_ = 0;
  std::string blockReason_;
  bool exhausted_ = false;
  int consecutiveBare429_ = 0;
};

// "12:03:41" in UTC, for wait reasons.
std::string formatClock(EpochMs ms);

}  // namespace tg
