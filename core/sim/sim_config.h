// Configuration of tollgate-sim. Every field is optional; unknown keys are errors naming file and path.
//
// {
//   "listen":  {"host": "127.0.0.1", "port": 8787},     // loopback only (127.0.0.0/8, ::1, localhost)
//   "connections": {"max": 1000,             // more are answered 503 and closed
//                   "request_timeout_s": 30, // first byte of a request to its last; then 408 and close
//                   "idle_timeout_s": 120,   // a keep-alive connection with nothing to do is closed
//                   "write_timeout_s": 30},  // replies waiting and none of them sent for this long: reset
//   "dialect": "x-ratelimit",          // x-ratelimit | openai | anthropic | github | ietf | ietf-structured |
//                                      // none (bare 429s) | retry-after (no quota headers, Retry-After only)
//   "retry_after": true,               // send Retry-After on 429 (never with dialect "none")
//   "retry_after_format": "seconds",   // seconds (rounded up) | http-date | ms (Retry-After-Ms + Retry-After)
//   "refuse_at_once": false,           // a 429 skips latency_ms: a limiter in front of the work (nginx
//                                      // limit_req, an API gateway) refuses before any is done
//   "group_by": "header",              // header | path | user-agent
//   "group_header": "X-RateLimit-Group",
//   "default_group": "default",        // unmatched requests; created unlimited when not listed in "groups"
//   "early_grace_ms": 20,              // requests this soon after a 429 was written are in flight, not early
//   "seed": 1,                         // for error shares, connection resets and latency draws
//   "groups": {
//     "interactive": {
//       "algorithm": "token-bucket",   // fixed-window | sliding-window | token-bucket | gcra | leaky-bucket
//       "limit": 100, "window_s": 1,   // requests per window, 0 = unlimited, else at least 1 (slower: longer window)
//       "burst": 0,                    // token-bucket/gcra capacity, 0 = limit; leaky-bucket: nginx's burst
//                                      // (requests of excess allowed beyond one per interval), default 0
//       "nodelay": false,              // leaky-bucket: false = accepted excess is delayed to the rate, as
//                                      // nginx limit_req without nodelay; true = answered at once
//       "count_rejected": false,       // window algorithms: refused requests count against the window too,
//                                      // so a client that keeps asking stays locked out
//       "max_concurrent": 0,           // accepted requests in flight at once (per group); more get 429; 0 = none.
//                                      // With limit 0 this is a concurrency-only limit
//       "tokens_per_window": 0,        // token dimension, same algorithm and window; 0 = none; needs a limit
//       "tokens_start_spent": false,   // each key's token quota starts used up, as when another client has
//                                      // just spent it: a cold start on an empty bucket (a bucket that holds
//                                      // a minute would otherwise hide the refill from any run shorter)
//       "per_key": true,               // quota per API key (Authorization: Bearer / x-api-key) or shared
//       "paths": ["/v1/chat"],         // group_by "path": path prefixes of this group
//       "user_agent": "interactive"    // group_by "user-agent": substring of User-Agent (default: group name)
//     }
//   },
//   "latency_ms": {"distribution": "fixed", "mean": 5, "p95": 20},   // fixed | uniform | lognormal
//   // A body with "stream": true gets an SSE stream (OpenAI chunks; Messages events for dialect anthropic):
//   // head after latency_ms, first token stream_ttft_ms later, then one content chunk per interval.
//   "stream_ttft_ms": 50,              // head to the first event
//   "stream_chunk_interval_ms": 20,    // between content chunks
//   "stream_chunks": 0,                // content chunks; 0 = one per completion token, 1..16
//   "schedule": [                      // seconds from start; the same objects (without at_s) are accepted
//                                      // by POST /__sim/control
//     {"at_s": 60,  "action": "scale_quota", "group": "*", "factor": 0.5},   // of the configured limits
//                                                                             // and max_concurrent
//     {"at_s": 70,  "action": "set_limit", "group": "batch", "limit": 20},   // requests per window
//     {"at_s": 90,  "action": "errors", "status": 503, "share": 0.5, "duration_s": 10, "group": "*"},
//     {"at_s": 120, "action": "reset_connections", "share": 0.2, "duration_s": 5},
//     {"at_s": 150, "action": "outage", "duration_s": 5}
//   ]
// }
#pragma once

