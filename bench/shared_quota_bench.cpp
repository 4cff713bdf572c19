// shared_quota_bench: issue 15's numbers. 1, 2, 4 and 8 `tollgate run` processes share one simulator key
// through one redis-server (both on free loopback ports, started and stopped here); together they offer
// twice the key's quota (--offer). Per fleet size it prints combined goodput / quota and the 429 share (the simulator's
// counters are the judge), Redis round trips per request (every command the instances sent: leases,
// give-backs, words, heartbeats, publishes; redis-server's own count is printed beside it, which also counts
// the commands inside scripts), the round trip of a lease call p50/p99, and what Redis adds to admission per
// request sent: how long a request at the head of its queue, the local quota allowing it, waited only for
// its instance's lease call to come back (0 for most requests), p50/p99 of the worst instance and the share of
// requests that waited at all.
//
//   shared_quota_bench [--sizes 1,2,4,8] [--limit 100] [--window 10] [--algorithm sliding-window] [--dialect ietf]
//                      [--duration 20] [--warmup 5] [--lease-ms 100] [--offer 2] [--unshared] [--json FILE]
//
// --offer: what the fleet offers, in quotas (below 1 requests never wait for capacity, so whatever wait is
// left is Redis's). --unshared runs the same fleets without shared_quota (each instance alone), to compare.
// Exit 0 when it ran (whatever the goals say), 1 when a process could not be started, 2 on bad arguments.
#include "child_process.h"
#include "redis_connection.h"
#include "sim_config.h"
#include "sim_server.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using nlohmann::json;
using namespace tgbench;

namespace {

struct Options {
  std::vector<int> sizes{1, 2, 4, 8};
  double limit = 100;  // requests per second of the key
  double windowS = 10;  // short enough that instances alone exhaust it within a run
  std::string algorithm = "sliding-window";
  std::string dialect = "ietf";  // RateLimit-Policy states the window, so limit / window is the fleet's rate
  double durationS = 20, warmupS = 5;
  double leaseMs = 100;
  double offer = 2;  // the fleet's offered rate, in quotas
  bool unshared = false;
  std::string jsonPath;
};

std::vector<int> parseList(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::stoi(item));
  return v;
}

long long redisCommands(int port) {
  tg::RedisEndpoint e;
  e.port = port;
  e.timeoutS = 1;
  tg::RedisConnection c(e);
  tg::RedisReply r;
  if (!c.call({"INFO", "stats"}, r)) return -1;
  const auto at = r.str.find("total_commands_processed:");
  return at == std::string::npos ? -1 : std::atoll(r.str.c_str() + at + 25) - 1;  // minus this INFO
}

