// A token bucket that takes time as an argument. Not thread-safe: owned by the engine loop.
// Time going backwards is treated as no time passing; the level never exceeds the burst.
#pragma once

#include "types.h"

namespace tg {

class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(double ratePerS, double burst, TimePoint now);

  // Changes rate/burst, keeping the current level (clamped to the new burst).
  void configure(double ratePerS, double burst, TimePoint now);
  bool configured() const { return rate_ > 0; }
  double rate() const { return rate_; }
  double burst() const { return burst_; }

  // Takes `cost` if available. A cost larger than the burst is allowed once the bucket is full
  // (the level goes negative: debt repaid by later refill), so huge requests are slow, not stuck.
  bool tryAcquire(double cost, TimePoint now);
  // Takes `cost` whatever the level: what was spent already (the level may go below zero, a debt the next
  // acquisitions wait out).
  void charge(double cost, TimePoint now);
  // Time until tryAcquire(cost) would succeed; zero if it would now. Unconfigured buckets never wait.
  Duration timeUntil(double cost, TimePoint now);
  void refund(double amount, TimePoint now);  // gives back an over-estimate (clamped to burst)
  double level(TimePoint now);

 private:
  void refill(TimePoint now);
  double rate_ = 0;   // tokens per second; 0 = unconfigured (always allows)
  double burst_ = 0;
  double level_ = 0;
  TimePoint last_{};
};

}  // namespace tg
