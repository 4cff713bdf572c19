#include "shared_quota_client.h"

#include "json_text.h"
#include "log.h"
#include "redis_connection.h"
#include "secret.h"
#include "shared_quota_scripts.h"
#include "stats.h"

#include <unistd.h>

#include <cmath>
#include <random>
#include <cstdio>

namespace tg {
namespace {

constexpr const char* kScope = "shared-quota";
constexpr auto kRetryEvery = std::chrono::milliseconds(250);  // while Redis is unreachable
constexpr long long kKeyTtlMs = 10 * 60 * 1000;                // scope state of a fleet that went quiet
constexpr std::size_t kLatencyRing = 1024;
// An instance counts as dead after one heartbeat of silence (its lease then returns to the fleet), so it
// shows a sign of life (a lease call or a heartbeat) whenever nothing reached Redis for this share of a
// heartbeat: the rest is the margin for a late worker thread.
constexpr double kKeepAliveShare = 0.75;
// While lease calls keep the instance alive, the heartbeat only refreshes the fleet view: every two, and
// then on a lease call when one goes out in time.
constexpr double kViewEveryHeartbeats = 2;

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string defaultInstance() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "host");
  return std::string(host) + ":" + std::to_string(getpid());
}

RedisEndpoint endpointOf(const SharedQuotaConfig& c, double timeoutS) {
  RedisEndpoint e;
  e.host = c.host;
  e.port = c.port;
  e.database = c.database;
  e.user = c.user;
  e.password = c.password;
  e.timeoutS = timeoutS;
  return e;
}

}  // namespace

SharedQuotaClient::SharedQuotaClient(SharedQuotaConfig cfg, SharedQuotaCallbacks cb)
    : cfg_(std::move(cfg)), cb_(std::move(cb)), instance_(cfg_.instance.empty() ? defaultInstance() : cfg_.instance) {
  std::random_device rd;
  char n[17];
  std::snprintf(n, sizeof n, "%08x%08x", rd(), rd());
  nonce_ = n;
  // Redis's password is a secret like an API key: redacted from every log line and event that might quote it.
  if (!cfg_.password.empty()) SecretRegistry::add(cfg_.password);
}

SharedQuotaClient::~SharedQuotaClient() { stop(); }

void SharedQuotaClient::start() {
  if (worker_.joinable()) return;
  stopping_ = false;
  stopSub_ = false;
  worker_ = std::thread([this] { runWorker(); });
  subscriber_ = std::thread([this] { runSubscriber(); });
}

void SharedQuotaClient::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  stopSub_ = true;
  if (worker_.joinable()) worker_.join();
  if (subscriber_.joinable()) subscriber_.join();
}

void SharedQuotaClient::ask(const LeaseAsk& a) {
  {
    std::lock_guard lock(mutex_);
    Job j{Job::Kind::Ask, a, {}, {}, {}, 0, false, {}};
    jobs_.push_back(std::move(j));
  }
  cv_.notify_one();
}

void SharedQuotaClient::word(const std::string& group, const std::string& fp, double waitS, const std::string& reason,
                             bool refusal) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(Job{Job::Kind::Word, {}, group, fp, reason, waitS, refusal, {}});
  }
  cv_.notify_one();
}

void SharedQuotaClient::publishAction(const nlohmann::json& action) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(Job{Job::Kind::Action, {}, {}, {}, {}, 0, false, action});
  }
  cv_.notify_one();
}

std::pair<double, double> SharedQuotaClient::leaseLatencyMs() const {
  std::vector<double> v;
  {
    std::lock_guard lock(latencyMutex_);
    v = latencyMs_;
  }
  if (v.empty()) return {0, 0};
  return {percentile(v, 0.5), percentile(v, 0.99)};
}

std::string SharedQuotaClient::scopeKey(const std::string& group, const std::string& fp) const {
  return cfg_.ns + ":q:" + group + ":" + fp;
}

