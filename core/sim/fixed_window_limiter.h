// Fixed window: at most `limit` units per window; windows start at the limiter's creation and follow
// back to back (GitHub-style). Reset = end of the current window.
#pragma once

#include "sim_limiter.h"

namespace tg {

class FixedWindowLimiter final : public SimLimiter {
 public:
  FixedWindowLimiter(const LimiterParams& p, TimePoint now);
  LimitDecision check(double cost, TimePoint now) override;
  void consume(double cost, TimePoint now) override;
  void setLimit(double limit, TimePoint now) override;
  double limit() const override { return limit_; }

 private:
  void advance(TimePoint now);

  double limit_;
  Duration window_;
  TimePoint windowStart_;
  double used_ = 0;
};

}  // namespace tg
