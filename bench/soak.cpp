// soak: the real engine for a long run against an upstream that misbehaves in every way we know of, then a
// check of what must hold however long it runs. A benchmark program (prints its figures), not a CTest test.
//
//   soak [--minutes 10] [--dir DIR] [--seed 1]
//
// Upstream: a child process (forked before any thread exists, so the engine process's RSS and fd counts are
// the engine's own) runs tollgate-sim on loopback with a FaultProxy in front of it. The simulator's schedule
// injects connection resets, 5xx bursts and quota drops; the proxy adds slow responses and an outage (first
// refused, then hanging connections) and counts every request that reaches the simulator by its X-Soak-Id.
//
// Workload: three groups over five keys and all three tiers: two open-loop Poisson streams (interactive P0/P1,
// search P0/P2; search is over its quota) and a JSONL job (batch P1/P2, token-limited, closed loop).
// History: recorded into DIR/history.db; a third of the way in, the file is capped just above its size
// (SQLite max_page_count, HistoryOptions::maxFileBytes), so it fills up and the store reports the disk full;
// three quarters in the cap is lifted again.
//
// Checked at the end, PASS/FAIL each (exit 1 on any FAIL):
//   1. every submitted request got exactly one result (callbacks counted per request id);
//   2. no request reached the upstream more often than the retry policy allows: per request, sends <= the
//      attempts its result reports, transient retries < max_attempts, sends <= 4 x max_attempts; in total,
//      transient retries <= budget_min_retries + budget_ratio x first attempts;
//   3. RSS and the fd count flat: the last sample against the sample after warm-up (20% of the run);
//   4. history: the store reported the disk full, the engine went on finishing requests, and the file passes
//      PRAGMA integrity_check;
//   5. no key secret in any file written (every file in DIR, the history database included).
#include "bench_support.h"
#include "config_loader.h"
#include "engine.h"
#include "fault_proxy.h"
#include "history_reader.h"
#include "history_store.h"
#include "jsonl_job.h"
#include "log.h"
#include "sample.h"
#include "sim_config.h"
#include "sim_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

using namespace tgbench;
namespace fs = std::filesystem;

