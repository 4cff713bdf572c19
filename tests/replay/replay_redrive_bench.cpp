// Measures a what-if re-drive of a 10-minute incident at the default speed: a synthetic recording (3 groups,
// 60 requests/s in all, one group's limit drops for 5 minutes) written through HistoryStore, rebuilt with
// ReplayScenario and re-driven by WhatIfRunner. Prints wall time and the headline numbers.
// Usage: replay_redrive_bench [SPEED]
#include "history_store.h"
#include "what_if_runner.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

using namespace tg;

int main(int argc, char** argv) {
  const double speed = argc > 1 ? std::atof(argv[1]) : WhatIfOptions{}.speed;
  const auto path = std::filesystem::temp_directory_path() / "tollgate-redrive-bench.db";
  std::filesystem::remove(path);
  const EpochMs t0 = nowEpochMs() - 3600'000;
  const int seconds = 600;
  {
    HistoryOptions ho;
    ho.checkOnOpen = false;
    std::string err;
    auto store = HistoryStore::open(path.string(), ho, &err);
    if (!store) return std::fprintf(stderr, "%s\n", err.c_str()), 1;
    const char* names[] = {"chat", "batch", "embed"};
    for (int s = 0; s < seconds; ++s) {
      std::vector<Sample> rows;
      for (int g = 0; g < 3; ++g) {
        Sample x;
        x.tsMs = t0 + EpochMs(s + 1) * 1000;
        x.group = names[g];
        const bool dropped = g == 0 && s >= 120 && s < 420;
        x.reqLimit = dropped ? 10 : 40;
        x.reqRemaining = 5;
        x.resetAtMs = x.tsMs + 500;
        x.arrivals = {g == 0 ? 10 : 0, g == 0 ? 10 : 10, g == 2 ? 10 : 0};
        x.sends = 20;
        x.ok = dropped ? 10 : 20;
        x.r429 = x.sends - x.ok;
        x.concurrencyLimit = 16;
        x.inFlight = 4;
        x.p50Ms = 100;
        x.p95Ms = 250;
        rows.push_back(x);
      }
      store->append(std::move(rows));
    }
    store->flush();
  }
  std::string err;
  auto reader = HistoryReader::open(path.string(), {}, &err);
  if (!reader) return std::fprintf(stderr, "%s\n", err.c_str()), 1;
  auto sc = ReplayScenario::fromHistory(*reader, t0, t0 + EpochMs(seconds) * 1000, &err);
  if (!sc) return std::fprintf(stderr, "%s\n", err.c_str()), 1;
  WhatIfOptions opts;
  opts.speed = speed;
  const WhatIfResult r = WhatIfRunner::run(*sc, WhatIfOverrides{}, opts);
  if (!r.ok) return std::fprintf(stderr, "%s\n", r.error.c_str()), 1;
  std::printf("re-drive of %.0f s (%lld arrivals, 3 groups) at %gx: %.1f s wall\n", sc->durationS(),
              (long long)r.redriven.total.arrivals, speed, r.wallS);
  std::printf("429s recorded %lld / re-driven %lld; shed %lld / %lld; completion %.0f s / %.0f s\n",
              (long long)r.recorded.total.r429, (long long)r.redriven.total.r429, (long long)r.recorded.total.shed,
              (long long)r.redriven.total.shed, r.recorded.total.completionS, r.redriven.total.completionS);
  std::filesystem::remove(path);
  return 0;
}
