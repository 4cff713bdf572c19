#include "engine.h"

#include "json_text.h"
#include "adaptive_concurrency.h"
#include "circuit_breaker.h"
#include "log.h"
#include "quota_tracker.h"
#include "quota_verdict.h"
#include "rate_limit_header_parser.h"
#include "retry_policy.h"
#include "request_safety.h"
#include "secret.h"
#include "tier_queues.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <strings.h>
#include <deque>
#include <mutex>
#include <queue>
#include <set>
#include <stdexcept>
#include <thread>

namespace tg {
namespace {

constexpr auto kSweepInterval = std::chrono::milliseconds(100);
constexpr auto kMaxPoll = std::chrono::milliseconds(250);
constexpr double kLatencyWindowS = 10;
constexpr double kBurstQuietS = 2;  // a 429 burst ends after this long without a 429
constexpr const char* kScope = "engine";
// A request's deadline from outside (JSONL "deadline", a profile's deadline_s) is clamped to this.
constexpr double kMaxDeadlineS = 365.0 * 86400;

std::once_flag gCurlInit;

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return std::string(s);
}

std::string endpointOf(const std::string& url) {
  auto scheme = url.find("://");
  auto start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (start == std::string::npos) return "/";
  auto end = url.find_first_of("?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The one mapping from a transfer's CURLcode to the engine's error kinds. Kinds other than Network and
// Timeout are permanent: the same request would fail the same way again, so it is not retried.
ErrorKind errorKindForCurl(CURLcode rc) {
  switch (rc) {
    case CURLE_OK: return ErrorKind::None;
    case CURLE_OPERATION_TIMEDOUT: return ErrorKind::Timeout;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_NOT_BUILT_IN:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
      return ErrorKind::Config;
    case CURLE_FILESIZE_EXCEEDED: return ErrorKind::Http;  // the response is over max_response_bytes
    default: return ErrorKind::Network;
  }
}

// Recent completions for p50/p95: a fixed ring, entries older than the window are ignored.
class LatencyWindow {
 public:
  void add(TimePoint t, double ms) {
    ring_[next_] = {t, ms};
    next_ = (next_ + 1) % ring_.size();
    count_ = std::min(count_ + 1, ring_.size());
  }
  std::pair<double, double> percentiles(TimePoint now) const {
    std::vector<double> v;
    v.reserve(count_);
    const TimePoint from = now - fromSeconds(kLatencyWindowS);
    for (std::size_t i = 0; i < count_; ++i)
      if (ring_[i].first >= from) v.push_back(ring_[i].second);
    if (v.empty()) return {kUnknown, kUnknown};
    auto at = [&](double q) {
      auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
      std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
      return v[k];
    };
    const double p50 = at(0.5);
    return {p50, at(0.95)};
  }

 private:
  std::array<std::pair<TimePoint, double>, 1024> ring_{};
  std::size_t next_ = 0, count_ = 0;
};

struct Pending {
  Request req;
  ResultCallback done;
  TimePoint submittedAt;
  TimePoint queuedAt;    // when it last entered a queue (for wait accounting)
  double waitMs = 0;
  int attempts = 0;
  double tokenCost = 0;  // estimate reserved per attempt
  TimePoint deadline = TimePoint::max();  // queued (first try or retry) past this: shed
  Result last;           // what the last attempt produced
};
using PendingPtr = std::unique_ptr<Pending>;

struct Command {  // for the loop thread: a function to run, or a request to enqueue
  std::function<void()> fn;
  PendingPtr pending;
};

struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistFree>;

struct KeyRt {
  KeyConfig cfg;
  std::string fingerprint;
  QuotaTracker quota;
  int inFlight = 0;
  std::string authLine;  // "Authorization: Bearer ..." (never logged)
  // Request header lists per tier for requests without headers of their own (the common case): built once,
  // not per attempt (a dozen allocations each).
  std::array<SlistPtr, kTierCount> headerCache{};
};

struct GroupRt {
  GroupConfig cfg;
  std::vector<KeyRt> keys;
  TierQueues<PendingPtr> queues;
  CircuitBreaker breaker;
  AdaptiveConcurrency concurrency;
  int inFlight = 0;
  bool paused = false;
  bool draining = false;
  std::array<bool, kTierCount> tierPaused{};
  GroupCounters counters;
  LatencyWindow latency;
  std::string waitReason;
  // 429 burst tracking
  bool burstActive = false;
  TimePoint burstStart{}, lastLimited{}, secStart{};
  int burstCount = 0, secCount = 0, burstPeak = 0;
  int shedSinceEvent = 0;
  std::string shedReason;
  TimePoint lastErrorLog{};
  int suppressedErrors = 0;
  // Origins of base_url and allowed_hosts: an absolute request URL must name one of them, since the
  // group's keys go with every request.
  std::vector<std::string> origins;
  std::string configProblem;  // non-empty: the group's own config cannot be sent safely; requests fail with it

  GroupRt(const GroupConfig& c, const EngineConfig& ec, TimePoint now)
      : cfg(c),
        queues({ec.tiers[0].capacity, ec.tiers[1].capacity, ec.tiers[2].capacity}),
        breaker(c.breaker),
        concurrency(c.concurrency, c.minConcurrency, c.adaptive, now) {}
};

struct Transfer {
  CURL* easy = nullptr;
  curl_slist* headerList = nullptr;
  bool ownsHeaderList = true;  // false: the key's cached list
  void freeHeaderList() {
    if (ownsHeaderList) curl_slist_free_all(headerList);
    headerList = nullptr;
  }
  PendingPtr pending;
  GroupRt* group = nullptr;
  int key = 0;
  TimePoint sentAt;
  std::string body;
  std::int64_t maxBody = 0;   // max_response_bytes
  bool bodyTooLarge = false;  // the write callback refused more (a chunked body has no size up front)
  // libcurl sends a request again by itself when a reused connection dies before any response byte; each
  // send is counted here (CURLOPT_PREREQFUNCTION) so it is an attempt that spends the retry budget.
  EngineLoop* loop = nullptr;
  int sends = 0;
  bool resendRefused = false;
  HeaderList headers;
  char error[CURL_ERROR_SIZE] = {0};
};

struct Delayed {
  TimePoint at;
  GroupRt* group;
  mutable PendingPtr pending;
  bool operator>(const Delayed& o) const { return at > o.at; }
};

size_t onBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (t->body.size() + len > static_cast<std::uint64_t>(t->maxBody)) {
    t->bodyTooLarge = true;
    return 0;  // curl aborts the transfer with CURLE_WRITE_ERROR
  }
  t->body.append(data, len);
  return len;
}

size_t onHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->headers.clear();  // a new response (100-continue, redirect): only the last one counts
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    t->headers.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return size * n;
}

// The number after "key": in a JSON text, or -1. Usage objects have unique keys, so a scan is enough and
// saves a full DOM parse of every response body (the largest per-response cost in the overhead benchmark).
std::int64_t jsonNumberAfter(std::string_view body, std::string_view key, std::size_t from) {
  const std::size_t k = body.find(key, from);
  if (k == std::string_view::npos) return -1;
  std::size_t i = k + key.size();
  while (i < body.size() && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r')) ++i;
  if (i >= body.size() || body[i] != ':') return -1;
  ++i;
  while (i < body.size() && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r')) ++i;
  std::int64_t v = 0;
  bool any = false;
  for (; i < body.size() && body[i] >= '0' && body[i] <= '9' && v < (std::int64_t{1} << 50); ++i) {
    v = v * 10 + (body[i] - '0');
    any = true;
  }
  return any ? v : -1;
}

std::int64_t usageTokens(const std::string& body) {
  const std::size_t u = body.find("\"usage\"");
  if (u == std::string::npos) return -1;
  if (auto t = jsonNumberAfter(body, "\"total_tokens\"", u); t >= 0) return t;
  std::int64_t sum = 0;
  bool any = false;
  for (const char* k : {"\"input_tokens\"", "\"output_tokens\"", "\"prompt_tokens\"", "\"completion_tokens\""}) {
    if (auto t = jsonNumberAfter(body, k, u); t >= 0) {
      sum += t;
      any = true;
    }
  }
  return any ? sum : -1;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------

class EngineLoop {
 public:
  explicit EngineLoop(EngineConfig cfg)
      : cfg_(std::move(cfg)), retry_(cfg_.retry), budget_(cfg_.retry.budgetRatio, cfg_.retry.budgetMinRetries) {
    std::call_once(gCurlInit, [] {
      if (CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK)
        logError(kScope, std::string("curl_global_init: ") + curl_easy_strerror(rc));
    });
    const TimePoint now = Clock::now();
    globalLimit_ = cfg_.globalConcurrency;
    for (const auto& gc : cfg_.groups) {
      auto g = std::make_unique<GroupRt>(gc, cfg_, now);
      for (const auto& kc : gc.keys) {
        KeyRt k{kc, keyFingerprint(kc.secret),
                QuotaTracker(gc.bucketFraction, {gc.requestsPerMinute, gc.tokensPerMinute}, now, gc.quotaWindowS), 0, {}};
        if (!kc.secret.empty()) {
          SecretRegistry::add(kc.secret);
          k.authLine = kc.header + ": " + kc.prefix + kc.secret;
        }
        g->keys.push_back(std::move(k));
      }
      if (g->keys.empty()) {
        KeyConfig none;
        none.name = "default";
        g->keys.push_back(KeyRt{none, keyFingerprint(""),
                                QuotaTracker(gc.bucketFraction, {gc.requestsPerMinute, gc.tokensPerMinute}, now, gc.quotaWindowS),
                                0, {}});
      }
      g->configProblem = checkGroup(*g);
      if (!g->configProblem.empty()) logError(gc.name, g->configProblem);
      groups_.push_back(std::move(g));
    }
    multi_ = curl_multi_init();
    if (!multi_) throw std::runtime_error("engine: curl_multi_init failed");
    if (CURLMcode rc = curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, 0L); rc != CURLM_OK)
      logError(kScope, std::string("curl_multi_setopt(CURLMOPT_MAX_HOST_CONNECTIONS): ") + curl_multi_strerror(rc));
    auto empty = std::make_shared<EngineSnapshot>();
    latest_ = empty;
  }

  ~EngineLoop() {
    stop();
    for (CURL* e : pool_) curl_easy_cleanup(e);
    curl_multi_cleanup(multi_);
  }

  const EngineConfig& config() const { return cfg_; }

  void start() {
    if (thread_.joinable()) return;
    stopRequested_ = false;
    {
      std::lock_guard lock(cmdMutex_);
      closed_ = false;
    }
    thread_ = std::thread([this] { run(); });
  }

  // After stop() the command queue is closed: what was queued is answered (requests: Cancelled), and a
  // later submit is answered at once on the caller's thread, so every submit gets exactly one callback.
  void stop() {
    if (thread_.joinable()) {
      post([this] { stopRequested_ = true; });
      thread_.join();  // run() closes the queue on its way out
      return;
    }
    closeQueue(Clock::now());  // never started: answer what was queued
  }

  // Runs fn on the loop thread within one turn.
  void post(std::function<void()> fn) { post(Command{std::move(fn), nullptr}); }
  // A submitted request, built on the caller's thread: no closure to allocate per request.
  void post(PendingPtr p) { post(Command{{}, std::move(p)}); }
  void post(Command c) {
    {
      std::lock_guard lock(cmdMutex_);
      if (!closed_) {
        commands_.push_back(std::move(c));
        c.pending = nullptr;
      }
    }
    if (c.pending) {  // the loop is gone and will take nothing more
      cancelStopped(std::move(c.pending), Clock::now());
      return;
    }
    // One wakeup per loop turn is enough: a burst of submits would otherwise write (and the loop read) the
    // wakeup socket once per request.
    if (!wakePending_.exchange(true, std::memory_order_acq_rel)) {
      if (CURLMcode rc = curl_multi_wakeup(multi_); rc != CURLM_OK)
        logError(kScope, std::string("curl_multi_wakeup: ") + curl_multi_strerror(rc));
    }
  }

  SnapshotPtr latest() const {
    std::lock_guard lock(snapMutex_);
    return latest_;
  }

  // Loop-thread only from here on ------------------------------------------------------------------

  void enqueue(PendingPtr p) {
    const TimePoint now = Clock::now();
    p->queuedAt = now;
    p->last.id = p->req.id;
    p->last.group = p->req.group;
    p->last.tier = p->req.tier;
    GroupRt* g = findGroup(p->req.group);
    if (!g) {
      p->last.error = ErrorKind::Config;
      p->last.errorMessage = "unknown group \"" + p->req.group + "\"";
      finish(std::move(p), now);
      return;
    }
    if (std::string problem = g->configProblem.empty() ? checkRequest(*g, p->req) : g->configProblem;
        !problem.empty()) {
      p->last.error = ErrorKind::Config;
      p->last.errorMessage = std::move(problem);
      finish(std::move(p), now);
      return;
    }
    p->tokenCost = static_cast<double>(p->req.body.size()) / 4.0 + p->req.maxTokens;
    const auto& tc = cfg_.tiers[static_cast<int>(p->req.tier)];
    const double deadlineS = std::min(p->req.deadlineS > 0 ? p->req.deadlineS : tc.maxWaitS, kMaxDeadlineS);
    const Tier tier = p->req.tier;
    if (g->draining) {
      p->last.error = ErrorKind::Cancelled;
      p->last.errorMessage = "group \"" + g->cfg.name + "\" is draining";
      finish(std::move(p), now);
      return;
    }
    ++g->counters.submitted;
    ++g->counters.submittedByTier[static_cast<std::size_t>(tier)];
    p->deadline = now + fromSeconds(deadlineS);
    const TimePoint deadline = p->deadline;
    if (!g->queues.push(tier, std::move(p), deadline)) {
      shed(*g, std::move(p), "queue full (" + std::string(tierName(tier)) + " capacity " +
                                 std::to_string(tc.capacity) + ")", now);
    }
  }

  void run();

 private:
  friend class tg::Engine;
  GroupRt* findGroup(const std::string& name) {
    for (auto& g : groups_)
      if (g->cfg.name == name) return g.get();
    return nullptr;
  }

  // Why the group's own config cannot go out safely (base_url, allowed_hosts, headers), or empty. Fills
  // g.origins.
  std::string checkGroup(GroupRt& g) const { return groupConfigProblem(g.cfg, cfg_, &g.origins); }

  // Joins a path to the group's base_url; returns why the request may not go out, or empty. An absolute
  // URL must name the group's own origin (or one in allowed_hosts): the group's key goes with it.
  // Method and headers must each make exactly one well-formed line, so nothing can be smuggled in.
  static std::string checkRequest(const GroupRt& g, Request& r) {
    if (!r.url.empty() && r.url.front() == '/') {
      r.url = g.cfg.baseUrl + r.url;  // a path cannot change the authority that precedes it
    } else {
      std::string why;
      const std::string origin = originOf(r.url, &why);
      if (origin.empty())
        return "url \"" + printable(r.url) + "\": " + why + " (expected a path starting with / or an http(s) URL)";
      if (std::find(g.origins.begin(), g.origins.end(), origin) == g.origins.end())
        return "url names " + origin + ", not the base_url of group \"" + g.cfg.name +
               "\": the group's key goes only there (list other origins in the group's allowed_hosts)";
    }
    if (!isHttpToken(r.method)) return "method \"" + printable(r.method) + "\" is not an HTTP token";
    for (const auto& [name, value] : r.headers)
      if (std::string p = headerProblem(name, value, "request"); !p.empty()) return p;
    return {};
  }

  TimePoint dispatch(TimePoint now, EpochMs nowEpoch);
  void startTransfer(GroupRt& g, int key, PendingPtr p, TimePoint now);
  bool allowResend(Transfer& t);
  static int onPrereq(void* user, char*, char*, int, int);
  curl_slist* buildHeaders(const GroupRt& g, const KeyRt& k, const Request& r) const;
  void complete(CURLMsg* msg, TimePoint now, EpochMs nowEpoch);
  void finish(PendingPtr p, TimePoint now);
  void shed(GroupRt& g, PendingPtr p, const std::string& why, TimePoint now);
  void sweep(TimePoint now, EpochMs nowEpoch);
  void publishSnapshot(TimePoint now, EpochMs nowEpoch);
  void emit(EventKind kind, Severity sev, const std::string& group, std::string message,
            nlohmann::json detail = nlohmann::json::object());
  void noteRateLimited(GroupRt& g, const QuotaReading& r, const QuotaVerdict& v, TimePoint now);
  void operatorAction(const std::string& action, const std::string& target, nlohmann::json before,
                      nlohmann::json after, const std::string& actor);
  void cancelAll(const std::string& why, TimePoint now);
  // Closes the command queue and answers what it still holds; a request in it was never enqueued. Runs on
  // the loop thread as it exits, or on the stopping thread when the loop never ran.
  void closeQueue(TimePoint now) {
    std::vector<Command> rest;
    {
      std::lock_guard lock(cmdMutex_);
      closed_ = true;
      rest.swap(commands_);
    }
    for (auto& c : rest)
      if (c.pending) cancelStopped(std::move(c.pending), now);
  }
  void cancelStopped(PendingPtr p, TimePoint now) {
    p->last.id = p->req.id;
    p->last.group = p->req.group;
    p->last.tier = p->req.tier;
    p->last.error = ErrorKind::Cancelled;
    p->last.errorMessage = "engine stopped";
    finish(std::move(p), now);
  }

 public:
  // Operator commands (loop thread).
  void setGlobalConcurrency(int n, const std::string& actor) {
    const int before = globalLimit_;
    globalLimit_ = std::max(1, n);
    operatorAction("set_concurrency", "*", before, globalLimit_, actor);
  }
  void setGroupConcurrency(const std::string& group, int n, const std::string& actor) {
    GroupRt* g = findGroup(group);
    if (!g) return reject("set_concurrency", group, actor);
    const int before = g->concurrency.ceiling();
    g->concurrency.setCeiling(std::max(1, n));
    operatorAction("set_concurrency", group, before, g->concurrency.ceiling(), actor);
  }
  void setTierPaused(Tier t, bool paused, const std::string& group, const std::string& actor) {
    const auto i = static_cast<std::size_t>(t);
    const std::string action = paused ? "pause_tier" : "resume_tier";
    if (group.empty()) {
      const bool before = globalTierPaused_[i];
      globalTierPaused_[i] = paused;
      operatorAction(action, std::string("*/") + std::string(tierName(t)), before, paused, actor);
      return;
    }
    GroupRt* g = findGroup(group);
    if (!g) return reject(action, group, actor);
    const bool before = g->tierPaused[i];
    g->tierPaused[i] = paused;
    operatorAction(action, group + "/" + std::string(tierName(t)), before, paused, actor);
  }
  void setGroupPaused(const std::string& group, bool paused, const std::string& actor) {
    GroupRt* g = findGroup(group);
    const std::string action = paused ? "pause_group" : "resume_group";
    if (!g) return reject(action, group, actor);
    const bool before = g->paused;
    g->paused = paused;
    if (!paused) g->draining = false;
    operatorAction(action, group, before, paused, actor);
  }
  void drainGroup(const std::string& group, const std::string& actor) {
    GroupRt* g = findGroup(group);
    if (!g) return reject("drain", group, actor);
    const TimePoint now = Clock::now();
    const int queued = g->queues.total();
    g->queues.clear([&](PendingPtr p) {
      p->last.error = ErrorKind::Cancelled;
      p->last.errorMessage = "drained by " + actor;
      ++g->counters.failed;
      finish(std::move(p), now);
    });
    operatorAction("drain", group, queued, 0, actor);
  }

 private:
  void reject(const std::string& action, const std::string& group, const std::string& actor) {
    emit(EventKind::OperatorAction, Severity::Warn, group,
         action + " refused: unknown group \"" + group + "\"",
         {{"action", action}, {"target", group}, {"actor", actor}, {"instance", cfg_.name}, {"ok", false}});
  }

  EngineConfig cfg_;
  RetryPolicy retry_;
  RetryBudget budget_;
  std::vector<std::unique_ptr<GroupRt>> groups_;
  CURLM* multi_ = nullptr;
  std::vector<CURL*> pool_;
  std::set<Transfer*> active_;  // owned: deleted on completion or stop
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<>> delayed_;
  int globalLimit_ = 64;
  int globalInFlight_ = 0;
  std::array<bool, kTierCount> globalTierPaused_{};
  bool stopRequested_ = false;
  std::uint64_t seq_ = 0;

  std::mutex cmdMutex_;
  std::vector<Command> commands_;
  bool closed_ = false;  // under cmdMutex_: the loop has exited (or never ran and stop() was called)
  std::atomic<bool> wakePending_{false};  // a wakeup is written and the loop has not taken commands since
  std::thread thread_;

  mutable std::mutex snapMutex_;
  SnapshotPtr latest_;

 public:
  std::function<void(SnapshotPtr)> onSnapshot;
  std::function<void(const Event&)> onEvent;
  std::function<void(const AttemptRecord&)> onAttempt;
};

void EngineLoop::emit(EventKind kind, Severity sev, const std::string& group, std::string message,
                      nlohmann::json detail) {
  Event e;
  e.tsMs = nowEpochMs();
  e.kind = kind;
  e.severity = sev;
  e.group = group;
  e.message = SecretRegistry::redact(std::move(message));
  e.detail = std::move(detail);
  if (onEvent) onEvent(e);
}

void EngineLoop::operatorAction(const std::string& action, const std::string& target, nlohmann::json before,
                                nlohmann::json after, const std::string& actor) {
  std::string msg = actor + ": " + action + " " + target + " " + dumpJson(before) + " -> " + dumpJson(after);
  logInfo("operator", msg);
  const std::string group = target.find('*') == 0 ? std::string() : target.substr(0, target.find('/'));
  emit(EventKind::OperatorAction, Severity::Info, group, msg,
       {{"action", action}, {"target", target}, {"before", before}, {"after", after}, {"actor", actor},
        {"instance", cfg_.name}, {"ok", true}});
}

void EngineLoop::finish(PendingPtr p, TimePoint now) {
  p->last.totalMs = toSeconds(now - p->submittedAt) * 1000.0;
  p->last.waitMs = p->waitMs;
  p->last.attempts = p->attempts;
  if (p->done) p->done(p->last);
}

void EngineLoop::shed(GroupRt& g, PendingPtr p, const std::string& why, TimePoint now) {
  ++g.counters.shed;
  ++g.counters.failed;
  ++g.shedSinceEvent;
  g.shedReason = why;
  p->waitMs += toSeconds(now - p->queuedAt) * 1000.0;
  p->last.error = ErrorKind::Shed;
  p->last.errorMessage = why;
  finish(std::move(p), now);
}

void EngineLoop::sweep(TimePoint now, EpochMs nowEpoch) {
  for (auto& gp : groups_) {
    GroupRt& g = *gp;
    g.queues.shedExpired(now, [&](PendingPtr p) {
      const double waited = toSeconds(now - p->submittedAt);
      char buf[160];
      std::snprintf(buf, sizeof buf, "deadline passed after %.1f s queued (%s)%s%s", waited,
                    std::string(tierName(p->req.tier)).c_str(), g.waitReason.empty() ? "" : ": ",
                    g.waitReason.c_str());
      shed(g, std::move(p), buf, now);
    });
    if (g.shedSinceEvent > 0) {
      emit(EventKind::RequestShed, Severity::Warn, g.cfg.name,
           std::to_string(g.shedSinceEvent) + " request(s) shed: " + g.shedReason,
           {{"count", g.shedSinceEvent}, {"reason", g.shedReason}});
      g.shedSinceEvent = 0;
    }
    if (g.burstActive && now - g.lastLimited > fromSeconds(kBurstQuietS)) {
      g.burstActive = false;
      const double dur = toSeconds(g.lastLimited - g.burstStart);
      emit(EventKind::Burst429End, Severity::Info, g.cfg.name,
           "429 burst over: " + std::to_string(g.burstCount) + " in " + std::to_string(static_cast<int>(dur + 0.5)) +
               " s, peak " + std::to_string(g.burstPeak) + "/s",
           {{"count", g.burstCount}, {"duration_s", dur}, {"peak_per_s", g.burstPeak}});
      logInfo(g.cfg.name, "429 burst ended: " + std::to_string(g.burstCount) + " responses");
    }
    if (g.suppressedErrors > 0 && now - g.lastErrorLog > std::chrono::seconds(1)) {
      logError(g.cfg.name, "+" + std::to_string(g.suppressedErrors) + " similar errors suppressed");
      g.suppressedErrors = 0;
      g.lastErrorLog = now;
    }
  }
  (void)nowEpoch;
}

TimePoint EngineLoop::dispatch(TimePoint now, EpochMs nowEpoch) {
  TimePoint wake = TimePoint::max();
  for (auto& gp : groups_) gp->waitReason.clear();
  std::vector<bool> blocked(groups_.size(), false);  // a higher tier of this group is waiting on quota
  for (int ti = 0; ti < kTierCount; ++ti) {
    const Tier tier = static_cast<Tier>(ti);
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      GroupRt& g = *groups_[gi];
      if (g.queues.empty(tier)) continue;
      if (g.paused) {
        if (g.waitReason.empty()) g.waitReason = "group paused";
        continue;
      }
      if (globalTierPaused_[ti] || g.tierPaused[ti]) {
        if (g.waitReason.empty()) g.waitReason = "tier " + std::string(tierName(tier)) + " paused";
        continue;
      }
      if (blocked[gi]) continue;
      while (!g.queues.empty(tier)) {
        if (globalInFlight_ >= globalLimit_) {
          if (g.waitReason.empty())
            g.waitReason = "global concurrency " + std::to_string(globalInFlight_) + "/" + std::to_string(globalLimit_);
          return wake;  // a completion wakes the loop
        }
        if (g.inFlight >= g.concurrency.limit()) {
          g.waitReason = "concurrency " + std::to_string(g.inFlight) + "/" + std::to_string(g.concurrency.limit());
          blocked[gi] = true;
          break;
        }
        std::optional<BreakerTransition> tr;
        const bool allowed = g.breaker.allow(now, &tr);
        if (tr)
          emit(EventKind::BreakerTransition, Severity::Info, g.cfg.name, "breaker open -> half-open",
               {{"from", "open"}, {"to", "half-open"}});
        if (!allowed) {
          g.waitReason = g.breaker.state() == BreakerState::Open
                             ? "breaker open until " + formatClock(nowEpoch + static_cast<EpochMs>(
                                                                      toSeconds(g.breaker.openUntil() - now) * 1000))
                             : "breaker half-open: probing";
          if (g.breaker.state() == BreakerState::Open) wake = std::min(wake, g.breaker.openUntil());
          blocked[gi] = true;
          break;
        }
        Pending& p = *g.queues.front(tier);
        const std::array<double, kDimensionCount> cost{1.0, p.tokenCost};
        int best = -1;
        double bestHeadroom = -std::numeric_limits<double>::infinity();  // any key check() allows beats none
        QuotaWait shortest;
        shortest.wait = Duration::max();
        for (std::size_t k = 0; k < g.keys.size(); ++k) {
          const double reserve = tier == Tier::P0 ? 0.0 : g.keys[k].quota.reserveTokens();
          QuotaWait w = g.keys[k].quota.check(cost, now, nowEpoch, reserve);
          if (w.wait == Duration::zero()) {
            const double h = g.keys[k].quota.headroom(now) - g.keys[k].inFlight;
            if (h > bestHeadroom) {
              bestHeadroom = h;
              best = static_cast<int>(k);
            }
          } else if (w.wait < shortest.wait) {
            shortest = std::move(w);
          }
        }
        if (best < 0) {
          g.waitReason = shortest.reason;
          // Exhausted beyond the cap: shed is left to the deadline sweep, but don't spin on it.
          wake = std::min(wake, addSaturating(now, shortest.wait));
          blocked[gi] = true;
          break;
        }
        startTransfer(g, best, g.queues.popFront(tier), now);
      }
    }
  }
  return wake;
}

curl_slist* EngineLoop::buildHeaders(const GroupRt& g, const KeyRt& k, const Request& r) const {
  // Header names and values were checked when the group was set up and the request enqueued.
  SlistPtr list;
  bool ok = true;
  auto add = [&](const std::string& line) {
    if (!ok) return;
    curl_slist* grown = curl_slist_append(list.get(), line.c_str());
    if (!grown) {
      ok = false;
      return;
    }
    list.release();
    list.reset(grown);
  };
  add("Expect:");
  bool hasContentType = false;
  for (const auto& [name, value] : g.cfg.headers) {
    if (strcasecmp(name.c_str(), "content-type") == 0) hasContentType = true;
    add(name + ": " + value);
  }
  for (const auto& [name, value] : r.headers) {
    if (strcasecmp(name.c_str(), "content-type") == 0) hasContentType = true;
    add(name + ": " + value);
  }
  if (!hasContentType && !r.body.empty()) add("Content-Type: application/json");
  if (!k.authLine.empty()) add(k.authLine);
  if (!cfg_.tierHeader.empty()) add(cfg_.tierHeader + ": " + std::string(tierName(r.tier)));
  if (!cfg_.groupHeader.empty()) add(cfg_.groupHeader + ": " + g.cfg.name);
  return ok ? list.release() : nullptr;  // nullptr: out of memory (the partial list is freed)
}

void EngineLoop::startTransfer(GroupRt& g, int key, PendingPtr p, TimePoint now) {
  KeyRt& k = g.keys[static_cast<std::size_t>(key)];
  const bool first = p->attempts == 0;
  ++p->attempts;
  p->waitMs += toSeconds(now - p->queuedAt) * 1000.0;

  CURL* easy;
  if (!pool_.empty()) {
    easy = pool_.back();
    pool_.pop_back();
  } else {
    easy = curl_easy_init();
  }
  auto t = std::make_unique<Transfer>();
  t->easy = easy;
  t->loop = this;
  t->group = &g;
  t->key = key;
  t->sentAt = now;
  t->maxBody = cfg_.maxResponseBytes;

  // A transfer that cannot be set up fails here, with every resource returned and nothing counted in flight.
  auto fail = [&](ErrorKind kind, std::string why) {
    logError(g.cfg.name, why);
    t->freeHeaderList();
    if (easy) {
      curl_easy_reset(easy);
      pool_.push_back(easy);
    }
    ++g.counters.failed;
    p->last.error = kind;
    p->last.errorMessage = std::move(why);
    finish(std::move(p), now);
  };
  if (!easy) return fail(ErrorKind::Network, "curl_easy_init failed");

  const Request& r = p->req;
  CURLcode rc = CURLE_OK;
  const char* failedOption = nullptr;
  auto set = [&](CURLoption option, const char* name, auto value) {
    if (rc != CURLE_OK) return;
    rc = curl_easy_setopt(easy, option, value);
    if (rc != CURLE_OK) failedOption = name;
  };
  set(CURLOPT_URL, "CURLOPT_URL", r.url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "CURLOPT_PROTOCOLS_STR", kAllowedProtocols);
  set(CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL", 1L);
  set(CURLOPT_PRIVATE, "CURLOPT_PRIVATE", static_cast<void*>(t.get()));
  set(CURLOPT_WRITEFUNCTION, "CURLOPT_WRITEFUNCTION", onBody);
  set(CURLOPT_WRITEDATA, "CURLOPT_WRITEDATA", static_cast<void*>(t.get()));
  set(CURLOPT_HEADERFUNCTION, "CURLOPT_HEADERFUNCTION", onHeader);
  set(CURLOPT_HEADERDATA, "CURLOPT_HEADERDATA", static_cast<void*>(t.get()));
  set(CURLOPT_PREREQFUNCTION, "CURLOPT_PREREQFUNCTION", &EngineLoop::onPrereq);
  set(CURLOPT_PREREQDATA, "CURLOPT_PREREQDATA", static_cast<void*>(t.get()));
  set(CURLOPT_ERRORBUFFER, "CURLOPT_ERRORBUFFER", t->error);
  set(CURLOPT_MAXFILESIZE_LARGE, "CURLOPT_MAXFILESIZE_LARGE", static_cast<curl_off_t>(cfg_.maxResponseBytes));
  set(CURLOPT_TIMEOUT_MS, "CURLOPT_TIMEOUT_MS", static_cast<long>(cfg_.requestTimeoutS * 1000));
  set(CURLOPT_CONNECTTIMEOUT_MS, "CURLOPT_CONNECTTIMEOUT_MS", static_cast<long>(cfg_.connectTimeoutS * 1000));
  set(CURLOPT_TCP_KEEPALIVE, "CURLOPT_TCP_KEEPALIVE", 1L);
  if (r.method == "GET") {
    set(CURLOPT_HTTPGET, "CURLOPT_HTTPGET", 1L);
  } else if (r.method == "HEAD") {
    set(CURLOPT_NOBODY, "CURLOPT_NOBODY", 1L);
  } else {
    set(CURLOPT_POSTFIELDS, "CURLOPT_POSTFIELDS", r.body.c_str());
    set(CURLOPT_POSTFIELDSIZE_LARGE, "CURLOPT_POSTFIELDSIZE_LARGE", static_cast<curl_off_t>(r.body.size()));
    if (r.method != "POST") set(CURLOPT_CUSTOMREQUEST, "CURLOPT_CUSTOMREQUEST", r.method.c_str());
  }
  if (r.headers.empty() && !r.body.empty()) {
    SlistPtr& cached = k.headerCache[static_cast<std::size_t>(r.tier)];
    if (!cached) cached.reset(buildHeaders(g, k, r));
    t->headerList = cached.get();
    t->ownsHeaderList = false;
  } else {
    t->headerList = buildHeaders(g, k, r);
  }
  if (!t->headerList) return fail(ErrorKind::Network, "could not build the request's header list (out of memory)");
  set(CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER", t->headerList);
  if (rc != CURLE_OK)
    return fail(errorKindForCurl(rc), std::string("curl_easy_setopt(") + failedOption + "): " + curl_easy_strerror(rc));
  if (CURLMcode mrc = curl_multi_add_handle(multi_, easy); mrc != CURLM_OK)
    return fail(ErrorKind::Network, std::string("curl_multi_add_handle: ") + curl_multi_strerror(mrc));

  k.quota.onSend({1.0, p->tokenCost}, now);
  g.breaker.onSend();
  ++k.inFlight;
  ++g.inFlight;
  ++globalInFlight_;
  ++g.counters.sends;
  if (first) budget_.onFirstAttempt();
  else ++g.counters.retries;
  t->pending = std::move(p);
  active_.insert(t.release());
}

// Called by libcurl (on the loop thread) right before each send of a transfer.
int EngineLoop::onPrereq(void* user, char*, char*, int, int) {
  auto* t = static_cast<Transfer*>(user);
  return t->loop->allowResend(*t) ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT;
}

// A second send of one transfer is libcurl retrying on a reused connection that died before answering: the
// upstream may have counted the first one, so it is an attempt like any other retry, within max_attempts and
// the retry budget. Refused, the transfer fails as a lost connection and the retry policy decides.
bool EngineLoop::allowResend(Transfer& t) {
  if (++t.sends == 1) return true;
  Pending& p = *t.pending;
  if (p.attempts >= cfg_.retry.maxAttempts || !budget_.trySpend()) {
    t.resendRefused = true;
    return false;
  }
  ++p.attempts;
  ++t.group->counters.sends;
  ++t.group->counters.retries;
  return true;
}

void EngineLoop::noteRateLimited(GroupRt& g, const QuotaReading& r, const QuotaVerdict& v, TimePoint now) {
  if (now - g.secStart > std::chrono::seconds(1)) {
    g.secStart = now;
    g.secCount = 0;
  }
  ++g.secCount;
  g.burstPeak = std::max(g.burstPeak, g.secCount);
  g.lastLimited = now;
  ++g.burstCount;
  if (g.burstActive) return;
  g.burstActive = true;
  g.burstStart = now;
  g.burstCount = 1;
  g.burstPeak = 1;
  const std::string cls(verdictClassName(v.classification));
  nlohmann::json detail{{"classification", cls}, {"reason", v.reason}};
  if (r.retryAfterS) detail["retry_after_s"] = *r.retryAfterS;
  for (const auto& s : r.scopes) {
    if (s.resetInS) detail["reset_in_s"] = *s.resetInS;
    if (known(s.remaining)) detail["remaining"] = s.remaining;
    if (known(s.limit)) detail["limit"] = s.limit;
    if (s.dimension == Dimension::Requests) break;
  }
  const bool exhausted = v.classification == VerdictClass::QuotaExhausted;
  emit(EventKind::Burst429Start, exhausted ? Severity::Warn : Severity::Info, g.cfg.name,
       std::string("429 ") + (exhausted ? "quota exhausted" : v.classification == VerdictClass::Burst ? "burst" : "(no quota headers)") +
           (v.reason.empty() ? "" : ": " + v.reason),
       detail);
  const std::string line = "429 " + cls + (v.reason.empty() ? "" : ": " + v.reason);
  if (exhausted) logWarn(g.cfg.name, line);
  else logInfo(g.cfg.name, line);
}

void EngineLoop::complete(CURLMsg* msg, TimePoint now, EpochMs nowEpoch) {
  CURL* easy = msg->easy_handle;
  const CURLcode rc = msg->data.result;
  Transfer* tp = nullptr;
  if (curl_easy_getinfo(easy, CURLINFO_PRIVATE, &tp) != CURLE_OK || !tp || !active_.count(tp)) {
    logError(kScope, "a finished transfer that is not the engine's: ignored");
    return;
  }
  std::unique_ptr<Transfer> t(tp);
  active_.erase(tp);
  if (CURLMcode mrc = curl_multi_remove_handle(multi_, easy); mrc != CURLM_OK)
    logError(kScope, std::string("curl_multi_remove_handle: ") + curl_multi_strerror(mrc));
  long status = 0;
  if (curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK) status = 0;
  t->freeHeaderList();
  curl_easy_reset(easy);
  pool_.push_back(easy);

  GroupRt& g = *t->group;
  KeyRt& k = g.keys[static_cast<std::size_t>(t->key)];
  --k.inFlight;
  --g.inFlight;
  --globalInFlight_;
  PendingPtr p = std::move(t->pending);
  const double latencyMs = toSeconds(now - t->sentAt) * 1000.0;

  ErrorKind kind = ErrorKind::None;
  std::string errText;
  // A failure that is the request's own, not the upstream's: no retry, and no mark against the upstream.
  bool permanent = false;
  if (t->bodyTooLarge || rc == CURLE_FILESIZE_EXCEEDED) {
    kind = errorKindForCurl(CURLE_FILESIZE_EXCEEDED);
    errText = "response body larger than max_response_bytes (" + std::to_string(cfg_.maxResponseBytes) + " bytes)";
    t->body.clear();
    permanent = true;  // the status stays: the upstream answered
  } else if (t->resendRefused) {
    kind = ErrorKind::Network;
    errText = "connection lost before the response (libcurl's own resend refused: attempts or retry budget spent)";
    status = 0;
  } else if (rc != CURLE_OK) {
    kind = errorKindForCurl(rc);
    errText = t->error[0] ? t->error : curl_easy_strerror(rc);
    permanent = kind != ErrorKind::Network && kind != ErrorKind::Timeout;
    status = 0;
  } else {
    kind = errorKindForStatus(static_cast<int>(status));
  }

  const double nowEpochS = static_cast<double>(nowEpoch) / 1000.0;
  QuotaReading reading = RateLimitHeaderParser::parse(t->headers, nowEpochS);
  QuotaVerdict verdict = decideVerdict(reading, static_cast<int>(status), nowEpochS, cfg_.retry.maxServerWaitS);
  // A 429, or GitHub's 403 with a scope at zero (the verdict then classifies it as a rate limit).
  const bool rateLimited = status == http::kTooManyRequests ||
                           (status == http::kForbidden && verdict.classification != VerdictClass::Error);
  // A 503 with Retry-After is an overload, counted as 5xx, but its wait is honoured all the same.
  const bool serverWait = status >= 400 && (verdict.kind == QuotaVerdict::Kind::Throttled ||
                                            verdict.kind == QuotaVerdict::Kind::Exhausted);
  if (auto change = k.quota.onResponse(reading, k.inFlight, now, nowEpoch, t->sentAt)) {
    const std::string dim(dimensionName(change->dimension));
    char text[96];  // %.0f: any double prints, where a cast to an integer of one out of range is undefined
    std::snprintf(text, sizeof text, "%.0f -> %.0f", change->before, change->after);
    emit(EventKind::QuotaChange, Severity::Warn, g.cfg.name,
         "upstream " + dim + " limit changed " + text,
         {{"dimension", dim}, {"before", change->before}, {"after", change->after}, {"key", k.fingerprint}});
  }

  if (onAttempt) {
    AttemptRecord a;
    a.tsMs = nowEpoch;
    a.group = g.cfg.name;
    a.keyFingerprint = k.fingerprint;
    a.endpoint = endpointOf(p->req.url);
    a.tier = p->req.tier;
    a.status = static_cast<int>(status);
    a.rateLimited = rateLimited;
    a.latencyMs = latencyMs;
    a.retry = p->attempts > 1;
    onAttempt(a);
  }

  bool exhausted = false;
  if (rateLimited) {
    ++g.counters.r429;
    if (verdict.kind == QuotaVerdict::Kind::Exhausted) {
      exhausted = true;
      const auto until = static_cast<EpochMs>(verdict.untilEpochS * 1000);
      k.quota.blockUntil(now + fromSeconds(verdict.waitS), until, "quota exhausted until " + formatClock(until), true);
      emit(EventKind::QuotaExhausted, Severity::Error, g.cfg.name,
           "quota exhausted until " + formatClock(until) + " (key " + k.fingerprint + ")",
           {{"until_ms", until}, {"wait_s", verdict.waitS}, {"key", k.fingerprint}});
    } else if (verdict.kind == QuotaVerdict::Kind::Unknown429) {
      k.quota.onBare429(cfg_.retry.default429WaitS, cfg_.retry.maxBackoffS, now, nowEpoch);
    } else {
      // A server-directed wait below the floor (Retry-After: 0) still holds the key that long: the
      // upstream would otherwise be asked again at once, by every request queued on it.
      const double waitS = std::max(verdict.waitS, cfg_.retry.baseBackoffS);
      const auto until = nowEpoch + static_cast<EpochMs>(waitS * 1000);
      k.quota.blockUntil(now + fromSeconds(waitS), until,
                         (reading.retryAfterS ? "Retry-After until " : "reset at ") + formatClock(until), false);
    }
    g.concurrency.onRateLimited(now);
    noteRateLimited(g, reading, verdict, now);
  } else if (permanent) {
    logError(g.cfg.name, errText + " (" + endpointOf(p->req.url) + ")");
  } else if (status >= 500 || status == 0) {
    if (serverWait) {
      const auto until = nowEpoch + static_cast<EpochMs>(verdict.waitS * 1000);
      k.quota.blockUntil(now + fromSeconds(std::min(verdict.waitS, cfg_.retry.maxServerWaitS)), until,
                         "Retry-After (" + std::to_string(status) + ") until " + formatClock(until), false);
    }
    if (status >= 500) ++g.counters.r5xx;
    else ++g.counters.netErrors;
    g.concurrency.onOverload(now);
    if (now - g.lastErrorLog > std::chrono::seconds(1)) {
      logError(g.cfg.name, status ? "HTTP " + std::to_string(status) + " from " + endpointOf(p->req.url)
                                  : std::string(errorKindName(kind)) + ": " + errText);
      g.lastErrorLog = now;
    } else {
      ++g.suppressedErrors;
    }
  } else if (status >= 400) {
    ++g.counters.other4xx;
    logError(g.cfg.name, "HTTP " + std::to_string(status) + " from " + endpointOf(p->req.url));
  } else {
    ++g.counters.ok;
    k.quota.onSuccess(now);
    g.concurrency.onSuccess(latencyMs / 1000.0, now);
    g.latency.add(now, latencyMs);
  }
  if (auto tr = g.breaker.record(!permanent && (rateLimited || status >= 500 || status == 0), now)) {
    const std::string from(breakerStateName(tr->from)), to(breakerStateName(tr->to));
    emit(EventKind::BreakerTransition, tr->to == BreakerState::Open ? Severity::Warn : Severity::Info, g.cfg.name,
         "breaker " + from + " -> " + to, {{"from", from}, {"to", to}, {"failure_share", tr->failureShare},
                                           {"calls", tr->calls}});
    logWarn(g.cfg.name, "breaker " + from + " -> " + to);
  }

  // Tokens: settle the reservation against what the response says it used.
  const std::int64_t used = status >= 200 && status < 300 ? usageTokens(t->body) : -1;
  if (used >= 0) {
    if (used < p->tokenCost) k.quota.refund(Dimension::Tokens, p->tokenCost - static_cast<double>(used), now);
    g.counters.tokensUsed += static_cast<std::uint64_t>(used);
    p->last.tokensUsed = used;
  } else if (status >= 200 && status < 300) {
    g.counters.tokensUsed += static_cast<std::uint64_t>(p->tokenCost);
    p->last.tokensUsed = static_cast<std::int64_t>(p->tokenCost);
  }

  p->last.status = static_cast<int>(status);
  p->last.latencyMs = latencyMs;
  p->last.body = std::move(t->body);
  p->last.error = kind;
  p->last.errorMessage = errText.empty() && status >= 400 ? "HTTP " + std::to_string(status) : errText;

  const double serverWaitS = rateLimited && verdict.kind == QuotaVerdict::Kind::Throttled ? verdict.waitS : -1;
  const RetryDecision d = permanent ? RetryDecision{RetryAction::Fail, 0, "not retried"}
                                    : retry_.decide(p->attempts, static_cast<int>(status), kind, rateLimited,
                                                    exhausted, budget_, serverWaitS);
  switch (d.action) {
    case RetryAction::Done:
      ++g.counters.completed;
      finish(std::move(p), now);
      break;
    case RetryAction::RetryAfterQuota: {
      // Back to the front of its tier: dispatch holds it until the quota picture allows it.
      p->queuedAt = now;
      const Tier tier = p->req.tier;  // read before the move: argument order is unspecified
      const TimePoint deadline = p->deadline;
      g.queues.pushFront(tier, std::move(p), deadline);
      break;
    }
    case RetryAction::RetryAfterBackoff:
      p->queuedAt = now;
      delayed_.push(Delayed{now + fromSeconds(d.delayS), &g, std::move(p)});
      break;
    case RetryAction::Fail:
      ++g.counters.failed;
      if (exhausted) p->last.error = ErrorKind::QuotaExhausted;
      p->last.errorMessage = (p->last.errorMessage.empty() ? "" : p->last.errorMessage + ": ") + d.reason;
      finish(std::move(p), now);
      break;
  }
}

void EngineLoop::publishSnapshot(TimePoint now, EpochMs nowEpoch) {
  auto s = std::make_shared<EngineSnapshot>();
  s->tsMs = nowEpoch;
  s->seq = ++seq_;
  s->state = stopRequested_ ? EngineState::Stopped : EngineState::Running;
  s->globalInFlight = globalInFlight_;
  s->globalConcurrencyLimit = globalLimit_;
  s->tierPaused = globalTierPaused_;
  s->groups.reserve(groups_.size());
  for (auto& gp : groups_) {
    GroupRt& g = *gp;
    GroupSnapshot gs;
    gs.group = g.cfg.name;
    gs.keys = static_cast<int>(g.keys.size());
    for (int d = 0; d < kDimensionCount; ++d) {
      DimensionState sum;
      for (auto& k : g.keys) {
        DimensionState ks = k.quota.state(static_cast<Dimension>(d), now);
        auto add = [](double& acc, double v) {
          if (known(v)) acc = known(acc) ? acc + v : v;
        };
        add(sum.limit, ks.limit);
        add(sum.remaining, ks.remaining);
        add(sum.localTokens, ks.localTokens);
        if (ks.resetAtMs && (!sum.resetAtMs || ks.resetAtMs < sum.resetAtMs)) sum.resetAtMs = ks.resetAtMs;
      }
      gs.dims[static_cast<std::size_t>(d)] = sum;
    }
    gs.inFlight = g.inFlight;
    gs.concurrencyLimit = g.concurrency.limit();
    gs.concurrencyCeiling = g.concurrency.ceiling();
    for (int t = 0; t < kTierCount; ++t) {
      gs.queueDepth[static_cast<std::size_t>(t)] = g.queues.size(static_cast<Tier>(t));
      gs.tierPaused[static_cast<std::size_t>(t)] = g.tierPaused[static_cast<std::size_t>(t)] || globalTierPaused_[static_cast<std::size_t>(t)];
    }
    gs.paused = g.paused;
    gs.draining = g.draining;
    gs.breaker = g.breaker.state();
    gs.counters = g.counters;
    auto [p50, p95] = g.latency.percentiles(now);
    gs.latencyP50Ms = p50;
    gs.latencyP95Ms = p95;
    gs.waitReason = g.waitReason;
    s->groups.push_back(std::move(gs));
  }
  SnapshotPtr ptr = std::move(s);
  {
    std::lock_guard lock(snapMutex_);
    latest_ = ptr;
  }
  if (onSnapshot) onSnapshot(ptr);
}

void EngineLoop::cancelAll(const std::string& why, TimePoint now) {
  for (auto& gp : groups_) {
    gp->queues.clear([&](PendingPtr p) {
      p->last.error = ErrorKind::Cancelled;
      p->last.errorMessage = why;
      finish(std::move(p), now);
    });
  }
  while (!delayed_.empty()) {
    PendingPtr p = std::move(delayed_.top().pending);
    delayed_.pop();
    p->last.error = ErrorKind::Cancelled;
    p->last.errorMessage = why;
    finish(std::move(p), now);
  }
}

void EngineLoop::run() {
  emit(EventKind::EngineStart, Severity::Info, {}, "engine started (" + std::to_string(groups_.size()) + " groups)",
       {{"instance", cfg_.name}, {"groups", groups_.size()}});
  TimePoint nextSweep = Clock::now();
  TimePoint nextSnapshot = Clock::now();
  const Duration snapEvery = fromSeconds(cfg_.snapshotIntervalS);
  std::vector<Command> cmds;
  while (true) {
    wakePending_.store(false, std::memory_order_release);  // before taking: a later post wakes the next turn
    {
      std::lock_guard lock(cmdMutex_);
      cmds.swap(commands_);
    }
    for (auto& c : cmds) {
      if (c.pending) enqueue(std::move(c.pending));
      else c.fn();
    }
    cmds.clear();
    TimePoint now = Clock::now();
    EpochMs nowEpoch = nowEpochMs();
    if (stopRequested_) break;

    if (now >= nextSweep) {
      sweep(now, nowEpoch);
      nextSweep = now + kSweepInterval;
    }
    while (!delayed_.empty() && delayed_.top().at <= now) {
      const Delayed& d = delayed_.top();
      GroupRt* g = d.group;
      PendingPtr p = std::move(d.pending);
      delayed_.pop();
      const Tier tier = p->req.tier;
      const TimePoint deadline = p->deadline;
      g->queues.pushFront(tier, std::move(p), deadline);
    }
    TimePoint wake = dispatch(now, nowEpoch);
    if (now >= nextSnapshot) {
      publishSnapshot(now, nowEpoch);
      nextSnapshot += snapEvery;
      if (nextSnapshot <= now) nextSnapshot = now + snapEvery;
    }
    wake = std::min({wake, nextSnapshot, nextSweep, now + kMaxPoll});
    if (!delayed_.empty()) wake = std::min(wake, delayed_.top().at);
    const auto timeoutMs = std::clamp<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()).count() + 1, 0,
        std::chrono::duration_cast<std::chrono::milliseconds>(kMaxPoll).count());
    int numfds = 0;
    if (CURLMcode rc = curl_multi_poll(multi_, nullptr, 0, static_cast<int>(timeoutMs), &numfds); rc != CURLM_OK)
      logError(kScope, std::string("curl_multi_poll: ") + curl_multi_strerror(rc));
    int running = 0;
    if (CURLMcode rc = curl_multi_perform(multi_, &running); rc != CURLM_OK)
      logError(kScope, std::string("curl_multi_perform: ") + curl_multi_strerror(rc));
    int left = 0;
    now = Clock::now();
    nowEpoch = nowEpochMs();
    while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
      if (m->msg == CURLMSG_DONE) complete(m, now, nowEpoch);
    }
  }

  const TimePoint now = Clock::now();
  closeQueue(now);
  cancelAll("engine stopped", now);
  // Abort what is still in flight; each gets its callback.
  for (Transfer* tp : std::exchange(active_, {})) {
    std::unique_ptr<Transfer> t(tp);
    CURL* easy = t->easy;
    if (CURLMcode rc = curl_multi_remove_handle(multi_, easy); rc != CURLM_OK)
      logError(kScope, std::string("curl_multi_remove_handle: ") + curl_multi_strerror(rc));
    t->freeHeaderList();
    curl_easy_cleanup(easy);
    t->pending->last.error = ErrorKind::Cancelled;
    t->pending->last.errorMessage = "engine stopped while in flight";
    --t->group->inFlight;
    --globalInFlight_;
    finish(std::move(t->pending), now);
  }
  publishSnapshot(now, nowEpochMs());
  emit(EventKind::EngineStop, Severity::Info, {}, "engine stopped", {{"instance", cfg_.name}});
}

// ---------------------------------------------------------------------------------------------------

Engine::Engine(EngineConfig config) : loop_(std::make_unique<EngineLoop>(std::move(config))) {}
Engine::~Engine() { stop(); }

void Engine::onSnapshot(std::function<void(SnapshotPtr)> fn) { loop_->onSnapshot = std::move(fn); }
void Engine::onEvent(std::function<void(const Event&)> fn) { loop_->onEvent = std::move(fn); }
void Engine::onAttempt(std::function<void(const AttemptRecord&)> fn) { loop_->onAttempt = std::move(fn); }
void Engine::start() { loop_->start(); }
void Engine::stop() { loop_->stop(); }

void Engine::submit(Request request, ResultCallback done) {
  auto p = std::make_unique<Pending>();
  p->req = std::move(request);
  p->done = std::move(done);
  p->submittedAt = Clock::now();
  loop_->post(std::move(p));
}

void Engine::setGlobalConcurrency(int limit, const std::string& actor) {
  loop_->post([this, limit, actor] { loop_->setGlobalConcurrency(limit, actor); });
}
void Engine::setGroupConcurrency(const std::string& group, int limit, const std::string& actor) {
  loop_->post([this, group, limit, actor] { loop_->setGroupConcurrency(group, limit, actor); });
}
void Engine::setTierPaused(Tier tier, bool paused, const std::string& group, const std::string& actor) {
  loop_->post([this, tier, paused, group, actor] { loop_->setTierPaused(tier, paused, group, actor); });
}
void Engine::setGroupPaused(const std::string& group, bool paused, const std::string& actor) {
  loop_->post([this, group, paused, actor] { loop_->setGroupPaused(group, paused, actor); });
}
void Engine::drainGroup(const std::string& group, const std::string& actor) {
  loop_->post([this, group, actor] { loop_->drainGroup(group, actor); });
}

SnapshotPtr Engine::latestSnapshot() const { return loop_->latest(); }
const EngineConfig& Engine::config() const { return loop_->config(); }

}  // namespace tg
