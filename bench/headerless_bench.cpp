// headerless_bench: an upstream that says nothing (dialect "none": bare 429s, no Retry-After, no quota
// headers) with a hidden rate limit. Tollgate has to find the limit through its bare-429 backoff and its
// adaptive concurrency; the baselines run the same schedule for comparison.
//
//   headerless_bench [--seconds 30] [--limit 40] [--latency-ms 200] [--strategies all|s1,s2] [--json FILE]
//
// The hidden limit is a token bucket of `limit` requests/s (burst = limit). With 200 ms of latency it is
// also a concurrency bound: limit x latency = 8 requests in flight. Arrivals: P1 at 2x the limit, open loop.
#include "load_scenario.h"

#include <cmath>
#include <cstdio>
#include <map>

using namespace tgbench;

int main(int argc, char** argv) {
  const Args args(argc, argv);
  const double seconds = args.number("seconds", 30);
  const double limit = args.number("limit", 40);
  const double latencyMs = args.number("latency-ms", 200);
  const std::string jsonPath = args.text("json", "build/bench-results/headerless_bench.json");
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 42));
  const double warmupS = 5;

  Scenario sc;
  sc.groups = {{"hidden", limit}};
  sc.dialect = "none";
  sc.retryAfter = false;
  sc.latency = {{"distribution", "fixed"}, {"mean", latencyMs}};
  const double hiddenConcurrency = limit * latencyMs / 1000.0;

  const auto arrivals = makeArrivals({{0, tg::Tier::P1, 2 * limit}}, seconds, seed);
  std::fprintf(stderr, "headerless upstream, hidden limit %.0f/s: %zu arrivals over %.0f s\n", limit, arrivals.size(),
               seconds);
  nlohmann::json runs = nlohmann::json::array();
  std::map<std::string, Figures> figs;
  double meanLimit = NAN;
  // --strategies tollgate: Tollgate alone (the baselines' figures do not change with the engine).
  const std::string picked = args.text("strategies", "all");
  const auto names = picked == "all" ? strategyNames() : splitCommas(picked);
  for (const auto& name : names) {
    const RunLog log = runStrategy(name, sc, arrivals, seconds);
    const Figures f = computeFigures(log, limit, warmupS, seconds, -1);
    figs[name] = f;
    nlohmann::json run{{"strategy", name}, {"figures", toJson(f)}, {"per_second", toJson(perSecond(log))}};
    // 429 share over the measured window as well (the first seconds are the search for the limit).
    std::uint64_t att = 0, r429 = 0;
    for (const auto& a : log.attempts)
      if (a.atS >= warmupS) ++att, r429 += a.status == tg::http::kTooManyRequests;
    run["share_429_after_warmup"] = att ? static_cast<double>(r429) / static_cast<double>(att) : 0.0;
    if (!log.limits.empty()) {
      nlohmann::json trace = nlohmann::json::array();
      double sum = 0;
      int n = 0;
      for (const auto& l : log.limits) {
        trace.push_back({l.atS, l.limit[0]});
        if (l.atS >= warmupS) sum += l.limit[0], ++n;
      }
      run["concurrency_limit_trace"] = trace;
      if (name == "tollgate" && n) meanLimit = sum / n;
    }
    runs.push_back(run);
  }

  std::printf("\nHeaderless upstream: bare 429s, hidden token bucket %.0f/s, %.0f ms latency (= %.0f in flight); "
              "P1 arrivals at 2x; figures over [%.0f s, %.0f s)\n\n",
              limit, latencyMs, hiddenConcurrency, warmupS, seconds);
  TablePrinter t({"strategy", "goodput/s", "goodput / hidden limit", "429 share (whole run)", "attempts/request",
                  "wait p95 s"});
  for (const auto& name : names) {
    const Figures& f = figs[name];
    t.row({name, fmt(f.goodputPerS), pct(f.goodputRatio), pct(f.share429, 2), fmt(f.amplification, 3),
           fmt(f.waitP95S, 2)});
  }
  t.print();
  const Figures& tgf = figs["tollgate"];
  const bool goodOk = tgf.goodputRatio >= 0.90, r429Ok = tgf.share429 <= 0.02;
  std::printf("\nTollgate's mean adaptive concurrency limit after warm-up: %s (hidden: %.0f)\n",
              fmt(meanLimit, 1).c_str(), hiddenConcurrency);
  std::printf("Tollgate targets: >= 90%% of the hidden limit: %s (%s); <= 2%% 429s: %s (%s)\n",
              goodOk ? "met" : "MISSED", pct(tgf.goodputRatio).c_str(), r429Ok ? "met" : "MISSED",
              pct(tgf.share429, 2).c_str());

  writeJson(jsonPath, {{"bench", "headerless"},
                       {"machine", machineJson()},
                       {"seconds", seconds},
                       {"warmup_s", warmupS},
                       {"hidden_limit_per_s", limit},
                       {"latency_ms", latencyMs},
                       {"hidden_concurrency", hiddenConcurrency},
                       {"tollgate_mean_concurrency_limit", std::isnan(meanLimit) ? nlohmann::json(nullptr)
                                                                                  : nlohmann::json(meanLimit)},
                       {"sim", sc.simJson()},
                       {"engine", sc.engineJson()},
                       {"runs", runs},
                       {"targets", {{"goodput_ge_90pct_hidden", goodOk}, {"r429_le_2pct", r429Ok}}}});
  return 0;
}