// A refusal that will not pass by itself: the password, the user, or something that is not Redis on the port.
static bool misconfigured(const std::string& why) {
  for (const char* s : {"WRONGPASS", "NOAUTH", "authentication", "NOPERM", "protocol error", "Protocol error",
                        "not a Redis", "unknown command"})
    if (why.find(s) != std::string::npos) return true;
  return false;
}

void SharedQuotaClient::setMode(SharedMode m, const std::string& why) {
  const auto now = Clock::now();
  if (m == mode_) {
    // Still in fallback: said again every minute (one line at the start was all a wrong password left in the
    // log of an instance that then served on, taking its share alone, for days).
    if (m == SharedMode::Fallback && now - lastSaid_ >= std::chrono::minutes(1)) {
      lastSaid_ = now;
      const std::string text = "still not shared through Redis " + redisAddress(cfg_.host, cfg_.port) +
                               ", each instance takes its share: " + why;
      if (misconfigured(why)) logError(kScope, text + " (this will not pass by itself: check shared_quota)");
      else logWarn(kScope, text);
    }
    return;
  }
  mode_ = m;
  lastSaid_ = now;
  if (m == SharedMode::Fallback) {
    const std::string text = "Redis unreachable or refusing (" + redisAddress(cfg_.host, cfg_.port) +
                             "), each instance takes its share: " + why;
    if (misconfigured(why)) logError(kScope, text + " (this will not pass by itself: check shared_quota)");
    else logWarn(kScope, text);
  } else {
    logInfo(kScope, "shared with the fleet through Redis " + redisAddress(cfg_.host, cfg_.port));
  }
  const int live = live_;
  cb_.post([cb = cb_.mode, m, live, why] { cb(m, live, why); });
}

double SharedQuotaClient::deadMs() const { return cfg_.heartbeatS * 1000; }

bool SharedQuotaClient::doJob(RedisConnection& c, const Job& j, bool withView, bool& viewed) {
  viewed = false;
  const double deadMs = this->deadMs();
  RedisReply r;
  switch (j.kind) {
    case Job::Kind::Ask: {
      const LeaseAsk& a = j.ask;
      const std::string scope = scopeKey(a.group, a.fingerprint);
      const std::string lease = cfg_.ns + ":l:" + a.group + ":" + a.fingerprint;
      if (a.giveBack) {
        if (!c.eval(shared_scripts::kGiveBack, {scope, lease},
                    {instance_, num(a.requests), num(a.tokens), num(a.usedRequests)}, r))
          return false;
        if (r.isError()) {
          refused_ = "give-back script answered " + r.str;
          return false;
        }
        return true;
      }
      const auto sentAt = Clock::now();
      if (!c.eval(shared_scripts::kLease, {scope, lease, cfg_.ns + ":instances", cfg_.ns + ":stats"},
                  {instance_, std::to_string(static_cast<int>(a.tier)), num(a.requests), num(a.tokens), num(a.rateHint),
                   num(a.tokenRateHint), num(a.burst), num(cfg_.p0Reserve), num(a.usedRequests),
                   std::to_string(kKeyTtlMs), num(deadMs), num(a.tokenBurst), num(cfg_.burstS),
                   withView ? statsJson() : std::string()},
                  r))
        return false;
      {
        std::lock_guard lock(latencyMutex_);
        const double ms = toSeconds(Clock::now() - sentAt) * 1000;
        if (latencyMs_.size() < kLatencyRing) latencyMs_.push_back(ms);
        else latencyMs_[latencyNext_] = ms;
        latencyNext_ = (latencyNext_ + 1) % kLatencyRing;
      }
      if (r.isError() || r.elements.size() < 7) {
        refused_ = "lease script answered " + (r.isError() ? r.str : std::string("a reply of the wrong shape"));
        return false;
      }
      LeaseGrant g;
      g.scope = a.scope;
      g.requests = r.elements[0].number();
      g.tokens = r.elements[1].number();
      g.waitS = r.elements[2].number() / 1000;
      g.rate = r.elements[3].number();
      g.live = static_cast<int>(r.elements[4].number(1));
      g.blockedS = r.elements[5].number() / 1000;
      g.readyS = r.elements[6].number() / 1000;
      if (withView) {
        takeFleet(r, 7);
        viewed = true;
      }
      cb_.post([cb = cb_.grant, g] { cb(g); });
      return true;
    }
    case Job::Kind::Word: {
      const long long ms = std::llround(std::max(0.0, j.waitS) * 1000);
      if (!c.eval(shared_scripts::kWord, {scopeKey(j.group, j.fp), cfg_.ns + ":word"},
                  {std::to_string(ms), j.reason, j.group + "\t" + j.fp, instance_, j.refusal ? "1" : "0"}, r))
        return false;
      if (r.isError()) {
        refused_ = "word script answered " + r.str;
        return false;
      }
      return true;
    }
    case Job::Kind::Action: {
      nlohmann::json a = j.action;
      a["instance"] = instance_;
      if (!c.call({"PUBLISH", cfg_.ns + ":ops", a.dump()}, r)) return false;
      if (r.isError()) {
        refused_ = "PUBLISH answered " + r.str;
        return false;
      }
      return true;
    }
  }
  return true;
}

