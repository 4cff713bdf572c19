// What one HTTP response said about quota, normalized across header dialects.
#pragma once

#include "snapshot.h"
#include "types.h"

#include <optional>
#include <string>
#include <vector>

namespace tg {

// One limit the server reported (one "scope"): e.g. OpenAI's requests and tokens, Anthropic's
// input-tokens, GitHub's "core" resource, an IETF policy name.
struct QuotaScope {
  std::string name;                          // "requests", "tokens", "input-tokens", "output-tokens", policy or resource name
  Dimension dimension = Dimension::Requests; // tokens/input/output -> Tokens
  double limit = kUnknown;                   // NaN when not reported or malformed
  double remaining = kUnknown;
  std::optional<double> resetInS;            // seconds from the response until the window resets (server clock)
  std::optional<double> windowS;             // window length when reported (IETF w=, OpenAI implied)
  std::string dialect;                       // "x-ratelimit", "openai", "anthropic", "github", "ietf", "ietf-structured"
  bool resetFromAbsoluteTime = false;        // resetInS came from an epoch or date, not a delta: when both
                                             // kinds disagree, the delta (immune to clock skew) wins
};

// QuotaReading::retryAfterHeader when the plain HTTP Retry-After gave the wait (whole seconds or a date).
inline constexpr const char* kRetryAfterHeader = "Retry-After";

struct QuotaReading {
  std::vector<QuotaScope> scopes;
  std::optional<double> retryAfterS;  // the server-directed wait, precedence applied (ms forms > Retry-After)
  std::string retryAfterHeader;       // which header gave it: kRetryAfterHeader, retry-after-ms, x-ms-retry-after-ms
  std::optional<std::string> group;   // X-RateLimit-Group
  std::optional<double> serverDateEpochS;  // Date header, used as the server's clock for absolute times
  std::optional<std::string> githubResource;
  std::vector<std::string> warnings;  // malformed headers: "X-RateLimit-Remaining: 'abc' is not a number"
};

}  // namespace tg
