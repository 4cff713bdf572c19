// gateway_bench: issue 13's numbers for the gateway, side by side in one run against the same simulator.
// Every program under test is a separate process (tollgate-sim, `tollgate serve`, nginx), sharing nothing but
// the machine; this process is only the load generator (libcurl multi, one thread).
//
//   gateway_bench [--duration 10] [--connections 1,16,64] [--streams 1000] [--stream-rounds 3] [--ttft-streams 50]
//                 [--latency-ms 2] [--nginx /usr/sbin/nginx] [--json FILE]
//
// 1. Closed loop: C keep-alive connections each POST a chat completion and send the next as soon as the answer
//    is in, for --duration seconds (the first second is warm-up, not counted), to the simulator directly, through
//    nginx (proxy_pass, keep-alive upstream) and through the gateway. Goals: gateway throughput >= 0.5x nginx's
//    at every C > 1; gateway p50 - direct p50 <= 1 ms at the lowest C.
// 2. --streams concurrent `"stream": true` requests through the gateway to a simulator whose first event comes
//    after 120 s, so every stream stays open; once every response head has arrived, the gateway's VmRSS.
//    Goals: all heads received at once; RSS growth < 100 MB.
// 3. Time to the first event of a stream (simulator: first event at 50 ms), --ttft-streams sequential streams per
//    target, interleaved. Goal: gateway median - direct median within 5 ms.
//
// Exit 0 when it ran (whatever the goals say), 1 when a process could not be started, 2 on bad arguments.
#include "child_process.h"
#include "curl_transport.h"
#include "stats.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace tgbench;

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kWarmupS = 1;
constexpr double kStreamHeadTimeoutS = 60;
constexpr double kSlowTtftMs = 120000;  // part 2: no event for two minutes, the streams only sit there
constexpr double kTtftMs = 50;          // part 3
constexpr const char* kChatBody =
    R"({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 20})";
constexpr const char* kStreamBody =
    R"({"model": "gpt-4o-mini", "stream": true, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 20})";
constexpr const char* kChatPath = "/v1/chat/completions";

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  double durationS = 10;
  std::vector<int> connections{1, 16, 64};
  int streams = 1000;
  int ttftStreams = 50;
  int streamRounds = 3;
  double latencyMs = 2;
  std::string nginx = "/usr/sbin/nginx";
  std::string tollgate = TOLLGATE_BIN;
  std::string sim = TOLLGATE_SIM_BIN;
  std::string json;
};

struct Target {
  std::string name;
  std::string base;  // http://127.0.0.1:PORT[/prefix]
  pid_t proxy = -1;  // the proxy process (nginx's master: its workers are counted too); -1 for direct
};

void check(CURLcode rc, const char* what) {
  if (rc != CURLE_OK) throw std::runtime_error(std::string(what) + ": " + curl_easy_strerror(rc));
}
void check(CURLMcode rc, const char* what) {
  if (rc != CURLM_OK) throw std::runtime_error(std::string(what) + ": " + curl_multi_strerror(rc));
}

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

tg::CurlSlistPtr jsonHeaders() {
  curl_slist* l = curl_slist_append(nullptr, "Content-Type: application/json");
  l = curl_slist_append(l, "Expect:");  // no 100-continue round trip
  return tg::CurlSlistPtr(l);
}

tg::CurlEasyPtr postHandle(const std::string& url, const char* body, curl_slist* headers) {
  tg::CurlEasyPtr e(curl_easy_init());
  if (!e) throw std::runtime_error("curl_easy_init failed");
  check(curl_easy_setopt(e.get(), CURLOPT_URL, url.c_str()), "CURLOPT_URL");
  check(curl_easy_setopt(e.get(), CURLOPT_POSTFIELDS, body), "CURLOPT_POSTFIELDS");
  check(curl_easy_setopt(e.get(), CURLOPT_HTTPHEADER, headers), "CURLOPT_HTTPHEADER");
  check(curl_easy_setopt(e.get(), CURLOPT_WRITEFUNCTION, discard), "CURLOPT_WRITEFUNCTION");
  check(curl_easy_setopt(e.get(), CURLOPT_NOSIGNAL, 1L), "CURLOPT_NOSIGNAL");
  check(curl_easy_setopt(e.get(), CURLOPT_TIMEOUT_MS, 0L), "CURLOPT_TIMEOUT_MS");
  return e;
}