json runFleet(const Options& o, int n, bool shared, const std::string& tollgate) {
  TempDir dir("shared-bench");
  ChildProcess redis;
  const int redisPort = freeLoopbackPort();
  redis.start({"/usr/bin/redis-server", "--port", std::to_string(redisPort), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--loglevel", "warning"},
              dir.path() + "/redis.log");
  if (!waitForListener(redisPort, 5)) throw std::runtime_error("redis-server did not listen");
  tg::SimServer sim(tg::SimConfig::fromJson(
      json{{"dialect", o.dialect},
           {"groups", {{"chat", {{"algorithm", o.algorithm}, {"limit", o.limit * o.windowS}, {"window_s", o.windowS}}}}}},
      "bench"));
  const int simPort = sim.start();
  std::vector<std::unique_ptr<ChildProcess>> fleet;
  for (int i = 0; i < n; ++i) {
    json c{{"name", "bench-" + std::to_string(i)},
           {"groups", json::array({{{"name", "chat"},
                                    {"base_url", "http://127.0.0.1:" + std::to_string(simPort)},
                                    {"concurrency", 32},
                                    {"keys", json::array({{{"name", "k"}, {"env", "TG_BENCH_KEY"}}})}}})},
           {"workload", {{"streams", json::array({{{"group", "chat"}, {"tier", "P1"}, {"rate", o.offer * o.limit / n},
                                                   {"max_tokens", 0}, {"prompt_bytes", 40}}})}}}};
    if (shared)
      c["shared_quota"] = {{"redis", "127.0.0.1:" + std::to_string(redisPort)}, {"namespace", "bench"},
                           {"instance", "i" + std::to_string(i)}, {"lease_ms", o.leaseMs}};
    const std::string cfg = dir.write("cfg" + std::to_string(i) + ".json", c.dump());
    auto p = std::make_unique<ChildProcess>();
    setenv("TG_BENCH_KEY", "sk-bench-0123456789abcdef", 1);
    p->start({tollgate, "run", "--headless", "--quiet", "--history", "off", "--config", cfg, "--duration",
              std::to_string(o.durationS), "--report", dir.path() + "/report" + std::to_string(i) + ".json"},
             dir.path() + "/log" + std::to_string(i) + ".txt");
    fleet.push_back(std::move(p));
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmupS));
  const json a = sim.stats()["groups"]["chat"];
  const long long cmdA = redisCommands(redisPort);
  const double measureS = o.durationS - o.warmupS - 1;
  std::this_thread::sleep_for(std::chrono::duration<double>(measureS));
  const json b = sim.stats()["groups"]["chat"];
  const long long cmdB = redisCommands(redisPort);
  for (auto& p : fleet) {
    for (int i = 0; i < 200 && p->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    p->stop();
  }
  const json total = sim.stats()["groups"]["chat"];
  double p50 = 0, p99 = 0, delayP50 = 0, delayP99 = 0, delayMax = 0;
  long long leaseWaits = 0, sent = 0, calls = 0, delayed = 0;
  for (int i = 0; i < n; ++i) {
    std::ifstream in(dir.path() + "/report" + std::to_string(i) + ".json");
    const json r = json::parse(in, nullptr, false);
    if (r.is_discarded()) continue;
    sent += r["groups"]["chat"].value("sent", 0LL);
    if (r.contains("shared_quota")) {
      p50 = std::max(p50, r["shared_quota"].value("lease_p50_ms", 0.0));
      p99 = std::max(p99, r["shared_quota"].value("lease_p99_ms", 0.0));
      leaseWaits += r["shared_quota"].value("lease_waits", 0LL);
      calls += r["shared_quota"].value("redis_calls", 0LL);
      delayP50 = std::max(delayP50, r["shared_quota"].value("redis_delay_p50_ms", 0.0));
      delayP99 = std::max(delayP99, r["shared_quota"].value("redis_delay_p99_ms", 0.0));
      delayMax = std::max(delayMax, r["shared_quota"].value("redis_delay_max_ms", 0.0));
      delayed += r["shared_quota"].value("redis_delayed", 0LL);
    }
  }
  const double okRate = (b["ok"].get<double>() - a["ok"].get<double>()) / measureS;
  const double reqs = b["requests"].get<double>() - a["requests"].get<double>();
  const double r429 = total["r429"].get<double>(), all = std::max(1.0, total["requests"].get<double>());
  json out{{"instances", n},
           {"shared", shared},
           {"goodput_per_s", okRate},
           {"goodput_ratio", okRate / o.limit},
           {"share_429", r429 / all},
           {"requests", all},
           {"redis_round_trips_per_request", static_cast<double>(calls) / std::max<long long>(1, sent)},
           {"redis_server_commands_per_request", shared && cmdA >= 0 && cmdB >= 0 ? (cmdB - cmdA) / std::max(1.0, reqs) : 0.0},
           {"lease_p50_ms_max", p50},
           {"lease_p99_ms_max", p99},
           {"lease_waits_per_request", static_cast<double>(leaseWaits) / std::max<long long>(1, sent)},
           {"redis_delay_p50_ms_max", delayP50},
           {"redis_delay_p99_ms_max", delayP99},
           {"redis_delay_max_ms", delayMax},
           {"redis_delayed_share", static_cast<double>(delayed) / std::max<long long>(1, sent)}};
  std::printf("%-8s %2d instances: goodput %6.1f/s = %.3f of quota, 429 share %.2f%%, Redis %.3f round trips/request "
              "(server: %.2f commands/request), lease p50 %.3f ms p99 %.3f ms, lease waits %.3f/request, "
              "admission delay added by Redis p50 %.3f ms p99 %.3f ms max %.3f ms (%.1f%% of requests delayed)\n",
              shared ? "shared" : "alone", n, okRate, okRate / o.limit, 100 * r429 / all,
              out["redis_round_trips_per_request"].get<double>(), out["redis_server_commands_per_request"].get<double>(),
              p50, p99, out["lease_waits_per_request"].get<double>(), delayP50, delayP99, delayMax,
              100 * out["redis_delayed_share"].get<double>());
  std::fflush(stdout);
  redis.stop();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "shared_quota_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--sizes") o.sizes = parseList(next());
      else if (a == "--limit") o.limit = std::stod(next());
      else if (a == "--window") o.windowS = std::stod(next());
      else if (a == "--algorithm") o.algorithm = next();
      else if (a == "--dialect") o.dialect = next();
      else if (a == "--duration") o.durationS = std::stod(next());
      else if (a == "--warmup") o.warmupS = std::stod(next());
      else if (a == "--lease-ms") o.leaseMs = std::stod(next());
      else if (a == "--offer") o.offer = std::stod(next());
      else if (a == "--unshared") o.unshared = true;
      else if (a == "--json") o.jsonPath = next();
      else {
        std::fprintf(stderr, "shared_quota_bench: unknown argument %s (see the comment at the top of the source)\n",
                     a.c_str());
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "shared_quota_bench: %s: expected a number\n", a.c_str());
      return 2;
    }
  }
  if (o.durationS <= o.warmupS + 2) {
    std::fprintf(stderr, "shared_quota_bench: --duration must exceed --warmup by more than 2 s\n");
    return 2;
  }
  std::printf("quota %.0f requests/s (%s, %.0f per %.0f s), fleet offers %.2gx, %.0f s runs (first %.0f s not "
              "measured)\n",
              o.limit, o.algorithm.c_str(), o.limit * o.windowS, o.windowS, o.offer, o.durationS, o.warmupS);
  json runs = json::array();
  try {
    for (int n : o.sizes) {
      if (o.unshared) runs.push_back(runFleet(o, n, false, TOLLGATE_BIN));
      runs.push_back(runFleet(o, n, true, TOLLGATE_BIN));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shared_quota_bench: %s\n", e.what());
    return 1;
  }
  if (!o.jsonPath.empty()) {
    std::ofstream out(o.jsonPath);
    out << json{{"limit", o.limit}, {"algorithm", o.algorithm}, {"offer", o.offer}, {"runs", runs}}.dump(2) << "\n";
  }
  return 0;
}
