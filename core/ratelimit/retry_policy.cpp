#include "retry_policy.h"

#include <algorithm>
#include <cmath>

namespace tg {

double RetryPolicy::backoffS(int attempt) {
  const double cap = std::min(c_.maxBackoffS, c_.baseBackoffS * std::pow(2.0, std::max(0, attempt - 1)));
  std::uniform_real_distribution<double> d(0.0, cap);
  return d(rng_);
}

RetryDecision RetryPolicy::decide(int attempt, int status, ErrorKind kind, bool rateLimited,
                                  bool exhausted, RetryBudget& budget, double serverWaitS) {
  if (kind == ErrorKind::None && !rateLimited) return {RetryAction::Done, 0, {}};
  if (rateLimited) {
    if (exhausted) return {RetryAction::Fail, 0, "quota exhausted beyond the wait cap"};
    if (serverWaitS >= 0 && serverWaitS < c_.baseBackoffS) {
      if (attempt >= c_.maxAttempts) return {RetryAction::Fail, 0, "rate limited without a wait on every attempt"};
      if (!budget.trySpend()) return {RetryAction::Fail, 0, "retry budget exhausted"};
      return {RetryAction::RetryAfterBackoff, c_.baseBackoffS + backoffS(attempt), "rate limited without a wait"};
    }
    // Rate-limit retries wait for the quota picture; they are bounded by maxAttempts only as a
    // last resort against an upstream that never lets anything through.
    if (attempt >= c_.maxAttempts * 4) return {RetryAction::Fail, 0, "rate limited on every attempt"};
    return {RetryAction::RetryAfterQuota, 0, "rate limited"};
  }
  const bool transient = kind == ErrorKind::Network || kind == ErrorKind::Timeout || status >= 500;
  if (!transient) return {RetryAction::Fail, 0, "status " + std::to_string(status)};
  if (attempt >= c_.maxAttempts) return {RetryAction::Fail, 0, "out of attempts"};
  if (!budget.trySpend()) return {RetryAction::Fail, 0, "retry budget exhausted"};
  return {RetryAction::RetryAfterBackoff, backoffS(attempt), "transient failure"};
}

}  // namespace tg
