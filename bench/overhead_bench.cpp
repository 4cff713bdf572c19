// overhead_bench: requests/s through the full Engine vs a bare libcurl multi loop, against a simulator with
// no limit and no latency, in the same process and the same run. Rounds are short pairs (bare then engine,
// engine then bare, alternately) so both halves of a pair see the same neighbours on a shared machine; the
// figure is the median of the pairs' ratios (the ratio of the medians is printed too: it is at the mercy of
// load swings that last longer than a round).
//
//   overhead_bench [--requests 10000] [--rounds 15] [--concurrency 16] [--only bare|engine] [--json FILE]
//
// --only runs one side (for a profiler: perf record, strace -c); no ratio is printed then.
//
// Both keep `concurrency` requests in flight on one connection pool, POST the same body with the same headers,
// and stop after `requests` completions (or 60 s). CPU time of the whole process (client + in-process simulator)
// per request is reported too: on a noisy machine it moves less than wall time.
#include "bench_support.h"
#include "stats.h"
#include "config_loader.h"
#include "engine.h"
#include "sim_config.h"
#include "sim_server.h"

#include <curl/curl.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace tgbench;

namespace {

constexpr double kMaxSeconds = 60;

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Measured {
  int done = 0, ok = 0;
  double seconds = 0, cpuS = 0;
  double perS() const { return done / seconds; }
};

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

Measured bareLoop(const std::string& url, int requests, int concurrency) {
  CURLM* multi = curl_multi_init();
  curl_slist* h = nullptr;
  h = curl_slist_append(h, "Content-Type: application/json");
  h = curl_slist_append(h, "Authorization: Bearer sim-k0");
  h = curl_slist_append(h, "X-RateLimit-Group: g");
  h = curl_slist_append(h, "X-Tollgate-Tier: P1");
  std::vector<CURL*> easies;
  auto launch = [&](CURL* e) {
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, R"({"max_tokens":16})");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (curl_multi_add_handle(multi, e) != CURLM_OK) throw std::runtime_error("curl_multi_add_handle");
  };
  Measured m;
  const double cpu0 = cpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  int started = 0;
  for (; started < std::min(concurrency, requests); ++started) {
    easies.push_back(curl_easy_init());
    launch(easies.back());
  }
  while (m.done < requests) {
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* e = msg->easy_handle;
      long status = 0;
      if (msg->data.result == CURLE_OK) curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
      ++m.done;
      m.ok += status == tg::http::kOk;
      curl_multi_remove_handle(multi, e);
      if (started < requests) {
        ++started;
        launch(e);
      }
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > kMaxSeconds) break;
    curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpuS = cpuSeconds() - cpu0;
  for (CURL* e : easies) {
    curl_multi_remove_handle(multi, e);
    curl_easy_cleanup(e);
  }
  curl_multi_cleanup(multi);
  curl_slist_free_all(h);
  return m;
}

// The bare loop on a thread of its own, started per round like the engine's loop thread: run on the main
// thread it was pinned wherever the process started, and whenever that shared a core with the simulator's
// thread it ran at half speed for the whole process (bare 18,000/s vs 33,000/s from one process to the next).
Measured bareRun(const std::string& url, int requests, int concurrency) {
  Measured m;
  std::thread t([&] { m = bareLoop(url, requests, concurrency); });
  t.join();
  return m;
}

