// goodput_bench: goodput against a known quota, Tollgate vs three baseline clients, on the same open-loop
// schedule against a fresh in-process simulator each.
//
//   goodput_bench [--seconds 15] [--dialect openai] [--latency-ms 20] [--bucket-fraction F] [--json FILE] [--seed 42]
//
// Three groups with token-bucket quotas (50, 30, 20 /s); arrivals at 3x the quota, tiers mixed, a P2 flood on
// group "a" while P0 trickles everywhere. Every strategy runs twice: with the flood and without it (group "a"
// then gets only its P0 and P1), so the P0 latency under the flood has a reference measured in the same run.
#include "load_scenario.h"

#include <cmath>
#include <cstdio>
#include <map>

using namespace tgbench;


int main(int argc, char** argv) {
  const Args args(argc, argv);
  const double seconds = args.number("seconds", 15);
  const std::string jsonPath = args.text("json", "build/bench-results/goodput_bench.json");
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 42));
  const double warmupS = 3;

  Scenario sc;
  sc.groups = threeGroups();
  sc.dialect = args.text("dialect", "openai");
  sc.latency = {{"distribution", "fixed"}, {"mean", args.number("latency-ms", 20)}};
  // Default: the engine's own default (0.95). Given, it sets every group's bucket_fraction.
  if (args.number("bucket-fraction", 0) > 0) sc.groupExtra["bucket_fraction"] = args.number("bucket-fraction", 0);

  nlohmann::json runs = nlohmann::json::array();
  std::map<std::string, std::map<bool, Figures>> figs;
  for (bool flood : {true, false}) {
    const auto arrivals = makeArrivals(mixedWorkload(flood), seconds, seed);
    std::fprintf(stderr, "%s: %zu arrivals over %.0f s\n", flood ? "with P2 flood" : "without flood", arrivals.size(),
                 seconds);
    for (const auto& name : strategyNames()) {
      const RunLog log = runStrategy(name, sc, arrivals, seconds);
      const Figures f = computeFigures(log, sc.quotaPerS(), warmupS, seconds, 0);
      figs[name][flood] = f;
      runs.push_back({{"strategy", name}, {"flood", flood}, {"arrivals", arrivals.size()}, {"figures", toJson(f)},
                      {"per_second", toJson(perSecond(log))}});
    }
  }

  std::printf("\nGoodput vs quota: 3 groups (50/30/20 per s, token bucket, dialect %s, %s ms latency), arrivals "
              "3x quota, P2 flood on group a; %.0f s per run, figures over [%.0f s, %.0f s)\n\n",
              sc.dialect.c_str(), fmt(sc.latency["mean"].get<double>(), 0).c_str(), seconds, warmupS, seconds);
  TablePrinter t({"strategy", "goodput/s", "goodput/quota", "429 share", "attempts/request", "wait p95 s",
                  "P0 p50 ms", "P0 p95 ms", "P0 p95 no flood ms", "P0 p95 flood/no flood", "P0 open at end"});
  for (const auto& name : strategyNames()) {
    const Figures& f = figs[name][true];
    const Figures& n = figs[name][false];
    t.row({name, fmt(f.goodputPerS), pct(f.goodputRatio), pct(f.share429, 2), fmt(f.amplification, 3),
           fmt(f.waitP95S, 2), fmt(f.p0P50S * 1000, 0), fmt(f.p0P95S * 1000, 0), fmt(n.p0P95S * 1000, 0),
           fmt(f.p0P95S / n.p0P95S, 2), std::to_string(f.p0Unfinished) + "/" + std::to_string(f.p0Arrived)});
  }
  t.print();

  std::printf("\nBaselines relative to Tollgate (same run, with flood)\n\n");
  const Figures& tg = figs["tollgate"][true];
  TablePrinter r({"strategy", "goodput / Tollgate's", "429 share / Tollgate's", "amplification / Tollgate's",
                  "P0 p95 / Tollgate's"});
  for (const auto& name : strategyNames()) {
    if (name == "tollgate") continue;
    const Figures& f = figs[name][true];
    r.row({name, fmt(f.goodputRatio / tg.goodputRatio, 2),
           tg.share429 > 0 ? fmt(f.share429 / tg.share429, 1) : (f.share429 > 0 ? "inf (Tollgate: 0)" : "1"),
           fmt(f.amplification / tg.amplification, 2), fmt(f.p0P95S / tg.p0P95S, 2)});
  }
  r.print();

  const Figures& tn = figs["tollgate"][false];
  const bool goodOk = tg.goodputRatio >= 0.97, r429Ok = tg.share429 <= 0.005, ampOk = tg.amplification <= 1.05;
  // "Unaffected": within 20% of the no-flood p95, or within 10 ms of it (a fraction of one token interval).
  const bool p0Ok = tg.p0P95S <= tn.p0P95S * 1.2 || tg.p0P95S - tn.p0P95S <= 0.010;
  std::printf("\nTollgate targets: goodput >= 97%% of quota: %s (%s); 429 <= 0.5%% of attempts: %s (%s); "
              "amplification <= 1.05: %s (%s); P0 p95 unaffected by the flood: %s (%s vs %s ms)\n",
              goodOk ? "met" : "MISSED", pct(tg.goodputRatio).c_str(), r429Ok ? "met" : "MISSED",
              pct(tg.share429, 2).c_str(), ampOk ? "met" : "MISSED", fmt(tg.amplification, 3).c_str(),
              p0Ok ? "met" : "MISSED", fmt(tg.p0P95S * 1000, 0).c_str(), fmt(tn.p0P95S * 1000, 0).c_str());

  nlohmann::json out{{"bench", "goodput"},
                     {"machine", machineJson()},
                     {"seconds", seconds},
                     {"warmup_s", warmupS},
                     {"quota_per_s", sc.quotaPerS()},
                     {"sim", sc.simJson()},
                     {"engine", sc.engineJson()},
                     {"runs", runs},
                     {"targets",
                      {{"goodput_ge_97pct", goodOk},
                       {"r429_le_0_5pct", r429Ok},
                       {"amplification_le_1_05", ampOk},
                       {"p0_p95_unaffected", p0Ok}}}};
  writeJson(jsonPath, out);
  return 0;
}