namespace {

constexpr const char* kIdHeader = "X-Soak-Id";
constexpr const char* kPath = "/v1/chat/completions";
constexpr int kMaxTokens = 64;
constexpr int kMaxAttempts = 5;
constexpr double kBudgetRatio = 0.1;
constexpr int kBudgetMinRetries = 10;
constexpr double kOutageMaxS = 30;
constexpr double kWarmupShare = 0.2;         // RSS/fd baseline: the first sample at or after this share of the run
constexpr double kRssNoiseMb = 8;            // allowed growth, absolute...
constexpr double kRssNoiseShare = 0.10;      // ...or relative to the baseline, whichever is larger
constexpr long kFdNoise = 16;                // sockets come and go with adaptive concurrency
constexpr double kDrainGraceS = 30;          // after the run: time for what is queued to finish before stop() (<= T/4)
constexpr double kJobLinesPerS = 100;        // JSONL lines per second of run (more than batch's quota)
constexpr int kJobOutstanding = 150;         // closed loop: the job keeps this many in the engine
constexpr std::uint64_t kCapSlackBytes = 16 * 1024;

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------- the fault timeline

enum class FaultKind { Resets, Errors5xx, Slow, QuotaDrop, Refuse, Hang, HistoryCap };

struct Fault {
  FaultKind kind;
  double fromS, toS;
  double value = 0;  // share (resets, errors) or factor (quota drop)
};

std::string faultName(const Fault& f) {
  char buf[96];
  switch (f.kind) {
    case FaultKind::Resets: std::snprintf(buf, sizeof buf, "connection resets (%.0f%%)", f.value * 100); break;
    case FaultKind::Errors5xx: std::snprintf(buf, sizeof buf, "503 burst (%.0f%%)", f.value * 100); break;
    case FaultKind::Slow: std::snprintf(buf, sizeof buf, "slow responses (+0.5-2.5 s)"); break;
    case FaultKind::QuotaDrop: std::snprintf(buf, sizeof buf, "quota drop (x%.1f)", f.value); break;
    case FaultKind::Refuse: std::snprintf(buf, sizeof buf, "outage: connections refused"); break;
    case FaultKind::Hang: std::snprintf(buf, sizeof buf, "outage: connections hang"); break;
    case FaultKind::HistoryCap: std::snprintf(buf, sizeof buf, "history file capped (disk full)"); break;
  }
  return buf;
}

// Two rounds of every fault, the outage between them, and a quiet last 14% so the final RSS/fd sample is
// taken in the same healthy state as the warm-up one.
std::vector<Fault> makePlan(double T) {
  const double outage = std::min(kOutageMaxS, T / 6);
  const double o = 0.45 * T;
  return {
      {FaultKind::Resets, 0.06 * T, 0.11 * T, 0.3},   {FaultKind::Errors5xx, 0.13 * T, 0.18 * T, 0.5},
      {FaultKind::Slow, 0.20 * T, 0.26 * T},          {FaultKind::QuotaDrop, 0.28 * T, 0.40 * T, 0.4},
      {FaultKind::HistoryCap, 0.33 * T, 0.75 * T},    {FaultKind::Refuse, o, o + outage / 2},
      {FaultKind::Hang, o + outage / 2, o + outage},  {FaultKind::Resets, 0.58 * T, 0.62 * T, 0.3},
      {FaultKind::Errors5xx, 0.64 * T, 0.68 * T, 0.5}, {FaultKind::Slow, 0.70 * T, 0.74 * T},
      {FaultKind::QuotaDrop, 0.76 * T, 0.84 * T, 0.5},
  };
}

FaultProxy::Mode proxyModeAt(const std::vector<Fault>& plan, double t) {
  for (const auto& f : plan) {
    if (t < f.fromS || t >= f.toS) continue;
    if (f.kind == FaultKind::Refuse) return FaultProxy::Mode::Refuse;
    if (f.kind == FaultKind::Hang) return FaultProxy::Mode::Hang;
    if (f.kind == FaultKind::Slow) return FaultProxy::Mode::Slow;
  }
  return FaultProxy::Mode::Pass;
}

nlohmann::json simJson(const std::vector<Fault>& plan) {
  nlohmann::json schedule = nlohmann::json::array();
  for (const auto& f : plan) {
    const double d = f.toS - f.fromS;
    if (f.kind == FaultKind::Resets)
      schedule.push_back({{"at_s", f.fromS}, {"action", "reset_connections"}, {"share", f.value}, {"duration_s", d}});
    else if (f.kind == FaultKind::Errors5xx)
      schedule.push_back({{"at_s", f.fromS}, {"action", "errors"}, {"status", 503}, {"share", f.value}, {"duration_s", d}});
    else if (f.kind == FaultKind::QuotaDrop) {
      schedule.push_back({{"at_s", f.fromS}, {"action", "scale_quota"}, {"group", "*"}, {"factor", f.value}});
      schedule.push_back({{"at_s", f.toS}, {"action", "scale_quota"}, {"group", "*"}, {"factor", 1.0}});
    }
  }
  return {{"dialect", "x-ratelimit"},
          {"group_by", "header"},
          {"default_group", "interactive"},
          {"seed", 7},
          {"groups",
           {{"interactive", {{"algorithm", "token-bucket"}, {"limit", 15}, {"window_s", 1}, {"per_key", true}}},
            {"search", {{"algorithm", "sliding-window"}, {"limit", 10}, {"window_s", 1}, {"per_key", false}}},
            {"batch",
             {{"algorithm", "fixed-window"}, {"limit", 40}, {"window_s", 1}, {"tokens_per_window", 6000}, {"per_key", true}}}}},
          {"latency_ms", {{"distribution", "lognormal"}, {"mean", 15}, {"p95", 60}}},
          {"schedule", schedule}};
}

// ---------------------------------------------------------------- the upstream child process

struct Upstream {
  pid_t pid = -1;
  int port = 0;
  int controlFd = -1;  // closing it tells the child to stop and write its counts
};

// Runs in the child: simulator + proxy, the proxy's part of the timeline, until the control pipe closes.
[[noreturn]] void runUpstream(const std::vector<Fault>& plan, int readyFd, int controlFd, const std::string& dir) {
  int rc = 0;
  try {
    tg::SimServer sim(tg::SimConfig::fromJson(simJson(plan), "(soak simulator)"));
    const int simPort = sim.start("127.0.0.1", 0);
    FaultProxy proxy(simPort, kIdHeader);
    const int port = proxy.start();
    if (::write(readyFd, &port, sizeof port) != static_cast<ssize_t>(sizeof port)) std::_Exit(3);
    ::close(readyFd);
    const auto t0 = Clock::now();
    FaultProxy::Mode mode = FaultProxy::Mode::Pass;
    for (;;) {
      pollfd p{controlFd, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) break;  // EOF (or the parent died)
      const auto m = proxyModeAt(plan, secondsSince(t0));
      if (m != mode) {
        proxy.setMode(m);
        std::fprintf(stderr, "  [upstream t=%5.1f s] proxy: %s\n", secondsSince(t0),
                     std::string(FaultProxy::modeName(m)).c_str());
        mode = m;
      }
    }
    proxy.setMode(FaultProxy::Mode::Pass);
    proxy.stop();
    std::ofstream(dir + "/upstream-sim-stats.json") << sim.stats().dump(1) << "\n";
    sim.stop();
    std::string error;
    if (!proxy.writeCounts(dir + "/upstream-counts.tsv", &error)) {
      std::fprintf(stderr, "soak upstream: %s\n", error.c_str());
      rc = 1;
    }
    if (proxy.requestsWithoutId() > 0)
      std::fprintf(stderr, "soak upstream: %" PRIu64 " requests without %s\n", proxy.requestsWithoutId(), kIdHeader);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak upstream: %s\n", e.what());
    rc = 1;
  }
  std::fflush(stderr);
  std::_Exit(rc);
}

Upstream startUpstream(const std::vector<Fault>& plan, const std::string& dir) {
  int ready[2], control[2];
  if (::pipe2(ready, O_CLOEXEC) != 0 || ::pipe2(control, O_CLOEXEC) != 0) {
    std::perror("soak: pipe2");
    std::exit(1);
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("soak: fork");
    std::exit(1);
  }
  if (pid == 0) {
    ::close(ready[0]);
    ::close(control[1]);
    runUpstream(plan, ready[1], control[0], dir);
  }
  ::close(ready[1]);
  ::close(control[0]);
  Upstream u;
  u.pid = pid;
  u.controlFd = control[1];
  if (::read(ready[0], &u.port, sizeof u.port) != static_cast<ssize_t>(sizeof u.port)) {
    std::fprintf(stderr, "soak: the upstream process did not start (see its message above)\n");
    std::exit(1);
  }
  ::close(ready[0]);
  return u;
}

// ---------------------------------------------------------------- bookkeeping

// Callbacks and reported attempts per request id ("s<n>" stream, "j<n>" job). Compact on purpose: it grows
// with the run in the measured process.
class Ledger {
 public:
  enum Source { kStream = 0, kJob = 1 };
  void record(const tg::Result& r) {
    std::lock_guard lock(mu_);
    ++results_;
    ++byError_[r.error];
    int src;
    std::size_t n;
    if (!parseId(r.id, &src, &n)) {
      ++strays_;
      return;
    }
    auto& calls = calls_[src];
    if (n >= calls.size()) {
      calls.resize(n + 1, 0);
      attempts_[src].resize(n + 1, 0);
    }
    if (calls[n] < 255) ++calls[n];
    attempts_[src][n] = static_cast<std::uint8_t>(std::min(r.attempts, 255));
    if (r.attempts >= 1) ++firstAttempts_;
  }
  static bool parseId(const std::string& id, int* src, std::size_t* n) {
    if (id.size() < 2 || (id[0] != 's' && id[0] != 'j')) return false;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(id.c_str() + 1, &end, 10);
    if (*end != '\0') return false;
    *src = id[0] == 's' ? kStream : kJob;
    *n = static_cast<std::size_t>(v);
    return true;
  }
  struct Totals {
    std::uint64_t results = 0, duplicates = 0, lost = 0, strays = 0, firstAttempts = 0;
    std::string firstLost, firstDuplicate;
    std::map<tg::ErrorKind, std::uint64_t> byError;
  };
  // submitted[src]: ids 0..submitted-1 were submitted.
  Totals totals(const std::array<std::uint64_t, 2>& submitted) const {
    std::lock_guard lock(mu_);
    Totals t;
    t.results = results_;
    t.strays = strays_;
    t.byError = byError_;
    t.firstAttempts = firstAttempts_;
    for (int src = 0; src < 2; ++src) {
      const auto& calls = calls_[src];
      for (std::size_t n = 0; n < std::max<std::size_t>(calls.size(), submitted[src]); ++n) {
        const int c = n < calls.size() ? calls[n] : 0;
        const std::string id = (src == kStream ? "s" : "j") + std::to_string(n);
        if (n >= submitted[src] && c > 0) ++t.strays;
        else if (c == 0 && n < submitted[src]) {
          ++t.lost;
          if (t.firstLost.empty()) t.firstLost = id;
        } else if (c > 1) {
          t.duplicates += static_cast<std::uint64_t>(c - 1);
          if (t.firstDuplicate.empty()) t.firstDuplicate = id + " (" + std::to_string(c) + " callbacks)";
        }
      }
    }
    return t;
  }
  std::uint64_t results() const {
    std::lock_guard lock(mu_);
    return results_;
  }
  int attemptsOf(const std::string& id) const {  // -1 when there is no result
    int src;
    std::size_t n;
    if (!parseId(id, &src, &n)) return -1;
    std::lock_guard lock(mu_);
    if (n >= calls_[src].size() || calls_[src][n] == 0) return -1;
    return attempts_[src][n];
  }

