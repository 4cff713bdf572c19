#include "shared_ledger.h"

#include "stats.h"

#include <algorithm>
#include <cmath>

namespace tg {
namespace {
// An ask unanswered this long is taken as lost (the worker reports Redis trouble separately).
constexpr auto kAskTimeout = std::chrono::milliseconds(500);
// A lease nobody took from for this long goes back to the fleet.
constexpr auto kStaleLease = std::chrono::milliseconds(1000);
// Before any rate is known, leases are this many requests.
constexpr double kDefaultLease = 4;
// A scope that sends asks for its next lease once this share of a heartbeat passed since its last ask, even
// with half its lease left: the lease call is the instance's sign of life, which Redis needs within a
// heartbeat, and one that brings capacity costs no more than a heartbeat that brings none.
constexpr double kAskForLife = 0.6;
// Sends whose Redis-added admission delay is kept for its percentiles.
constexpr std::size_t kDelayRing = 4096;
}  // namespace

std::string_view sharedModeName(SharedMode m) {
  switch (m) {
    case SharedMode::Starting: return "starting";
    case SharedMode::Shared: return "shared";
    case SharedMode::Fallback: return "fallback";
  }
  return "?";
}

SharedLedger::SharedLedger(SharedQuotaConfig cfg, AskFn ask) : cfg_(std::move(cfg)), ask_(std::move(ask)) {}

int SharedLedger::addScope(const std::string& group, const std::string& fingerprint) {
  for (std::size_t i = 0; i < scopes_.size(); ++i)
    if (scopes_[i].group == group && scopes_[i].fingerprint == fingerprint) return static_cast<int>(i);
  Scope s;
  s.group = group;
  s.fingerprint = fingerprint;
  scopes_.push_back(std::move(s));
  return static_cast<int>(scopes_.size() - 1);
}

double SharedLedger::leaseSize(const Scope& s) const {
  if (s.rate <= 0) return kDefaultLease;
  // lease_ms of the fleet's rate, at most half the shared bucket so one instance cannot hold it all.
  // Every live instance may hold one reserved lease within the second P1/P2 may reserve ahead.
  const double bucket = s.burst > 0 ? s.burst : std::max(1.0, s.rate * cfg_.burstS);
  const double share = s.rate / std::max(1, live_);
  return std::max(1.0, std::floor(std::min({s.rate * cfg_.leaseS, bucket / 2, share})));
}

void SharedLedger::ask(Scope& s, int id, TimePoint now, SharedHint req, SharedHint tok, bool topUp) {
  LeaseAsk a;
  a.scope = id;
  a.group = s.group;
  a.fingerprint = s.fingerprint;
  a.tier = s.want;
  // An ask made for the sign of life, with half the lease or more left, only tops up what was spent since the
  // last ask: the instance holds no more than before.
  a.requests = topUp ? std::clamp(std::floor(s.used), 1.0, leaseSize(s)) : leaseSize(s);
  a.tokens = s.avgTokens > 0 ? a.requests * s.avgTokens : 0;
  a.rateHint = req.rate;
  a.burst = req.burst;
  a.tokenRateHint = tok.rate;
  a.tokenBurst = tok.burst;
  a.usedRequests = s.used;
  s.used = 0;
  s.asking = true;
  s.askedAt = now;
  ask_(a);
}

void SharedLedger::retuneFallback(Scope& s, TimePoint now) {
  const double live = std::max(1, live_);
  if (s.rate > 0) {
    const double r = s.rate / live;
    const double b = std::max(1.0, (s.burst > 0 ? s.burst : s.rate * cfg_.burstS) / live);
    if (std::abs(s.fallback.rate() - r) > 1e-9) s.fallback.configure(r, b, now);
  }
  if (s.tokenRate > 0) {
    const double r = s.tokenRate / live;
    if (std::abs(s.fallbackTokens.rate() - r) > 1e-9)
      s.fallbackTokens.configure(r, std::max(1.0, r * std::max(1.0, cfg_.burstS)), now);
  }
}

void SharedLedger::settleFuture(Scope& s, TimePoint now) {
  if (s.futureRequests <= 0 || now < s.futureAt) return;
  s.requests += s.futureRequests;
  s.tokens += s.futureTokens;
  s.futureRequests = s.futureTokens = 0;
  // Usable only from futureAt: not stale before anyone could take from it.
  s.lastTake = std::max(s.lastTake, s.futureAt);
}

bool SharedLedger::ready(int id, Tier tier, double tokens, SharedHint req, SharedHint tok, TimePoint now,
                         Duration& wait, WaitReason& why) {
  Scope& s = scopes_[static_cast<std::size_t>(id)];
  if (req.rate > 0) {
    s.rate = req.rate;
    s.burst = req.burst;
  }
  if (tok.rate > 0) s.tokenRate = tok.rate;
  if (mode_ == SharedMode::Fallback) {
    retuneFallback(s, now);
    // Unknown rate: nothing to divide; the local quota picture alone paces the key.
    const Duration r = s.rate > 0 ? s.fallback.timeUntil(1, now) : Duration::zero();
    const Duration t = s.tokenRate > 0 && tokens > 0 ? s.fallbackTokens.timeUntil(tokens, now) : Duration::zero();
    if (r == Duration::zero() && t == Duration::zero()) return true;
    wait = std::max(r, t);
    why = {.code = WaitCode::SharedShare, .note = "shared quota (Redis unreachable or refusing): this instance's share"};
    return false;
  }
  settleFuture(s, now);
  const bool tokenLease = s.tokenRate > 0 && tokens > 0;
  const bool have = s.requests >= 1 - 1e-9 && (!tokenLease || s.tokens >= tokens - 1e-9);
  if (!have && static_cast<int>(tier) < static_cast<int>(s.want)) s.want = tier;
  if (s.avgTokens <= 0) s.avgTokens = tokens;
  // Ask for the next lease while half of this one is left, so sends do not wait on Redis.
  const bool low = s.requests < std::max(1.0, leaseSize(s) / 2) || (tokenLease && s.tokens < tokens * 2);
  const bool forLife = s.used > 0 && now - s.askedAt >= fromSeconds(cfg_.heartbeatS * kAskForLife);
  if (s.asking && now - s.askedAt > kAskTimeout) s.asking = false;
  if ((low || forLife) && !s.asking && now >= s.notBefore && s.futureRequests <= 0) ask(s, id, now, req, tok, !low);
  if (have) return true;
  if (s.futureRequests > 0) {
    wait = s.futureAt - now;
    why = {.code = WaitCode::SharedNextLease, .note = "shared quota: the fleet's next lease for this instance"};
    return false;
  }
  if (s.notBefore <= now) {
    ++leaseWaits_;
    if (!s.stalled) {
      s.stalled = true;
      s.stalledSince = now;
    }
  }
  wait = s.notBefore > now ? s.notBefore - now : Duration(kAskTimeout);
  why = s.notBefore > now ? WaitReason{.code = WaitCode::SharedSpent, .note = "shared quota: the fleet's capacity is spent"}
                          : WaitReason{.code = WaitCode::SharedLease, .note = "shared quota: waiting for a lease"};
  return false;
}

void SharedLedger::take(int id, double tokens, TimePoint now) {
  Scope& s = scopes_[static_cast<std::size_t>(id)];
  s.avgTokens = s.avgTokens <= 0 ? tokens : 0.9 * s.avgTokens + 0.1 * tokens;
  s.lastTake = now;
  if (mode_ == SharedMode::Fallback) {
    if (s.rate > 0) s.fallback.tryAcquire(1, now);
    if (s.tokenRate > 0 && tokens > 0) s.fallbackTokens.tryAcquire(tokens, now);
    return;
  }
  s.requests = std::max(0.0, s.requests - 1);
  if (s.tokenRate > 0 && tokens > 0) s.tokens = std::max(0.0, s.tokens - tokens);
  s.used += 1;
  // A stall still open here ended without a grant (an ask taken as lost): it lasted until now.
  const Duration stall = s.stalled ? now - s.stalledSince : s.stall;
  s.stalled = false;
  s.stall = Duration::zero();
  const double ms = std::max(0.0, toSeconds(stall) * 1000);
  if (ms > 0) ++redisDelayed_;
  if (redisDelayMs_.size() < kDelayRing) redisDelayMs_.push_back(ms);
  else redisDelayMs_[redisDelayNext_] = ms;
  redisDelayNext_ = (redisDelayNext_ + 1) % kDelayRing;
}

std::pair<double, double> SharedLedger::redisDelayMs() const {
  if (redisDelayMs_.empty()) return {0, 0};
  return {percentile(redisDelayMs_, 0.5), percentile(redisDelayMs_, 0.99)};
}

double SharedLedger::redisDelayMaxMs() const {
  return redisDelayMs_.empty() ? 0.0 : *std::max_element(redisDelayMs_.begin(), redisDelayMs_.end());
}

void SharedLedger::refundTokens(int id, double tokens) {
  Scope& s = scopes_[static_cast<std::size_t>(id)];
  if (mode_ == SharedMode::Fallback || s.tokenRate <= 0 || tokens <= 0) return;
  s.tokens += tokens;
}

void SharedLedger::onGrant(const LeaseGrant& g, TimePoint now) {
  if (g.scope < 0 || g.scope >= static_cast<int>(scopes_.size())) return;
  Scope& s = scopes_[static_cast<std::size_t>(g.scope)];
  s.asking = false;
  // The wait was Redis's only when its answer could be spent at once; a lease reserved for later, or none
  // (come back then), means the request waits for the fleet's capacity, which the round trip did not delay.
  if (s.stalled) {
    s.stall = g.requests > 0 && g.readyS <= 0 ? now - s.stalledSince : Duration::zero();
    s.stalled = false;
  }
  s.lastTake = std::max(s.lastTake, now);  // a fresh lease is not stale before anyone could take from it
  if (g.readyS > 0) {
    s.futureRequests += g.requests;
    s.futureTokens += g.tokens;
    s.futureAt = now + fromSeconds(g.readyS);
  } else {
    s.requests += g.requests;
    s.tokens += g.tokens;
  }
  if (g.rate > 0 && std::abs(g.rate - s.rate) > 1e-3 * s.rate) {
    s.rate = g.rate;  // a rate learnt by the fleet (or stated to another instance)
    s.burst = 0;
  }
  live_ = std::max(1, g.live);
  s.notBefore = now + fromSeconds(std::max(g.waitS, g.blockedS));
  if (g.requests > 0) s.want = Tier::P2;
}

void SharedLedger::setMode(SharedMode m, int live, TimePoint now) {
  if (live > 0) live_ = live;
  if (m == mode_) return;
  mode_ = m;
  for (auto& s : scopes_) {
    s.asking = false;
    s.notBefore = now;
    s.stalled = false;
    s.stall = Duration::zero();
    if (m == SharedMode::Fallback) {  // a lease of a server now unreachable is not spent twice
      s.requests = 0;
      s.tokens = 0;
      s.futureRequests = s.futureTokens = 0;
      s.fallback = TokenBucket();
      s.fallbackTokens = TokenBucket();
      retuneFallback(s, now);
    }
  }
}

void SharedLedger::sweep(TimePoint now) {
  if (mode_ != SharedMode::Shared) return;
  for (std::size_t i = 0; i < scopes_.size(); ++i) {
    Scope& s = scopes_[i];
    // A reserved lease whose requests went away before it came due (cancelled, shed, past their deadline)
    // is spent by nobody and asked about by nobody: it goes back like any lease left untouched.
    settleFuture(s, now);
    if ((s.requests >= 1 || s.tokens > 0) && !s.asking && now - s.lastTake > kStaleLease) {
      LeaseAsk a;
      a.scope = static_cast<int>(i);
      a.group = s.group;
      a.fingerprint = s.fingerprint;
      a.giveBack = true;
      a.requests = std::floor(s.requests);
      a.tokens = s.tokens;
      a.usedRequests = s.used;
      s.used = 0;
      s.requests -= a.requests;
      s.tokens = 0;
      ask_(a);
    }
  }
}

}  // namespace tg
