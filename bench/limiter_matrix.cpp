// limiter_matrix: Tollgate (and, with --baselines, the baseline clients) against every limiter kind the
// simulator has, in every way of answering an overflow, at two hidden limits and two concurrencies, each
// run from a cold start. Issue 14's numbers: goodput >= 90% of the hidden limit, 429 share <= 2%,
// amplification <= 1.05; and, in the `change` runs, back within 10% of a limit that halves or doubles in
// <= 5 s.
//
//   limiter_matrix [--seconds 20] [--kinds all|k1,k2] [--styles bare,retry-after,headers] [--limits 50,500]
//                  [--concurrency 16,64] [--baselines | --strategies s1,s2] [--change] [--latency-ms 20]
//                  [--repeat 1] [--json FILE]
//
// Kinds: fixed-window, sliding-window, sliding-counting (refused requests count too), token-bucket, gcra,
// leaky-nodelay and leaky-delayed (nginx limit_req, burst = limit/5), concurrency (max_concurrent 8 and a
// latency of 8/limit s, so the limit is 8 in flight; no rate limit), concurrency-at-once (the same, refusing
// without the latency). Styles: bare (no header at all), retry-after (whole seconds, no quota headers),
// headers (x-ratelimit: limit, remaining, reset, and Retry-After). Arrivals: P1, open loop, at twice the
// limit. The `change` runs (40 s) halve the limit at 10 s and double it back at 25 s (a concurrency kind: 4 in
// flight, then 8 again).
#include "load_scenario.h"

#include <algorithm>
#include <cstdio>

using namespace tgbench;