// --- part 1: closed loop ---

struct LoadResult {
  int connections = 0;
  long requests = 0;  // completed in the measured window, errors included
  long errors = 0;    // transport error or status other than 200
  double rps = 0;     // 200s per second in the measured window
  double p50Ms = 0, p95Ms = 0, p99Ms = 0;
  double proxyCpuUs = 0;  // CPU of the proxy's processes per request (whole run, warm-up included); 0 for direct
};

LoadResult closedLoop(const Target& t, int connections, double durationS) {
  const std::string url = t.base + kChatPath;
  auto headers = jsonHeaders();
  tg::CurlMultiPtr multi(curl_multi_init());
  check(curl_multi_setopt(multi.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(connections)),
        "CURLMOPT_MAX_TOTAL_CONNECTIONS");
  check(curl_multi_setopt(multi.get(), CURLMOPT_MAXCONNECTS, static_cast<long>(connections)), "CURLMOPT_MAXCONNECTS");
  std::vector<tg::CurlEasyPtr> easy;
  std::vector<Clock::time_point> started(connections);
  const auto t0 = Clock::now();
  for (int i = 0; i < connections; ++i) {
    easy.push_back(postHandle(url, kChatBody, headers.get()));
    check(curl_easy_setopt(easy.back().get(), CURLOPT_PRIVATE, reinterpret_cast<void*>(static_cast<intptr_t>(i))),
          "CURLOPT_PRIVATE");
    started[i] = Clock::now();
    check(curl_multi_add_handle(multi.get(), easy.back().get()), "curl_multi_add_handle");
  }
  LoadResult r;
  r.connections = connections;
  std::vector<double> latencyMs;
  long ok = 0;
  int inFlight = connections;
  while (inFlight > 0) {
    int running = 0;
    check(curl_multi_perform(multi.get(), &running), "curl_multi_perform");
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi.get(), &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      CURL* e = m->easy_handle;
      void* priv = nullptr;
      curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
      const int i = static_cast<int>(reinterpret_cast<intptr_t>(priv));
      long status = 0;
      curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
      const auto now = Clock::now();
      const double at = std::chrono::duration<double>(now - t0).count();
      if (at >= kWarmupS && at < durationS) {
        ++r.requests;
        if (m->data.result != CURLE_OK || status != 200) {
          ++r.errors;
        } else {
          ++ok;
          latencyMs.push_back(std::chrono::duration<double, std::milli>(now - started[i]).count());
        }
      }
      check(curl_multi_remove_handle(multi.get(), e), "curl_multi_remove_handle");
      if (at < durationS) {
        started[i] = Clock::now();
        check(curl_multi_add_handle(multi.get(), e), "curl_multi_add_handle");
      } else {
        --inFlight;
      }
    }
    if (inFlight > 0) check(curl_multi_poll(multi.get(), nullptr, 0, 100, nullptr), "curl_multi_poll");
  }
  r.rps = static_cast<double>(ok) / (durationS - kWarmupS);
  r.p50Ms = tg::percentile(latencyMs, 0.50);
  r.p95Ms = tg::percentile(latencyMs, 0.95);
  r.p99Ms = tg::percentile(latencyMs, 0.99);
  return r;
}

// --- part 2: idle streams ---

struct StreamSlot {
  bool head = false;
  int* heads = nullptr;
};

size_t countHead(char* data, size_t size, size_t n, void* userp) {
  auto* s = static_cast<StreamSlot*>(userp);
  // The blank line that ends a final (not 1xx) response head; status lines of interim responses start with 1.
  if (size * n == 2 && data[0] == '\r' && data[1] == '\n' && !s->head) {
    s->head = true;
    ++*s->heads;
  }
  return size * n;
}

struct IdleStreamsResult {
  int streams = 0;
  int heads = 0;        // response heads received while all were open
  int ok200 = 0;        // of those, heads with status 200 (a 429 or 502 head would count as a head too)
  int failed = 0;       // finished (error or answer) before the release: none should
  double openS = 0;     // time until every head was in
  long rssBeforeKiB = 0, rssOpenKiB = 0, rssReleasedKiB = 0;
  bool aliveAfter = false;  // a plain request through the gateway answered 200 after the release
  int upstreamOpen = 0;      // gateway -> simulator connections established while all were open
  int upstreamLeft = 0;      // still established 2 s after the clients left (the gateway should close them)
};

