// What to do after a response, given what its headers said about quota: go on, wait, or give up.
#pragma once

#include "quota_reading.h"

#include <string>
#include <string_view>

namespace tg {

// What kind of response it was, for people and for the engine's 429 accounting. Printed by name.
enum class VerdictClass {
  Ok,              // not an error
  Burst,           // rate-limited while scopes report quota left
  QuotaExhausted,  // rate-limited with a scope at zero
  Unknown,         // rate-limited without quota headers, or no status
  Error,           // an error that is not a rate limit
};
std::string_view verdictClassName(VerdictClass c);  // "ok", "burst", "quota_exhausted", "unknown", "error"

struct QuotaVerdict {
  enum class Kind {
    Ok,          // not limited, nothing exhausted
    Throttled,   // wait waitS (until untilEpochS) before the next request on this quota
    Exhausted,   // the server-directed wait exceeds the cap: fail fast with QuotaExhausted
    Unknown429,  // rate-limited without any hint of how long: the caller backs off on its own
  };
  Kind kind = Kind::Ok;
  double waitS = 0;              // 0 unless Throttled or Exhausted
  double untilEpochS = kUnknown; // nowEpochS + waitS, NaN when there is nothing to wait for
  std::string reason;            // one short sentence for people: "Retry-After until 12:03:41 UTC"
  VerdictClass classification = VerdictClass::Ok;
};

std::string_view verdictKindName(QuotaVerdict::Kind k);  // "ok", "throttled", "exhausted", "unknown_429"

// A response is rate-limited when it is a 429, a 403 while a GitHub scope reports remaining 0, or a 503
// with a Retry-After. Its wait is the server-directed one (Retry-After, ms forms first), else the reset
// of an exhausted scope (delta-based resets preferred to absolute ones), else the earliest reset of any
// scope. A response that is not rate-limited still yields Throttled when a scope reports remaining 0.
// Any wait beyond maxWaitS becomes Exhausted, never a shorter wait. Status 0 means "not known".
// Pure and thread-safe.
QuotaVerdict decideVerdict(const QuotaReading& reading, int status, double nowEpochS, double maxWaitS);

}  // namespace tg
