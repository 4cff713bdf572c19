// Sliding window, weighted two-window counter (as used by Cloudflare and many gateways): the estimate is
// previous_window_count * (share of the previous window still inside the sliding window) + current count.
// Reset = when the estimate will have drained to zero.
#pragma once

#include "sim_limiter.h"

namespace tg {

class SlidingWindowLimiter final : public SimLimiter {
 public:
  SlidingWindowLimiter(const LimiterParams& p, TimePoint now);
  LimitDecision check(double cost, TimePoint now) override;
  void consume(double cost, TimePoint now) override;
  void setLimit(double limit, TimePoint now) override;
  double limit() const override { return limit_; }

 private:
  void advance(TimePoint now);
  double elapsedS(TimePoint now) const;  // in the current window, clamped to [0, window)

  double limit_;
  double windowS_;
  Duration window_;
  TimePoint currentStart_;
  double previous_ = 0, current_ = 0;
};

}  // namespace tg
