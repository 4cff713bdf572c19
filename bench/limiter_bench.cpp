// limiter_bench: Tollgate and the baseline clients against a real rate limiter no one here wrote: Debian's
// nginx (`limit_req`, a leaky bucket with burst) in front of an unlimited simulator, on loopback. Issue 14's
// judge: "Against nginx limit_req 50 r/s burst 10, both bare 429 and Retry-After: 1: >= 45 req/s with <= 2%
// 429s", from a cold start (learning included).
//
//   limiter_bench [--seconds 20] [--rate 50] [--burst 10] [--concurrency 16,64] [--latency-ms 20]
//                 [--nginx /usr/sbin/nginx] [--strategies tollgate,naive,...] [--json FILE]
//
// Each run gets a fresh nginx (its own prefix, config and logs in a temp dir, a free loopback port), so no
// limiter state carries over. Arrivals: P1 open loop at 2x the limit. nginx answers an overflow with a bare
// 429 ("bare") or a 429 carrying `Retry-After: 1` ("retry-after-1", via error_page), never quota headers.
#include "load_scenario.h"
#include "nginx_front.h"

#include <cstdio>
#include <sstream>

using namespace tgbench;

namespace {

std::vector<int> intList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args(argc, argv);
  const double seconds = args.number("seconds", 20);
  const double rate = args.number("rate", 50);
  const int burst = static_cast<int>(args.number("burst", 10));
  const double latencyMs = args.number("latency-ms", 20);
  const std::vector<int> concurrencies = intList(args.text("concurrency", "16,64"));
  const std::string jsonPath = args.text("json", "build/bench-results/limiter_bench.json");
  std::vector<std::string> strategies;
  {
    std::stringstream in(args.text("strategies", ""));
    std::string item;
    while (std::getline(in, item, ',')) strategies.push_back(item);
    if (strategies.empty()) strategies = strategyNames();
  }
  NginxFront front;
  front.nginx = args.text("nginx", "/usr/sbin/nginx");
  front.rate = rate;
  front.burst = burst;

  const auto arrivals = makeArrivals({{0, tg::Tier::P1, 2 * rate}}, seconds, 42);
  std::printf("nginx limit_req %.0f r/s burst %d nodelay in front of tollgate-sim (%.0f ms latency); arrivals %zu "
              "over %.0f s (2x the limit), measured from a cold start\n\n",
              rate, burst, latencyMs, arrivals.size(), seconds);
  std::printf("%-14s %4s  %-15s %9s %8s %8s %9s %10s\n", "answer", "C", "strategy", "goodput/s", "of limit", "429s",
              "ampl.", "completed");
  nlohmann::json runs = nlohmann::json::array();
  bool allMet = true;
  for (const bool retryAfter : {false, true}) {
    front.retryAfter = retryAfter;
    const char* style = retryAfter ? "retry-after-1" : "bare";
    for (int c : concurrencies) {
      Scenario sc;
      sc.groups = {{"hidden", 0}};  // the simulator itself is unlimited: nginx is the limiter
      sc.dialect = "none";
      sc.retryAfter = false;
      sc.latency = {{"distribution", "fixed"}, {"mean", latencyMs}};
      sc.concurrencyPerGroup = c;
      sc.front = [&front](const std::string& simUrl) { return front.start(simUrl); };
      sc.frontStop = [&front] { front.stop(); };
      for (const auto& name : strategies) {
        const RunLog log = runStrategy(name, sc, arrivals, seconds);
        const Figures f = computeFigures(log, rate, 0, seconds, -1);
        std::size_t done = 0;
        for (const auto& r : log.requests) done += r.finished;
        std::printf("%-14s %4d  %-15s %9.1f %7.0f%% %7.1f%% %9.2f %10zu\n", style, c, name.c_str(), f.goodputPerS,
                    100 * f.goodputRatio, 100 * f.share429, f.amplification, done);
        std::fflush(stdout);
        if (name == "tollgate") allMet = allMet && f.goodputPerS >= 0.9 * rate && f.share429 <= 0.02;
        runs.push_back({{"answer", style}, {"concurrency", c}, {"strategy", name}, {"figures", toJson(f)},
                        {"per_second", toJson(perSecond(log))}});
      }
    }
  }
  std::printf("\ngoal (issue 14): tollgate >= %.0f req/s with <= 2%% 429s in every row: %s\n", 0.9 * rate,
              allMet ? "MET" : "NOT MET");
  writeJson(jsonPath, {{"bench", "limiter_bench"}, {"rate", rate}, {"burst", burst}, {"seconds", seconds}, {"runs", runs}});
  return 0;
}
