// What a recorded stretch of history looked like, rebuilt for a re-drive: the workload (arrivals per group
// and tier per second, Sample::arrivals) and the upstream's behaviour (the request limit it reported over
// time, quota changes, the Retry-After it sent). From it come a tollgate-sim config with a schedule of
// set_limit actions and the engine settings the recording ran with (as far as samples tell).
// Plain data; building reads the history through the caller's reader (one short read per query).
#pragma once

#include "history_reader.h"

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tg {

struct ScenarioGroup {
  std::string name;
  std::vector<std::array<int, kTierCount>> arrivals;  // per second of the range, index 0 = [fromMs, fromMs+1s)
  double initialLimit = 0;   // requests per window at the start (0 = unlimited / unknown)
  double windowS = 1;        // inferred from reset times; 1 when unknown
  double tokenLimit = 0;     // tokens per window (0 = none)
  int concurrency = 16;      // ceiling: the highest concurrency limit recorded
  std::vector<std::pair<double, double>> limitChanges;  // (seconds from range start, new request limit)
  double latencyMs = 50;     // typical recorded latency (median of p50), the simulator's fixed latency
  // The upstream stated no quota but refused (bare 429s, or Retry-After alone): initialLimit is then what it
  // accepted per second while it refused (the upper quartile over those seconds), and the re-drive answers without
  // quota headers, so the engine learns the rate from refusals as it did live.
  bool headerless = false;
  std::int64_t totalArrivals() const;
};

// The longest range a replay takes (a month, past the 30-day history retention): the scenario holds one entry
// per second per group, and the re-drive times arrivals with integer clocks.
inline constexpr std::int64_t kMaxReplaySpanMs = 31LL * 24 * 3600 * 1000;
// Why [fromMs, toMs) cannot be replayed (empty, or longer than kMaxReplaySpanMs), or empty.
std::string replaySpanProblem(EpochMs fromMs, EpochMs toMs);

struct ReplayScenario {
  EpochMs fromMs = 0, toMs = 0;
  std::int64_t incidentId = 0;            // 0 = a plain time range
  std::optional<Incident> incident;
  std::vector<ScenarioGroup> groups;
  std::vector<Sample> recorded;           // full-resolution samples of the range (for the comparison)
  std::vector<Event> events;              // events of the range
  std::vector<double> retryAfterSeenS;    // from Burst429Start details
  bool arrivalsKnown = false;             // false for schema < 3 recordings (no workload to re-drive)
  // The recorded engine's settings (EngineStart's "config": tiers, retries, limits), from its last start before
  // the range (or the first in it); null for recordings older than that.
  nlohmann::json engineConfig;
  std::vector<Event> actionsBefore;  // operator actions between that start and the range: in force at its start

  double durationS() const { return (double(toMs) - double(fromMs)) / 1000.0; }  // no int64 overflow

  // Reads [fromMs, toMs) from history. Returns nullopt and sets *error when a read fails.
  static std::optional<ReplayScenario> fromHistory(HistoryReader& reader, EpochMs fromMs, EpochMs toMs,
                                                   std::string* error);
  // The incident's span with `padMs` either side.
  static std::optional<ReplayScenario> fromIncident(HistoryReader& reader, std::int64_t id, std::int64_t padMs,
                                                    std::string* error);

  // tollgate-sim config reproducing the upstream, time compressed by `speed` (windows and latency divided,
  // schedule times divided): the openai dialect with millisecond resets and Retry-After-Ms, so short
  // windows survive rounding. When every limited group was headerless, no quota headers at all: bare 429s,
  // or Retry-After alone when the recording saw one (the simulator's dialect is one for all groups, so a
  // recording that mixes the two keeps the headers).
  nlohmann::json simConfigJson(double speed) const;
};

}  // namespace tg