bool answersOk(const std::string& url) {
  auto headers = jsonHeaders();
  auto e = postHandle(url, kChatBody, headers.get());
  curl_easy_setopt(e.get(), CURLOPT_TIMEOUT_MS, 10000L);
  long status = 0;
  if (curl_easy_perform(e.get()) != CURLE_OK) return false;
  curl_easy_getinfo(e.get(), CURLINFO_RESPONSE_CODE, &status);
  return status == 200;
}

// Only the gateway connects to the slow simulator, so the connections established to its port are the gateway's
// upstream transfers. (The simulator's own stream counters cannot tell: it sees a client leave only when it next
// writes, here after two minutes.)
IdleStreamsResult idleStreams(const Target& slow, const Target& fast, int slowSimPort, pid_t gatewayPid,
                              int streams) {
  IdleStreamsResult r;
  r.streams = streams;
  r.rssBeforeKiB = rssKiB(gatewayPid);
  const std::string url = slow.base + kChatPath;
  auto headers = jsonHeaders();
  tg::CurlMultiPtr multi(curl_multi_init());
  std::vector<tg::CurlEasyPtr> easy;
  std::vector<StreamSlot> slots(streams);
  const auto t0 = Clock::now();
  for (int i = 0; i < streams; ++i) {
    slots[i].heads = &r.heads;
    easy.push_back(postHandle(url, kStreamBody, headers.get()));
    check(curl_easy_setopt(easy.back().get(), CURLOPT_HEADERFUNCTION, countHead), "CURLOPT_HEADERFUNCTION");
    check(curl_easy_setopt(easy.back().get(), CURLOPT_HEADERDATA, &slots[i]), "CURLOPT_HEADERDATA");
    check(curl_multi_add_handle(multi.get(), easy.back().get()), "curl_multi_add_handle");
  }
  while (r.heads + r.failed < streams && since(t0) < kStreamHeadTimeoutS) {
    int running = 0;
    check(curl_multi_perform(multi.get(), &running), "curl_multi_perform");
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi.get(), &left))
      if (m->msg == CURLMSG_DONE) ++r.failed;
    check(curl_multi_poll(multi.get(), nullptr, 0, 100, nullptr), "curl_multi_poll");
  }
  r.openS = since(t0);
  // Let the gateway settle (its answer to the last head is written; allocations done), then read its RSS.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int running = 0;
  curl_multi_perform(multi.get(), &running);
  r.rssOpenKiB = rssKiB(gatewayPid);
  r.upstreamOpen = establishedTo(slowSimPort);
  for (auto& e : easy) {
    long status = 0;
    curl_easy_getinfo(e.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status == 200) ++r.ok200;
  }
  // The clients leave mid-stream: the gateway must abort every upstream transfer and stay healthy.
  for (auto& e : easy) curl_multi_remove_handle(multi.get(), e.get());
  easy.clear();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  r.rssReleasedKiB = rssKiB(gatewayPid);
  r.upstreamLeft = establishedTo(slowSimPort);
  r.aliveAfter = answersOk(fast.base + kChatPath);
  return r;
}

// --- part 3: time to the first event ---

struct FirstByte {
  Clock::time_point start;
  Clock::time_point first;
  bool seen = false;
};

size_t noteFirstByte(char*, size_t size, size_t n, void* userp) {
  auto* f = static_cast<FirstByte*>(userp);
  if (!f->seen && size * n > 0) {
    f->first = Clock::now();
    f->seen = true;
  }
  return size * n;
}

struct TtftResult {
  std::string target;
  int errors = 0;
  double p50Ms = 0, p95Ms = 0;
};

