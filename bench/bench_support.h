// What every load benchmark shares: an open-loop arrival schedule, the per-attempt and per-request logs a
// client run produces, and the figures computed from them (goodput, 429 share, amplification, percentiles,
// per-second series). Tollgate and the baseline clients fill the same RunLog, so every strategy is measured
// by the same code.
#pragma once

#include "types.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tgbench {

// One open-loop Poisson stream: `rate` requests/s of `tier` into group index `group`.
struct StreamSpec {
  int group = 0;
  tg::Tier tier = tg::Tier::P1;
  double rate = 0;
  double fromS = 0;  // stream active in [fromS, toS)
  double toS = 1e9;
};

struct Arrival {
  double atS = 0;  // seconds from run start
  int group = 0;
  tg::Tier tier = tg::Tier::P1;
  int maxTokens = 16;  // the request body's max_tokens: what a token limit charges (with the prompt)
};

// The chat body every client sends for an arrival.
std::string chatBody(const Arrival& a);
// What the simulator's token dimension charges for it: max_tokens plus the prompt (body bytes / 4).
int simTokenCost(const Arrival& a);

// Merged, time-ordered arrivals of every stream over [0, durationS); the same seed gives the same schedule.
std::vector<Arrival> makeArrivals(const std::vector<StreamSpec>& streams, double durationS, std::uint64_t seed);

// One finished HTTP attempt. status 0 = network error.
struct AttemptLog {
  double atS = 0;  // completion, seconds from run start
  int group = 0;
  tg::Tier tier = tg::Tier::P1;
  int status = 0;
  bool retry = false;
};

// One request of the schedule. finished = a final outcome arrived before the run ended.
struct RequestLog {
  int group = 0;
  tg::Tier tier = tg::Tier::P1;
  double arrivalS = 0;
  bool finished = false;
  bool ok = false;
  double doneS = 0;   // arrival + submit-to-completion
  double waitS = 0;   // submit to the start of the final attempt (queueing + retry waits)
  int attempts = 0;
};

// Tollgate only: each group's effective (adaptive) concurrency limit at a snapshot.
struct LimitSample {
  double atS = 0;
  std::vector<int> limit;  // index = group
};

struct RunLog {
  std::string strategy;
  double durationS = 0;
  std::vector<AttemptLog> attempts;
  std::vector<RequestLog> requests;  // index = arrival index
  std::vector<LimitSample> limits;   // empty for the baselines
};

// A scheduled action during a run (e.g. halve the simulator's quota at 15 s).
struct TimedAction {
  double atS = 0;
  std::function<void()> fn;
};

// --- figures ---

struct Figures {
  double goodputPerS = 0;      // 2xx per second over [fromS, toS)
  double goodputRatio = 0;     // goodput / quota
  double share429 = 0;         // 429s / attempts
  double amplification = 0;    // attempts / requests attempted at least once
  std::uint64_t attempts = 0, r429 = 0, ok = 0, requestsSent = 0;
  double waitP50S = 0, waitP95S = 0;  // requests finished ok in the window
  // Submit-to-completion of P0 requests of `p0Group` that arrived in the window; a request still open at the end
  // counts as (end - arrival), a lower bound, and p0Unfinished says how many did.
  double p0P50S = 0, p0P95S = 0;
  int p0Arrived = 0, p0Unfinished = 0;
};

// quotaPerS: the sum of the quotas in force; window [fromS, toS) in run seconds.
Figures computeFigures(const RunLog& run, double quotaPerS, double fromS, double toS, int p0Group);

// Per second of the run: 2xx and 429 counts (all groups).
struct SecondSeries {
  std::vector<int> ok, r429;
};
SecondSeries perSecond(const RunLog& run);
nlohmann::json toJson(const SecondSeries& s);

// First second (from `fromS`) after which the mean of every 2-second span of `perS` (a count per second of the
// run) stays within 10% of `target` until `toS`; -1 if it never settles. `reachOnly`: at least 90% of it, however
// far above: a limiter with a burst (token bucket, GCRA) saves what any climb leaves unused and lets it through
// above its limit once the client reaches that limit, which the goal's +-10% counts as unsettled. The goal is
// the +-10%; the reach says which misses are that burst and which are the client's.
double settleS(const std::vector<double>& perS, double fromS, double toS, double target, bool reachOnly = false);
nlohmann::json toJson(const Figures& f);

// --- machine and process ---
long readStatusKb(const char* field);  // "VmRSS", "VmHWM" from /proc/self/status; -1 if missing
nlohmann::json machineJson();          // nproc, CPU model, RAM
void writeJson(const std::string& path, const nlohmann::json& j);  // creates parent directories

// Tiny fixed-width table printer.
class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> headers);
  void row(std::vector<std::string> cells);
  void print() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};
std::string fmt(double v, int decimals = 1);
std::string pct(double share, int decimals = 1);  // 0.034 -> "3.4%"

// "a,b,,c" -> {"a", "b", "c"}: the comma lists of the benchmarks' options.
std::vector<std::string> splitCommas(const std::string& text);

// Command line: --name value pairs and bare --flags.
class Args {
 public:
  Args(int argc, char** argv);
  double number(const std::string& name, double fallback) const;
  std::string text(const std::string& name, const std::string& fallback) const;
  bool flag(const std::string& name) const;

 private:
  std::vector<std::string> args_;
};

}  // namespace tgbench
