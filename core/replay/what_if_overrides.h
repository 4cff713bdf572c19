// The operator's edits for a what-if re-drive, read from an override JSON:
//
// {
//   "global_concurrency": 32,
//   "concurrency_scale": 0.5,                // every group's ceiling times this (after per-group values)
//   "paused_tiers": ["P2"],                  // paused for every group for the whole run
//   "groups": {
//     "batch": {"concurrency": 4, "bucket_fraction": 0.8, "adaptive": true, "paused_tiers": ["P1"],
//               "breaker": {"window_s": 10, "min_calls": 20, "failure_share": 0.5, "open_s": 5, "half_open_probes": 3}}
//   }
// }
// Unknown keys, wrong types and out-of-range values are ConfigErrors naming the file and JSON path.
#pragma once

#include "config_error.h"
#include "engine_config.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace tg {

struct GroupOverride {
  std::optional<int> concurrency;
  std::optional<double> bucketFraction;
  std::optional<bool> adaptive;
  std::optional<BreakerConfig> breaker;  // all fields, defaults for the ones not given
  std::array<bool, kTierCount> pausedTiers{};
};

struct WhatIfOverrides {
  std::optional<int> globalConcurrency;
  double concurrencyScale = 1.0;
  std::array<bool, kTierCount> pausedTiers{};
  std::map<std::string, GroupOverride> groups;

  static WhatIfOverrides fromJson(const nlohmann::json& j, const std::string& file);
  static WhatIfOverrides fromFile(const std::string& path);
  nlohmann::json toJson() const;
  // Applies the edits to `config` (groups not in it are errors naming the group). Throws ConfigError.
  void applyTo(EngineConfig& config, const std::string& file = "(overrides)") const;
};

}  // namespace tg
