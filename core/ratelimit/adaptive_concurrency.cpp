#include "adaptive_concurrency.h"

#include <algorithm>

namespace tg {
namespace {
constexpr double kBackoff429 = 0.7;
constexpr double kBackoffLatency = 0.9;
constexpr double kLatencyGrowth = 2.5;  // recent latency this many times the baseline = queueing
constexpr double kMinDecreaseSpacingS = 1.0;
}  // namespace

AdaptiveConcurrency::AdaptiveConcurrency(int ceiling, int minimum, bool adaptive, TimePoint now)
    : ceiling_(std::max(1, ceiling)), minimum_(std::max(1, std::min(minimum, ceiling))),
      adaptive_(adaptive), limit_(std::max(1, ceiling)), lastDecrease_(now), lastBaselineDecay_(now) {
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
    if (baselineLatencyS_ <= 0 || latencyS < baselineLatencyS_) baselineLatencyS_ = latencyS;
    recentLatencyS_ = recentLatencyS_ <= 0 ? latencyS : 0.9 * recentLatencyS_ + 0.1 * latencyS;
    // Let the baseline drift up slowly so a permanently slower upstream is not "queueing" forever.
    if (now - lastBaselineDecay_ > fromSeconds(10)) {
      baselineLatencyS_ *= 1.1;
      lastBaselineDecay_ = now;
    }
    if (baselineLatencyS_ > 0.002 && recentLatencyS_ > kLatencyGrowth * baselineLatencyS_) {
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
