// Writes the rate-limit response headers of one provider dialect for the simulator, and says what the
// client was told: the wait it may take from those headers (for the "early" counter).
//
// Rounding is always up (whole seconds, whole milliseconds, next wall-clock second for absolute times), so a
// client that honours what it reads never arrives before the server would let it through.
#pragma once

#include "request.h"
#include "sim_config.h"
#include "sim_limiter.h"

#include <ctime>
#include <optional>
#include <string>

namespace tg {

namespace simheader {
inline constexpr const char* kRetryAfter = "Retry-After";
inline constexpr const char* kRetryAfterMs = "Retry-After-Ms";
inline constexpr const char* kGroup = "X-RateLimit-Group";
inline constexpr const char* kXLimit = "X-RateLimit-Limit";
inline constexpr const char* kXRemaining = "X-RateLimit-Remaining";
inline constexpr const char* kXReset = "X-RateLimit-Reset";
inline constexpr const char* kGitHubUsed = "X-RateLimit-Used";
inline constexpr const char* kGitHubResource = "X-RateLimit-Resource";
inline constexpr const char* kOpenAiLimitRequests = "x-ratelimit-limit-requests";
inline constexpr const char* kOpenAiRemainingRequests = "x-ratelimit-remaining-requests";
inline constexpr const char* kOpenAiResetRequests = "x-ratelimit-reset-requests";
inline constexpr const char* kOpenAiLimitTokens = "x-ratelimit-limit-tokens";
inline constexpr const char* kOpenAiRemainingTokens = "x-ratelimit-remaining-tokens";
inline constexpr const char* kOpenAiResetTokens = "x-ratelimit-reset-tokens";
inline constexpr const char* kAnthropicRequestsLimit = "anthropic-ratelimit-requests-limit";
inline constexpr const char* kAnthropicRequestsRemaining = "anthropic-ratelimit-requests-remaining";
inline constexpr const char* kAnthropicRequestsReset = "anthropic-ratelimit-requests-reset";
inline constexpr const char* kAnthropicTokensLimit = "anthropic-ratelimit-tokens-limit";
inline constexpr const char* kAnthropicTokensRemaining = "anthropic-ratelimit-tokens-remaining";
inline constexpr const char* kAnthropicTokensReset = "anthropic-ratelimit-tokens-reset";
inline constexpr const char* kIetfLimit = "RateLimit-Limit";
inline constexpr const char* kIetfRemaining = "RateLimit-Remaining";
inline constexpr const char* kIetfReset = "RateLimit-Reset";
inline constexpr const char* kIetfPolicy = "RateLimit-Policy";
inline constexpr const char* kIetfRateLimit = "RateLimit";
}  // namespace simheader

struct RateLimitHeaderInput {
  std::string group;
  double windowS = 1;
  LimitDecision requests;
  std::optional<LimitDecision> tokens;  // when the group has a token dimension
  bool limited = false;                 // this response is the 429 (or GitHub 403)
  bool requestsBlocked = false, tokensBlocked = false;
  double retryAfterS = 0;               // when limited: exact wait the limiters computed
  double wallNowS = 0;                  // Unix time, fractional, of the response
};

class RateLimitHeaderWriter {
 public:
  RateLimitHeaderWriter(SimDialect dialect, bool retryAfter, RetryAfterFormat format);

  // Appends the dialect's headers; returns the wait (seconds from now) the client was told on a limited
  // response: the Retry-After when sent, otherwise the reset of the dimension that blocked; 0 if none.
  double write(const RateLimitHeaderInput& in, HeaderList& out) const;

  // "1m0s", "250ms", "1.5s", "2h0m0s" (Go's time.Duration.String, rounded up to the millisecond).
  static std::string goDuration(double seconds);

 private:
  SimDialect dialect_;
  bool retryAfter_;
  RetryAfterFormat format_;
};

}  // namespace tg
