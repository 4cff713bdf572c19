#include "engine.h"

#include "curl_transport.h"
#include "engine_listeners.h"
#include "log.h"
#include "pending.h"
#include "scheduler.h"
#include "secret.h"
#include "shared_quota_client.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <tuple>
#include <thread>
#include <vector>

namespace tg {
namespace {

constexpr auto kSweepInterval = std::chrono::milliseconds(100);
constexpr auto kMaxPoll = std::chrono::milliseconds(250);
// How long a refusal may wait for the answers to requests sent before it (Scheduler::answerWaitsForEarlier).
constexpr auto kHoldAtMost = std::chrono::milliseconds(250);

struct Command {  // for the loop thread: a function to run, or a request to admit
  std::function<void()> fn;
  PendingPtr pending;
};

TransportOptions transportOptions(const EngineConfig& c) {
  return {c.maxResponseBytes, c.requestTimeoutS, c.connectTimeoutS};
}

}  // namespace

// The loop thread and what it owns: the command queue, the scheduler and the transport. Everything but
// start/stop/post/latest runs on the loop thread.
// What a replay's re-drive needs of the recorded engine to behave as it did (no keys, no URLs): tiers, retries,
// global limits, and each group's concurrency and ceilings. A re-drive on defaults (queues of 100,000, 600 s
// deadlines) shed 0 where the recording shed 361, and every what-if was compared against another engine.
namespace {
nlohmann::json replayableConfig(const EngineConfig& c) {
  auto ceiling = [](const RateCeilingConfig& r) {
    return nlohmann::json{{"requests_per_s", r.requestsPerS}, {"tokens_per_min", r.tokensPerMin}};
  };
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& t : c.tiers) tiers.push_back({{"capacity", t.capacity}, {"max_wait_s", t.maxWaitS}});
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& g : c.groups)
    groups[g.name] = {{"concurrency", g.concurrency}, {"adaptive", g.adaptive}, {"rate_ceiling", ceiling(g.rateCeiling)}};
  return {{"tiers", tiers},
          {"global_concurrency", c.globalConcurrency},
          {"request_timeout_s", c.requestTimeoutS},
          {"rate_ceiling", ceiling(c.rateCeiling)},
          {"retry",
           {{"max_attempts", c.retry.maxAttempts},
            {"budget_ratio", c.retry.budgetRatio},
            {"budget_min_retries", c.retry.budgetMinRetries},
            {"base_backoff_s", c.retry.baseBackoffS},
            {"max_backoff_s", c.retry.maxBackoffS},
            {"max_server_wait_s", c.retry.maxServerWaitS},
            {"default_429_wait_s", c.retry.default429WaitS}}},
          {"groups", groups}};
}
}  // namespace

class EngineLoop {
 public:
  explicit EngineLoop(EngineConfig cfg)
      : scheduler_(std::move(cfg), listeners_, Clock::now()),
        transport_(transportOptions(scheduler_.config())),
        latest_(std::make_shared<EngineSnapshot>()) {
    transport_.setResendGate([this](Ticket t) { return scheduler_.allowResend(t, Clock::now()); });
    if (scheduler_.config().sharedQuota.enabled) makeSharedQuota();
  }
  ~EngineLoop() { stop(); }

  const EngineConfig& config() const { return scheduler_.config(); }
  EngineListeners& listeners() { return listeners_; }
  Scheduler& scheduler() { return scheduler_; }  // loop thread only (through post)

  void start() {
    if (thread_.joinable()) return;
    stopRequested_ = false;
    {
      std::lock_guard lock(cmdMutex_);
      closed_ = false;
    }
    thread_ = std::thread([this] { run(); });
    if (shared_) shared_->start();
  }

  // After stop() the command queue is closed: what was queued is answered (requests: Cancelled), and a
  // later submit is answered at once on the caller's thread, so every submit gets exactly one callback.
  void stop() {
    if (shared_) shared_->stop();  // before the loop: it posts to the loop's queue
    if (thread_.joinable()) {
      post([this] { stopRequested_ = true; });
      thread_.join();  // run() closes the queue on its way out
      return;
    }
    closeQueue(Clock::now());  // never started: answer what was queued
  }