std::string SharedQuotaClient::statsJson() {
  nlohmann::json stats = cb_.stats ? cb_.stats() : nlohmann::json::object();
  stats["mode"] = std::string(sharedModeName(mode_ == SharedMode::Starting ? SharedMode::Shared : mode_));
  stats["nonce"] = nonce_;  // this process: another one under the same id writes another
  return stats.dump();
}

bool SharedQuotaClient::heartbeat(RedisConnection& c) {
  RedisReply r;
  if (!c.eval(shared_scripts::kHeartbeat, {cfg_.ns + ":instances", cfg_.ns + ":stats"},
              {instance_, statsJson(), num(deadMs())}, r))
    return false;
  if (r.isError() || r.elements.empty()) {
    refused_ = "heartbeat script answered " + (r.isError() ? r.str : std::string("nothing"));
    return false;
  }
  takeFleet(r, 1);
  return true;
}

bool SharedQuotaClient::checkDuplicate(RedisConnection& c) {
  RedisReply r;
  if (!c.call({"HGET", cfg_.ns + ":stats", instance_}, r)) return false;
  if (r.type != RedisReply::Type::String) return true;
  const nlohmann::json last = nlohmann::json::parse(r.str, nullptr, false);
  const auto n = last.is_object() ? last.find("nonce") : last.end();
  if (last.is_object() && n != last.end() && n->is_string() && n->get<std::string>() != nonce_) {
    duplicateSaid_ = true;
    logError(kScope, "another process uses this instance's id \"" + instance_ +
                         "\" (shared_quota.instance): the fleet counts the two as one and each ignores the other's " +
                         "holds; give each its own id (or leave it out: host:pid)");
  }
  return true;
}

void SharedQuotaClient::takeFleet(const RedisReply& r, std::size_t from) {
  std::vector<FleetMember> fleet;
  for (std::size_t i = from; i + 1 < r.elements.size(); i += 2) {
    FleetMember m;
    m.instance = r.elements[i].str;
    m.stats = nlohmann::json::parse(r.elements[i + 1].str, nullptr, false);
    if (m.stats.is_discarded()) m.stats = nlohmann::json::object();
    fleet.push_back(std::move(m));
  }
  live_ = std::max<int>(1, static_cast<int>(fleet.size()));
  cb_.post([cb = cb_.fleet, fleet = std::move(fleet)]() mutable { cb(std::move(fleet)); });
}