Measured engineRun(const tg::EngineConfig& cfg, int requests) {
  tg::Engine engine(cfg);
  engine.start();
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int> done{0}, ok{0};
  const double cpu0 = cpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < requests; ++i) {
    tg::Request r;
    r.id = std::to_string(i);
    r.group = "g";
    r.url = "/v1/chat/completions";
    r.body = R"({"max_tokens":16})";
    r.maxTokens = 16;
    engine.submit(std::move(r), [&](const tg::Result& res) {
      ok += res.ok();
      if (++done == requests) {
        std::lock_guard lock(mu);
        cv.notify_all();
      }
    });
  }
  {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::duration<double>(kMaxSeconds), [&] { return done.load() == requests; });
  }
  Measured m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpuS = cpuSeconds() - cpu0;
  m.done = done;
  m.ok = ok;
  engine.stop();
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args(argc, argv);
  const int requests = static_cast<int>(args.number("requests", 10000));
  const int rounds = static_cast<int>(args.number("rounds", 15));
  const int concurrency = static_cast<int>(args.number("concurrency", 16));
  const std::string jsonPath = args.text("json", "build/bench-results/overhead_bench.json");
  const std::string only = args.text("only", "");
  if (!only.empty() && only != "bare" && only != "engine") {
    std::fprintf(stderr, "overhead_bench: --only expects bare or engine, got '%s'\n", only.c_str());
    return 2;
  }

  const nlohmann::json simJson{{"dialect", "none"},
                               {"group_by", "header"},
                               {"default_group", "g"},
                               {"groups", {{"g", {{"limit", 0}}}}},
                               {"latency_ms", {{"distribution", "fixed"}, {"mean", 0}}}};
  tg::SimServer sim(tg::SimConfig::fromJson(simJson, "(bench sim)"));
  const std::string base = "http://127.0.0.1:" + std::to_string(sim.start("127.0.0.1", 0));
  nlohmann::json engineJson{{"name", "overhead"},
                            {"global_concurrency", 256},
                            {"tiers", {{"P1", {{"capacity", std::max(100000, requests)}}}}},
                            {"groups", nlohmann::json::array({{{"name", "g"},
                                                               {"base_url", "sim"},
                                                               {"concurrency", concurrency},
                                                               {"keys", nlohmann::json::array({{{"name", "k0"}}})}}})},
                            {"simulator", simJson}};
  tg::TollgateConfig cfg = tg::ConfigLoader::fromJson(engineJson, "(bench config)");
  tg::ConfigLoader::bindSimulator(cfg, base);

  std::vector<double> bare, eng, bareCpu, engCpu, pairRatio;
  nlohmann::json rows = nlohmann::json::array();
  bareLoop(base + "/v1/chat/completions", std::min(2000, requests), concurrency);  // warm-up, not counted
  if (!only.empty()) {
    for (int r = 0; r < rounds; ++r) {
      const Measured m = only == "bare" ? bareRun(base + "/v1/chat/completions", requests, concurrency)
                                        : engineRun(cfg.engine, requests);
      std::printf("round %d: %s %.0f/s (%d ok), CPU %.1f us/request\n", r + 1, only.c_str(), m.perS(), m.ok,
                  m.cpuS / m.done * 1e6);
    }
    sim.stop();
    return 0;
  }
  for (int r = 0; r < rounds; ++r) {
    Measured b, e;
    if (r % 2 == 0) {
      b = bareRun(base + "/v1/chat/completions", requests, concurrency);
      e = engineRun(cfg.engine, requests);
    } else {
      e = engineRun(cfg.engine, requests);
      b = bareRun(base + "/v1/chat/completions", requests, concurrency);
    }
    pairRatio.push_back(e.perS() / b.perS());
    std::fprintf(stderr, "  round %d: bare %.0f/s (%d ok), engine %.0f/s (%d ok)\n", r + 1, b.perS(), b.ok, e.perS(), e.ok);
    bare.push_back(b.perS());
    eng.push_back(e.perS());
    bareCpu.push_back(b.cpuS / b.done * 1e6);
    engCpu.push_back(e.cpuS / e.done * 1e6);
    rows.push_back({{"bare_per_s", b.perS()}, {"engine_per_s", e.perS()}, {"ratio", e.perS() / b.perS()},
                    {"bare_ok", b.ok}, {"engine_ok", e.ok}, {"bare_cpu_us_per_request", bareCpu.back()},
                    {"engine_cpu_us_per_request", engCpu.back()}});
  }
  sim.stop();

  const double bMed = tg::percentile(bare, 0.5), eMed = tg::percentile(eng, 0.5);
  const double bCpu = tg::percentile(bareCpu, 0.5), eCpu = tg::percentile(engCpu, 0.5);
  std::printf("\nEngine overhead: %d requests x %d rounds, %d in flight, simulator without limit or latency\n\n",
              requests, rounds, concurrency);
  TablePrinter t({"client", "requests/s (median)", "min", "max", "CPU us/request (median, incl. simulator)"});
  t.row({"bare libcurl multi", fmt(bMed, 0), fmt(tg::percentile(bare, 0.0), 0), fmt(tg::percentile(bare, 1.0), 0), fmt(bCpu, 1)});
  t.row({"Tollgate Engine", fmt(eMed, 0), fmt(tg::percentile(eng, 0.0), 0), fmt(tg::percentile(eng, 1.0), 0), fmt(eCpu, 1)});
  t.print();
  const double ratio = tg::percentile(pairRatio, 0.5);
  std::printf("\nengine / bare: %.2f requests/s, median of %d paired rounds (target >= 0.9: %s); pairs %.2f-%.2f; "
              "ratio of the medians %.2f; CPU per request %.2fx\n",
              ratio, rounds, ratio >= 0.9 ? "met" : "MISSED", tg::percentile(pairRatio, 0.0), tg::percentile(pairRatio, 1.0),
              eMed / bMed, eCpu / bCpu);
  writeJson(jsonPath, {{"bench", "overhead"},
                       {"machine", machineJson()},
                       {"requests", requests},
                       {"concurrency", concurrency},
                       {"rounds", rows},
                       {"bare_median_per_s", bMed},
                       {"engine_median_per_s", eMed},
                       {"ratio", ratio},
                       {"ratio_method", "median of paired rounds"},
                       {"ratio_of_medians", eMed / bMed},
                       {"cpu_ratio", eCpu / bCpu},
                       {"targets", {{"ratio_ge_0_9", ratio >= 0.9}}}});
  return 0;
}