std::vector<TtftResult> timeToFirstByte(const std::vector<Target>& targets, int rounds) {
  auto headers = jsonHeaders();
  std::vector<tg::CurlEasyPtr> easy;  // one per target, reused: a warm keep-alive connection as in part 1
  std::vector<FirstByte> fb(targets.size());
  std::vector<std::vector<double>> ms(targets.size());
  std::vector<TtftResult> out(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    out[t].target = targets[t].name;
    easy.push_back(postHandle(targets[t].base + kChatPath, kStreamBody, headers.get()));
    check(curl_easy_setopt(easy.back().get(), CURLOPT_WRITEFUNCTION, noteFirstByte), "CURLOPT_WRITEFUNCTION");
    check(curl_easy_setopt(easy.back().get(), CURLOPT_WRITEDATA, &fb[t]), "CURLOPT_WRITEDATA");
    check(curl_easy_setopt(easy.back().get(), CURLOPT_TIMEOUT_MS, 10000L), "CURLOPT_TIMEOUT_MS");
  }
  for (int round = -1; round < rounds; ++round) {  // round -1 warms the connections and is not counted
    for (std::size_t t = 0; t < targets.size(); ++t) {
      fb[t] = FirstByte{Clock::now(), {}, false};
      const CURLcode rc = curl_easy_perform(easy[t].get());
      long status = 0;
      curl_easy_getinfo(easy[t].get(), CURLINFO_RESPONSE_CODE, &status);
      if (round < 0) continue;
      if (rc != CURLE_OK || status != 200 || !fb[t].seen) {
        ++out[t].errors;
        continue;
      }
      ms[t].push_back(std::chrono::duration<double, std::milli>(fb[t].first - fb[t].start).count());
    }
  }
  for (std::size_t t = 0; t < targets.size(); ++t) {
    out[t].p50Ms = tg::percentile(ms[t], 0.5);
    out[t].p95Ms = tg::percentile(ms[t], 0.95);
  }
  return out;
}

// --- processes ---

std::string simConfig(double latencyMs, double ttftMs, int chunks) {
  nlohmann::json j = {{"listen", {{"host", "127.0.0.1"}, {"port", 0}}},
                      {"dialect", "openai"},
                      {"default_group", "any"},  // no limit: a group without a limiter configured
                      {"connections", {{"max", 20000}, {"idle_timeout_s", 600}, {"request_timeout_s", 600}}},
                      {"latency_ms", {{"distribution", "fixed"}, {"mean", latencyMs}}},
                      {"stream_ttft_ms", ttftMs},
                      {"stream_chunk_interval_ms", 5},
                      {"stream_chunks", chunks}};
  return j.dump(2);
}

std::string gatewayConfig(int fastPort, int slowPort, int streams) {
  const int concurrency = std::max(4096, 2 * streams);  // never the bottleneck: this measures the gateway itself
  auto group = [&](const char* name, int port) {
    return nlohmann::json{{"name", name},
                          {"base_url", "http://127.0.0.1:" + std::to_string(port)},
                          {"concurrency", concurrency},
                          {"adaptive", false}};
  };
  auto route = [](const char* prefix, const char* group) {
    return nlohmann::json{{"prefix", prefix}, {"group", group}, {"dialect", "openai"}};
  };
  nlohmann::json j = {
      {"name", "gateway-bench"},
      {"global_concurrency", 2 * concurrency},
      {"request_timeout_s", 600},
      {"group_header", ""},
      {"tier_header", ""},
      {"groups", {group("fast", fastPort), group("slow", slowPort)}},
      {"gateway",
       {{"listen", "127.0.0.1:0"},
        {"max_connections", std::max(4096, streams + 256)},
        {"idle_timeout_s", 600},
        {"routes", {route("/fast", "fast"), route("/slow", "slow")}}}}};
  return j.dump(2);
}

// worker_processes auto (2 here), as Debian's default nginx.conf; keep-alive to the simulator, no buffering
// (so a stream's events pass as they come), no access log (the gateway writes none either).
std::string nginxConfig(const std::string& prefix, int listenPort, int simPort) {
  std::ostringstream c;
  c << "daemon off;\nworker_processes auto;\npid " << prefix << "/nginx.pid;\nerror_log " << prefix
    << "/error.log warn;\nworker_rlimit_nofile 20000;\n"
    << "events { worker_connections 8192; }\n"
    << "http {\n  access_log off;\n"
    << "  client_body_temp_path " << prefix << "/body;\n  proxy_temp_path " << prefix << "/proxy;\n"
    << "  fastcgi_temp_path " << prefix << "/fastcgi;\n  uwsgi_temp_path " << prefix << "/uwsgi;\n"
    << "  scgi_temp_path " << prefix << "/scgi;\n"
    << "  keepalive_requests 1000000;\n"
    << "  upstream sim { server 127.0.0.1:" << simPort << "; keepalive 128; keepalive_requests 1000000; }\n"
    << "  server {\n    listen 127.0.0.1:" << listenPort << ";\n"
    << "    location / {\n      proxy_pass http://sim;\n      proxy_http_version 1.1;\n"
    << "      proxy_set_header Connection \"\";\n      proxy_buffering off;\n    }\n  }\n}\n";
  return c.str();
}

