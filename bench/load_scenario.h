// The shared set-up of the load benchmarks: three quota groups on an in-process simulator, the mixed-tier
// open-loop workload, and one run of any strategy against a fresh simulator.
#pragma once

#include "baseline_clients.h"
#include "bench_support.h"
#include "sim_server.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tgbench {

struct GroupSpec {
  std::string name;
  double quotaPerS = 0;  // the simulator's token-bucket rate (hidden from the client unless headers say it)
};

struct Scenario {
  std::vector<GroupSpec> groups;
  std::string dialect = "openai";
  bool retryAfter = true;
  bool refuseAtOnce = false;  // the simulator's refuse_at_once: a 429 skips the latency
  std::string retryAfterFormat = "seconds";  // the simulator's: "seconds", "http-date", or "ms" (+ retry-after-ms)
  std::string algorithm = "token-bucket";
  nlohmann::json latency = {{"distribution", "fixed"}, {"mean", 20}};
  int concurrencyPerGroup = 16;  // Tollgate's ceiling and the baselines' fixed concurrency
  nlohmann::json engineExtra = nlohmann::json::object();  // merged into the Tollgate config (top level)
  nlohmann::json groupExtra = nlohmann::json::object();   // merged into each Tollgate group
  nlohmann::json simGroupExtra = nlohmann::json::object();  // merged into each simulator group (burst, nodelay, ...)
  // A limiter in front of the simulator (e.g. a real nginx): given the simulator's URL, starts it and returns
  // the URL every client then uses; frontStop ends it after the run. Empty: clients call the simulator.
  std::function<std::string(const std::string& simUrl)> front;
  std::function<void()> frontStop;

  nlohmann::json simJson() const;
  nlohmann::json engineJson() const;
  double quotaPerS() const;
};

// The three groups a (50/s), b (30/s), c (20/s) and their mixed-tier arrivals at 3x the quota: P0 trickles in
// every group (5, 3, 2 /s); with `flood`, group a gets a P2 flood of 120/s, without it only its P0 and P1.
std::vector<GroupSpec> threeGroups();
std::vector<StreamSpec> mixedWorkload(bool flood);

// Every limiter kind the simulator has, as the limiter benchmarks name them: fixed-window, sliding-window,
// sliding-counting (refused requests count too), token-bucket, gcra, leaky-nodelay and leaky-delayed (nginx
// limit_req, burst = limit/5), concurrency (max_concurrent kConcurrencyLimit and a latency of that many /
// limit s, so the limit is reached only by keeping exactly that many in flight; no rate limit), and
// concurrency-at-once (the same refusing without the latency, as a limiter in front of the work does: nginx
// limit_conn, an API gateway; its refusals come back before the acceptances of requests sent with them).
const std::vector<std::string>& limiterKinds();
inline constexpr int kConcurrencyLimit = 8;
// Sets the scenario's (single) simulator group to `kind` at `limit` requests/s; throws std::invalid_argument
// for an unknown kind.
void configureLimiterKind(Scenario& sc, const std::string& kind, double limit);
// How the simulator answers an overflow: "bare" (no header at all), "retry-after" (whole seconds, no quota
// headers), "headers" (x-ratelimit limit/remaining/reset and Retry-After).
void configureAnswerStyle(Scenario& sc, const std::string& style);

// "tollgate", "naive", "backoff+jitter", "retry-after"
const std::vector<std::string>& strategyNames();
// The strategies a matrix runs: "tollgate" alone; all four with --baselines; --strategies s1,s2 picks some (e.g.
// the baselines alone: their figures do not change with the engine). An unknown name is an error on stderr
// naming it and `program`, and an empty result.
std::vector<std::string> pickStrategies(const Args& args, const char* program);

// Runs one strategy against a fresh in-process simulator. `simActions` get the simulator to act on (e.g.
// scaleQuota) at their times.
struct TimedSimAction {
  double atS = 0;
  std::function<void(tg::SimServer&)> fn;
};
RunLog runStrategy(const std::string& strategy, const Scenario& s, const std::vector<Arrival>& arrivals, double durationS,
                   const std::vector<TimedSimAction>& simActions = {});

}  // namespace tgbench
