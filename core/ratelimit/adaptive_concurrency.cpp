#include "adaptive_concurrency.h"

#include <algorithm>

namespace tg {
namespace {
constexpr double kBackoff429 = 0.7;
constexpr double kBackoffLatency = 0.9;
constexpr double kLatencyGrowth = 2.0;  // short-term latency this many times the long-term = queueing
constexpr double kLongAlpha = 0.01;
constexpr double kShortAlpha = 0.1;
constexpr long kMinSamples = 50;
constexpr double kMinDecreaseSpacingS = 1.0;
}  // namespace

AdaptiveConcurrency::AdaptiveConcurrency(int ceiling, int minimum, bool adaptive, TimePoint now)
    : ceiling_(std::max(1, ceiling)), minimum_(std::max(1, std::min(minimum, ceiling))),
      adaptive_(adaptive), limit_(std::max(1, ceiling)) {
  lastDecrease_ = now - fromSeconds(kMinDecreaseSpacingS);
}

void AdaptiveConcurrency::setCeiling(int ceiling) {
  const int old = ceiling_;
  ceiling_ = std::max(1, ceiling);
  minimum_ = std::min(minimum_, ceiling_);
  // Raising the ceiling lets the adaptive limit climb from where it is; lowering clamps it at once.
  if (ceiling_ < old || limit_ > ceiling_) limit_ = std::min<double>(limit_, ceiling_);
  if (!adaptive_) limit_ = ceiling_;
}

void AdaptiveConcurrency::onSuccess(double latencyS, TimePoint now) {
  if (latencyS > 0) {
    ++samples_;
    longLatencyS_ = longLatencyS_ <= 0 ? latencyS : (1 - kLongAlpha) * longLatencyS_ + kLongAlpha * latencyS;
    shortLatencyS_ = shortLatencyS_ <= 0 ? latencyS : (1 - kShortAlpha) * shortLatencyS_ + kShortAlpha * latencyS;
    if (samples_ >= kMinSamples && shortLatencyS_ > kLatencyGrowth * longLatencyS_) {
      decrease(kBackoffLatency, now);
      return;
    }
  }
  limit_ = std::min<double>(ceiling_, limit_ + 1.0 / std::max(1.0, limit_));
}

void AdaptiveConcurrency::onRateLimited(TimePoint now) { decrease(kBackoff429, now); }
void AdaptiveConcurrency::onOverload(TimePoint now) { decrease(kBackoffLatency, now); }

void AdaptiveConcurrency::decrease(double factor, TimePoint now) {
  if (now < lastDecrease_ + fromSeconds(kMinDecreaseSpacingS) && now >= lastDecrease_) return;
  lastDecrease_ = now;
  limit_ = std::max<double>(minimum_, limit_ * factor);
}

}  // namespace tg