int portOf(const std::string& line) {
  const auto colon = line.rfind(':');
  return colon == std::string::npos ? -1 : std::atoi(line.c_str() + colon + 1);
}

[[noreturn]] void startFailed(const ChildProcess& p) {
  std::ifstream in(p.logPath());
  std::stringstream log;
  log << in.rdbuf();
  throw std::runtime_error(p.name() + " did not start; its output:\n" + log.str());
}

int startSim(ChildProcess& p, const Options& o, const TempDir& dir, const std::string& name, double ttftMs,
             int chunks) {
  const auto conf = dir.write(name + ".json", simConfig(o.latencyMs, ttftMs, chunks));
  p.start({o.sim, "--config", conf, "--port", "0"}, dir.path() + "/" + name + ".log");
  const auto line = p.waitForLine("tollgate-sim listening on ", 10);
  if (!line) startFailed(p);
  return portOf(*line);
}

bool parseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    try {
      if (a == "--duration") o.durationS = std::stod(v);
      else if (a == "--streams") o.streams = std::stoi(v);
      else if (a == "--ttft-streams") o.ttftStreams = std::stoi(v);
      else if (a == "--stream-rounds") o.streamRounds = std::stoi(v);
      else if (a == "--latency-ms") o.latencyMs = std::stod(v);
      else if (a == "--nginx") o.nginx = v;
      else if (a == "--json") o.json = v;
      else if (a == "--connections") {
        o.connections.clear();
        std::stringstream in(v);
        for (std::string c; std::getline(in, c, ',');) o.connections.push_back(std::stoi(c));
      } else return false;
    } catch (const std::exception&) {
      std::fprintf(stderr, "gateway_bench: %s expects a number, got \"%s\"\n", a.c_str(), v.c_str());
      return false;
    }
  }
  if (o.durationS <= kWarmupS + 1 || o.streams < 1 || o.ttftStreams < 1 || o.streamRounds < 1 ||
      o.connections.empty())
    return false;
  for (int c : o.connections)
    if (c < 1 || c > 10000) return false;
  return true;
}

const char* verdict(bool ok) { return ok ? "PASS" : "FAIL"; }