  // Thread-safe: whether the loop holds its sends (finishInFlight) and has nothing in flight, as of its last turn.
  bool settled() const { return settled_.load(); }
  bool running() const { return thread_.joinable(); }
  // Loop thread only (through post). With `cancelWhy`, what waits (queued, backing off before a retry, or coming
  // back from in flight to wait) is cancelled with it at once.
  void holdSends(const std::string& cancelWhy = {}) {
    holding_ = true;
    scheduler_.holdSends(cancelWhy);
    if (!cancelWhy.empty()) scheduler_.cancelAll(cancelWhy, Clock::now());
  }

  // Thread-safe. Runs fn on the loop thread within one turn.
  void post(std::function<void()> fn) { post(Command{std::move(fn), nullptr}); }
  // Thread-safe. A submitted request, built on the caller's thread: no closure to allocate per request.
  void post(PendingPtr p) { post(Command{{}, std::move(p)}); }

  SnapshotPtr latest() const {
    std::lock_guard lock(snapMutex_);
    return latest_;
  }

  // Thread-safe. Unique for the loop's life, never 0.
  RequestHandle newHandle() { return nextHandle_.fetch_add(1, std::memory_order_relaxed); }

  // Loop thread only (through post). An in-flight request's transfer is aborted before it is answered.
  void cancel(RequestHandle h, const std::string& why) {
    scheduler_.cancel(h, why, Clock::now(), [this](Ticket t) {
      transport_.abort(t);
      std::erase_if(held_, [t](const Held& e) { return e.r.ticket == t; });
    });
  }
  void resume(RequestHandle h) {
    if (const Ticket t = scheduler_.ticketOf(h)) transport_.resume(t);
  }

 private:
  void post(Command c) {
    {
      std::lock_guard lock(cmdMutex_);
      if (!closed_) {
        commands_.push_back(std::move(c));
        c.pending = nullptr;
      }
    }
    if (c.pending) {  // the loop is gone and will take nothing more
      Pending::cancelStopped(std::move(c.pending), Clock::now());
      return;
    }
    // One wakeup per loop turn is enough: a burst of submits would otherwise write (and the loop read) the
    // wakeup socket once per request.
    if (!wakePending_.exchange(true, std::memory_order_acq_rel)) transport_.wakeup();
  }

  // Closes the command queue and answers what it still holds; a request in it was never admitted. Runs on
  // the loop thread as it exits, or on the stopping thread when the loop never ran.
  void closeQueue(TimePoint now) {
    std::vector<Command> rest;
    {
      std::lock_guard lock(cmdMutex_);
      closed_ = true;
      rest.swap(commands_);
    }
    for (auto& c : rest)
      if (c.pending) Pending::cancelStopped(std::move(c.pending), now);
  }

  void emit(EventKind kind, std::string message, nlohmann::json detail) {
    Event e;
    e.tsMs = nowEpochMs();
    e.kind = kind;
    e.severity = Severity::Info;
    e.message = SecretRegistry::redact(std::move(message));
    e.detail = SecretRegistry::redacted(std::move(detail));
    listeners_.event(e);
  }

  void publishSnapshot(TimePoint now, EpochMs nowEpoch) {
    auto s = std::make_shared<EngineSnapshot>();
    s->tsMs = nowEpoch;
    s->seq = ++seq_;
    s->state = stopRequested_ ? EngineState::Stopped : EngineState::Running;
    scheduler_.fillSnapshot(*s, now);
    if (shared_) {
      s->shared.redisCalls = shared_->roundTrips();
      std::tie(s->shared.leaseP50Ms, s->shared.leaseP99Ms) = shared_->leaseLatencyMs();
    }
    SnapshotPtr ptr = std::move(s);
    {
      std::lock_guard lock(snapMutex_);
      latest_ = ptr;
    }
    listeners_.snapshot(ptr);
  }

