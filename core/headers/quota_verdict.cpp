#include "quota_verdict.h"

#include "time_formats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tg {
namespace {

constexpr const char* kDialectGithub = "github";

bool isExhausted(const QuotaScope& s) { return known(s.remaining) && s.remaining == 0; }

// The reset that frees every exhausted scope. Delta-based resets win over absolute ones because they
// do not depend on the two clocks agreeing; within one kind the latest reset is the binding one.
const QuotaScope* bindingExhaustedScope(const QuotaReading& r) {
  const QuotaScope* best = nullptr;
  for (const auto& s : r.scopes) {
    if (!isExhausted(s) || !s.resetInS) continue;
    if (!best || (best->resetFromAbsoluteTime && !s.resetFromAbsoluteTime) ||
        (best->resetFromAbsoluteTime == s.resetFromAbsoluteTime && *s.resetInS > *best->resetInS))
      best = &s;
  }
  return best;
}

const QuotaScope* earliestResetScope(const QuotaReading& r) {
  const QuotaScope* best = nullptr;
  for (const auto& s : r.scopes)
    if (s.resetInS && (!best || *s.resetInS < *best->resetInS)) best = &s;
  return best;
}

std::string seconds(double s) {
  char buf[32];
  // Under a second in milliseconds: a reset 17 ms away read "reset in 0.0 s", as if it were now.
  if (s > 0 && s < 0.95) std::snprintf(buf, sizeof buf, "%.0f ms", std::max(1.0, std::round(s * 1000)));
  else if (s < 10 && std::round(s) != s) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

bool isRateLimited(const QuotaReading& r, int status) {
  if (status == http::kTooManyRequests) return true;
  if (status == http::kServiceUnavailable) return r.retryAfterS.has_value();
  // GitHub's 403 is a rate limit when a scope it states is spent (the primary limit), or when it comes with a
  // Retry-After (a secondary limit: "wait 60 s", with the primary quota far from spent). A 403 from anywhere else
  // is an error, Retry-After or not.
  if (status == http::kForbidden) {
    const bool github = std::any_of(r.scopes.begin(), r.scopes.end(),
                                    [](const QuotaScope& s) { return s.dialect == kDialectGithub; });
    return (github && r.retryAfterS.has_value()) ||
           std::any_of(r.scopes.begin(), r.scopes.end(),
                       [](const QuotaScope& s) { return s.dialect == kDialectGithub && isExhausted(s); });
  }
  return false;
}

// 429s and GitHub's 403 rate limits are the responses the engine counts as 429s.
VerdictClass classify(const QuotaReading& r, int status, bool limited) {
  if (limited && status != http::kServiceUnavailable) {
    if (std::any_of(r.scopes.begin(), r.scopes.end(), isExhausted)) return VerdictClass::QuotaExhausted;
    if (std::any_of(r.scopes.begin(), r.scopes.end(), [](const QuotaScope& s) { return known(s.remaining); }))
      return VerdictClass::Burst;
    return VerdictClass::Unknown;
  }
  if (status <= 0) return VerdictClass::Unknown;
  return status < 400 ? VerdictClass::Ok : VerdictClass::Error;
}

}  // namespace

std::string_view verdictClassName(VerdictClass c) {
  switch (c) {
    case VerdictClass::Ok: return "ok";
    case VerdictClass::Burst: return "burst";
    case VerdictClass::QuotaExhausted: return "quota_exhausted";
    case VerdictClass::Unknown: return "unknown";
    case VerdictClass::Error: return "error";
  }
  return "?";
}

std::string_view verdictKindName(QuotaVerdict::Kind k) {
  switch (k) {
    case QuotaVerdict::Kind::Ok: return "ok";
    case QuotaVerdict::Kind::Throttled: return "throttled";
    case QuotaVerdict::Kind::Exhausted: return "exhausted";
    case QuotaVerdict::Kind::Unknown429: return "unknown_429";
  }
  return "?";
}

QuotaVerdict decideVerdict(const QuotaReading& reading, int status, double nowEpochS, double maxWaitS) {
  QuotaVerdict v;
  const bool limited = isRateLimited(reading, status);
  v.classification = classify(reading, status, limited);

  std::optional<double> wait;
  if (limited && reading.retryAfterS) {
    wait = *reading.retryAfterS;
    const std::string header = reading.retryAfterHeader.empty() ? kRetryAfterHeader : reading.retryAfterHeader;
    v.reason = header + " until " + formatUtc(nowEpochS + *wait, false);
  } else if (const QuotaScope* s = bindingExhaustedScope(reading)) {
    wait = *s->resetInS;
    v.reason = s->name + " exhausted, reset in " + seconds(*wait);
  } else if (limited) {
    if (const QuotaScope* e = earliestResetScope(reading)) {
      wait = *e->resetInS;
      v.reason = "rate-limited, " + e->name + " resets in " + seconds(*wait);
    } else {
      v.kind = QuotaVerdict::Kind::Unknown429;
      v.reason = "rate-limited without a wait hint; back off";
      return v;
    }
  } else {
    if (status <= 0) v.reason = "no scope exhausted";
    else if (v.classification == VerdictClass::Ok) v.reason = "within quota";
    else v.reason = "HTTP " + std::to_string(status) + ", not rate-limited";
    return v;
  }

  v.waitS = *wait;
  v.untilEpochS = nowEpochS + *wait;
  const double cap = std::isnan(maxWaitS) ? 0 : std::max(0.0, maxWaitS);
  if (v.waitS > cap) {
    v.kind = QuotaVerdict::Kind::Exhausted;
    v.reason = "quota exhausted until " + formatUtc(v.untilEpochS) + " (wait " + seconds(v.waitS) + " exceeds the " +
               seconds(cap) + " cap)";
  } else {
    v.kind = QuotaVerdict::Kind::Throttled;
  }
  return v;
}

}  // namespace tg
