#include "sliding_window_limiter.h"

#include <algorithm>
#include <cmath>

namespace tg {

SlidingWindowLimiter::SlidingWindowLimiter(const LimiterParams& p, TimePoint now)
    : limit_(p.limit), windowS_(p.windowS), window_(fromSeconds(p.windowS)), currentStart_(now) {}

void SlidingWindowLimiter::advance(TimePoint now) {
  if (now < currentStart_ + window_) return;  // includes time going backwards
  const auto passed = (now - currentStart_) / window_;
  previous_ = passed == 1 ? current_ : 0;
  current_ = 0;
  currentStart_ += passed * window_;
}

double SlidingWindowLimiter::elapsedS(TimePoint now) const {
  return std::clamp(toSeconds(now - currentStart_), 0.0, windowS_);
}

LimitDecision SlidingWindowLimiter::check(double cost, TimePoint now) {
  advance(now);
  const double e = elapsedS(now);
  const double weight = 1.0 - e / windowS_;
  const double estimate = previous_ * weight + current_;
  LimitDecision d;
  d.limit = limit_;
  d.remaining = std::max(0.0, std::floor(limit_ - estimate + 1e-9));
  // Drained: the previous window's share is gone at the end of this window, the current one's a window later.
  d.resetInS = current_ > 0 ? (windowS_ - e) + windowS_ : (previous_ > 0 ? windowS_ - e : 0);
  d.allowed = estimate + cost <= limit_ + 1e-9;
  if (d.allowed) return d;
  if (cost > limit_ + 1e-9) {
    d.retryAfterS = kNever;
  } else if (current_ + cost <= limit_ + 1e-9) {
    // Wait inside this window until the previous window's weight has shrunk enough.
    const double t = windowS_ * (1.0 - (limit_ - current_ - cost) / previous_);
    d.retryAfterS = std::max(0.0, t - e);
  } else {
    // Wait for the next window, then until this window's count (then "previous") has shrunk enough.
    const double t = windowS_ * std::max(0.0, 1.0 - (limit_ - cost) / current_);
    d.retryAfterS = (windowS_ - e) + t;
  }
  return d;
}

void SlidingWindowLimiter::consume(double cost, TimePoint now) {
  advance(now);
  current_ += cost;
}

void SlidingWindowLimiter::setLimit(double limit, TimePoint now) {
  advance(now);
  limit_ = limit;
}

}  // namespace tg
