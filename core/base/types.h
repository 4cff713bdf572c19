// Small value types shared by every part of Tollgate: tiers, dimensions, error kinds, clocks.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tg {

// Monotonic time for all scheduling logic. Logic classes take `TimePoint now` as an argument;
// only the engine loop and the simulator read the clock.
using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Duration = Clock::duration;

// `t` on a clock that runs `scale` times faster than Clock (scale 1: `t` itself). A compressed replay runs the
// engine's own time constants (seconds of evidence, spacing of decreases, growth per second) on this clock, so
// they cover the same stretch of the recording as they did live. Monotonic for scale > 0.
inline TimePoint dilated(TimePoint t, double scale) {
  if (scale == 1) return t;
  return TimePoint(std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, Duration::period>(static_cast<double>(t.time_since_epoch().count()) * scale)));
}

// Wall-clock milliseconds since the Unix epoch: the time stamp of snapshots, samples and events.
using EpochMs = std::int64_t;
EpochMs nowEpochMs();
double toSeconds(Duration d);
// Saturates at +-kMaxDurationS (a century); NaN is zero. Never undefined, whatever the input.
inline constexpr double kMaxDurationS = 100.0 * 365 * 86400;
Duration fromSeconds(double s);
// t + d, clamped to the representable range instead of overflowing.
TimePoint addSaturating(TimePoint t, Duration d);
// a + b and a - b on epoch milliseconds, held at the int64 limits instead of overflowing (history uses
// INT64_MIN as "nothing yet", and times read from files or typed by a user can be anything).
EpochMs addSaturating(EpochMs a, std::int64_t b);
EpochMs subSaturating(EpochMs a, std::int64_t b);

enum class Tier : std::uint8_t { P0 = 0, P1 = 1, P2 = 2 };
inline constexpr int kTierCount = 3;
std::string_view tierName(Tier t);
std::optional<Tier> parseTier(std::string_view s);  // "P0"/"p0"/"0"

// What a quota counts.
enum class Dimension : std::uint8_t { Requests = 0, Tokens = 1 };
inline constexpr int kDimensionCount = 2;
std::string_view dimensionName(Dimension d);

// An operator's ceiling on a send rate (a group's or every group's), beneath the learnt quota; 0 = none.
struct RateCeilingConfig {
  double requestsPerS = 0;
  double tokensPerMin = 0;
  bool any() const { return requestsPerS > 0 || tokensPerMin > 0; }
  bool operator==(const RateCeilingConfig&) const = default;
};

enum class BreakerState : std::uint8_t { Closed = 0, Open = 1, HalfOpen = 2 };
std::string_view breakerStateName(BreakerState s);

// Typed outcome of a request at the engine's boundary.
enum class ErrorKind : std::uint8_t {
  None,            // 2xx/3xx
  Network,         // connection refused/reset, DNS
  Timeout,         // transfer or connect timeout
  Http,            // non-retryable 4xx or 5xx after retries
  RateLimited,     // 429 after retries/budget exhausted
  CircuitOpen,     // never sent: breaker open past the request deadline
  QuotaExhausted,  // server-directed wait beyond the cap (e.g. daily quota)
  Shed,            // dropped by admission: queue full or deadline passed
  Cancelled,       // engine stopped or drained
  Config,          // bad request definition (unknown group, bad URL)
};
std::string_view errorKindName(ErrorKind k);

// Why a request was answered without (another) send: the gateway's status code and the shed counters.
enum class ShedReason : std::uint8_t {
  None,            // not shed
  Deadline,        // still queued (or backing off) when its deadline passed
  QueueFull,       // its tier queue was full at admission
  BreakerOpen,     // the group's breaker stayed open past the deadline
  TierPaused,      // its tier (or group) paused by the operator past the deadline
  QuotaExhausted,  // the upstream's wait is beyond the cap (daily quota)
  Draining,        // the group is draining or the engine stopping
};
inline constexpr int kShedReasonCount = 7;
std::string_view shedReasonName(ShedReason r);

// Maps an HTTP status (0 = no response) to its error kind. 429 -> RateLimited, 5xx/other 4xx -> Http.
ErrorKind errorKindForStatus(int status);

namespace http {
inline constexpr int kOk = 200;
inline constexpr int kForbidden = 403;
inline constexpr int kTooManyRequests = 429;
inline constexpr int kInternalError = 500;
inline constexpr int kServiceUnavailable = 503;
}  // namespace http

}  // namespace tg
