#include "rate_ceiling.h"

#include <algorithm>

namespace tg {
namespace {

// Sends are paced, not released in bursts: a tenth of a second's requests (at least one), a second's tokens.
constexpr double kRequestBurstS = 0.1;
constexpr double kTokenBurstS = 1.0;

void setBucket(TokenBucket& b, double ratePerS, double burstS, double minBurst, TimePoint now) {
  if (ratePerS <= 0) {
    b = TokenBucket();
    return;
  }
  const double burst = std::max(minBurst, ratePerS * burstS);
  if (!b.configured()) b = TokenBucket(ratePerS, burst, now);
  else b.configure(ratePerS, burst, now);
}

}  // namespace

void RateCeiling::set(const RateCeilingConfig& c, TimePoint now) {
  cfg_ = c;
  setBucket(requests_, c.requestsPerS, kRequestBurstS, 1.0, now);
  setBucket(tokens_, c.tokensPerMin / 60.0, kTokenBurstS, 1.0, now);
}

Duration RateCeiling::timeUntil(double tokens, TimePoint now, Dimension* binding) {
  const Duration r = requests_.timeUntil(1.0, now), t = tokens_.timeUntil(tokens, now);
  if (binding) *binding = r >= t ? Dimension::Requests : Dimension::Tokens;
  return std::max(r, t);
}

void RateCeiling::onSend(double tokens, TimePoint now) {
  requests_.tryAcquire(1.0, now);
  tokens_.tryAcquire(tokens, now);
}

void RateCeiling::onResend(double tokens, TimePoint now) {
  requests_.charge(1.0, now);
  tokens_.charge(tokens, now);
}

}  // namespace tg
