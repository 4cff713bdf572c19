// The engine's observable state. An EngineSnapshot is immutable once published (shared_ptr<const>),
// produced every 250 ms on the engine thread and read from any thread.
//
// Counters are cumulative since engine start, so any reader can difference two snapshots; SampleBuilder
// turns consecutive snapshots into per-second Sample rows (the unit of history, charts and replay).
#pragma once

#include "types.h"
#include "wait_reason.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace tg {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
inline bool known(double v) { return !std::isnan(v); }

// What we know of one quota dimension of a group, summed over its keys.
struct DimensionState {
  double limit = kUnknown;       // server-reported limit for the window (or configured), NaN if unknown
  double remaining = kUnknown;   // server-reported remaining, NaN if unknown
  EpochMs resetAtMs = 0;         // when the server said the window resets (0 = unknown)
  double localTokens = kUnknown; // level of our own token bucket for this dimension
};

struct GroupCounters {
  std::uint64_t submitted = 0;  // requests accepted into a queue
  std::array<std::uint64_t, kTierCount> submittedByTier{};  // the same, per tier (what-if re-drive)
  std::uint64_t sends = 0;      // HTTP attempts started (first tries + retries)
  std::uint64_t ok = 0;         // 2xx/3xx responses
  std::uint64_t r429 = 0;       // 429 responses (and GitHub 403 rate-limit responses)
  std::uint64_t r5xx = 0;       // 5xx responses
  std::uint64_t other4xx = 0;   // other 4xx responses
  std::uint64_t netErrors = 0;  // timeouts, resets, refused
  std::uint64_t retries = 0;    // attempts that were retries
  std::uint64_t shed = 0;       // requests dropped unsent (queue full, deadline, drain): the sum of shedByReason
  std::array<std::uint64_t, kShedReasonCount> shedByReason{};  // indexed by ShedReason (None stays 0)
  std::uint64_t completed = 0;  // requests finished successfully
  std::uint64_t failed = 0;     // requests finished with an error (incl. shed)
  std::uint64_t tokensUsed = 0; // tokens reported by responses (or estimated)
  std::uint64_t breakerOpens = 0;  // transitions of the breaker to open (from closed or half-open)
};

// One key of a group, for per-key metrics: named by its fingerprint, never the key.
struct KeySnapshot {
  std::string fingerprint;
  bool clientsOwn = false;  // a pass-through client's own key, not one of the config's
  std::array<DimensionState, kDimensionCount> dims{};  // indexed by Dimension
};

struct GroupSnapshot {
  std::string group;
  std::array<DimensionState, kDimensionCount> dims{};  // indexed by Dimension, summed over the keys
  int keys = 0;
  std::vector<KeySnapshot> keyStates;  // one per key, in config order
  int inFlight = 0;
  int concurrencyLimit = 0;    // effective limit now (adaptive, <= ceiling)
  int concurrencyCeiling = 0;  // operator-set ceiling
  RateCeilingConfig rateCeiling;  // operator-set rate ceiling (0 = none)
  std::array<int, kTierCount> queueDepth{};
  std::array<bool, kTierCount> tierPaused{};  // paused for this group (group-level or global)
  bool paused = false;                        // whole group paused by operator
  bool draining = false;
  BreakerState breaker = BreakerState::Closed;
  GroupCounters counters;
  double latencyP50Ms = kUnknown;  // over the recent window (last ~10 s of completions)
  double latencyP95Ms = kUnknown;
  WaitReason wait;         // why the group waits (code and numbers), for the dashboard
  std::string waitReason;  // the same in English (waitText): empty when not waiting; e.g. "Retry-After until 12:03:41"
};

enum class EngineState : std::uint8_t { Stopped, Running, Draining };

// One instance of a fleet sharing quota through Redis, as its last heartbeat told.
struct FleetMemberSnapshot {
  std::string instance;
  bool self = false;
  std::string mode;         // "shared" | "fallback"
  double okPerS = 0;        // successes per second on the shared groups since its previous heartbeat
  double sendsPerS = 0;
  std::uint64_t r429 = 0;   // 429s on the shared groups since it started
  int inFlight = 0;
};

struct SharedQuotaSnapshot {
  bool enabled = false;
  std::string mode;         // "starting" | "shared" | "fallback"
  std::string instance;     // this instance's id
  std::string why;          // why in fallback (Redis's error, never a password)
  int live = 0;             // instances alive at the last heartbeat
  std::vector<FleetMemberSnapshot> members;
  std::uint64_t redisCalls = 0;    // commands this instance sent to Redis (scripts, heartbeats, publishes)
  double leaseP50Ms = 0, leaseP99Ms = 0;  // round trip of a lease call, recent ones
  std::uint64_t leaseWaits = 0;    // dispatches where a request waited for a lease to arrive
  // Admission delay Redis added per request sent (waiting only for a lease call to come back, the local
  // quota allowing the request), recent sends: p50/p99/max in ms, and how many sends waited at all.
  double redisDelayP50Ms = 0, redisDelayP99Ms = 0, redisDelayMaxMs = 0;
  std::uint64_t redisDelayed = 0;
};

struct EngineSnapshot {
  EpochMs tsMs = 0;
  std::uint64_t seq = 0;
  EngineState state = EngineState::Stopped;
  int globalInFlight = 0;
  int globalConcurrencyLimit = 0;
  RateCeilingConfig globalRateCeiling;
  std::array<bool, kTierCount> tierPaused{};  // global tier pauses
  std::vector<GroupSnapshot> groups;
  SharedQuotaSnapshot shared;

  const GroupSnapshot* find(const std::string& name) const {
    for (const auto& g : groups)
      if (g.group == name) return &g;
    return nullptr;
  }
};

using SnapshotPtr = std::shared_ptr<const EngineSnapshot>;

}  // namespace tg
