#include "wait_reason.h"

#include "time_text.h"

#include <cmath>
#include <cstdio>

namespace tg {

namespace {

std::string clock(EpochMs ms) { return formatUtc(ms, UtcStyle::Clock); }

std::string dim(const WaitReason& w) { return std::string(dimensionName(w.dimension)); }

std::string ceiling(const WaitReason& w) {
  char buf[64];
  if (w.dimension == Dimension::Requests) std::snprintf(buf, sizeof buf, "%g req/s", w.amount);
  else std::snprintf(buf, sizeof buf, "%.0f tokens/min", w.amount);
  return buf;
}

}  // namespace

std::string waitText(const WaitReason& w) {
  switch (w.code) {
    case WaitCode::None: return {};
    case WaitCode::GroupPaused: return "group paused";
    case WaitCode::TierPaused: return "tier " + std::string(tierName(w.tier)) + " paused";
    case WaitCode::GlobalConcurrency:
      return "global concurrency " + std::to_string(w.used) + "/" + std::to_string(w.limit);
    case WaitCode::Concurrency: return "concurrency " + std::to_string(w.used) + "/" + std::to_string(w.limit);
    case WaitCode::RateCeiling: return "rate ceiling " + ceiling(w);
    case WaitCode::GlobalRateCeiling: return "rate ceiling of all groups " + ceiling(w);
    case WaitCode::BreakerOpen: return "breaker open until " + clock(w.untilMs);
    case WaitCode::BreakerProbing: return "breaker half-open: probing";
    case WaitCode::RetryAfter: return "Retry-After until " + clock(w.untilMs);
    case WaitCode::ServerRetryAfter:
      return "Retry-After (" + std::to_string(w.status) + ") until " + clock(w.untilMs);
    case WaitCode::ResetAt: return "reset at " + clock(w.untilMs);
    case WaitCode::QuotaExhausted: return "quota exhausted until " + clock(w.untilMs);
    case WaitCode::RefusedHolding: return "refused, Retry-After: holding " + formatDuration(w.seconds);
    case WaitCode::RefusedBackingOff: return "bare 429s: backing off " + formatDuration(w.seconds);
    case WaitCode::RefusedPausing: return "refused: pausing " + formatDuration(w.seconds);
    case WaitCode::ProbeAlone: return "refused: one request goes alone until one passes";
    case WaitCode::Refill: return dim(w) + ": refill in " + formatDuration(w.seconds);
    case WaitCode::ResetIn:
      return dim(w) + " exhausted, reset in " + formatDuration(w.seconds) +
             (!std::isnan(w.probeS) ? " (one request tests it in " + formatDuration(w.probeS) + ")" : "");
    case WaitCode::NoneLeftAnswers: return dim(w) + ": none left, waiting for answers in flight";
    case WaitCode::NoneLeftNext: return dim(w) + ": none left, next in " + formatDuration(w.seconds);
    case WaitCode::Pacing: return dim(w) + ": " + formatDuration(w.seconds);
    case WaitCode::FleetHold: return "fleet: " + w.note + " on " + w.from + ", until " + clock(w.untilMs);
    case WaitCode::SharedShare:
    case WaitCode::SharedNextLease:
    case WaitCode::SharedSpent:
    case WaitCode::SharedLease: return w.note;  // the shared ledger's own words
  }
  return {};
}

}  // namespace tg
