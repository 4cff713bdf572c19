// Why a group's requests wait, as a code and its numbers. The engine decides it once per dispatch; the command
// line and logs print it in English (waitText), the dashboard words it in the operator's language from the
// same code and numbers, never from the English.
#pragma once

#include "types.h"

#include <limits>
#include <string>

namespace tg {

enum class WaitCode : std::uint8_t {
  None,               // not waiting
  GroupPaused,        // the operator paused the group
  TierPaused,         // tier: the operator paused it (on this group or all)
  GlobalConcurrency,  // used/limit: every group's requests in flight at the global limit
  Concurrency,        // used/limit: this group's requests in flight at its limit
  RateCeiling,        // dimension, amount: the group's rate ceiling (req/s or tokens/min)
  GlobalRateCeiling,  // dimension, amount: the rate ceiling of all groups
  BreakerOpen,        // untilMs
  BreakerProbing,     // half-open: one request tests the upstream
  RetryAfter,         // untilMs: the upstream's Retry-After on a 429
  ServerRetryAfter,   // status, untilMs: a Retry-After on a 5xx
  ResetAt,            // untilMs: a 429 with an exhausted window, held to its reset
  QuotaExhausted,     // untilMs: exhausted beyond the wait cap
  RefusedHolding,     // seconds: refused with a Retry-After while nothing gets through
  RefusedBackingOff,  // seconds: bare 429s while nothing gets through
  RefusedPausing,     // seconds: a pause of the learnt rate's interval after a refusal
  ProbeAlone,         // after a refusal one request goes alone until one passes
  Refill,             // dimension, seconds: a continuously refilled quota's shortfall
  ResetIn,            // dimension, seconds (to the reset), probeS (one request tests it sooner, NaN if not)
  NoneLeftAnswers,    // dimension: none left, answers of requests in flight will tell
  NoneLeftNext,       // dimension, seconds: none left, the next one after one learnt interval
  Pacing,             // dimension, seconds: the local token bucket
  FleetHold,          // untilMs, note (what the other instance said), from (that instance)
  SharedShare,        // shared quota, Redis unreachable: this instance's share
  SharedNextLease,    // shared quota: the fleet's next lease for this instance
  SharedSpent,        // shared quota: the fleet's capacity is spent
  SharedLease,        // shared quota: waiting for a lease
};

struct WaitReason {
  WaitCode code = WaitCode::None;
  Dimension dimension = Dimension::Requests;
  Tier tier = Tier::P0;
  double seconds = std::numeric_limits<double>::quiet_NaN();
  double probeS = std::numeric_limits<double>::quiet_NaN();
  EpochMs untilMs = 0;
  int used = 0;
  int limit = 0;
  int status = 0;
  double amount = 0;
  std::string note = {};
  std::string from = {};

  bool waiting() const { return code != WaitCode::None; }
};

// The English line for logs, the command line and shed messages: "Retry-After until 12:03:41", "tokens: 3.2 s",
// "requests exhausted, reset in 4.0 s (one request tests it in 1.2 s)"; empty when not waiting.
std::string waitText(const WaitReason& w);

}  // namespace tg
