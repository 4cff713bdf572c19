// The Redis side of shared quota: a worker thread that answers the ledger's lease asks and give-backs,
// publishes the upstream's word (holds) and operator actions, heart-beats this instance with its stats,
// and a subscriber thread that hears the fleet's holds and actions. Every Redis call is bounded by the
// configured timeout; after a failure a breaker keeps calls off for a short while and the instance runs in
// fallback until a reconnect succeeds. Results reach the engine thread through `post` (never called with a
// lock held). Owned by the engine; thread-safe: every public method may be called from any thread.
#pragma once

#include "engine_config.h"
#include "shared_ledger.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tg {

// One instance of the fleet, as its last heartbeat told.
struct FleetMember {
  std::string instance;
  nlohmann::json stats;  // {"sends_per_s", "ok_per_s", "r429", "in_flight", "mode", ...}
};

struct SharedQuotaCallbacks {
  std::function<void(std::function<void()>)> post;          // runs a function on the engine thread
  std::function<void(const LeaseGrant&)> grant;             // engine thread
  std::function<void(SharedMode, int live, const std::string& why)> mode;  // engine thread
  // The upstream's word from another instance: hold (group, fingerprint) for waitS (engine thread).
  std::function<void(const std::string& group, const std::string& fp, double waitS, const std::string& from,
                     const std::string& reason)> hold;
  std::function<void(const nlohmann::json& action)> action;  // another instance's operator action (engine thread)
  std::function<void(std::vector<FleetMember>)> fleet;       // after each heartbeat (engine thread)
  std::function<nlohmann::json()> stats;                     // this instance's stats (worker thread)
};

class SharedQuotaClient {
 public:
  SharedQuotaClient(SharedQuotaConfig cfg, SharedQuotaCallbacks cb);
  // Stops both threads; gives back nothing: Redis returns the lease one heartbeat after the last sign of life.
  ~SharedQuotaClient();
  SharedQuotaClient(const SharedQuotaClient&) = delete;
  SharedQuotaClient& operator=(const SharedQuotaClient&) = delete;

  void start();
  void stop();

  void ask(const LeaseAsk& a);
  // Holds the scope fleet-wide for waitS and tells the others. refusal: a refusal that said nothing of the
  // quota (the fleet's rate is cut from it).
  void word(const std::string& group, const std::string& fp, double waitS, const std::string& reason, bool refusal);
  void publishAction(const nlohmann::json& action);

  const std::string& instance() const { return instance_; }
  std::uint64_t roundTrips() const { return roundTrips_.load(); }  // Redis commands sent (bench)
  // Round trip of recent lease calls in ms: {p50, p99}; {0, 0} before the first.
  std::pair<double, double> leaseLatencyMs() const;

 private:
  struct Job {
    enum class Kind { Ask, Word, Action } kind;
    LeaseAsk ask;
    std::string group, fp, reason;
    double waitS = 0;
    bool refusal = false;
    nlohmann::json action;
  };
  void runWorker();
  void runSubscriber();
  // withView: a lease ask also does the heartbeat's work (stats in, fleet view back); viewed says it did.
  bool doJob(class RedisConnection& c, const Job& j, bool withView, bool& viewed);
  bool heartbeat(class RedisConnection& c);
  bool checkDuplicate(class RedisConnection& c);  // false: the call failed
  std::string statsJson();
  // The fleet view in a script's reply from element `from` on (pairs of instance id and stats JSON).
  void takeFleet(const struct RedisReply& r, std::size_t from);
  void setMode(SharedMode m, const std::string& why);
  std::string scopeKey(const std::string& group, const std::string& fp) const;
  // Silence after which Redis counts an instance dead: its outstanding lease returns to the bucket and it
  // leaves the live count (the lease share and the fallback share).
  double deadMs() const;

  SharedQuotaConfig cfg_;
  SharedQuotaCallbacks cb_;
  std::string instance_;
  std::string nonce_;           // this process, in its heartbeat's stats: another under the same id differs
  bool duplicateSaid_ = false;  // worker thread
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::atomic<bool> stopSub_{false};
  std::thread worker_, subscriber_;
  std::atomic<std::uint64_t> roundTrips_{0};
  mutable std::mutex latencyMutex_;
  std::vector<double> latencyMs_;  // a ring of the last kLatencyRing lease calls
  std::size_t latencyNext_ = 0;
  // Worker thread only.
  // Why the last round failed although Redis answered (an error reply: a read-only replica, OOM, a script
  // missing; or a reply of the wrong shape): the fleet cannot be shared through it, so the round falls back
  // as when Redis is unreachable. Empty when it did not answer at all (the connection's lastError() says why).
  std::string refused_;
  SharedMode mode_ = SharedMode::Starting;
  std::chrono::steady_clock::time_point lastSaid_{};  // the last log line about the mode
  int live_ = 1;
};

}  // namespace tg
