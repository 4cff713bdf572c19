// quota_drop_bench: the upstream halves every quota mid-run (SimServer::scaleQuota("*", 0.5)). Per strategy:
// how long until goodput is within 5% of the new quota, and how many 429s were paid after the drop.
//
//   quota_drop_bench [--seconds 30] [--drop-at 15] [--dialect openai] [--latency-ms 20]
//                    [--retry-after-format ms|seconds|http-date] [--json FILE]
//
// The simulator's 429s carry retry-after-ms and a whole-second Retry-After (format "ms", the default), as
// OpenAI's do; the SDKs and Tollgate read retry-after-ms first, and so does the Retry-After-only baseline.
// With "seconds", a 429 just after the drop says "Retry-After: 1" for a wait of tens of milliseconds, and every
// strategy that honours it loses a whole 1-s window to the rounding.
//
// Same three groups and workload (with the P2 flood) as goodput_bench. Settling: seconds are counted from the
// drop; the settle time is the start of the first of three consecutive one-second windows whose goodput is
// within +-5% of the new quota (0 = the first window after the drop already is). The quota window is 1 s.
#include "load_scenario.h"

#include <cmath>
#include <cstdio>
#include <map>

using namespace tgbench;

namespace {

struct DropFigures {
  double settleS = NAN;     // NaN = never settled before the run ended
  int r429After = 0;        // 429s in [drop, end)
  int r429First5s = 0;      // 429s in [drop, drop + 5 s)
  double r429PerSBefore = 0;  // 429/s in [drop - 5 s, drop): the strategy's usual rate, for context
  double goodputAfter = 0;  // ok/s over [drop + 2 s, end)
  std::vector<int> okAfter;  // per second from the drop
};

DropFigures analyse(const RunLog& log, double dropS, double newQuota) {
  DropFigures d;
  const int n = static_cast<int>(std::floor(log.durationS - dropS));
  d.okAfter.assign(static_cast<std::size_t>(std::max(0, n)), 0);
  int okLate = 0, before = 0;
  for (const auto& a : log.attempts) {
    const double rel = a.atS - dropS;
    if (a.status == tg::http::kTooManyRequests) {
      if (rel >= 0) ++d.r429After;
      if (rel >= 0 && rel < 5) ++d.r429First5s;
      if (rel >= -5 && rel < 0) ++before;
    }
    if (a.status >= 200 && a.status < 300 && rel >= 0 && rel < n) {
      ++d.okAfter[static_cast<std::size_t>(rel)];
      if (rel >= 2) ++okLate;
    }
  }
  d.r429PerSBefore = before / 5.0;
  d.goodputAfter = n > 2 ? okLate / static_cast<double>(n - 2) : NAN;
  auto inBand = [&](int v) { return std::abs(v - newQuota) <= 0.05 * newQuota; };
  for (int k = 0; k + 2 < n; ++k)
    if (inBand(d.okAfter[static_cast<std::size_t>(k)]) && inBand(d.okAfter[static_cast<std::size_t>(k + 1)]) &&
        inBand(d.okAfter[static_cast<std::size_t>(k + 2)])) {
      d.settleS = k;
      break;
    }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args(argc, argv);
  const double seconds = args.number("seconds", 30);
  const double dropS = args.number("drop-at", seconds / 2);
  const std::string jsonPath = args.text("json", "build/bench-results/quota_drop_bench.json");
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 42));

  Scenario sc;
  sc.groups = threeGroups();
  sc.dialect = args.text("dialect", "openai");
  sc.retryAfterFormat = args.text("retry-after-format", "ms");
  sc.latency = {{"distribution", "fixed"}, {"mean", args.number("latency-ms", 20)}};
  if (args.number("bucket-fraction", 0) > 0) sc.groupExtra["bucket_fraction"] = args.number("bucket-fraction", 0);
  const double newQuota = sc.quotaPerS() / 2;

  const auto arrivals = makeArrivals(mixedWorkload(true), seconds, seed);
  std::fprintf(stderr, "quota drop at %.0f s: %zu arrivals over %.0f s\n", dropS, arrivals.size(), seconds);
  const std::vector<TimedSimAction> drop{{dropS, [](tg::SimServer& s) { s.scaleQuota("*", 0.5); }}};

  nlohmann::json runs = nlohmann::json::array();
  std::map<std::string, DropFigures> figs;
  for (const auto& name : strategyNames()) {
    const RunLog log = runStrategy(name, sc, arrivals, seconds, drop);
    const DropFigures d = analyse(log, dropS, newQuota);
    figs[name] = d;
    runs.push_back({{"strategy", name},
                    {"settle_s", std::isnan(d.settleS) ? nlohmann::json(nullptr) : nlohmann::json(d.settleS)},
                    {"r429_after_drop", d.r429After},
                    {"r429_first_5s_after_drop", d.r429First5s},
                    {"r429_per_s_before_drop", d.r429PerSBefore},
                    {"goodput_after_drop_per_s", d.goodputAfter},
                    {"ok_per_second_after_drop", d.okAfter},
                    {"per_second", toJson(perSecond(log))}});
  }

  std::printf("\nQuota drop: every quota halves at %.0f s (%.0f/s -> %.0f/s); %.0f s per run; 429s carry %s\n\n",
              dropS, sc.quotaPerS(), newQuota, seconds,
              sc.retryAfterFormat == "ms" ? "retry-after-ms + Retry-After" : ("Retry-After as " + sc.retryAfterFormat).c_str());
  TablePrinter t({"strategy", "settle s (+-5%)", "goodput after / new quota", "429s after drop", "429s first 5 s",
                  "429/s before drop", "429s after / Tollgate's"});
  const DropFigures& tgf = figs["tollgate"];
  for (const auto& name : strategyNames()) {
    const DropFigures& d = figs[name];
    t.row({name, std::isnan(d.settleS) ? "never" : fmt(d.settleS, 0), pct(d.goodputAfter / newQuota),
           std::to_string(d.r429After), std::to_string(d.r429First5s), fmt(d.r429PerSBefore),
           tgf.r429After > 0 ? fmt(static_cast<double>(d.r429After) / tgf.r429After, 1)
                             : (d.r429After > 0 ? "inf (Tollgate: 0)" : "1")});
  }
  t.print();

  bool fewest = true;
  for (const auto& name : strategyNames())
    if (name != "tollgate" && figs[name].r429After <= tgf.r429After) fewest = false;
  const bool settleOk = !std::isnan(tgf.settleS) && tgf.settleS <= 1;
  std::printf("\nTollgate targets: settled within one window (1 s): %s (%s s); fewer 429s after the drop than every "
              "baseline: %s (%d)\n",
              settleOk ? "met" : "MISSED", std::isnan(tgf.settleS) ? "never" : fmt(tgf.settleS, 0).c_str(),
              fewest ? "met" : "MISSED", tgf.r429After);

  writeJson(jsonPath, {{"bench", "quota_drop"},
                       {"machine", machineJson()},
                       {"seconds", seconds},
                       {"drop_at_s", dropS},
                       {"retry_after_format", sc.retryAfterFormat},
                       {"quota_per_s_before", sc.quotaPerS()},
                       {"quota_per_s_after", newQuota},
                       {"sim", sc.simJson()},
                       {"engine", sc.engineJson()},
                       {"runs", runs},
                       {"targets", {{"settle_within_one_window", settleOk}, {"fewest_429s_after_drop", fewest}}}});
  return 0;
}