  void run();
  void makeSharedQuota();
  // Judges the answers read (finished_) and those held back, in the order their requests were sent (tickets
  // rise with each send): the upstream decided them in about that order, and a refusal is judged by the
  // acceptances of requests sent before it (an in-flight limit, AdaptiveConcurrency), whichever socket was
  // read first. A refusal whose earlier requests are still unanswered is held, up to kHoldAtMost, unless `all`.
  void judge(TimePoint now, EpochMs nowEpoch, bool all);

  EngineListeners listeners_;  // before scheduler_: it holds a reference
  Scheduler scheduler_;
  CurlTransport transport_;
  std::vector<Response> finished_;  // one poll's answers, reused
  struct Held {
    Response r;
    TimePoint until;  // judged then whatever else has been read
  };
  std::vector<Held> held_, judging_;  // answers held back; the turn's answers being judged (reused)
  bool stopRequested_ = false;
  std::uint64_t seq_ = 0;

  std::mutex cmdMutex_;
  std::vector<Command> commands_;
  bool closed_ = false;  // under cmdMutex_: the loop has exited (or never ran and stop() was called)
  std::atomic<bool> wakePending_{false};  // a wakeup is written and the loop has not taken commands since
  std::atomic<RequestHandle> nextHandle_{1};
  bool holding_ = false;              // loop thread: finishInFlight asked
  std::atomic<bool> settled_{false};  // holding_, and nothing in flight at the end of the last turn
  std::thread thread_;

  mutable std::mutex snapMutex_;
  SnapshotPtr latest_;
  std::unique_ptr<SharedQuotaClient> shared_;  // config shared_quota: the fleet's quota through Redis
};

void EngineLoop::makeSharedQuota() {
  SharedQuotaCallbacks cb;
  cb.post = [this](std::function<void()> fn) { post(std::move(fn)); };
  cb.grant = [this](const LeaseGrant& g) { scheduler_.sharedGrant(g, Clock::now()); };
  cb.mode = [this](SharedMode m, int live, const std::string& why) {
    scheduler_.sharedMode(m, live, why, Clock::now(), nowEpochMs());
  };
  cb.hold = [this](const std::string& group, const std::string& fp, double waitS, const std::string& from,
                   const std::string& reason) {
    scheduler_.sharedHold(group, fp, waitS, from, reason, Clock::now(), nowEpochMs());
  };
  cb.action = [this](const nlohmann::json& a) { scheduler_.sharedAction(a, Clock::now(), nowEpochMs()); };
  cb.fleet = [this](std::vector<FleetMember> fleet) {
    std::vector<FleetMemberSnapshot> members;
    for (const auto& f : fleet) {
      FleetMemberSnapshot m;
      m.instance = f.instance;
      m.mode = f.stats.value("mode", "");
      m.okPerS = f.stats.value("ok_per_s", 0.0);
      m.sendsPerS = f.stats.value("sends_per_s", 0.0);
      m.r429 = f.stats.value("r429", std::uint64_t{0});
      m.inFlight = f.stats.value("in_flight", 0);
      members.push_back(std::move(m));
    }
    scheduler_.sharedFleet(std::move(members));
  };
  // Worker thread: this instance's totals on the shared groups, per second since the previous heartbeat.
  cb.stats = [this, prevOk = std::uint64_t{0}, prevSends = std::uint64_t{0}, prevAt = Clock::now()]() mutable {
    const SnapshotPtr s = latest();
    std::uint64_t ok = 0, sends = 0, r429 = 0;
    int inFlight = 0;
    for (const auto& g : s->groups) {
      if (!config().sharedQuota.shares(g.group)) continue;
      ok += g.counters.ok;
      sends += g.counters.sends;
      r429 += g.counters.r429;
      inFlight += g.inFlight;
    }
    const auto now = Clock::now();
    const double dt = std::max(1e-3, toSeconds(now - prevAt));
    nlohmann::json j{{"ok_per_s", static_cast<double>(ok - std::min(ok, prevOk)) / dt},
                     {"sends_per_s", static_cast<double>(sends - std::min(sends, prevSends)) / dt},
                     {"r429", r429}, {"in_flight", inFlight}, {"ok", ok}, {"sends", sends}};
    prevOk = ok;
    prevSends = sends;
    prevAt = now;
    return j;
  };
  shared_ = std::make_unique<SharedQuotaClient>(config().sharedQuota, std::move(cb));
  Scheduler::SharedHooks hooks;
  SharedQuotaClient* client = shared_.get();
  hooks.ask = [client](const LeaseAsk& a) { client->ask(a); };
  hooks.word = [client](const std::string& group, const std::string& fp, double waitS, const std::string& reason,
                        bool refusal) { client->word(group, fp, waitS, reason, refusal); };
  hooks.action = [client](const nlohmann::json& a) { client->publishAction(a); };
  hooks.instance = client->instance();
  scheduler_.shareQuota(std::move(hooks));
}

