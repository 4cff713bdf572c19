// AIMD concurrency limit beneath an operator-set ceiling: grows by one per "window" of successes while
// healthy, shrinks multiplicatively on 429s and on latency growth (queueing upstream), never below the
// minimum nor above the ceiling. Decreases are spaced so one burst of 429s counts once.
// Time is an argument; not thread-safe.
#pragma once

#include "types.h"

namespace tg {

class AdaptiveConcurrency {
 public:
  AdaptiveConcurrency(int ceiling, int minimum, bool adaptive, TimePoint now);

  int limit() const { return adaptive_ ? static_cast<int>(limit_) : ceiling_; }
  int ceiling() const { return ceiling_; }
  void setCeiling(int ceiling);
  void setAdaptive(bool on) { adaptive_ = on; }

  void onSuccess(double latencyS, TimePoint now);
  void onRateLimited(TimePoint now);  // a 429 the quota picture did not predict
  void onOverload(TimePoint now);     // 5xx / timeout

 private:
  void decrease(double factor, TimePoint now);
  int ceiling_;
  int minimum_;
  bool adaptive_;
  double limit_;
  double longLatencyS_ = 0;   // slow EWMA: what latency normally is
  double shortLatencyS_ = 0;  // fast EWMA: what it is now
  long samples_ = 0;
  TimePoint lastDecrease_{};
};

}  // namespace tg
