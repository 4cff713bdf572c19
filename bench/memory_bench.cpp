// memory_bench: resident memory of the engine.
//   1. Peak RSS (VmHWM) with 100,000 requests queued: every tier paused, the requests submitted, the snapshot
//      showing them all queued.
//   2. RSS over a longer steady run (default 2 minutes; --minutes 60 for an hour): arrivals below the quota so
//      queues stay short, every bounded buffer filled; VmRSS sampled every 10 s, slope fitted after warm-up.
//
//   memory_bench [--queued 100000] [--minutes 2] [--rate 150] [--json FILE]
#include "bench_support.h"
#include "config_loader.h"
#include "engine.h"
#include "sim_config.h"
#include "sim_server.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

using namespace tgbench;

namespace {

tg::Request makeRequest(std::size_t i, tg::Tier tier) {
  tg::Request r;
  r.id = "req-" + std::to_string(i);
  r.group = "g";
  r.tier = tier;
  r.url = "/v1/chat/completions";
  r.body = R"({"model":"m","max_tokens":16,"messages":[{"role":"user","content":")" + std::string(200, 'x') + "\"}]}";
  r.maxTokens = 16;
  return r;
}

// Least-squares slope of y over x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  if (n < 2) return 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args(argc, argv);
  const int queued = static_cast<int>(args.number("queued", 100000));
  const double minutes = args.number("minutes", 2);
  const double rate = args.number("rate", 150);
  const std::string jsonPath = args.text("json", "build/bench-results/memory_bench.json");

  const nlohmann::json simJson{{"dialect", "openai"},
                               {"group_by", "header"},
                               {"default_group", "g"},
                               {"groups", {{"g", {{"algorithm", "token-bucket"}, {"limit", 200}, {"window_s", 1}}}}},
                               {"latency_ms", {{"distribution", "fixed"}, {"mean", 5}}}};
  tg::SimServer sim(tg::SimConfig::fromJson(simJson, "(bench sim)"));
  const std::string base = "http://127.0.0.1:" + std::to_string(sim.start("127.0.0.1", 0));
  const int perTier = (queued + tg::kTierCount - 1) / tg::kTierCount;
  nlohmann::json tiers;
  for (const char* t : {"P0", "P1", "P2"}) tiers[t] = {{"capacity", perTier}};
  nlohmann::json engineJson{{"name", "memory"},
                            {"tiers", tiers},
                            {"groups", nlohmann::json::array({{{"name", "g"},
                                                               {"base_url", "sim"},
                                                               {"concurrency", 16},
                                                               {"keys", nlohmann::json::array({{{"name", "k0"}}})}}})},
                            {"simulator", simJson}};
  tg::TollgateConfig cfg = tg::ConfigLoader::fromJson(engineJson, "(bench config)");
  tg::ConfigLoader::bindSimulator(cfg, base);

  // 1. 100k queued.
  const long rssBefore = readStatusKb("VmRSS");
  long rssQueued = 0, hwm = 0;
  int depth = 0;
  {
    tg::Engine engine(cfg.engine);
    engine.start();
    for (tg::Tier t : {tg::Tier::P0, tg::Tier::P1, tg::Tier::P2}) engine.setTierPaused(t, true);
    std::atomic<int> rejected{0};
    for (int i = 0; i < queued; ++i)
      engine.submit(makeRequest(static_cast<std::size_t>(i), static_cast<tg::Tier>(i % tg::kTierCount)),
                    [&](const tg::Result& r) { rejected += r.error != tg::ErrorKind::Cancelled; });
    for (int i = 0; i < 100 && depth < queued - rejected; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const auto snap = engine.latestSnapshot();
      const auto* g = snap ? snap->find("g") : nullptr;
      depth = g ? g->queueDepth[0] + g->queueDepth[1] + g->queueDepth[2] : 0;
    }
    rssQueued = readStatusKb("VmRSS");
    hwm = readStatusKb("VmHWM");
    std::fprintf(stderr, "  %d queued (%d rejected), VmRSS %ld kB, VmHWM %ld kB\n", depth, rejected.load(), rssQueued, hwm);
    engine.stop();
  }
  const double perRequestBytes = (rssQueued - rssBefore) * 1024.0 / std::max(1, depth);

  // 2. Steady run.
  std::vector<double> tS, rssMb;
  std::uint64_t submitted = 0;
  std::atomic<std::uint64_t> ok{0};
  {
    tg::Engine engine(cfg.engine);
    std::atomic<std::uint64_t> events{0};
    engine.onEvent([&](const tg::Event&) { ++events; });
    engine.start();
    const auto t0 = std::chrono::steady_clock::now();
    const double totalS = minutes * 60;
    std::mt19937_64 rng(3);
    std::exponential_distribution<double> gap(rate);
    double next = 0, nextSample = 0;
    std::fprintf(stderr, "  steady run: %.0f/s into a 200/s quota for %.1f min, VmRSS every 10 s\n", rate, minutes);
    for (;;) {
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (now >= totalS) break;
      if (now >= nextSample) {
        tS.push_back(now);
        rssMb.push_back(readStatusKb("VmRSS") / 1024.0);
        std::fprintf(stderr, "    t=%4.0f s  VmRSS %.1f MB  ok %llu\n", now, rssMb.back(),
                     static_cast<unsigned long long>(ok.load()));
        nextSample += 10;
      }
      while (next <= now) {
        engine.submit(makeRequest(submitted, static_cast<tg::Tier>(submitted % tg::kTierCount)),
                      [&](const tg::Result& r) { ok += r.ok(); });
        ++submitted;
        next += gap(rng);
      }
      std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(std::min({next, nextSample, totalS}))));
    }
    engine.stop();
  }
  sim.stop();

  // Slope after warm-up (the first 30 s fill the latency windows, the snapshot and the connection pool).
  std::vector<double> x, y;
  for (std::size_t i = 0; i < tS.size(); ++i)
    if (tS[i] >= 30) x.push_back(tS[i] / 60), y.push_back(rssMb[i]);
  const double slopeMbPerMin = slope(x, y);
  const double first = y.empty() ? NAN : y.front(), last = y.empty() ? NAN : y.back();

  std::printf("\nMemory\n\n");
  TablePrinter t({"measure", "value", "target"});
  t.row({"VmRSS before engine", fmt(rssBefore / 1024.0) + " MB", ""});
  t.row({"VmRSS with " + std::to_string(depth) + " queued", fmt(rssQueued / 1024.0) + " MB", ""});
  t.row({"peak RSS (VmHWM) with " + std::to_string(depth) + " queued", fmt(hwm / 1024.0) + " MB", "< 200 MB"});
  t.row({"per queued request", fmt(perRequestBytes, 0) + " B", ""});
  t.row({"steady run: requests", std::to_string(submitted) + " (" + std::to_string(ok.load()) + " ok)", ""});
  t.row({"steady run: VmRSS at 30 s -> end", fmt(first) + " -> " + fmt(last) + " MB", ""});
  t.row({"steady run: VmRSS slope after 30 s", fmt(slopeMbPerMin * 1024, 1) + " kB/min", "~0"});
  t.print();
  const bool peakOk = hwm < 200 * 1024;
  std::printf("\ntargets: peak RSS < 200 MB with %d queued: %s\n", depth, peakOk ? "met" : "MISSED");

  nlohmann::json samples = nlohmann::json::array();
  for (std::size_t i = 0; i < tS.size(); ++i) samples.push_back({tS[i], rssMb[i]});
  writeJson(jsonPath, {{"bench", "memory"},
                       {"machine", machineJson()},
                       {"queued", depth},
                       {"rss_before_kb", rssBefore},
                       {"rss_queued_kb", rssQueued},
                       {"vm_hwm_kb", hwm},
                       {"bytes_per_queued_request", perRequestBytes},
                       {"steady_minutes", minutes},
                       {"steady_rate_per_s", rate},
                       {"steady_requests", submitted},
                       {"steady_ok", ok.load()},
                       {"rss_samples_s_mb", samples},
                       {"rss_slope_kb_per_min", slopeMbPerMin * 1024},
                       {"targets", {{"peak_rss_lt_200mb", peakOk}}}});
  return 0;
}
