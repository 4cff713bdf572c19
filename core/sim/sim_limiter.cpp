#include "sim_limiter.h"

#include "fixed_window_limiter.h"
#include "gcra_limiter.h"
#include "sliding_window_limiter.h"
#include "token_bucket_limiter.h"

namespace tg {

std::string_view limitAlgorithmName(LimitAlgorithm a) {
  switch (a) {
    case LimitAlgorithm::FixedWindow: return "fixed-window";
    case LimitAlgorithm::SlidingWindow: return "sliding-window";
    case LimitAlgorithm::TokenBucket: return "token-bucket";
    case LimitAlgorithm::Gcra: return "gcra";
    case LimitAlgorithm::LeakyBucket: return "leaky-bucket";
  }
  return "?";
}

LimitDecision SimLimiter::tryAcquire(double cost, TimePoint now) {
  LimitDecision d = check(cost, now);
  if (!d.allowed) return d;
  consume(cost, now);
  LimitDecision after = check(0, now);
  after.allowed = true;
  after.retryAfterS = 0;
  return after;
}

std::unique_ptr<SimLimiter> makeLimiter(LimitAlgorithm a, const LimiterParams& p, TimePoint now) {
  switch (a) {
    case LimitAlgorithm::FixedWindow: return std::make_unique<FixedWindowLimiter>(p, now);
    case LimitAlgorithm::SlidingWindow: return std::make_unique<SlidingWindowLimiter>(p, now);
    case LimitAlgorithm::TokenBucket: return std::make_unique<TokenBucketLimiter>(p, now);
    case LimitAlgorithm::Gcra: return std::make_unique<GcraLimiter>(p, now);
    case LimitAlgorithm::LeakyBucket: {
      // nginx admits a request while the excess after it stays <= burst: GCRA with a tolerance of burst + 1.
      LimiterParams g = p;
      g.burst = p.burst + 1;
      return std::make_unique<GcraLimiter>(g, now);
    }
  }
  return nullptr;
}

}  // namespace tg