void EngineLoop::judge(TimePoint now, EpochMs nowEpoch, bool all) {
  judging_.swap(held_);
  for (Response& r : finished_) judging_.push_back({std::move(r), now + kHoldAtMost});
  finished_.clear();
  std::stable_sort(judging_.begin(), judging_.end(),
                   [](const Held& a, const Held& b) { return a.r.ticket < b.r.ticket; });
  const auto isHeld = [this](Ticket t) {
    return std::any_of(held_.begin(), held_.end(), [t](const Held& e) { return e.r.ticket == t; });
  };
  for (Held& h : judging_) {
    if (!all && now < h.until && scheduler_.answerWaitsForEarlier(h.r, now, nowEpoch, isHeld))
      held_.push_back(std::move(h));
    else
      scheduler_.complete(std::move(h.r), now, nowEpoch);
  }
  judging_.clear();
}

void EngineLoop::run() {
  const auto& cfg = scheduler_.config();
  emit(EventKind::EngineStart, "engine started (" + std::to_string(scheduler_.groupCount()) + " groups)",
       {{"instance", cfg.name}, {"groups", scheduler_.groupCount()}, {"config", replayableConfig(cfg)}});
  TimePoint nextSweep = Clock::now();
  TimePoint nextSnapshot = Clock::now();
  const Duration snapEvery = fromSeconds(cfg.snapshotIntervalS);
  const Scheduler::SendFn send = [this](const Dispatch& d) { return transport_.start(d); };
  std::vector<Command> cmds;
  while (true) {
    wakePending_.store(false, std::memory_order_release);  // before taking: a later post wakes the next turn
    {
      std::lock_guard lock(cmdMutex_);
      cmds.swap(commands_);
    }
    for (auto& c : cmds) {
      if (c.pending) scheduler_.admit(std::move(c.pending), Clock::now());
      else c.fn();
    }
    cmds.clear();
    TimePoint now = Clock::now();
    const EpochMs nowEpoch = nowEpochMs();
    if (stopRequested_) break;

    if (now >= nextSweep) {
      scheduler_.sweep(now, nowEpoch);
      nextSweep = now + kSweepInterval;
    }
    scheduler_.releaseDelayed(now);
    TimePoint wake = scheduler_.dispatch(now, nowEpoch, send);
    if (now >= nextSnapshot) {
      publishSnapshot(now, nowEpoch);
      nextSnapshot += snapEvery;
      if (nextSnapshot <= now) nextSnapshot = now + snapEvery;
    }
    wake = std::min({wake, nextSnapshot, nextSweep, now + kMaxPoll, scheduler_.nextDelayed()});
    for (const Held& h : held_) wake = std::min(wake, h.until);
    const auto timeoutMs = std::clamp<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()).count() + 1, 0,
        std::chrono::duration_cast<std::chrono::milliseconds>(kMaxPoll).count());
    transport_.poll(static_cast<int>(timeoutMs));
    const TimePoint doneAt = Clock::now();
    const EpochMs doneEpoch = nowEpochMs();
    transport_.takeFinished([&](Response r) { finished_.push_back(std::move(r)); });
    judge(doneAt, doneEpoch, false);
    if (holding_) settled_ = scheduler_.inFlight() == 0 && held_.empty();
  }

  const TimePoint now = Clock::now();
  judge(now, nowEpochMs(), true);  // what was held is answered like the rest (its retry cancelled below)
  scheduler_.flushShedEvents(nowEpochMs());  // before the stop's own cancellations
  closeQueue(now);
  scheduler_.cancelAll("engine stopped", now);
  // Abort what is still in flight; each gets its callback.
  for (Ticket t : transport_.abortAll()) scheduler_.cancelInFlight(t, "engine stopped while in flight", now);
  publishSnapshot(now, nowEpochMs());
  emit(EventKind::EngineStop, "engine stopped", {{"instance", cfg.name}});
}

