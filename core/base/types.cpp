#include "types.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace tg {

EpochMs nowEpochMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

double toSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }

Duration fromSeconds(double s) {
  if (!(s == s)) return Duration::zero();  // NaN
  // Converting a double beyond the integer range is undefined; clamp first, so `now + fromSeconds(x)`
  // stays representable for any x from outside (headers, deadlines).
  s = std::clamp(s, -kMaxDurationS, kMaxDurationS);
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

TimePoint addSaturating(TimePoint t, Duration d) {
  if (d > Duration::zero() && t > TimePoint::max() - d) return TimePoint::max();
  if (d < Duration::zero() && t < TimePoint::min() - d) return TimePoint::min();
  return t + d;
}

EpochMs addSaturating(EpochMs a, std::int64_t b) {
  EpochMs r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<EpochMs>::max() : std::numeric_limits<EpochMs>::min();
  return r;
}

EpochMs subSaturating(EpochMs a, std::int64_t b) {
  EpochMs r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<EpochMs>::min() : std::numeric_limits<EpochMs>::max();
  return r;
}

std::string_view tierName(Tier t) {
  switch (t) {
    case Tier::P0: return "P0";
    case Tier::P1: return "P1";
    case Tier::P2: return "P2";
  }
  return "P?";
}

std::optional<Tier> parseTier(std::string_view s) {
  if (!s.empty() && (s[0] == 'P' || s[0] == 'p')) s.remove_prefix(1);
  if (s == "0") return Tier::P0;
  if (s == "1") return Tier::P1;
  if (s == "2") return Tier::P2;
  return std::nullopt;
}

std::string_view dimensionName(Dimension d) {
  return d == Dimension::Requests ? "requests" : "tokens";
}

std::string_view breakerStateName(BreakerState s) {
  switch (s) {
    case BreakerState::Closed: return "closed";
    case BreakerState::Open: return "open";
    case BreakerState::HalfOpen: return "half-open";
  }
  return "?";
}

std::string_view errorKindName(ErrorKind k) {
  switch (k) {
    case ErrorKind::None: return "none";
    case ErrorKind::Network: return "network";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::Http: return "http";
    case ErrorKind::RateLimited: return "rate_limited";
    case ErrorKind::CircuitOpen: return "circuit_open";
    case ErrorKind::QuotaExhausted: return "quota_exhausted";
    case ErrorKind::Shed: return "shed";
    case ErrorKind::Cancelled: return "cancelled";
    case ErrorKind::Config: return "config";
  }
  return "?";
}

std::string_view shedReasonName(ShedReason r) {
  switch (r) {
    case ShedReason::None: return "none";
    case ShedReason::Deadline: return "deadline";
    case ShedReason::QueueFull: return "queue_full";
    case ShedReason::BreakerOpen: return "breaker_open";
    case ShedReason::TierPaused: return "tier_paused";
    case ShedReason::QuotaExhausted: return "quota_exhausted";
    case ShedReason::Draining: return "draining";
  }
  return "?";
}

ErrorKind errorKindForStatus(int status) {
  if (status == 0) return ErrorKind::Network;
  if (status == http::kTooManyRequests) return ErrorKind::RateLimited;
  if (status >= 400) return ErrorKind::Http;
  return ErrorKind::None;
}

}  // namespace tg