void SharedQuotaClient::runWorker() {
  RedisConnection c(endpointOf(cfg_, cfg_.timeoutS));
  const Duration keepAlive = fromSeconds(cfg_.heartbeatS * kKeepAliveShare);
  const Duration viewEvery = fromSeconds(cfg_.heartbeatS * kViewEveryHeartbeats);
  // The last sign of life Redis got from this instance (a lease call or a heartbeat, taken at the moment it
  // was sent) and the last heartbeat (the fleet view). Both in the past: the first round beats at once.
  auto lastLife = Clock::now() - keepAlive;
  const auto startedAt = Clock::now();
  auto lastBeat = startedAt - viewEvery;
  auto lastDuplicateCheck = startedAt;
  auto retryAt = Clock::now();
  std::deque<Job> batch;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      const auto wakeAt = mode_ == SharedMode::Shared ? std::min(lastLife + keepAlive, lastBeat + viewEvery) : retryAt;
      cv_.wait_until(lock, wakeAt, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) break;
      batch.swap(jobs_);
    }
    const auto now = Clock::now();
    // What is dropped: the ledger paces locally meanwhile and holds are applied locally already, but an operator
    // action applied here reaches no other instance, and the operator is told so (it went without a word).
    auto drop = [&](std::deque<Job>::const_iterator from) {
      for (auto it = from; it != batch.cend(); ++it)
        if (it->kind == Job::Kind::Action)
          logWarn(kScope, "operator action " + it->action.value("action", std::string("?")) +
                              " applied on this instance only: Redis is unreachable, the fleet did not hear it");
      batch.clear();
    };
    if (mode_ == SharedMode::Fallback && now < retryAt) {
      drop(batch.cbegin());
      continue;
    }
    bool ok = true;
    refused_.clear();
    // Two processes with one id (a config copied with its "instance") are counted as one: each one's lease and
    // fallback share too large, each dropping the other's words as its own echo. The stats under this id hold
    // the nonce of whoever wrote last (a heartbeat, or a lease call with the fleet view): read every five
    // heartbeats just before this process writes its own (between two of its writes the other one wrote, if
    // there is one), once it has written once (a restart reads its predecessor's before that).
    auto checkBeforeWrite = [&] {
      const auto t = Clock::now();
      if (duplicateSaid_ || lastBeat <= startedAt || t - lastDuplicateCheck < 5 * viewEvery / 2) return true;
      lastDuplicateCheck = t;
      return checkDuplicate(c);
    };
    auto failedAt = batch.cend();
    for (auto it = batch.cbegin(); it != batch.cend(); ++it) {
      const Job& j = *it;
      const auto sentAt = Clock::now();
      const bool lease = j.kind == Job::Kind::Ask && !j.ask.giveBack;
      // The fleet view rides on a lease call when one is due a little early, saving the heartbeat's round trip.
      const bool withView = lease && mode_ == SharedMode::Shared && sentAt - lastBeat >= viewEvery - keepAlive;
      bool viewed = false;
      if ((withView && !checkBeforeWrite()) || !doJob(c, j, withView, viewed)) {
        ok = false;
        failedAt = it;
        break;
      }
      // The lease script stamps the caller alive: a busy instance needs no separate heartbeat for that.
      if (lease) lastLife = sentAt;
      if (viewed) lastBeat = sentAt;
    }
    drop(failedAt);  // the rest of the batch after a failure (nothing when all went)
    const auto afterJobs = Clock::now();
    const bool beatDue = afterJobs - lastLife >= keepAlive || afterJobs - lastBeat >= viewEvery ||
                         mode_ != SharedMode::Shared;
    if (ok && beatDue) {
      ok = checkBeforeWrite() && heartbeat(c);
      if (ok) lastLife = lastBeat = afterJobs;
    }
    // Two processes with one id (a config copied with its "instance") are counted as one: each one's lease and
    // fallback share too large, each dropping the other's words as its own echo. The stats under this id hold
    // the nonce of whoever wrote last (a heartbeat, or a lease call with the fleet view): read every five
    // heartbeats, once this process has written its own (a restart reads its predecessor's before that).
    roundTrips_ = c.roundTrips();
    if (ok && mode_ != SharedMode::Shared) setMode(SharedMode::Shared, "");
    if (!ok) {
      setMode(SharedMode::Fallback, refused_.empty() ? c.lastError() : refused_);
      retryAt = Clock::now() + kRetryEvery;
    }
  }
}