// ---------------------------------------------------------------------------------------------------

Engine::Engine(EngineConfig config) : loop_(std::make_unique<EngineLoop>(std::move(config))) {}

bool Engine::finishInFlight(double maxS, const std::string& cancelWaitingWhy) {
  if (!loop_->running()) return true;
  loop_->post([this, why = cancelWaitingWhy] { loop_->holdSends(why); });
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, maxS));
  while (!loop_->settled()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}
Engine::~Engine() { stop(); }

void Engine::onSnapshot(std::function<void(SnapshotPtr)> fn) { loop_->listeners().addSnapshot(std::move(fn)); }
void Engine::onEvent(std::function<void(const Event&)> fn) { loop_->listeners().addEvent(std::move(fn)); }
void Engine::onAttempt(std::function<void(const AttemptRecord&)> fn) { loop_->listeners().addAttempt(std::move(fn)); }
void Engine::start() { loop_->start(); }
void Engine::stop() { loop_->stop(); }

RequestHandle Engine::submit(Request request, ResultCallback done) {
  const RequestHandle h = loop_->newHandle();
  auto p = std::make_unique<Pending>();
  p->req = std::move(request);
  p->done = std::move(done);
  p->handle = h;
  p->submittedAt = Clock::now();
  loop_->post(std::move(p));
  return h;
}

// After stop() the loop takes no commands: these are dropped, and every request has been answered already.
void Engine::cancel(RequestHandle h, std::string why) {
  loop_->post([this, h, why = std::move(why)] { loop_->cancel(h, why); });
}
void Engine::resumeTransfer(RequestHandle h) {
  loop_->post([this, h] { loop_->resume(h); });
}

void Engine::recordEvent(Event e) {
  loop_->post([this, e = std::move(e)]() mutable {
    if (e.tsMs == 0) e.tsMs = nowEpochMs();
    e.message = SecretRegistry::redact(std::move(e.message));
    e.detail = SecretRegistry::redacted(std::move(e.detail));
    loop_->listeners().event(e);
  });
}

void Engine::setGlobalConcurrency(int limit, const std::string& actor) {
  loop_->post([this, limit, actor] { loop_->scheduler().setGlobalConcurrency(limit, actor, nowEpochMs()); });
}
void Engine::setGroupConcurrency(const std::string& group, int limit, const std::string& actor) {
  loop_->post(
      [this, group, limit, actor] { loop_->scheduler().setGroupConcurrency(group, limit, actor, nowEpochMs()); });
}
void Engine::setRateCeiling(const std::string& group, RateCeilingConfig ceiling, const std::string& actor) {
  loop_->post([this, group, ceiling, actor] {
    loop_->scheduler().setRateCeiling(group, ceiling, actor, Clock::now(), nowEpochMs());
  });
}
void Engine::setTierPaused(Tier tier, bool paused, const std::string& group, const std::string& actor) {
  loop_->post([this, tier, paused, group, actor] {
    loop_->scheduler().setTierPaused(tier, paused, group, actor, nowEpochMs());
  });
}
void Engine::setGroupPaused(const std::string& group, bool paused, const std::string& actor) {
  loop_->post(
      [this, group, paused, actor] { loop_->scheduler().setGroupPaused(group, paused, actor, nowEpochMs()); });
}
void Engine::drainGroup(const std::string& group, const std::string& actor) {
  loop_->post([this, group, actor] { loop_->scheduler().drainGroup(group, actor, Clock::now(), nowEpochMs()); });
}

SnapshotPtr Engine::latestSnapshot() const { return loop_->latest(); }
const EngineConfig& Engine::config() const { return loop_->config(); }

}  // namespace tg