int run(const Options& o) {
  // 1,000 streams are 1,000 sockets here and twice that in the gateway; children inherit the raised limit.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  TempDir dir("gateway-bench");
  ChildProcess simFast, simSlow, gateway, nginx;
  const int fastPort = startSim(simFast, o, dir, "sim-fast", kTtftMs, 3);
  const int slowPort = startSim(simSlow, o, dir, "sim-slow", kSlowTtftMs, 1);
  const auto gwConf = dir.write("gateway.json", gatewayConfig(fastPort, slowPort, o.streams));
  gateway.start({o.tollgate, "serve", "--config", gwConf, "--listen", "127.0.0.1:0", "--history", "off", "--quiet"},
                dir.path() + "/gateway.log");
  const auto gwLine = gateway.waitForLine("gateway: http://", 15);
  if (!gwLine) startFailed(gateway);
  const int gwPort = portOf(*gwLine);
  const int nginxPort = freeLoopbackPort();
  const auto ngConf = dir.write("nginx.conf", nginxConfig(dir.path(), nginxPort, fastPort));
  nginx.start({o.nginx, "-p", dir.path(), "-e", dir.path() + "/error.log", "-c", ngConf}, dir.path() + "/nginx.log");
  if (!waitForListener(nginxPort, 10)) startFailed(nginx);

  const std::string loop = "http://127.0.0.1:";
  const std::vector<Target> targets{{"direct", loop + std::to_string(fastPort)},
                                    {"nginx", loop + std::to_string(nginxPort), nginx.pid()},
                                    {"gateway", loop + std::to_string(gwPort) + "/fast", gateway.pid()}};
  std::printf("simulator: fixed %.1f ms latency, no limit; nginx %s (worker_processes auto); gateway pid %d\n",
              o.latencyMs, o.nginx.c_str(), static_cast<int>(gateway.pid()));

  nlohmann::json report;
  // Part 1. At each C the three run back to back, so they see the same neighbours on a shared machine.
  std::printf("\n1. closed loop, %.0f s per run (first %.0f s not counted), POST chat completion\n", o.durationS,
              kWarmupS);
  std::printf("%-8s %5s %10s %9s %9s %9s %8s %12s\n", "target", "C", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors",
              "proxy CPU us");
  std::vector<std::vector<LoadResult>> load(targets.size());
  for (int c : o.connections) {
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const double cpu0 = targets[t].proxy > 0 ? cpuSecondsTree(targets[t].proxy) : 0;
      auto r = closedLoop(targets[t], c, o.durationS);
      if (targets[t].proxy > 0 && r.requests > 0)
        r.proxyCpuUs = (cpuSecondsTree(targets[t].proxy) - cpu0) * 1e6 /
                       (static_cast<double>(r.requests) * (o.durationS / (o.durationS - kWarmupS)));
      load[t].push_back(r);
      std::printf("%-8s %5d %10.0f %9.3f %9.3f %9.3f %8ld %12.1f\n", targets[t].name.c_str(), c, r.rps, r.p50Ms,
                  r.p95Ms, r.p99Ms, r.errors, r.proxyCpuUs);
      std::fflush(stdout);
      report["closed_loop"].push_back({{"target", targets[t].name}, {"connections", c}, {"rps", r.rps},
                                       {"requests", r.requests}, {"errors", r.errors}, {"p50_ms", r.p50Ms},
                                       {"p95_ms", r.p95Ms}, {"p99_ms", r.p99Ms},
                                       {"proxy_cpu_us_per_request", r.proxyCpuUs}});
    }
  }
  double minRatio = 1e9;
  bool anyRatio = false;
  std::printf("gateway / nginx throughput:");
  for (std::size_t i = 0; i < o.connections.size(); ++i) {
    const double ratio = load[1][i].rps > 0 ? load[2][i].rps / load[1][i].rps : 0;
    std::printf("  C=%d %.2f", o.connections[i], ratio);
    if (o.connections[i] > 1 || o.connections.size() == 1) {
      minRatio = std::min(minRatio, ratio);
      anyRatio = true;
    }
  }
  const double addedMs = load[2][0].p50Ms - load[0][0].p50Ms;  // the first (lowest) C
  std::printf("\ngateway p50 - direct p50 at C=%d: %.3f ms (nginx: %.3f ms)\n", o.connections[0], addedMs,
              load[1][0].p50Ms - load[0][0].p50Ms);
  long errors = 0;
  for (const auto& per : load)
    for (const auto& r : per) errors += r.errors;

  // Part 2. A second round on the same gateway: RSS that keeps climbing round after round would be a leak, one
  // that settles is the allocator keeping freed memory.
  std::printf("\n2. %d idle streams through the gateway at once (first event after %.0f s), %d rounds\n", o.streams,
              kSlowTtftMs / 1000, o.streamRounds);
  std::vector<IdleStreamsResult> rounds;
  for (int round = 0; round < o.streamRounds; ++round) {
    const auto idle =
        idleStreams({"slow", loop + std::to_string(gwPort) + "/slow"}, targets[2], slowPort,
                    gateway.pid(), o.streams);
    rounds.push_back(idle);
    std::printf("round %d: heads %d of %d (status 200: %d) in %.2f s, finished early %d; gateway RSS before %.1f MB, "
                "all open %.1f MB (growth %.1f MB), 2 s after the clients left %.1f MB; answers after: %s; upstream "
                "connections open %d, left after %d\n",
                round + 1, idle.heads, idle.streams, idle.ok200, idle.openS, idle.failed, idle.rssBeforeKiB / 1024.0,
                idle.rssOpenKiB / 1024.0, (idle.rssOpenKiB - idle.rssBeforeKiB) / 1024.0,
                idle.rssReleasedKiB / 1024.0, idle.aliveAfter ? "yes" : "NO", idle.upstreamOpen,
                idle.upstreamLeft);
    std::fflush(stdout);
    report["idle_streams"].push_back({{"streams", idle.streams}, {"heads", idle.heads}, {"heads_200", idle.ok200},
                                      {"finished_early", idle.failed}, {"open_s", idle.openS},
                                      {"rss_before_kib", idle.rssBeforeKiB}, {"rss_open_kib", idle.rssOpenKiB},
                                      {"rss_released_kib", idle.rssReleasedKiB}, {"alive_after", idle.aliveAfter},
                                      {"upstream_open", idle.upstreamOpen},
                                      {"upstream_left", idle.upstreamLeft}});
  }
  const auto& idle = rounds.front();
  const double growthMB = (idle.rssOpenKiB - idle.rssBeforeKiB) / 1024.0;  // from the gateway before any stream
  bool aliveAfterStreams = true, allOpen = true;
  int fewestHeads = o.streams;
  for (const auto& r : rounds) {
    aliveAfterStreams = aliveAfterStreams && r.aliveAfter;
    allOpen = allOpen && r.ok200 == o.streams && r.failed == 0 && r.upstreamOpen == o.streams && r.upstreamLeft == 0;
    fewestHeads = std::min(fewestHeads, r.ok200);
  }

  // Part 3.
  std::printf("\n3. time to the first event of a stream (simulator: %.0f ms), %d sequential streams per target\n",
              kTtftMs, o.ttftStreams);
  const auto ttft = timeToFirstByte(targets, o.ttftStreams);
  std::printf("%-8s %9s %9s %8s\n", "target", "p50 ms", "p95 ms", "errors");
  for (const auto& r : ttft) {
    std::printf("%-8s %9.3f %9.3f %8d\n", r.target.c_str(), r.p50Ms, r.p95Ms, r.errors);
    report["ttft"].push_back({{"target", r.target}, {"p50_ms", r.p50Ms}, {"p95_ms", r.p95Ms}, {"errors", r.errors}});
  }
  const double ttftDiff = ttft[2].p50Ms - ttft[0].p50Ms;
  std::printf("gateway - direct: p50 %.3f ms, p95 %.3f ms\n", ttftDiff, ttft[2].p95Ms - ttft[0].p95Ms);

  const bool gwAlive = gateway.running();
  std::printf("\nPASS/FAIL\n");
  std::printf("%s  throughput gateway/nginx >= 0.5 at C > 1: min %.2f\n", verdict(anyRatio && minRatio >= 0.5),
              minRatio);
  std::printf("%s  added median latency at C=%d <= 1 ms: %.3f ms\n", verdict(addedMs <= 1), o.connections[0], addedMs);
  std::printf("%s  %d streams open at once, upstream closed after: %d heads with status 200 (fewest of the rounds)\n",
              verdict(allOpen), o.streams, fewestHeads);
  std::printf("%s  RSS growth for %d streams < 100 MB: %.1f MB\n", verdict(growthMB < 100), o.streams, growthMB);
  std::printf("%s  stream first-event time within 5 ms of direct: %+.3f ms\n", verdict(std::abs(ttftDiff) <= 5),
              ttftDiff);
  std::printf("%s  no errors, gateway alive at the end: %ld errors, %s\n",
              verdict(errors == 0 && gwAlive && aliveAfterStreams), errors, gwAlive ? "alive" : "EXITED");
  report["goals"] = {{"throughput_ratio_min", minRatio}, {"added_p50_ms", addedMs}, {"rss_growth_mb", growthMB},
                     {"ttft_diff_ms", ttftDiff}};
  if (!o.json.empty()) std::ofstream(o.json) << report.dump(2) << "\n";

  nginx.stop();
  const int gwStatus = gateway.stop(10);
  if (gwAlive && !(WIFEXITED(gwStatus) && WEXITSTATUS(gwStatus) == 0))
    std::printf("note: tollgate serve did not exit 0 on SIGTERM (status %d); log: %s\n", gwStatus,
                gateway.logPath().c_str());
  simSlow.stop();
  simFast.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: gateway_bench [--duration S (> 2)] [--connections 1,16,64] [--streams N] [--stream-rounds N]\n"
                 "                     [--ttft-streams N] [--latency-ms MS] [--nginx PATH] [--json FILE]\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gateway_bench: %s\n", e.what());
    return 1;
  }
}
