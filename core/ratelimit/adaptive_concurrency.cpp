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
constexpr std::size_t kMaxEvidence = 512;
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

void AdaptiveConcurrency::setTimeScale(double scale) {
  scale_ = scale > 0 ? scale : 1;
  lastDecrease_ = TimePoint{};  // long ago on any clock
  accepted_.clear();
  capSetAt_ = TimePoint{};
  pressed_ = 0;
  climbing_ = false;
}

void AdaptiveConcurrency::onSuccess(double latencyS, TimePoint now, int inFlightAtSend, bool pressing) {
  now = dilated(now, scale_);
  if (inFlightAtSend >= 0) {
    accepted_.push_back({now, inFlightAtSend});
    if (accepted_.size() > kMaxEvidence) accepted_.pop_front();
  }
  if (latencyS > 0) {
    ++samples_;
    longLatencyS_ = longLatencyS_ <= 0 ? latencyS : (1 - kLongAlpha) * longLatencyS_ + kLongAlpha * latencyS;
    shortLatencyS_ = shortLatencyS_ <= 0 ? latencyS : (1 - kShortAlpha) * shortLatencyS_ + kShortAlpha * latencyS;
    if (samples_ >= kMinSamples && shortLatencyS_ > kLatencyGrowth * longLatencyS_) {
      decrease(kBackoffLatency, now);
      return;
    }
  }
  if (cap_ > 0) {
    if (inFlightAtSend >= cap_ - 1 || (pressing && static_cast<int>(limit_) >= cap_)) ++pressed_;
    const bool pressedClean = pressed_ >= (climbing_ ? kCapFollowUpAccepted : kCapProbeAccepted);
    if (pressedClean || now >= capSetAt_ + fromSeconds(kCapProbeS)) {  // clean long enough: try more
      cap_ = std::min(cap_ + (pressedClean ? capStep_ : 1), ceiling_);
      capStep_ = pressedClean ? std::min(2 * capStep_, ceiling_) : 1;  // at the ceiling it stops doubling
      capSetAt_ = now;
      pressed_ = 0;
      climbing_ = true;
    }
  }
  const double top = cap_ > 0 ? std::min(cap_, ceiling_) : ceiling_;
  if (limit_ < top) limit_ = std::min(top, limit_ + 1.0 / std::max(1.0, limit_));
}

bool AdaptiveConcurrency::inFlightBound(int x, TimePoint now) {
  while (!accepted_.empty() && (accepted_.front().at < now - fromSeconds(kEvidenceS) || accepted_.front().at > now))
    accepted_.pop_front();
  if (x < kMinInFlight || static_cast<int>(accepted_.size()) < kMinEvidence) return false;
  const auto atOrAbove =
      std::count_if(accepted_.begin(), accepted_.end(), [x](const Accepted& a) { return a.inFlight >= x; });
  return static_cast<double>(atOrAbove) <= kAtOrAboveShare * static_cast<double>(accepted_.size());
}

bool AdaptiveConcurrency::onRateLimited(TimePoint now, int inFlightAtSend) {
  now = dilated(now, scale_);
  // Sent with at least the limit the upstream already showed in flight (before it was applied, or while
  // trying one more): explained by it. Acceptances of that time are no evidence against it: their slots had
  // freed upstream before their answers were read here.
  if (adaptive_ && (explainedByCap(inFlightAtSend) || inFlightBound(inFlightAtSend, now))) {
    cap_ = std::max(minimum_, cap_ > 0 ? std::min(cap_, inFlightAtSend) : inFlightAtSend);
    capSetAt_ = now;
    pressed_ = 0;
    capStep_ = 1;
    climbing_ = false;
    limit_ = std::min<double>(limit_, cap_);
    return true;
  }
  decrease(kBackoff429, now);
  return false;
}

bool AdaptiveConcurrency::wantsEarlierAnswers(int inFlightAtSend, TimePoint now) const {
  if (!adaptive_ || inFlightAtSend < kMinInFlight || explainedByCap(inFlightAtSend)) return false;
  now = dilated(now, scale_);
  const TimePoint from = now - fromSeconds(kEvidenceS);
  const auto recent =
      std::count_if(accepted_.begin(), accepted_.end(), [&](const Accepted& a) { return a.at >= from && a.at <= now; });
  return recent < kMinEvidence;
}

void AdaptiveConcurrency::onOverload(TimePoint now) { decrease(kBackoffLatency, dilated(now, scale_)); }

void AdaptiveConcurrency::decrease(double factor, TimePoint now) {
  if (now < lastDecrease_ + fromSeconds(kMinDecreaseSpacingS) && now >= lastDecrease_) return;
  lastDecrease_ = now;
  limit_ = std::max<double>(minimum_, limit_ * factor);
}

}  // namespace tg