 private:
  mutable std::mutex mu_;
  std::array<std::vector<std::uint8_t>, 2> calls_, attempts_;
  std::uint64_t results_ = 0, strays_ = 0, firstAttempts_ = 0;
  std::map<tg::ErrorKind, std::uint64_t> byError_;
};

long countFds() {
  std::error_code ec;
  long n = 0;
  for (auto it = fs::directory_iterator("/proc/self/fd", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) ++n;
  return n - 1;  // the iterator's own descriptor
}

struct ProcSample {
  double tS = 0;
  double rssMb = 0;
  long fds = 0;
};

std::string randomSecret(std::mt19937_64& rng) {
  static const char* hex = "0123456789abcdef";
  std::string s = "sk-soak-";
  for (int i = 0; i < 40; ++i) s += hex[rng() % 16];
  return s;
}

std::string promptText(std::mt19937_64& rng) {
  static const char* words[] = {"quota", "window", "retry", "budget", "latency", "breaker", "tier", "burst"};
  std::string s;
  const int n = 20 + static_cast<int>(rng() % 30);
  for (int i = 0; i < n; ++i) s += std::string(words[rng() % 8]) + " ";
  return s;
}

std::string bodyFor(std::mt19937_64& rng) {
  return nlohmann::json{{"model", "soak"},
                        {"max_tokens", kMaxTokens},
                        {"messages", {{{"role", "user"}, {"content", promptText(rng)}}}}}
      .dump();
}

struct Stream {
  std::string group;
  tg::Tier tier;
  double rate;
};

bool fileContains(const fs::path& p, const std::string& needle) {
  std::ifstream in(p, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return data.find(needle) != std::string::npos;
}

struct Verdicts {
  int failures = 0;
  void check(bool ok, const std::string& what, const std::string& detail) {
    if (!ok) ++failures;
    std::printf("  %s  %s: %s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.c_str());
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Args args(argc, argv);
  const double minutes = args.number("minutes", 10);
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 1));
  if (!(minutes > 0) || args.flag("help")) {
    std::fprintf(stderr, "usage: soak [--minutes N (default 10)] [--dir DIR] [--seed N]\n");
    return 2;
  }
  std::string dir = args.text("dir", "");
  if (dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "tollgate-soak-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      std::perror("soak: mkdtemp");
      return 1;
    }
    dir = tmpl;
  } else {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_empty(dir, ec)) {
      std::fprintf(stderr, "soak: --dir %s: needs an empty (or new) directory\n", dir.c_str());
      return 2;
    }
  }
  const double T = minutes * 60;
  const auto plan = makePlan(T);

  // Before any thread exists.
  const Upstream upstream = startUpstream(plan, dir);
  const auto t0 = Clock::now();
  const std::string base = "http://127.0.0.1:" + std::to_string(upstream.port);

  std::FILE* logFile = std::fopen((dir + "/engine.log").c_str(), "w");
  if (!logFile) {
    std::perror("soak: engine.log");
    return 1;
  }
  tg::Log::setSink(logFile);

  std::mt19937_64 rng(seed);
  const std::vector<std::pair<std::string, std::string>> keyEnv = {
      {"TG_SOAK_KEY_IA", randomSecret(rng)}, {"TG_SOAK_KEY_IB", randomSecret(rng)}, {"TG_SOAK_KEY_S", randomSecret(rng)},
      {"TG_SOAK_KEY_BA", randomSecret(rng)}, {"TG_SOAK_KEY_BB", randomSecret(rng)}};
  for (const auto& [env, secret] : keyEnv) ::setenv(env.c_str(), secret.c_str(), 1);

  const nlohmann::json engineJson{
      {"name", "soak"},
      {"global_concurrency", 48},
      {"request_timeout_s", 8},
      {"connect_timeout_s", 2},
      {"tiers",
       {{"P0", {{"capacity", 2000}, {"max_wait_s", 15}}},
        {"P1", {{"capacity", 5000}, {"max_wait_s", 45}}},
        {"P2", {{"capacity", 20000}, {"max_wait_s", 90}}}}},
      {"retry",
       {{"max_attempts", kMaxAttempts}, {"budget_ratio", kBudgetRatio}, {"budget_min_retries", kBudgetMinRetries},
        {"max_server_wait_s", 30}}},
      {"groups",
       {{{"name", "interactive"},
         {"base_url", base},
         {"concurrency", 12},
         {"keys", {{{"name", "ia"}, {"env", "TG_SOAK_KEY_IA"}}, {{"name", "ib"}, {"env", "TG_SOAK_KEY_IB"}}}}},
        {{"name", "search"},
         {"base_url", base},
         {"concurrency", 6},
         {"keys", {{{"name", "s"}, {"env", "TG_SOAK_KEY_S"}, {"header", "x-api-key"}, {"prefix", ""}}}}},
        {{"name", "batch"},
         {"base_url", base},
         {"concurrency", 24},
         {"keys", {{{"name", "ba"}, {"env", "TG_SOAK_KEY_BA"}}, {{"name", "bb"}, {"env", "TG_SOAK_KEY_BB"}}}}}}}};
  tg::TollgateConfig cfg = tg::ConfigLoader::fromJson(engineJson, "(soak config)");

  // The JSONL job: more lines than batch's quota can serve in the run, fed in a closed loop.
  const std::string jobPath = dir + "/job.jsonl";
  const auto jobLines = static_cast<std::uint64_t>(kJobLinesPerS * T);
  {
    std::ofstream job(jobPath);
    for (std::uint64_t n = 0; n < jobLines; ++n) {
      const std::string id = "j" + std::to_string(n);
      job << nlohmann::json{{"id", id},
                            {"group", "batch"},
                            {"tier", n % 3 == 0 ? "P1" : "P2"},
                            {"method", "POST"},
                            {"url", kPath},
                            {"headers", {{kIdHeader, id}}},
                            {"body", nlohmann::json::parse(bodyFor(rng))},
                            {"max_tokens", kMaxTokens}}
                 .dump()
          << "\n";
    }
  }

  std::printf("soak: %.1f min, engine pid %d, upstream pid %d (tollgate-sim behind a fault proxy on %s)\n", minutes,
              static_cast<int>(::getpid()), static_cast<int>(upstream.pid), base.c_str());
  std::printf("files: %s\nfaults:\n", dir.c_str());
  for (const auto& f : plan) std::printf("  %6.1f - %6.1f s  %s\n", f.fromS, f.toS, faultName(f).c_str());
  std::fflush(stdout);

  // History.
  tg::HistoryOptions hopts;
  std::string historyError;
  const std::string historyPath = dir + "/history.db";
  auto history = tg::HistoryStore::open(historyPath, hopts, &historyError);
  if (!history) {
    std::fprintf(stderr, "soak: history %s: %s\n", historyPath.c_str(), historyError.c_str());
    return 1;
  }

  Ledger ledger;
  std::atomic<std::uint64_t> attemptsSeen{0}, attempts429{0}, attempts5xx{0}, attemptsNet{0};
  tg::SampleBuilder sampleBuilder;  // engine thread only
  tg::EpochMs lastSampleMs = 0;     // engine thread only
  auto engine = std::make_unique<tg::Engine>(cfg.engine);
  engine->onEvent([&](const tg::Event& e) { history->append(e); });
  engine->onSnapshot([&](tg::SnapshotPtr s) {
    if (s->tsMs - lastSampleMs >= 1000) {
      lastSampleMs = s->tsMs;
      history->append(sampleBuilder.next(*s));
    }
  });
  engine->onAttempt([&](const tg::AttemptRecord& a) {
    ++attemptsSeen;
    if (a.rateLimited) ++attempts429;
    else if (a.status >= 500) ++attempts5xx;
    else if (a.status == 0) ++attemptsNet;
    history->append(a);
  });
  engine->start();

  tg::JsonlJob::Options jopts;
  jopts.input = jobPath;
  jopts.maxOutstanding = kJobOutstanding;
  jopts.observer = [&](const tg::Result& r) { ledger.record(r); };
  auto job = std::make_unique<tg::JsonlJob>(*engine, jopts);
  job->start();

  // Open-loop streams.
  std::atomic<bool> stopStreams{false};
  std::atomic<std::uint64_t> streamSubmitted{0};
  const std::vector<Stream> streams = {{"interactive", tg::Tier::P0, 6}, {"interactive", tg::Tier::P1, 14},
                                       {"search", tg::Tier::P0, 3},      {"search", tg::Tier::P2, 9}};
  std::thread streamThread([&] {
    std::mt19937_64 r(seed * 31 + 7);
    double total = 0;
    for (const auto& s : streams) total += s.rate;
    std::exponential_distribution<double> gap(total);
    std::uniform_real_distribution<double> pick(0, total);
    double next = 0;
    while (!stopStreams) {
      const double now = secondsSince(t0);
      if (now >= T) break;
      while (next <= now) {
        double x = pick(r);
        const Stream* s = &streams.back();
        for (const auto& st : streams) {
          if (x < st.rate) {
            s = &st;
            break;
          }
          x -= st.rate;
        }
        const std::uint64_t n = streamSubmitted.load();
        tg::Request req;
        req.id = "s" + std::to_string(n);
        req.group = s->group;
        req.tier = s->tier;
        req.url = kPath;
        req.headers = {{kIdHeader, req.id}};
        req.body = bodyFor(r);
        req.maxTokens = kMaxTokens;
        streamSubmitted = n + 1;  // counted before submit: a callback may run before submit() returns
        engine->submit(std::move(req), [&](const tg::Result& res) { ledger.record(res); });
        next += gap(r);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });

  // The run: timeline actions, a sample of RSS and fds every interval, progress on stderr.
  const double sampleEveryS = T >= 300 ? 60 : std::max(5.0, T / 10);
  std::vector<ProcSample> procSamples{{0, readStatusKb("VmRSS") / 1024.0, countFds()}};
  double nextSample = sampleEveryS, nextProgress = 10;
  const Fault* cap = nullptr;
  for (const auto& f : plan)
    if (f.kind == FaultKind::HistoryCap) cap = &f;
  bool capped = false, uncapped = false;
  bool diskFullSeen = false;
  std::string diskFullError;
  std::uint64_t resultsAtDiskFull = 0;
  std::uint64_t capBytes = 0;
  auto resultsSoFar = [&] { return ledger.results(); };
  for (;;) {
    const double now = secondsSince(t0);
    if (cap && !capped && now >= cap->fromS) {
      capped = true;
      capBytes = static_cast<std::uint64_t>(fs::file_size(historyPath)) + kCapSlackBytes;
      history->setMaxFileBytes(capBytes);
      // SQLite keeps max_page_count at or above the current page count, so this caps it at about its size now.
      std::fprintf(stderr, "  [t=%5.1f s] history capped at max(%" PRIu64 " bytes, its current size)\n", now, capBytes);
    }
    if (cap && capped && !uncapped && now >= cap->toS) {
      uncapped = true;
      history->setMaxFileBytes(0);
      std::fprintf(stderr, "  [t=%5.1f s] history cap lifted\n", now);
    }
    if (capped && !uncapped && !diskFullSeen) {
      const auto st = history->status();
      if (!st.ok) {
        diskFullSeen = true;
        diskFullError = st.lastError;
        resultsAtDiskFull = resultsSoFar();
        std::fprintf(stderr, "  [t=%5.1f s] history reports: %s\n", now, st.lastError.c_str());
      }
    }
    if (now >= nextSample || now >= T) {
      procSamples.push_back({now, readStatusKb("VmRSS") / 1024.0, countFds()});
      nextSample += sampleEveryS;
    }
    if (now >= nextProgress) {
      const auto st = history->status();
      const auto jp = job->progress();
      std::fprintf(stderr, "  t=%5.0f s  submitted %" PRIu64 "  results %" PRIu64 "  attempts %" PRIu64
                           " (429 %" PRIu64 ", 5xx %" PRIu64 ", net %" PRIu64 ")  RSS %.1f MB  fds %ld  history %.0f kB%s\n",
                   now, streamSubmitted.load() + static_cast<std::uint64_t>(jp.submitted), resultsSoFar(),
                   attemptsSeen.load(), attempts429.load(), attempts5xx.load(), attemptsNet.load(),
                   readStatusKb("VmRSS") / 1024.0, countFds(), st.fileBytes / 1024.0, st.ok ? "" : " (write failing)");
      nextProgress += 10;
    }
    if (now >= T) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // Wind down: no new work, a grace for what is queued, then stop() cancels the rest.
  stopStreams = true;
  streamThread.join();
  job->cancel();
  const auto graceStart = Clock::now();
  auto outstanding = [&] {
    const auto submittedNow = streamSubmitted.load() + static_cast<std::uint64_t>(job->progress().submitted);
    return static_cast<std::int64_t>(submittedNow) - static_cast<std::int64_t>(ledger.results());
  };
  while (outstanding() > 0 && secondsSince(graceStart) < std::min(kDrainGraceS, T / 4))
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::int64_t cancelledAtStop = outstanding();
  engine->stop();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // a late (duplicate) callback would land here
  const auto jp = job->progress();
  const std::array<std::uint64_t, 2> submitted{streamSubmitted.load(), static_cast<std::uint64_t>(jp.submitted)};
  const Ledger::Totals totals = ledger.totals(submitted);
  job.reset();
  engine.reset();

  const bool flushed = history->flush();
  const tg::HistoryStatus hs = history->status();
  history.reset();
  tg::Log::setSink(stderr);
  std::fclose(logFile);

  // The upstream's counts.
  ::close(upstream.controlFd);
  int status = 0;
  ::waitpid(upstream.pid, &status, 0);
  const bool upstreamOk = WIFEXITED(status) && WEXITSTATUS(status) == 0;

  std::uint64_t upstreamSends = 0, upstreamIds = 0, transientTotal = 0, quotaTotal = 0, overAttempts = 0,
                overTransient = 0, overCap = 0, unknownIds = 0, hiddenSends = 0;
  std::string firstOver;
  {
    std::ifstream in(dir + "/upstream-counts.tsv");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string id, statuses;
      int sends = 0, transient = 0, quota = 0;
      ls >> id >> sends >> transient >> quota >> statuses;
      ++upstreamIds;
      upstreamSends += static_cast<std::uint64_t>(sends);
      transientTotal += static_cast<std::uint64_t>(transient);
      quotaTotal += static_cast<std::uint64_t>(quota);
      const int attempts = ledger.attemptsOf(id);
      std::string why;
      if (attempts < 0) ++unknownIds, why = "no result";
      else if (sends > attempts) {
        ++overAttempts;
        hiddenSends += static_cast<std::uint64_t>(sends - attempts);
        why = "result says " + std::to_string(attempts) + " attempts";
      }
      if (transient > kMaxAttempts - 1) ++overTransient, why += " transient retries " + std::to_string(transient);
      if (sends > 4 * kMaxAttempts) ++overCap, why += " over the hard cap";
      if (!why.empty() && firstOver.empty())
        firstOver = id + ": " + std::to_string(sends) + " sends [" + statuses + "], " + why;
    }
  }
  const double allowedTransient = kBudgetMinRetries + kBudgetRatio * static_cast<double>(totals.firstAttempts);

  // Secrets in any file written.
  std::vector<std::string> leaks;
  std::uint64_t filesScanned = 0, bytesScanned = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++filesScanned;
    bytesScanned += e.file_size();
    for (const auto& [env, secret] : keyEnv)
      if (fileContains(e.path(), secret)) leaks.push_back(e.path().filename().string() + " holds " + env);
  }

  // History integrity, read back with a fresh connection.
  std::string integrity = "not checked";
  std::uint64_t historyBytes = 0;
  {
    std::error_code ec;
    historyBytes = fs::file_size(historyPath, ec);
    std::string err;
    auto reader = tg::HistoryReader::open(historyPath, tg::HistoryReaderOptions{}, &err);
    if (!reader) {
      integrity = "cannot open: " + err;
    } else {
      const auto r = reader->integrityCheck();
      integrity.clear();
      if (!r.ok()) integrity = r.error;
      for (const auto& l : r.value) integrity += (integrity.empty() ? "" : "; ") + l;
    }
  }

  // RSS and fds: warm-up sample vs last.
  const ProcSample* warm = &procSamples.back();
  for (const auto& s : procSamples)
    if (s.tS >= kWarmupShare * T) {
      warm = &s;
      break;
    }
  const ProcSample& last = procSamples.back();
  double maxRss = 0;
  long maxFds = 0;
  for (const auto& s : procSamples) maxRss = std::max(maxRss, s.rssMb), maxFds = std::max(maxFds, s.fds);
  const double rssAllowed = std::max(kRssNoiseMb, kRssNoiseShare * warm->rssMb);
  // Least-squares slope after warm-up, to tell steady growth from noise in a run that still passed.
  double slopeKbPerMin = 0;
  {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& s : procSamples)
      if (s.tS >= warm->tS) {
        const double x = s.tS / 60, y = s.rssMb * 1024;
        n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
      }
    if (n >= 2 && n * sxx - sx * sx > 0) slopeKbPerMin = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  }

  std::printf("\nSoak figures\n\n");
  TablePrinter t({"measure", "value"});
  t.row({"requests submitted", std::to_string(submitted[0] + submitted[1]) + " (streams " + std::to_string(submitted[0]) +
                                   ", JSONL job " + std::to_string(submitted[1]) + ")"});
  t.row({"results", std::to_string(totals.results)});
  std::string kinds;
  for (const auto& [k, n] : totals.byError)
    kinds += (kinds.empty() ? "" : ", ") + std::string(tg::errorKindName(k)) + " " + std::to_string(n);
  t.row({"results by outcome", kinds});
  t.row({"duplicates / lost / strays", std::to_string(totals.duplicates) + " / " + std::to_string(totals.lost) + " / " +
                                           std::to_string(totals.strays)});
  t.row({"still open when stop() was called", std::to_string(cancelledAtStop)});
  t.row({"engine attempts (429 / 5xx / network)", std::to_string(attemptsSeen.load()) + " (" + std::to_string(attempts429.load()) +
                                                     " / " + std::to_string(attempts5xx.load()) + " / " +
                                                     std::to_string(attemptsNet.load()) + ")"});
  t.row({"upstream: requests seen / sends", std::to_string(upstreamIds) + " / " + std::to_string(upstreamSends)});
  t.row({"upstream: retries after 429 / transient", std::to_string(quotaTotal) + " / " + std::to_string(transientTotal) +
                                                       " (budget allows " + fmt(allowedTransient, 0) + ")"});
  t.row({"RSS start / warm-up / end / max", fmt(procSamples.front().rssMb) + " / " + fmt(warm->rssMb) + " / " +
                                                fmt(last.rssMb) + " / " + fmt(maxRss) + " MB (after warm-up " +
                                                fmt(slopeKbPerMin, 0) + " kB/min)"});
  t.row({"fds start / warm-up / end / max", std::to_string(procSamples.front().fds) + " / " + std::to_string(warm->fds) +
                                                " / " + std::to_string(last.fds) + " / " + std::to_string(maxFds)});
  t.row({"history file", fmt(historyBytes / 1024.0) + " kB, " +
                             std::to_string(hs.rowsWritten) + " rows written, " + std::to_string(hs.rowsDropped) +
                             " dropped"});
  t.row({"history error while capped", diskFullError.empty() ? "(none)" : diskFullError});
  t.row({"files scanned for secrets", std::to_string(filesScanned) + " (" + fmt(bytesScanned / 1048576.0) + " MB)"});
  t.print();
  std::printf("\nRSS/fd samples (s: MB, fds):");
  for (const auto& s : procSamples) std::printf(" %.0f: %.1f, %ld;", s.tS, s.rssMb, s.fds);
  std::printf("\n\nInvariants\n");

  Verdicts v;
  v.check(totals.duplicates == 0 && totals.lost == 0 && totals.strays == 0 &&
              totals.results == submitted[0] + submitted[1],
          "exactly one result per request",
          std::to_string(submitted[0] + submitted[1]) + " submitted, " + std::to_string(totals.results) + " results, " +
              std::to_string(totals.duplicates) + " duplicates, " + std::to_string(totals.lost) + " lost" +
              (totals.firstLost.empty() ? "" : " (first: " + totals.firstLost + ")") +
              (totals.firstDuplicate.empty() ? "" : ", first duplicate " + totals.firstDuplicate) + ", " +
              std::to_string(totals.strays) + " unknown ids");
  v.check(upstreamOk && overAttempts == 0 && overTransient == 0 && overCap == 0 && unknownIds == 0 &&
              static_cast<double>(transientTotal) <= allowedTransient,
          "upstream sends within the retry policy",
          std::to_string(overAttempts) + " ids sent more often than their result says (" + std::to_string(hiddenSends) +
              " sends the engine did not count), " + std::to_string(overTransient) +
              " with more than " + std::to_string(kMaxAttempts - 1) + " transient retries, " + std::to_string(overCap) +
              " over " + std::to_string(4 * kMaxAttempts) + " sends, " + std::to_string(unknownIds) +
              " seen upstream without a result; transient retries " + std::to_string(transientTotal) + " <= " +
              fmt(allowedTransient, 0) + (firstOver.empty() ? "" : "; first: " + firstOver) +
              (upstreamOk ? "" : "; the upstream process failed"));
  v.check(last.rssMb - warm->rssMb <= rssAllowed, "RSS flat",
          fmt(warm->rssMb) + " MB at " + fmt(warm->tS, 0) + " s -> " + fmt(last.rssMb) + " MB at " + fmt(last.tS, 0) +
              " s (allowed +" + fmt(rssAllowed) + " MB)");
  v.check(last.fds - warm->fds <= kFdNoise, "fd count flat",
          std::to_string(warm->fds) + " at " + fmt(warm->tS, 0) + " s -> " + std::to_string(last.fds) + " at " +
              fmt(last.tS, 0) + " s (allowed +" + std::to_string(kFdNoise) + ")");
  const bool fullReported = diskFullSeen && diskFullError.find("full") != std::string::npos;
  v.check(fullReported && totals.results > resultsAtDiskFull && flushed && hs.ok,
          "history disk full reported, engine kept running, writes resumed",
          (fullReported ? "reported" : "NOT reported (" + (diskFullError.empty() ? "no error" : diskFullError) + ")") +
              std::string(", ") + std::to_string(totals.results - std::min(totals.results, resultsAtDiskFull)) +
              " results after it, final flush " + (flushed && hs.ok ? "ok" : "failed: " + hs.lastError));
  v.check(integrity == "ok", "history PRAGMA integrity_check", integrity);
  std::string leakText;
  for (const auto& l : leaks) leakText += (leakText.empty() ? "" : ", ") + l;
  v.check(leaks.empty(), "no key secret in any file written",
          leaks.empty() ? std::to_string(keyEnv.size()) + " secrets, " + std::to_string(filesScanned) + " files" : leakText);

  writeJson(dir + "/soak.json",
            {{"minutes", minutes},
             {"submitted", submitted[0] + submitted[1]},
             {"results", totals.results},
             {"duplicates", totals.duplicates},
             {"lost", totals.lost},
             {"upstream_sends", upstreamSends},
             {"transient_retries", transientTotal},
             {"transient_allowed", allowedTransient},
             {"rss_mb", {procSamples.front().rssMb, warm->rssMb, last.rssMb}},
             {"rss_slope_kb_per_min", slopeKbPerMin},
             {"hidden_sends", hiddenSends},
             {"fds", {procSamples.front().fds, warm->fds, last.fds}},
             {"history_bytes", historyBytes},
             {"failures", v.failures}});
  std::printf("\n%s (%d FAIL); files in %s\n", v.failures ? "SOAK FAILED" : "soak passed", v.failures, dir.c_str());
  return v.failures ? 1 : 0;
}
