#include "gcra_limiter.h"

#include <algorithm>
#include <cmath>

namespace tg {

GcraLimiter::GcraLimiter(const LimiterParams& p, TimePoint now)
    : limit_(p.limit), windowS_(p.windowS), burst_(p.burst > 0 ? p.burst : p.limit), origin_(now),
      latest_(now) {}

LimitDecision GcraLimiter::check(double cost, TimePoint now) {
  latest_ = std::max(latest_, now);  // time going backwards counts as no time passed
  const double t = toSeconds(latest_ - origin_);
  const double T = intervalS();
  const double tolerance = burst_ * T;
  const double tat = std::max(tatS_, t);
  LimitDecision d;
  d.limit = limit_;
  d.remaining = std::clamp(std::floor((tolerance - (tat - t)) / T + 1e-9), 0.0, limit_);
  d.resetInS = tat - t;
  const double newTat = tat + cost * T;
  d.allowed = newTat - t <= tolerance + 1e-9;
  if (!d.allowed) d.retryAfterS = cost > burst_ + 1e-9 ? kNever : newTat - tolerance - t;
  return d;
}

void GcraLimiter::consume(double cost, TimePoint now) {
  latest_ = std::max(latest_, now);
  const double t = toSeconds(latest_ - origin_);
  tatS_ = std::max(tatS_, t) + cost * intervalS();
}

void GcraLimiter::setLimit(double limit, TimePoint now) {
  // Keep the backlog in units (not in time), so a quota drop bites immediately, as with the windows.
  latest_ = std::max(latest_, now);
  const double t = toSeconds(latest_ - origin_);
  const double usedUnits = std::max(0.0, tatS_ - t) / intervalS();
  burst_ = std::max(1.0, burst_ * limit / limit_);  // a whole request still fits
  limit_ = limit;
  tatS_ = t + usedUnits * intervalS();
}

}  // namespace tg
