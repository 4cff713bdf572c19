// One row per group per interval (normally 1 s): rates, not cumulative counters. This is the shape that
// history stores, charts draw and replay re-reads, live or from SQLite alike.
#pragma once

#include "snapshot.h"

#include <map>
#include <string>
#include <vector>

namespace tg {

struct Sample {
  EpochMs tsMs = 0;  // end of the interval
  std::string group;
  double reqRemaining = kUnknown, reqLimit = kUnknown;
  double tokRemaining = kUnknown, tokLimit = kUnknown;
  EpochMs resetAtMs = 0;
  int inFlight = 0;
  int concurrencyLimit = 0;
  std::array<int, kTierCount> queueDepth{};
  // Counts during the interval.
  int sends = 0, ok = 0, r429 = 0, r5xx = 0, retries = 0, shed = 0;
  std::array<int, kTierCount> arrivals{};  // requests submitted per tier (the workload, for re-drive)
  double p50Ms = kUnknown, p95Ms = kUnknown;
  BreakerState breaker = BreakerState::Closed;
  double intervalS = 1.0;
};

// Turns a stream of cumulative snapshots into per-interval samples. Not thread-safe: one owner.
class SampleBuilder {
 public:
  // Returns one Sample per group in `snap`; the first call for a group yields zero counts.
  std::vector<Sample> next(const EngineSnapshot& snap);

 private:
  struct Prev {
    GroupCounters counters;
    EpochMs tsMs = 0;
  };
  std::map<std::string, Prev> prev_;
};

}  // namespace tg