void SharedQuotaClient::runSubscriber() {
  // Reads wait at most this long, so stop() is heard promptly.
  RedisConnection c(endpointOf(cfg_, 0.1));
  const std::string wordChannel = cfg_.ns + ":word", opsChannel = cfg_.ns + ":ops";
  // A subscribed connection only reads, so a partition that left it open but dead (the server gone from the
  // other end, a dropped NAT flow) read as a quiet fleet for good: after the worker reconnected, 2 subscribers
  // were counted by Redis and the fleet's holds and operator actions reached neither. It PINGs every heartbeat
  // and subscribes afresh when it has heard nothing, not even the answer, for three.
  const auto pingEvery = fromSeconds(std::max(0.2, cfg_.heartbeatS));
  const auto deafAfter = 3 * pingEvery;
  auto lastHeard = Clock::now(), lastPing = Clock::now();
  bool wasDeaf = false;
  while (!stopSub_) {
    if (!c.connected()) {
      RedisReply r;
      if (!c.call({"SUBSCRIBE", wordChannel, opsChannel}, r) || r.isError()) {
        c.close();
        std::this_thread::sleep_for(kRetryEvery);
        continue;
      }
      // The reply to SUBSCRIBE confirms the first channel; the second confirmation arrives as a push.
      lastHeard = lastPing = Clock::now();
      if (wasDeaf) logInfo(kScope, "subscribed to the fleet's holds and operator actions again");
      wasDeaf = false;
    }
    const auto now = Clock::now();
    if (now - lastHeard > deafAfter) {
      char quiet[32];
      std::snprintf(quiet, sizeof quiet, "%.1f", toSeconds(now - lastHeard));
      logWarn(kScope, "heard nothing from Redis " + redisAddress(cfg_.host, cfg_.port) + " for " + quiet +
                          " s on the subscription, not even its PING's answer: subscribing again");
      c.close();
      wasDeaf = true;
      continue;
    }
    if (now - lastPing >= pingEvery) {
      lastPing = now;
      if (!c.send({"PING"})) {
        std::this_thread::sleep_for(kRetryEvery);
        continue;
      }
    }
    RedisReply m;
    bool timedOut = false;
    if (!c.readPush(m, timedOut)) {
      if (!timedOut) std::this_thread::sleep_for(kRetryEvery);
      continue;
    }
    lastHeard = Clock::now();  // a message, a confirmation or a pong
    if (m.type != RedisReply::Type::Array || m.elements.size() < 3 || m.elements[0].str != "message") continue;
    const std::string& channel = m.elements[1].str;
    const std::string& payload = m.elements[2].str;
    if (channel == wordChannel) {
      // group \t fingerprint \t ms \t instance \t reason
      std::vector<std::string> f;
      std::size_t start = 0;
      for (int i = 0; i < 4; ++i) {
        const auto tab = payload.find('\t', start);
        if (tab == std::string::npos) break;
        f.push_back(payload.substr(start, tab - start));
        start = tab + 1;
      }
      if (f.size() < 4 || f[3] == instance_) continue;
      const double waitS = std::atof(f[2].c_str()) / 1000;
      cb_.post([cb = cb_.hold, g = f[0], fp = f[1], waitS, from = f[3], reason = payload.substr(start)] {
        cb(g, fp, waitS, from, reason);
      });
    } else if (channel == opsChannel) {
      nlohmann::json a = nlohmann::json::parse(payload, nullptr, false);
      if (a.is_discarded() || !a.is_object()) continue;
      // Not value(): an "instance" that is not a string (anyone may publish here) threw on this thread.
      if (fieldString(a, "instance") == instance_) continue;
      cb_.post([cb = cb_.action, a = std::move(a)] { cb(a); });
    }
  }
}

}  // namespace tg