int main(int argc, char** argv) {
  const Args args(argc, argv);
  const double seconds = args.number("seconds", 20);
  const double latencyMs = args.number("latency-ms", 20);
  const std::string kindsArg = args.text("kinds", "all");
  const auto kinds = kindsArg == "all" ? limiterKinds() : splitCommas(kindsArg);
  const auto styles = splitCommas(args.text("styles", "bare,retry-after,headers"));
  const auto limits = splitCommas(args.text("limits", "50,500"));
  const auto concurrencies = splitCommas(args.text("concurrency", "16,64"));
  const bool change = args.flag("change");
  // --repeat N: each row N times (a change row's settle moves by seconds from run to run at the same commit).
  const int repeat = std::max(1, static_cast<int>(args.number("repeat", 1)));
  const std::string jsonPath = args.text("json", "build/bench-results/limiter_matrix.json");
  const std::vector<std::string> strategies = pickStrategies(args, "limiter_matrix");
  if (strategies.empty()) return 2;

  std::printf("limiter matrix: %s runs of %.0f s from a cold start, %.0f ms latency, P1 arrivals at 2x the limit\n\n",
              change ? "change (limit halves at 10 s, doubles back at 25 s)" : "steady", change ? 40.0 : seconds,
              latencyMs);
  if (change)
    std::printf("%-16s %-11s %5s %4s  %-15s %9s %8s %7s %7s %9s %9s %8s %8s\n", "kind", "answer", "limit", "C",
                "strategy", "goodput/s", "of limit", "429s", "ampl.", "settle/2", "settle*2", "reach/2", "reach*2");
  else
    std::printf("%-16s %-11s %5s %4s  %-15s %9s %8s %7s %7s\n", "kind", "answer", "limit", "C", "strategy",
                "goodput/s", "of limit", "429s", "ampl.");
  nlohmann::json runs = nlohmann::json::array();
  int met = 0, total = 0, reached = 0;
  for (const auto& kind : kinds) {
    for (const auto& style : styles) {
      const bool conc = kind.starts_with("concurrency");
      if (conc && style == "headers") continue;  // a concurrency limit has no quota to state
      for (const auto& limitText : limits) {
        const double limit = std::atof(limitText.c_str());
        for (const auto& cText : concurrencies) {
          const int c = std::atoi(cText.c_str());
          Scenario sc;
          sc.groups = {{"hidden", limit}};
          sc.latency = {{"distribution", "fixed"}, {"mean", latencyMs}};
          sc.concurrencyPerGroup = c;
          configureLimiterKind(sc, kind, limit);
          configureAnswerStyle(sc, style);
          const double runS = change ? 40 : seconds;
          const auto arrivals = makeArrivals({{0, tg::Tier::P1, 2 * limit}}, runS, 42);
          std::vector<TimedSimAction> actions;
          if (change) {
            // A concurrency kind's max_concurrent scales with the rest (8 in flight, 4, 8 again).
            actions.push_back({10, [](tg::SimServer& s) { s.scaleQuota("hidden", 0.5); }});
            actions.push_back({25, [](tg::SimServer& s) { s.scaleQuota("hidden", 1.0); }});
          }
          for (int rep = 0; rep < repeat; ++rep) {
            for (const auto& name : strategies) {
              const RunLog log = runStrategy(name, sc, arrivals, runS, actions);
              const SecondSeries series = perSecond(log);
              nlohmann::json row{{"kind", kind}, {"answer", style}, {"limit", limit}, {"concurrency", c},
                                 {"strategy", name}, {"repeat", rep}, {"per_second", toJson(series)}};
              if (!change) {
                const Figures f = computeFigures(log, limit, 0, seconds, -1);
                std::printf("%-16s %-11s %5.0f %4d  %-15s %9.1f %7.0f%% %6.1f%% %7.2f\n", kind.c_str(), style.c_str(),
                            limit, c, name.c_str(), f.goodputPerS, 100 * f.goodputRatio, 100 * f.share429,
                            f.amplification);
                if (name == "tollgate") {
                  ++total;
                  met += f.goodputRatio >= 0.9 && f.share429 <= 0.02 && f.amplification <= 1.05;
                }
                row["figures"] = toJson(f);
              } else {
                const Figures f = computeFigures(log, (limit * 10 + limit / 2 * 15 + limit * 15) / 40, 0, runS, -1);
                const std::vector<double> okPerS(series.ok.begin(), series.ok.end());
                const double down = settleS(okPerS, 10, 25, limit / 2), up = settleS(okPerS, 25, runS, limit);
                const double reachDown = settleS(okPerS, 10, 25, limit / 2, true);
                const double reachUp = settleS(okPerS, 25, runS, limit, true);
                std::printf("%-16s %-11s %5.0f %4d  %-15s %9.1f %7.0f%% %6.1f%% %7.2f %8.0fs %8.0fs %7.0fs %7.0fs\n",
                            kind.c_str(), style.c_str(), limit, c, name.c_str(), f.goodputPerS, 100 * f.goodputRatio,
                            100 * f.share429, f.amplification, down, up, reachDown, reachUp);
                if (name == "tollgate") {
                  ++total;
                  met += down >= 0 && down <= 5 && up >= 0 && up <= 5;
                  reached += reachDown >= 0 && reachDown <= 5 && reachUp >= 0 && reachUp <= 5;
                }
                row["figures"] = toJson(f);
                row["settle_halved_s"] = down;
                row["settle_doubled_s"] = up;
                row["reach_halved_s"] = reachDown;
                row["reach_doubled_s"] = reachUp;
              }
              std::fflush(stdout);
              runs.push_back(row);
            }
          }
        }
      }
    }
  }
  if (change)
    std::printf("\ngoal (issue 14): back within 10%% of the new limit in <= 5 s after it halves and after it doubles: "
                "%d of %d tollgate rows (at least 90%% of it in <= 5 s, above it counted as reached: %d)\n", met,
                total, reached);
  else
    std::printf("\ngoal (issue 14): goodput >= 90%% of the limit, <= 2%% 429s, amplification <= 1.05: %d of %d "
                "tollgate rows\n", met, total);
  writeJson(jsonPath, {{"benchmark", "limiter_matrix"}, {"change", change}, {"runs", runs}});
  return 0;
}