#include "sim_limiter.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace tg {

// RetryAfter: no quota headers, only Retry-After on a refusal (nginx with an error_page, API gateways).
enum class SimDialect { XRateLimit, OpenAi, Anthropic, GitHub, Ietf, IetfStructured, None, RetryAfter };
enum class RetryAfterFormat { Seconds, HttpDate, Ms };
enum class GroupBy { Header, Path, UserAgent };
enum class LatencyDistribution { Fixed, Uniform, Lognormal };

std::string_view simDialectName(SimDialect d);
// 127.0.0.0/8, ::1 or "localhost": the only hosts tollgate-sim listens on.
bool isLoopbackHost(const std::string& host);

struct SimGroupConfig {
  LimitAlgorithm algorithm = LimitAlgorithm::FixedWindow;
  double limit = 0;  // requests per window; 0 = unlimited
  double windowS = 1;
  double burst = 0;
  double tokensPerWindow = 0;  // 0 = no token dimension
  bool tokensStartSpent = false;
  bool perKey = true;
  bool nodelay = false;        // leaky-bucket only
  bool countRejected = false;  // window algorithms only
  int maxConcurrent = 0;       // 0 = no concurrency limit
  std::vector<std::string> paths;
  std::string userAgent;
};

struct SimLatencyConfig {
  LatencyDistribution distribution = LatencyDistribution::Fixed;
  double meanMs = 0;
  double p95Ms = 0;  // uniform/lognormal; >= mean
};

struct SimStreamConfig {
  double ttftMs = 50;
  double chunkIntervalMs = 20;
  int chunks = 0;  // 0: derived from the completion tokens (SimStreamBuilder::chunkCount)
};

struct SimConnectionLimits {
  int maxConnections = 1000;
  double requestTimeoutS = 30;
  double idleTimeoutS = 120;
  double writeTimeoutS = 30;  // output pending with no write progress (a client that never reads): abort
};

struct SimAction {
  enum class Kind { ScaleQuota, SetLimit, Errors, ResetConnections, Outage };
  Kind kind = Kind::ScaleQuota;
  double atS = 0;            // schedule only
  std::string group = "*";   // scale_quota, set_limit, errors
  double factor = 1;         // scale_quota
  double limit = 0;          // set_limit
  int status = 503;          // errors
  double share = 1;          // errors, reset_connections
  double durationS = 0;      // errors, reset_connections, outage

  // Parses one action object; `withTime` requires/accepts "at_s". Throws ConfigError.
  static SimAction fromJson(const nlohmann::json& j, const std::string& file, const std::string& path,
                            bool withTime);
};

struct SimConfig {
  std::string host = "127.0.0.1";
  int port = 8787;
  SimConnectionLimits connections;
  SimDialect dialect = SimDialect::XRateLimit;
  bool retryAfter = true;
  RetryAfterFormat retryAfterFormat = RetryAfterFormat::Seconds;
  bool refuseAtOnce = false;
  GroupBy groupBy = GroupBy::Header;
  std::string groupHeader = "X-RateLimit-Group";
  std::string defaultGroup = "default";
  double earlyGraceMs = 20;
  std::uint64_t seed = 1;
  std::map<std::string, SimGroupConfig> groups;
  SimLatencyConfig latency;
  SimStreamConfig stream;
  std::vector<SimAction> schedule;  // sorted by atS

  // Throws ConfigError naming `file`, the JSON path and what was expected.
  // `at`: the section's JSON path in its file, its errors' prefix ("/simulator" inside a tollgate config).
  static SimConfig fromJson(const nlohmann::json& j, const std::string& file, const std::string& at = "");
  static SimConfig fromFile(const std::string& path);
  // Two groups (interactive, batch), x-ratelimit dialect: runs out of the box.
  static SimConfig builtinDefault();
};

}  // namespace tg
