// Rate-limit algorithms of the simulator. Each is a small class that takes `now` as an argument, so tests
// drive time by hand, including time that goes backwards (treated as "no time passed": nothing refills,
// nothing goes negative).
//
// Usage: check(cost, now) says whether `cost` units would pass and never consumes; consume(cost, now)
// takes them. Splitting the two lets the server check every dimension (requests, tokens) first and only
// charge when all of them allow, like a provider that rejects a request without billing it.
//
// Not thread-safe: one owner (the simulator's loop thread).
#pragma once

#include "types.h"

#include <limits>
#include <memory>
#include <string_view>

namespace tg {

inline constexpr double kNever = std::numeric_limits<double>::infinity();

struct LimitDecision {
  bool allowed = true;
  double limit = 0;        // units per window as configured now (after scaling)
  double remaining = 0;    // whole units left now (after the charge when reported by tryAcquire); >= 0
  double resetInS = 0;     // seconds until the quota is fully available again (window end for windows)
  double retryAfterS = 0;  // when refused: seconds until the same cost would pass; kNever if it never can
};

// LeakyBucket is nginx's limit_req: GCRA with `burst` requests of excess allowed beyond the one being served
// (nginx's burst; 0 = one request per interval). Whether accepted excess is delayed is the responder's business.
enum class LimitAlgorithm { FixedWindow, SlidingWindow, TokenBucket, Gcra, LeakyBucket };
std::string_view limitAlgorithmName(LimitAlgorithm a);

struct LimiterParams {
  double limit = 1;    // units per window, > 0
  double windowS = 1;  // > 0
  double burst = 0;    // token bucket / GCRA capacity, 0 = same as limit; leaky bucket: excess (nginx burst).
                       // Ignored by the window algorithms.
};

class SimLimiter {
 public:
  virtual ~SimLimiter() = default;

  virtual LimitDecision check(double cost, TimePoint now) = 0;
  virtual void consume(double cost, TimePoint now) = 0;
  // Changes units per window (burst scales with it); state already used is kept.
  virtual void setLimit(double limit, TimePoint now) = 0;
  virtual double limit() const = 0;

  // check + consume; on success the decision reports what is left after the charge.
  LimitDecision tryAcquire(double cost, TimePoint now);
};

std::unique_ptr<SimLimiter> makeLimiter(LimitAlgorithm a, const LimiterParams& p, TimePoint now);

}  // namespace tg
