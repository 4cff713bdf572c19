// Generic cell rate algorithm (as in redis-cell / Stripe): one "theoretical arrival time" per key.
// Emission interval T = window/limit; a request of cost n passes when max(TAT, now) + n*T - now <= burst*T.
// Reset = until TAT (fully replenished).
#pragma once

#include "sim_limiter.h"

namespace tg {

class GcraLimiter final : public SimLimiter {
 public:
  GcraLimiter(const LimiterParams& p, TimePoint now);
  LimitDecision check(double cost, TimePoint now) override;
  void consume(double cost, TimePoint now) override;
  void setLimit(double limit, TimePoint now) override;
  double limit() const override { return limit_; }

 private:
  double intervalS() const { return windowS_ / limit_; }

  double limit_, windowS_, burst_;
  double tatS_ = 0;          // theoretical arrival time, seconds since origin_
  TimePoint origin_, latest_;
};

}  // namespace tg
