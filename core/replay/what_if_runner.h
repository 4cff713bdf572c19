// Re-drives a recorded stretch: the scenario's arrivals are submitted to a fresh Engine (the recorded group
// ceilings, edited by the overrides) that talks to an in-process SimServer reproducing the upstream's limits,
// time compressed by `speed`: arrival times, windows, latency and the engine's timing settings are divided
// by it, so rates scale up and the run takes durationS / speed of wall time. The re-driven samples
// (SampleBuilder over engine snapshots) are mapped back onto the recording's time axis, counts per original
// second, latencies multiplied back. Compression is faithful for everything configured in seconds; the
// engine's own time constants (adaptive concurrency, the learnt rate) run on a clock as fast (timeScale);
// latency windows counted in responses need no scaling.
#pragma once

#include "replay_scenario.h"
#include "replay_summary.h"
#include "what_if_overrides.h"

#include <atomic>
#include <functional>

namespace tg {

struct WhatIfOptions {
  double speed = 10;           // time compression factor (1 = real time)
  double drainCapS = 120;      // after the last arrival, wait at most this long (original seconds)
  std::function<void(double fraction)> progress;  // 0..1, called from the runner's thread
  const std::atomic<bool>* cancel = nullptr;     // set to stop early; the result is partial
};

struct WhatIfResult {
  bool ok = false;
  std::string error;
  bool cancelled = false;
  double speed = 1;
  double wallS = 0;                   // wall time of the run
  std::vector<Sample> samples;        // re-driven, on the recording's time axis
  std::vector<Event> events;          // re-driven, on the recording's time axis
  ReplaySummary recorded, redriven;
  double p0TotalP50Ms = kUnknown, p0TotalP95Ms = kUnknown;  // re-drive: submit-to-done of P0 requests
  nlohmann::json simConfig;           // the upstream as rebuilt (compressed)
  nlohmann::json overrides;
  // False when the recording holds no engine settings (made before they were recorded, 2026-12-06): the re-drive
  // ran on the defaults (tiers, retries, timeouts, no rate ceiling), not on the recorded engine's.
  bool recordedSettings = false;

  nlohmann::json toJson(const ReplayScenario& scenario) const;  // the report (recorded vs re-driven per group)
};

class WhatIfRunner {
 public:
  // The engine settings the recording ran with, as far as samples tell, time compressed by `speed`.
  static EngineConfig baseConfig(const ReplayScenario& scenario, double speed);
  // Blocks for about durationS / speed (+ drain). Runs on the caller's thread (a worker in the UI); starts
  // the simulator's and the engine's threads and stops them before returning. Thread-safe (no shared state).
  static WhatIfResult run(const ReplayScenario& scenario, const WhatIfOverrides& overrides, WhatIfOptions opts);
};

}  // namespace tg
