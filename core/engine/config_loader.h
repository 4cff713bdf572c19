// Reads a Tollgate config file (JSON) into an EngineConfig, validating every field: unknown keys, wrong
// types and out-of-range values are ConfigErrors naming the file, the JSON path and the expectation.
//
// {
//   "name": "demo", "global_concurrency": 64,
//   "rate_ceiling": {"requests_per_s": 0, "tokens_per_min": 0},  // all groups together; 0 = no ceiling
//   "request_timeout_s": 60, "connect_timeout_s": 10,
//   "snapshot_interval_s": 0.25, "tier_header": "X-Tollgate-Tier", "group_header": "X-RateLimit-Group",
//   "max_response_bytes": 67108864,   // a longer response body fails its request (not retried); >= 1024
//   "tiers": {"P0": {"capacity": 1000, "max_wait_s": 30}, "P1": {...}, "P2": {...}},
//   "retry": {"max_attempts": 6, "budget_ratio": 0.1, "budget_min_retries": 10, "base_backoff_s": 0.25,
//             "max_backoff_s": 10, "max_server_wait_s": 120, "default_429_wait_s": 1,
//             "resend_broken_answers": false},  // a POST/PATCH whose 2xx broke off mid-body is sent again
//   "groups": [{"name": "interactive", "base_url": "http://127.0.0.1:8787" | "sim",
//               "keys": [{"name": "a", "env": "OPENAI_API_KEY", "header": "Authorization", "prefix": "Bearer "}],
//               "headers": {"anthropic-version": "2023-06-01"},   // sent with every request of the group
//               "allowed_hosts": ["https://eu.api.example.com"],  // origins besides base_url's that absolute
//                                  // request URLs may name; any other host is refused, so the keys go nowhere else
//               "concurrency": 16, "min_concurrency": 1, "adaptive": true,
//               "rate_ceiling": {"requests_per_s": 0, "tokens_per_min": 0},  // the operator's ceiling on the
//                                  // group's send rate beneath the learnt quota; 0 = none
//               "requests_per_minute": 0, "tokens_per_minute": 0, "bucket_fraction": 0.98,
//               "quota_window_s": 0,   // the upstream's window when its headers don't say; 0 = infer (>= 1 s)
//               "breaker": {"window_s": 10, "min_calls": 20, "failure_share": 0.5, "open_s": 5, "half_open_probes": 3}}],
//   "simulator": {...tollgate-sim config...},   // optional: run the simulator in-process; base_url "sim" points at it
//   "workload": {...synthetic profile...},      // optional: the demo workload (synthetic_workload.h)
//   "history": {"path": "tollgate-history.db"}, // optional
//   "gateway": {...}                            // optional: the local gateway (core/gateway/gateway_config.h)
// }
// A key's secret comes from the environment variable named by "env"; a missing variable is an error,
// except for groups on the embedded simulator ("sim"), where the key's name stands in for the secret.
#pragma once

#include "config_error.h"
#include "engine_config.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tg {

struct TollgateConfig {
  EngineConfig engine;
  std::optional<nlohmann::json> simulator;  // validated by SimConfig when the app starts it
  std::optional<nlohmann::json> workload;   // validated by SyntheticWorkload
  std::optional<nlohmann::json> gateway;    // validated by gateway::loadGatewayConfig (core/gateway)
  std::string historyPath;                  // empty = default
  std::string file;                         // where it came from (for error messages)
  bool usesEmbeddedSimulator() const;
};

// What re-reading the config (serve's SIGHUP) changes in a running engine: the operator's controls the file
// sets (concurrency, rate ceilings), each only where the file's value changed since it was last applied; and
// the JSON paths of everything else that differs from what the process started with, which only a restart
// applies (groups, keys, URLs, routes, clients, tiers, retry...).
struct ConfigReload {
  std::optional<int> globalConcurrency;
  std::optional<RateCeilingConfig> rateCeiling;
  std::vector<std::pair<std::string, int>> groupConcurrency;
  std::vector<std::pair<std::string, RateCeilingConfig>> groupRateCeiling;
  std::vector<std::string> restartOnly;
  bool changesLive() const {
    return globalConcurrency || rateCeiling || !groupConcurrency.empty() || !groupRateCeiling.empty();
  }
};

class ConfigLoader {
 public:
  // `startedRaw`: the JSON the process started with; `applied`: the engine config as last applied; `fresh` was
  // read from `freshRaw`.
  static ConfigReload planReload(const nlohmann::json& startedRaw, const EngineConfig& applied,
                                 const nlohmann::json& freshRaw, const EngineConfig& fresh);
  static TollgateConfig fromFile(const std::string& path);
  static TollgateConfig fromJson(const nlohmann::json& j, const std::string& file);
  // One "breaker" object (also used by what-if overrides): window_s, min_calls, failure_share, open_s,
  // half_open_probes; unknown keys and out-of-range values are ConfigErrors at `path`.
  static BreakerConfig readBreaker(const nlohmann::json& j, const std::string& file, const std::string& path);
  // Replaces base_url "sim" with the embedded simulator's URL.
  static void bindSimulator(TollgateConfig& c, const std::string& url);
};

}  // namespace tg
