// The engine thread's side of shared quota: per (group, key fingerprint) scope, the capacity leased from
// Redis and not spent yet. A request of a shared scope goes only with a leased request (and its tokens);
// when the lease runs low the ledger asks the Redis worker for the next one before it runs out, so Redis
// stays off the per-request path. While Redis is unreachable (fallback) each scope is paced locally at the
// fleet's rate divided by the instances alive at the last heartbeat. Time is an argument; engine thread only.
#pragma once

#include "engine_config.h"
#include "token_bucket.h"
#include "types.h"
#include "wait_reason.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <string>
#include <vector>

namespace tg {

enum class SharedMode { Starting, Shared, Fallback };
std::string_view sharedModeName(SharedMode m);

// What this instance knows of an upstream's limit on one dimension: the rate it allows (per second, at the
// bucket fraction) and the burst the limit leaves room for beyond that rate. rate 0 = nothing stated.
struct SharedHint {
  double rate = 0, burst = 0;
};

// What the ledger asks the Redis worker for.
struct LeaseAsk {
  int scope = 0;
  std::string group, fingerprint;
  Tier tier = Tier::P2;          // the highest tier waiting: P0 may take the fleet's reserve
  double requests = 0, tokens = 0;
  double rateHint = 0, tokenRateHint = 0;  // per second, 0 = none stated here
  double burst = 0, tokenBurst = 0;        // with the hints
  double usedRequests = 0;       // sent on earlier leases since the last ask (Redis forgets them)
  // A give-back: requests/tokens not used before the lease went stale (no ask for more).
  bool giveBack = false;
};

// What came back for an ask.
struct LeaseGrant {
  int scope = 0;
  double requests = 0, tokens = 0;
  double waitS = 0;     // nothing (more) before this
  double rate = 0;      // the fleet's rate for the scope (stated or learnt), 0 = unknown
  int live = 1;         // instances alive
  double blockedS = 0;  // the scope is held this long (the upstream's word)
  double readyS = 0;    // the lease is reserved: usable this long from now
};

class SharedLedger {
 public:
  using AskFn = std::function<void(const LeaseAsk&)>;
  SharedLedger(SharedQuotaConfig cfg, AskFn ask);

  // A scope per (group, key); returns its id.
  int addScope(const std::string& group, const std::string& fingerprint);
  // May a request (one request, `tokens` tokens) of `tier` go now on `scope`? Asks for the next lease when
  // this one runs low. `req`/`tok`: what this instance knows of the upstream's limits. When it may not, `wait` is when to try again (an ask is on its way, or Redis said when).
  bool ready(int scope, Tier tier, double tokens, SharedHint req, SharedHint tok, TimePoint now, Duration& wait,
             WaitReason& why);
  // The request ready() allowed is sent: spend it.
  void take(int scope, double tokens, TimePoint now);
  // A request used fewer tokens than it took: the rest goes back into this instance's token lease (and with
  // the lease's give-back to the fleet). Nothing in fallback, where the local bucket was charged.
  void refundTokens(int scope, double tokens);
  // A lease granted (on the engine thread, posted by the worker).
  void onGrant(const LeaseGrant& g, TimePoint now);
  // The worker reached Redis again (Shared) or gave up on it (Fallback); `live`: instances at the last heartbeat.
  void setMode(SharedMode m, int live, TimePoint now);
  SharedMode mode() const { return mode_; }
  void setLive(int live) { live_ = std::max(1, live); }
  // Times ready() said no only because the next lease had not arrived (Redis on the request's path).
  std::uint64_t leaseWaits() const { return leaseWaits_; }
  // The admission delay Redis added to each of the last requests sent (0 for most): how long the request
  // waited at the head of its queue, the local quota allowing it, only for a lease call to come back. Time
  // spent waiting for the fleet's capacity (a reserved lease, Redis's "not before") is not counted.
  // {p50, p99} in ms and how many of them waited at all; {0, 0} before the first send.
  std::pair<double, double> redisDelayMs() const;
  double redisDelayMaxMs() const;  // the longest of them
  std::uint64_t redisDelayed() const { return redisDelayed_; }
  int live() const { return live_; }
  // Leases not touched for a while go back to the fleet (call every sweep).
  void sweep(TimePoint now);
  double fleetRate(int scope) const { return scopes_[static_cast<std::size_t>(scope)].rate; }
  const SharedQuotaConfig& config() const { return cfg_; }

 private:
  struct Scope {
    std::string group, fingerprint;
    double requests = 0, tokens = 0;  // leased, not spent
    double futureRequests = 0, futureTokens = 0;  // leased for later: usable from futureAt
    TimePoint futureAt{};
    double used = 0;                  // spent since the last ask
    bool asking = false;
    TimePoint askedAt{};
    TimePoint notBefore{};            // Redis said to wait until then
    TimePoint lastTake{};
    double rate = 0, tokenRate = 0;   // the fleet's, as Redis last said (or hinted here)
    double burst = 0;                 // requests the stated limit leaves room for (0: burst_ms of the rate)
    double avgTokens = 0;             // per request, to size token leases
    Tier want = Tier::P2;
    bool stalled = false;             // a request waits only for the lease call in flight
    TimePoint stalledSince{};
    Duration stall{};                 // that wait, charged to the next request sent
    TokenBucket fallback;             // fallback: rate / live
    TokenBucket fallbackTokens;
  };
  double leaseSize(const Scope& s) const;
  void ask(Scope& s, int id, TimePoint now, SharedHint req, SharedHint tok, bool topUp);
  void retuneFallback(Scope& s, TimePoint now);
  static void settleFuture(Scope& s, TimePoint now);  // a reserved lease that came due joins the usable one

  SharedQuotaConfig cfg_;
  AskFn ask_;
  std::vector<Scope> scopes_;
  SharedMode mode_ = SharedMode::Starting;
  int live_ = 1;
  std::uint64_t leaseWaits_ = 0;
  std::vector<double> redisDelayMs_;  // a ring of the last kDelayRing sends
  std::size_t redisDelayNext_ = 0;
  std::uint64_t redisDelayed_ = 0;
};

}  // namespace tg
