#include "fixed_window_limiter.h"

#include <algorithm>
#include <cmath>

namespace tg {

FixedWindowLimiter::FixedWindowLimiter(const LimiterParams& p, TimePoint now)
    : limit_(p.limit), window_(fromSeconds(p.windowS)), windowStart_(now) {}

void FixedWindowLimiter::advance(TimePoint now) {
  if (now < windowStart_ + window_) return;  // includes time going backwards: same window
  const auto passed = (now - windowStart_) / window_;
  windowStart_ += passed * window_;
  used_ = 0;
}

LimitDecision FixedWindowLimiter::check(double cost, TimePoint now) {
  advance(now);
  now = std::max(now, windowStart_);
  LimitDecision d;
  d.limit = limit_;
  d.remaining = std::max(0.0, std::floor(limit_ - used_ + 1e-9));
  d.resetInS = toSeconds(windowStart_ + window_ - now);
  d.allowed = used_ + cost <= limit_ + 1e-9;
  if (!d.allowed) d.retryAfterS = cost > limit_ + 1e-9 ? kNever : d.resetInS;
  return d;
}

void FixedWindowLimiter::consume(double cost, TimePoint now) {
  advance(now);
  used_ += cost;
}

void FixedWindowLimiter::setLimit(double limit, TimePoint now) {
  advance(now);
  limit_ = limit;
}

}  // namespace tg
