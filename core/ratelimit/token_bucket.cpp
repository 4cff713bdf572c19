#include "token_bucket.h"

#include <algorithm>

namespace tg {

TokenBucket::TokenBucket(double ratePerS, double burst, TimePoint now)
    : rate_(ratePerS), burst_(burst), level_(burst), last_(now) {}

void TokenBucket::configure(double ratePerS, double burst, TimePoint now) {
  if (rate_ <= 0) {
    level_ = burst;
    last_ = now;
  } else {
    refill(now);
  }
  rate_ = ratePerS;
  burst_ = burst;
  level_ = std::min(level_, burst_);
}

void TokenBucket::refill(TimePoint now) {
  if (now <= last_) return;  // backwards or same instant: nothing accrues
  level_ = std::min(burst_, level_ + rate_ * toSeconds(now - last_));
  last_ = now;
}

double TokenBucket::level(TimePoint now) {
  refill(now);
  return level_;
}

bool TokenBucket::tryAcquire(double cost, TimePoint now) {
  if (rate_ <= 0) return true;
  refill(now);
  const double need = std::min(cost, burst_);
  if (level_ + 1e-9 < need) return false;
  level_ -= cost;
  return true;
}

void TokenBucket::charge(double cost, TimePoint now) {
  if (rate_ <= 0) return;
  refill(now);
  level_ -= cost;
}

Duration TokenBucket::timeUntil(double cost, TimePoint now) {
  if (rate_ <= 0) return Duration::zero();
  refill(now);
  const double need = std::min(cost, burst_);
  if (level_ + 1e-9 >= need) return Duration::zero();
  return fromSeconds((need - level_) / rate_);
}

void TokenBucket::refund(double amount, TimePoint now) {
  if (rate_ <= 0 || amount <= 0) return;
  refill(now);
  level_ = std::min(burst_, level_ + amount);
}

}  // namespace tg
