#include "token_bucket_limiter.h"

#include <algorithm>
#include <cmath>

namespace tg {

TokenBucketLimiter::TokenBucketLimiter(const LimiterParams& p, TimePoint now)
    : limit_(p.limit), windowS_(p.windowS), capacity_(p.burst > 0 ? p.burst : p.limit),
      level_(capacity_), last_(now) {}

void TokenBucketLimiter::refill(TimePoint now) {
  if (now <= last_) return;  // backwards or same instant: nothing accrues
  level_ = std::min(capacity_, level_ + limit_ / windowS_ * toSeconds(now - last_));
  last_ = now;
}

LimitDecision TokenBucketLimiter::check(double cost, TimePoint now) {
  refill(now);
  const double rate = limit_ / windowS_;
  LimitDecision d;
  d.limit = limit_;
  d.remaining = std::clamp(std::floor(level_ + 1e-9), 0.0, limit_);
  d.resetInS = std::max(0.0, (capacity_ - level_) / rate);
  d.allowed = level_ + 1e-9 >= cost;
  if (!d.allowed) d.retryAfterS = cost > capacity_ + 1e-9 ? kNever : (cost - level_) / rate;
  return d;
}

void TokenBucketLimiter::consume(double cost, TimePoint now) {
  refill(now);
  level_ = std::max(0.0, level_ - cost);
}

void TokenBucketLimiter::setLimit(double limit, TimePoint now) {
  refill(now);
  // Keep what has been used, not what is left: a quota drop bites immediately, as with the windows.
  const double used = capacity_ - level_;
  capacity_ = std::max(1.0, capacity_ * limit / limit_);  // a whole request still fits
  limit_ = limit;
  level_ = std::clamp(capacity_ - used, 0.0, capacity_);
}

}  // namespace tg
