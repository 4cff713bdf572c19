// Headline numbers of a stretch of samples, per group and in total: what the what-if comparison puts side by
// side for the recording and the re-drive. Computed the same way for both, from samples only.
#pragma once

#include "json_text.h"
#include "sample.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tg {

struct Headline {
  std::int64_t arrivals = 0, sends = 0, ok = 0, r429 = 0, shed = 0;
  // Arrived and neither answered ok nor shed: cancelled (a stop, a drain cap) or failed.
  std::int64_t unfinished() const { return std::max<std::int64_t>(0, arrivals - ok - shed); }
  // Seconds from the range start until the work that arrived was done (queues empty, nothing in flight after
  // the last arrival); NaN when that did not happen in the samples, or when over kUnfinishedShare of what arrived
  // was never done (queues emptied by the stop's cancellations read as "done" at the drain cap).
  double completionS = kUnknown;
  static constexpr double kUnfinishedShare = 0.05;
  // Latency of groups that had P0 arrivals: median of the per-second p50, 95th percentile of the p95.
  double p0P50Ms = kUnknown, p0P95Ms = kUnknown;
  nlohmann::json toJson() const;
};

struct ReplaySummary {
  std::map<std::string, Headline> groups;
  Headline total;

  // `fromMs`: the range start the times count from. Pure function of the samples.
  static ReplaySummary fromSamples(const std::vector<Sample>& samples, EpochMs fromMs);
  nlohmann::json toJson() const;
};

}  // namespace tg
