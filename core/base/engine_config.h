// Engine configuration: groups (quota pools) with their keys and limits, tiers, retry and breaker policy.
// Loaded from JSON by ConfigLoader (config_loader.h), which validates every field.
#pragma once

#include "types.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tg {

struct KeyConfig {
  std::string name;    // label shown in the UI, e.g. "key-a"
  std::string env;     // environment variable holding the secret; empty = no auth header (simulator)
  std::string secret;  // resolved at load time; never logged, never stored
  std::string header = "Authorization";
  std::string prefix = "Bearer ";
};

struct BreakerConfig {
  double windowS = 10;          // sliding window over which the failure share is computed
  int minCalls = 20;            // fewer calls in the window never trip the breaker
  double failureShare = 0.5;    // 429 + 5xx + network share that opens the breaker
  double openS = 5;             // time open before a half-open probe
  int halfOpenProbes = 3;       // successful probes needed to close again
};

struct RetryConfig {
  int maxAttempts = 6;          // including the first
  double budgetRatio = 0.1;     // retries (non-429) may be at most this share of first attempts...
  int budgetMinRetries = 10;    // ...plus this many, so a quiet start can still retry
  double baseBackoffS = 0.25;   // full-jitter exponential backoff: U(0, min(max, base * 2^n))
  double maxBackoffS = 10;
  double maxServerWaitS = 120;  // cap on any server-directed wait; beyond it: QuotaExhausted
  double default429WaitS = 1;   // a bare 429 (no headers) waits this, doubled per consecutive 429
  // A 2xx whose body broke off (a reset, a timeout mid-body) of a POST or PATCH is sent again only with an
  // Idempotency-Key header, or when this is set: the upstream may have done the work and charged for it.
  bool resendBrokenAnswers = false;
};

struct TierConfig {
  int capacity = 100000;  // bounded queue; a submit beyond it is shed ("queue full")
  double maxWaitS = 600;  // default deadline from submit to first send
};

struct GroupConfig {
  std::string name;
  std::string baseUrl;         // e.g. http://127.0.0.1:8787 ; request urls starting with '/' are joined to it
  std::vector<KeyConfig> keys; // at least one (may have no secret)
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every request of the group
  int concurrency = 16;        // operator ceiling for in-flight requests of this group
  int minConcurrency = 1;
  bool adaptive = true;        // AIMD beneath the ceiling
  RateCeilingConfig rateCeiling;  // operator ceiling on this group's send rate (0 = none)
  double requestsPerMinute = 0;  // known quota per key, 0 = learn from headers
  double tokensPerMinute = 0;
  double bucketFraction = 0.98;  // local bucket runs at this fraction of the known quota
  // Length of the upstream's quota window when its headers do not say (OpenAI's and Anthropic's don't);
  // 0 = infer it from the longest reset seen, rounded up to a window length providers use (>= 1 s).
  double quotaWindowS = 0;
  // Origins ("https://host[:port]") besides base_url's that absolute request URLs may name; the group's keys
  // go to no other host.
  std::vector<std::string> allowedHosts;
  BreakerConfig breaker;
};

// Quota shared by several Tollgate instances through a redis-server (core/shared). Admission of the shared
// groups' keys is decided atomically on the Redis clock; each instance leases a little capacity at a time.
struct SharedQuotaConfig {
  bool enabled = false;
  std::string host = "127.0.0.1";
  int port = 6379;
  int database = 0;
  std::string userEnv;      // environment variable holding the ACL user (empty: the default user)
  std::string passwordEnv;  // environment variable holding the password (empty: no AUTH)
  std::string user, password;  // read from those variables at load (never logged)
  std::string ns = "tollgate";  // prefix of every key and channel, so fleets can share one server
  std::vector<std::string> groups;  // groups whose keys share quota; empty = all
  std::string instance;     // this instance's id in the fleet; empty = "<hostname>:<pid>"
  double timeoutS = 0.05;   // every Redis call; beyond it Redis counts as unreachable
  double heartbeatS = 1;    // an instance silent for a heartbeat (no heartbeat, no lease call) is gone: its
                            // lease returns to the others
  double leaseS = 0.1;      // a lease holds this many seconds of the fleet's rate (at least one request)
  double burstS = 0.2;      // the shared bucket holds this many seconds of the fleet's rate
  double p0Reserve = 0.25;  // share of the shared bucket only P0 may take (fleet-wide tiers)
  bool fleetActions = true; // operator actions (pause a tier, a group's concurrency) apply to the whole fleet

  bool shares(const std::string& group) const {
    if (!enabled) return false;
    if (groups.empty()) return true;
    for (const auto& g : groups)
      if (g == group) return true;
    return false;
  }
};

struct EngineConfig {
  std::string name = "tollgate";  // instance name, recorded with operator actions
  std::vector<GroupConfig> groups;
  std::array<TierConfig, kTierCount> tiers{};
  int globalConcurrency = 64;
  RateCeilingConfig rateCeiling;  // operator ceiling on the send rate of all groups together (0 = none)
  RetryConfig retry;
  double requestTimeoutS = 60;
  double connectTimeoutS = 10;
  double snapshotIntervalS = 0.25;
  std::int64_t maxResponseBytes = 64 * 1024 * 1024;  // a longer response body fails the request (not retried)
  std::string tierHeader = "X-Tollgate-Tier";  // sent with every request, empty = none
  std::string groupHeader = "X-RateLimit-Group";  // sent with every request, empty = none
  SharedQuotaConfig sharedQuota;
  // Not configurable: a compressed replay (WhatIfRunner) sets its speed here, so the engine's own time
  // constants (adaptive concurrency, the rate learnt from bare refusals) cover the recording's seconds.
  double timeScale = 1;

  const GroupConfig* findGroup(const std::string& n) const {
    for (const auto& g : groups)
      if (g.name == n) return &g;
    return nullptr;
  }
};

}  // namespace tg
