// What to do after a failed attempt, and a budget that keeps retries from multiplying load.
//  - 429 (or a rate-limit 403/503): wait exactly what the quota picture says, then go again. Such a
//    retry is gated by the quota picture itself (the group waits until the server's time), so it
//    cannot storm; it does not spend the budget. A server-directed wait below the base backoff
//    (Retry-After: 0) gates nothing: that retry waits the base backoff plus full jitter, spends the
//    budget and counts against max_attempts like any other.
//  - 5xx, timeouts, resets: full-jitter exponential backoff, spending the retry budget.
//  - other 4xx: fail with the response.
// Not thread-safe: owned by the engine loop.
#pragma once

#include "engine_config.h"
#include "types.h"

#include <algorithm>
#include <random>
#include <string>

namespace tg {

// Token budget: every first attempt deposits `ratio` tokens (capped), every budgeted retry takes one.
class RetryBudget {
 public:
  RetryBudget(double ratio, int minRetries)
      : ratio_(ratio), tokens_(minRetries), cap_(minRetries + 100.0 * ratio) {}
  void onFirstAttempt() { tokens_ = std::min(cap_, tokens_ + ratio_); }
  bool trySpend() {
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }
  void refund() { tokens_ = std::min(cap_, tokens_ + 1.0); }  // a retry spent for but never sent
  double tokens() const { return tokens_; }

 private:
  double ratio_;
  double tokens_;
  double cap_;
};

enum class RetryAction { Done, RetryAfterQuota, RetryAfterBackoff, Fail };

struct RetryDecision {
  RetryAction action = RetryAction::Done;
  double delayS = 0;  // for RetryAfterBackoff
  std::string reason;
};

class RetryPolicy {
 public:
  explicit RetryPolicy(RetryConfig c, unsigned seed = std::random_device{}()) : c_(c), rng_(seed) {}

  // attempt: 1-based number of the attempt that just finished.
  // rateLimited: the response was a rate-limit response; exhausted: its wait is beyond the cap.
  // serverWaitS: the wait the rate-limit response directed, negative when it named none.
  RetryDecision decide(int attempt, int status, ErrorKind kind, bool rateLimited, bool exhausted,
                       RetryBudget& budget, double serverWaitS = -1);
  double backoffS(int attempt);  // full jitter: U(0, min(max, base * 2^(attempt-1)))

 private:
  RetryConfig c_;
  std::mt19937 rng_;
};

}  // namespace tg
