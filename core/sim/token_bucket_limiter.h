// Token bucket: capacity `burst` (default: limit), refilled at limit/window per second.
// Remaining = whole tokens in the bucket (capped at limit); reset = until the bucket is full.
#pragma once

#include "sim_limiter.h"

namespace tg {

class TokenBucketLimiter final : public SimLimiter {
 public:
  TokenBucketLimiter(const LimiterParams& p, TimePoint now);
  LimitDecision check(double cost, TimePoint now) override;
  void consume(double cost, TimePoint now) override;
  void setLimit(double limit, TimePoint now) override;
  double limit() const override { return limit_; }

 private:
  void refill(TimePoint now);

  double limit_, windowS_, capacity_;
  double level_;
  TimePoint last_;
};

}  // namespace tg
