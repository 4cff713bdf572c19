#include "scheduler.h"

#include "endpoint_route.h"
#include "group_state.h"
#include "json_text.h"
#include "log.h"
#include "quota_verdict.h"
#include "rate_limit_header_parser.h"
#include "request_safety.h"
#include "secret.h"
#include "usage_tokens.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <strings.h>
#include <tuple>

namespace tg {
namespace {

constexpr const char* kScope = "engine";
// A request's deadline from outside (JSONL "deadline", a profile's deadline_s) is clamped to this.
constexpr double kMaxDeadlineS = 365.0 * 86400;
// While a group keeps shedding, its RequestShed events (with the count) come no oftener than this.
constexpr Duration kShedEventEvery = std::chrono::seconds(10);

// An error line, unless this class of error was logged less than a second ago: then it is counted for the sweep.
template <typename Text>
void logLimited(GroupState::ErrorLog& l, const std::string& scope, TimePoint now, Text text) {
  if (now - l.last > std::chrono::seconds(1) || now < l.last) {
    logError(scope, text());
    l.last = now;
  } else {
    ++l.suppressed;
  }
}

// The lines logLimited held back, once their class's second is past.
void logSuppressed(GroupState::ErrorLog& l, const std::string& scope, TimePoint now) {
  if (l.suppressed == 0 || now - l.last <= std::chrono::seconds(1)) return;
  logError(scope, "+" + std::to_string(l.suppressed) + " similar errors (" + l.what + ") suppressed");
  l.suppressed = 0;
  l.last = now;
}

// Whether sending a request again is harmless after the upstream answered 2xx and the body broke off: a method
// whose repetition has the effect of one (RFC 9110 9.2.2), or a request the caller made so with an Idempotency-Key
// of its own (Stripe's and OpenAI's header, the IETF draft's; a group's fixed header is the same key for every
// request, which an upstream that honours it answers with the first one's result), or the operator's say-so.
bool resendableAfterAnswer(const Request& req, const RetryConfig& retry) {
  if (retry.resendBrokenAnswers) return true;
  for (const char* m : {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
    if (strcasecmp(req.method.c_str(), m) == 0) return true;
  for (const auto& [name, value] : req.headers)
    if (strcasecmp(name.c_str(), "idempotency-key") == 0 && !value.empty()) return true;
  return false;
}

}  // namespace

// A fleet's shared bucket holds what the limit leaves room for beyond the paced rate, and no more than
// burst_ms of the rate (a burst of requests is a burst for the upstream whichever instance sends it).
SharedHint Scheduler::sharedHint(const QuotaTracker& q, Dimension d) const {
  const QuotaTracker::StatedLimit s = q.stated(d);
  if (s.rate <= 0) return {};
  return {s.rate, std::max(1.0, std::min(s.burst, s.rate * cfg_.sharedQuota.burstS))};
}

namespace {

QuotaTracker makeQuota(const GroupConfig& gc, TimePoint now, double timeScale) {
  QuotaTracker q(gc.bucketFraction, {gc.requestsPerMinute, gc.tokensPerMinute}, now, gc.quotaWindowS);
  q.setTimeScale(timeScale);
  return q;
}

}  // namespace

Scheduler::Scheduler(EngineConfig cfg, const EngineListeners& listeners, TimePoint now,
                     std::optional<unsigned> retrySeed)
    : cfg_(std::move(cfg)),
      listeners_(listeners),
      retry_(retrySeed ? RetryPolicy(cfg_.retry, *retrySeed) : RetryPolicy(cfg_.retry)),
      budget_(cfg_.retry.budgetRatio, cfg_.retry.budgetMinRetries),
      globalLimit_(cfg_.globalConcurrency),
      globalRate_(cfg_.rateCeiling, now) {
  for (const auto& gc : cfg_.groups) {
    auto g = std::make_unique<GroupState>(gc, cfg_, now);
    for (const auto& kc : gc.keys) {
      KeyState k{kc, keyFingerprint(kc.secret), makeQuota(gc, now, cfg_.timeScale), 0, {}, {}};
      if (!kc.secret.empty()) {
        SecretRegistry::add(kc.secret);
        k.authLine = kc.header + ": " + kc.prefix + kc.secret;
      }
      g->keys.push_back(std::move(k));
    }
    if (g->keys.empty()) {
      KeyConfig none;
      none.name = "default";
      g->keys.push_back(KeyState{none, keyFingerprint(""), makeQuota(gc, now, cfg_.timeScale), 0, {}, {}});
    }
    g->configProblem = groupConfigProblem(g->cfg, cfg_, &g->origins);
    if (!g->configProblem.empty()) logError(gc.name, g->configProblem);
    groups_.push_back(std::move(g));
  }
}

Scheduler::~Scheduler() {
  for (auto& g : groups_)
    for (const auto& [key, slot] : g->ownKeySlots) SecretRegistry::release(key);
}

GroupState* Scheduler::findGroup(const std::string& name) {
  for (auto& g : groups_)
    if (g->cfg.name == name) return g.get();
  return nullptr;
}

void Scheduler::emit(EventKind kind, Severity sev, const std::string& group, std::string message,
                     nlohmann::json detail, EpochMs nowEpoch) {
  Event e;
  e.tsMs = nowEpoch;
  e.kind = kind;
  e.severity = sev;
  e.group = group;
  e.message = SecretRegistry::redact(std::move(message));
  e.detail = SecretRegistry::redacted(std::move(detail));
  listeners_.event(e);
}

void Scheduler::admit(PendingPtr p, TimePoint now) {
  p->queuedAt = now;
  p->last.id = p->req.id;
  p->last.group = p->req.group;
  p->last.tier = p->req.tier;
  GroupState* g = findGroup(p->req.group);
  if (!g) {
    p->last.error = ErrorKind::Config;
    p->last.errorMessage = "unknown group \"" + p->req.group + "\"";
    p->last.retryUseless = true;
    finish(std::move(p), now);
    return;
  }
  if (std::string problem = g->configProblem.empty() ? g->checkRequest(p->req) : g->configProblem;
      !problem.empty()) {
    p->last.error = ErrorKind::Config;
    p->last.errorMessage = std::move(problem);
    p->last.retryUseless = true;
    finish(std::move(p), now);
    return;
  }
  if (!p->req.ownKey.empty()) {
    p->ownKey = takeOwnKeySlot(*g, p->req.ownKey, now);
    if (p->ownKey < 0) {
      p->last.error = ErrorKind::Shed;
      p->last.errorMessage = "group \"" + g->cfg.name + "\" already tracks " +
                             std::to_string(GroupState::kMaxOwnKeys) + " clients' own keys with requests in progress";
      p->last.shed = ShedReason::QueueFull;
      countShed(*g, ShedReason::QueueFull);
      finish(std::move(p), now);
      return;
    }
  }
  p->tokenCost = static_cast<double>(p->req.body.size()) / 4.0 + p->req.maxTokens;
  const auto& tc = cfg_.tiers[static_cast<int>(p->req.tier)];
  const double deadlineS = std::min(p->req.deadlineS > 0 ? p->req.deadlineS : tc.maxWaitS, kMaxDeadlineS);
  const Tier tier = p->req.tier;
  if (g->draining) {
    p->last.error = ErrorKind::Cancelled;
    p->last.errorMessage = "group \"" + g->cfg.name + "\" is draining";
    p->last.shed = ShedReason::Draining;
    p->last.retryUseless = true;  // until an operator resumes the group
    countShed(*g, ShedReason::Draining);
    finish(std::move(p), now);
    return;
  }
  ++g->counters.submitted;
  ++g->counters.submittedByTier[static_cast<std::size_t>(tier)];
  p->deadline = addSaturating(now, fromSeconds(deadlineS));
  const TimePoint deadline = p->deadline;
  const RequestHandle handle = p->handle;
  if (!g->queues.push(tier, std::move(p), deadline)) {
    shed(*g, std::move(p), ShedReason::QueueFull,
         "queue full (" + std::string(tierName(tier)) + " capacity " + std::to_string(tc.capacity) + ")", now);
    return;
  }
  if (handle) where_[handle] = Where{g, 0, false};
}

int Scheduler::takeOwnKeySlot(GroupState& g, const std::string& key, TimePoint now) {
  int slot = -1;
  if (auto it = g.ownKeySlots.find(key); it != g.ownKeySlots.end()) {
    slot = it->second;
  } else {
    KeyState fresh{KeyConfig{}, keyFingerprint(key), makeQuota(g.cfg, now, cfg_.timeScale), 0, {}, {}};
    fresh.cfg.name = "client " + fresh.fingerprint;
    fresh.own = true;
    if (g.ownKeySlots.size() < static_cast<std::size_t>(GroupState::kMaxOwnKeys)) {
      slot = static_cast<int>(g.keys.size());
      g.keys.push_back(std::move(fresh));
    } else {  // take over the slot idle the longest; its quota picture goes with it
      for (auto& [k, i] : g.ownKeySlots) {
        const KeyState& ks = g.keys[static_cast<std::size_t>(i)];
        if (ks.users == 0 && ks.inFlight == 0 &&
            (slot < 0 || ks.lastUsed < g.keys[static_cast<std::size_t>(slot)].lastUsed))
          slot = i;
      }
      if (slot < 0) return -1;
      for (auto it = g.ownKeySlots.begin(); it != g.ownKeySlots.end(); ++it)
        if (it->second == slot) {
          SecretRegistry::release(it->first);
          g.ownKeySlots.erase(it);
          break;
        }
      g.keys[static_cast<std::size_t>(slot)] = std::move(fresh);
    }
    g.ownKeySlots.emplace(key, slot);
    SecretRegistry::hold(key);  // an upstream's error body may quote it back
  }
  KeyState& k = g.keys[static_cast<std::size_t>(slot)];
  ++k.users;
  k.lastUsed = now;
  return slot;
}

void Scheduler::finish(PendingPtr p, TimePoint now) {
  if (p->handle) where_.erase(p->handle);
  if (p->ownKey >= 0)
    if (GroupState* g = findGroup(p->req.group)) {
      KeyState& k = g->keys[static_cast<std::size_t>(p->ownKey)];
      --k.users;
      k.lastUsed = now;
      p->ownKey = -1;
    }
  Pending::finish(std::move(p), now);
}

void Scheduler::pushDelayed(Delayed d) {
  if (auto w = where_.find(d.pending->handle); d.pending->handle && w != where_.end()) w->second = {d.group, 0, true};
  delayed_.push_back(std::move(d));
  std::push_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
}

PendingPtr Scheduler::popDelayed() {
  std::pop_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
  PendingPtr p = std::move(delayed_.back().pending);
  delayed_.pop_back();
  if (auto w = where_.find(p->handle); p->handle && w != where_.end()) w->second.delayed = false;
  return p;
}

void Scheduler::countShed(GroupState& g, ShedReason reason) {
  ++g.counters.shed;
  ++g.counters.shedByReason[static_cast<std::size_t>(reason)];
  ++g.counters.failed;
}

void Scheduler::shed(GroupState& g, PendingPtr p, ShedReason reason, const std::string& why, TimePoint now) {
  countShed(g, reason);
  ++g.shedSinceEvent;
  g.shedReason = why;
  g.shedCause = reason;
  p->waitMs += toSeconds(now - p->queuedAt) * 1000.0;
  p->last.error = ErrorKind::Shed;
  p->last.errorMessage = why;
  p->last.shed = reason;
  // When trying again could succeed: what held this tier back at the last dispatch.
  const TierWait& w = g.tierWait[static_cast<std::size_t>(p->req.tier)];
  if (w.cause == TierWait::Cause::Paused) p->last.retryUseless = true;  // until an operator resumes it
  if (w.until != TimePoint::max()) p->last.retryAfterS = std::max(0.0, toSeconds(w.until - now));
  if (w.exhausted) p->last.retryUseless = true;
  finish(std::move(p), now);
}

ShedReason Scheduler::deadlineShedReason(const TierWait& w) {
  switch (w.cause) {
    case TierWait::Cause::Paused: return ShedReason::TierPaused;
    case TierWait::Cause::Breaker: return ShedReason::BreakerOpen;
    case TierWait::Cause::Quota: return w.exhausted ? ShedReason::QuotaExhausted : ShedReason::Deadline;
    case TierWait::Cause::None: break;
  }
  return ShedReason::Deadline;
}

void Scheduler::emitSheds(GroupState& g, EpochMs nowEpoch) {
  emit(EventKind::RequestShed, Severity::Warn, g.cfg.name, std::to_string(g.shedSinceEvent) + " request(s) shed: " +
       g.shedReason, {{"count", g.shedSinceEvent}, {"reason", g.shedReason}, {"cause", shedReasonName(g.shedCause)}},
       nowEpoch);
  g.shedSinceEvent = 0;
}

void Scheduler::flushShedEvents(EpochMs nowEpoch) {
  for (auto& g : groups_)
    if (g->shedSinceEvent > 0) emitSheds(*g, nowEpoch);
}

void Scheduler::sweep(TimePoint now, EpochMs nowEpoch) {
  if (shared_) shared_->sweep(now);
  for (auto& gp : groups_) {
    GroupState& g = *gp;
    g.queues.shedExpired(now, [&](PendingPtr p) {
      const double waited = toSeconds(now - p->submittedAt);
      char buf[160];
      std::snprintf(buf, sizeof buf, "deadline passed after %.1f s queued (%s)%s%s", waited,
                    std::string(tierName(p->req.tier)).c_str(), g.wait.waiting() ? ": " : "",
                    waitText(g.wait).c_str());
      const ShedReason reason = deadlineShedReason(g.tierWait[static_cast<std::size_t>(p->req.tier)]);
      shed(g, std::move(p), reason, buf, now);
    });
    // The first shed after a quiet spell is told at once; while shedding goes on, one event per kShedEventEvery
    // with the count. One per sweep (every 100 ms) was about 200 MB of history a day for one shedding group.
    const bool quiet = !g.lastShedEvent || now - *g.lastShedEvent >= kShedEventEvery || now < *g.lastShedEvent;
    if (g.shedSinceEvent > 0 && quiet) {
      g.lastShedEvent = now;
      emitSheds(g, nowEpoch);
    }
    if (auto end = g.bursts.sweep(now)) {
      emit(end->kind, end->severity, g.cfg.name, std::move(end->message), std::move(end->detail), nowEpoch);
      logInfo(g.cfg.name, end->logLine);
    }
    logSuppressed(g.serverErrors, g.cfg.name, now);
    logSuppressed(g.clientErrors, g.cfg.name, now);
  }
}

void Scheduler::releaseDelayed(TimePoint now) {
  while (!delayed_.empty() && delayed_.front().at <= now) {
    GroupState* g = delayed_.front().group;
    PendingPtr p = popDelayed();
    const Tier tier = p->req.tier;
    const TimePoint deadline = p->deadline;
    g->queues.pushFront(tier, std::move(p), deadline);
  }
}

TimePoint Scheduler::nextDelayed() const { return delayed_.empty() ? TimePoint::max() : delayed_.front().at; }

int Scheduler::chooseKey(GroupState& g, Tier tier, const Pending& p, TimePoint now, EpochMs nowEpoch,
                         QuotaWait& shortest) {
  const std::array<double, kDimensionCount> cost{1.0, p.tokenCost};
  int best = -1;
  double bestHeadroom = -std::numeric_limits<double>::infinity();  // any key check() allows beats none
  shortest.wait = Duration::max();
  for (std::size_t k = 0; k < g.keys.size(); ++k) {
    // A request with its own key goes with that key alone; the group's keys never carry it, nor it theirs.
    if (p.ownKey >= 0 ? static_cast<int>(k) != p.ownKey : g.keys[k].own) continue;
    const double reserve = tier == Tier::P0 ? 0.0 : g.keys[k].quota.reserveTokens();
    const bool fleetPaced = shared_ && g.keys[k].sharedScope >= 0 && shared_->mode() == SharedMode::Shared;
    QuotaWait w = g.keys[k].quota.check(cost, now, nowEpoch, reserve, fleetPaced);
    if (w.wait == Duration::zero() && shared_ && g.keys[k].sharedScope >= 0) {
      KeyState& ks = g.keys[k];
      Duration wait{};
      WaitReason why;
      if (!shared_->ready(ks.sharedScope, tier, p.tokenCost, sharedHint(ks.quota, Dimension::Requests),
                          sharedHint(ks.quota, Dimension::Tokens), now, wait, why)) {
        w.wait = std::max(wait, Duration(std::chrono::milliseconds(1)));
        w.backIn = w.wait;
        w.why = std::move(why);
        w.reason = waitText(w.why);
      }
    }
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
  return best;
}

std::pair<int, int> Scheduler::nextOnAnotherKey(GroupState& g, Tier tier, TimePoint now, EpochMs nowEpoch) {
  // Keys seen held so far, the front's first (-1: the group's own keys, else an own-key slot).
  constexpr int kLookahead = 64;
  std::vector<int> held{g.queues.front(tier)->ownKey};
  const int n = std::min(g.queues.size(tier), kLookahead);
  for (int i = 1; i < n; ++i) {
    const Pending& p = *g.queues.at(tier, i);
    if (std::find(held.begin(), held.end(), p.ownKey) != held.end()) continue;  // FIFO within one key
    QuotaWait w;
    if (const int k = chooseKey(g, tier, p, now, nowEpoch, w); k >= 0) return {i, k};
    held.push_back(p.ownKey);
  }
  return {-1, -1};
}

TimePoint Scheduler::dispatch(TimePoint now, EpochMs nowEpoch, const SendFn& send) {
  TimePoint wake = TimePoint::max();
  for (auto& gp : groups_) {
    gp->wait = WaitReason{};
    gp->tierWait.fill(TierWait{});
    gp->sentThisRound.clear();
  }
  if (holdSends_) {  // stopping: what is queued stays for the stop to cancel, or is answered now if asked
    // (a retry back from in flight, a late arrival: each waited for the whole drain)
    if (!holdCancelWhy_.empty()) cancelAll(holdCancelWhy_, now);
    return wake;
  }
  std::vector<bool> blocked(groups_.size(), false);  // a higher tier of this group is waiting
  std::vector<TierWait> blockedBy(groups_.size());   // on what: the lower tiers wait on the same
  for (int ti = 0; ti < kTierCount; ++ti) {
    const Tier tier = static_cast<Tier>(ti);
    const std::size_t groupCount = groups_.size();
    const std::size_t first = firstGroup_[static_cast<std::size_t>(ti)];
    for (std::size_t j = 0; j < groupCount; ++j) {
      const std::size_t gi = (first + j) % groupCount;
      GroupState& g = *groups_[gi];
      if (g.queues.empty(tier)) continue;
      TierWait& tw = g.tierWait[static_cast<std::size_t>(ti)];
      if (g.paused) {
        if (!g.wait.waiting()) g.wait = WaitReason{.code = WaitCode::GroupPaused};
        tw.cause = TierWait::Cause::Paused;
        continue;
      }
      if (globalTierPaused_[ti] || g.tierPaused[ti]) {
        if (!g.wait.waiting()) g.wait = WaitReason{.code = WaitCode::TierPaused, .tier = tier};
        tw.cause = TierWait::Cause::Paused;
        continue;
      }
      if (blocked[gi]) {
        tw = blockedBy[gi];
        continue;
      }
      while (!g.queues.empty(tier)) {
        if (globalInFlight_ >= globalLimit_) {
          if (!g.wait.waiting())
            g.wait = WaitReason{.code = WaitCode::GlobalConcurrency, .used = globalInFlight_, .limit = globalLimit_};
          return wake;  // a completion wakes the loop
        }
        if (g.inFlight >= g.concurrency.limit()) {
          g.wait = WaitReason{.code = WaitCode::Concurrency, .used = g.inFlight, .limit = g.concurrency.limit()};
          for (const Ticket t : g.sentThisRound) {  // the limit ended this round with work queued
            if (auto it = inFlight_.find(t); it != inFlight_.end()) it->second.pressing = true;
          }
          g.sentThisRound.clear();
          blockedBy[gi] = TierWait{};
          blocked[gi] = true;
          break;
        }
        WaitReason ceilingWhy;
        if (const Duration cw = rateCeilingWait(g, *g.queues.front(tier), now, ceilingWhy); cw > Duration::zero()) {
          const TimePoint until = addSaturating(now, cw);
          g.wait = std::move(ceilingWhy);
          wake = std::min(wake, until);
          blockedBy[gi] = TierWait{TierWait::Cause::None, until, false};
          tw = blockedBy[gi];
          blocked[gi] = true;
          break;
        }
        std::optional<BreakerTransition> tr;
        const bool allowed = g.breaker.allow(now, &tr);
        if (tr)
          emit(EventKind::BreakerTransition, Severity::Info, g.cfg.name, "breaker open -> half-open",
               {{"from", "open"}, {"to", "half-open"}}, nowEpoch);
        if (!allowed) {
          g.wait = g.breaker.state() == BreakerState::Open
                       ? WaitReason{.code = WaitCode::BreakerOpen,
                                    .untilMs = nowEpoch + static_cast<EpochMs>(
                                                              toSeconds(g.breaker.openUntil() - now) * 1000)}
                       : WaitReason{.code = WaitCode::BreakerProbing};
          if (g.breaker.state() == BreakerState::Open) wake = std::min(wake, g.breaker.openUntil());
          tw = TierWait{TierWait::Cause::Breaker,
                        g.breaker.state() == BreakerState::Open ? g.breaker.openUntil() : TimePoint::max(), false};
          blockedBy[gi] = tw;
          blocked[gi] = true;
          break;
        }
        QuotaWait shortest;
        const int best = chooseKey(g, tier, *g.queues.front(tier), now, nowEpoch, shortest);
        if (best < 0 && !g.ownKeySlots.empty()) {  // others' keys need not wait behind this one's
          const auto [at, key] = nextOnAnotherKey(g, tier, now, nowEpoch);
          if (at > 0) {
            start(g, key, g.queues.takeAt(tier, at), now, send);
            firstGroup_[static_cast<std::size_t>(ti)] = (gi + 1) % groupCount;
            continue;
          }
        }
        if (best < 0) {
          g.wait = shortest.why;
          // Exhausted beyond the cap: shed is left to the deadline sweep, but don't spin on it.
          wake = std::min(wake, addSaturating(now, shortest.wait));
          tw = TierWait{TierWait::Cause::Quota, addSaturating(now, std::max(shortest.wait, shortest.backIn)),
                        shortest.exhausted};
          blockedBy[gi] = tw;
          blocked[gi] = true;
          break;
        }
        start(g, best, g.queues.popFront(tier), now, send);
        firstGroup_[static_cast<std::size_t>(ti)] = (gi + 1) % groupCount;
      }
    }
  }
  return wake;
}

Duration Scheduler::rateCeilingWait(GroupState& g, const Pending& p, TimePoint now, WaitReason& reason) {
  Dimension ownPart{}, allPart{};
  const Duration own = g.rateCeiling.timeUntil(p.tokenCost, now, &ownPart);
  const Duration all = globalRate_.timeUntil(p.tokenCost, now, &allPart);
  if (own <= Duration::zero() && all <= Duration::zero()) return Duration::zero();
  const auto amount = [](const RateCeilingConfig& c, Dimension d) {
    return d == Dimension::Requests ? c.requestsPerS : c.tokensPerMin;
  };
  reason = own >= all ? WaitReason{.code = WaitCode::RateCeiling, .dimension = ownPart,
                                   .amount = amount(g.rateCeiling.config(), ownPart)}
                      : WaitReason{.code = WaitCode::GlobalRateCeiling, .dimension = allPart,
                                   .amount = amount(globalRate_.config(), allPart)};
  return std::max(own, all);
}

void Scheduler::start(GroupState& g, int key, PendingPtr p, TimePoint now, const SendFn& send) {
  KeyState& k = g.keys[static_cast<std::size_t>(key)];
  const bool first = p->attempts == 0;
  ++p->attempts;
  p->waitMs += toSeconds(now - p->queuedAt) * 1000.0;

  Dispatch d;
  d.ticket = nextTicket_++;
  d.method = p->req.method;
  d.url = p->req.url;
  d.body = p->req.body;
  d.sink = p->req.sink;
  // Requests without headers of their own (the common case) share one list per key and tier.
  d.cacheableHeaders = p->req.headers.empty() && !p->req.body.empty();
  if (d.cacheableHeaders) {
    auto& cached = k.headerCache[static_cast<std::size_t>(p->req.tier)];
    if (!cached) cached = g.headerLines(key, p->req, cfg_);
    d.headerLines = cached;
  } else {
    d.headerLines = g.headerLines(key, p->req, cfg_);
  }
  if (std::optional<SendError> err = send(d)) {
    // Nothing was sent and nothing is counted in flight.
    logError(g.cfg.name, err->message);
    ++g.counters.failed;
    p->last.error = err->kind;
    p->last.errorMessage = std::move(err->message);
    finish(std::move(p), now);
    return;
  }
  const QuotaTracker::SendId quotaSend = k.quota.onSend({1.0, p->tokenCost}, now);
  if (shared_ && k.sharedScope >= 0) shared_->take(k.sharedScope, p->tokenCost, now);
  g.rateCeiling.onSend(p->tokenCost, now);
  globalRate_.onSend(p->tokenCost, now);
  g.breaker.onSend();
  ++k.inFlight;
  k.inFlightTokens += p->tokenCost;
  const int groupInFlightAtSend = g.inFlight;
  ++g.inFlight;
  ++globalInFlight_;
  ++g.counters.sends;
  if (first) budget_.onFirstAttempt();
  else ++g.counters.retries;
  if (auto w = where_.find(p->handle); p->handle && w != where_.end()) w->second.ticket = d.ticket;
  inFlight_.emplace(d.ticket, InFlight{std::move(p), &g, key, now, groupInFlightAtSend, quotaSend});
  g.sentThisRound.push_back(d.ticket);
}

bool Scheduler::allowResend(Ticket t, TimePoint now) {
  auto it = inFlight_.find(t);
  if (it == inFlight_.end()) return false;
  Pending& p = *it->second.pending;
  GroupState& g = *it->second.group;
  if (p.attempts >= cfg_.retry.maxAttempts || !budget_.trySpend()) return false;
  // A resend reaches the upstream as any send does, so the operator's ceiling counts it (connection resets sent
  // 11-15/s under a ceiling of 10). It follows its send within milliseconds, when the ceiling's one-request burst
  // is spent: refused there, nearly every resend failed as a network error (a breaker failure). So it is
  // borrowed: the sends after it wait the longer, and the rate over time stays at the ceiling.
  g.rateCeiling.onResend(p.tokenCost, now);
  globalRate_.onResend(p.tokenCost, now);
  ++p.attempts;
  ++g.counters.sends;
  ++g.counters.retries;
  return true;
}

bool Scheduler::answerWaitsForEarlier(const Response& r, TimePoint now, EpochMs nowEpoch,
                                      const std::function<bool(Ticket)>& held) const {
  if (r.status != http::kTooManyRequests || r.committed) return false;
  const auto it = inFlight_.find(r.ticket);
  if (it == inFlight_.end()) return false;
  const InFlight& f = it->second;
  if (!f.group->concurrency.wantsEarlierAnswers(f.groupInFlightAtSend, now)) return false;
  // A refusal that states a quota is about the rate however many were in flight (complete() reads it so): its
  // hold of the key must not wait.
  if (!RateLimitHeaderParser::parse(r.headers, static_cast<double>(nowEpoch) / 1000.0).scopes.empty()) return false;
  return std::any_of(inFlight_.begin(), inFlight_.end(), [&](const auto& e) {
    return e.first < r.ticket && e.second.group == f.group && !held(e.first);
  });
}

void Scheduler::complete(Response r, TimePoint now, EpochMs nowEpoch) {
  auto it = inFlight_.find(r.ticket);
  if (it == inFlight_.end()) {
    logError(kScope, "a response for a ticket not in flight: ignored");
    return;
  }
  InFlight f = std::move(it->second);
  inFlight_.erase(it);
  GroupState& g = *f.group;
  KeyState& k = g.keys[static_cast<std::size_t>(f.key)];
  --k.inFlight;
  k.inFlightTokens = std::max(0.0, k.inFlightTokens - f.pending->tokenCost);
  --g.inFlight;
  --globalInFlight_;
  PendingPtr p = std::move(f.pending);
  const double latencyMs = toSeconds(now - f.sentAt) * 1000.0;
  const int status = r.status;
  const ErrorKind kind = r.error;
  const bool permanent = r.permanent;
  const std::string& errText = r.errorText;
  // A relayed (committed) response that broke off keeps its status: the transfer failed, not the upstream's
  // answer, and it counts as the network error it is.
  const bool transportFailed = kind == ErrorKind::Network || kind == ErrorKind::Timeout;
  // A failure no retry mends is not sent again; only the request's own (a bad header, a redirect, a body too
  // large) is kept from the upstream's health. A certificate not trusted here still counts as a failed
  // connection: counted, fed to the breaker, as it was before it stopped being retried.
  const bool ownFault = permanent && !transportFailed;

  const double nowEpochS = static_cast<double>(nowEpoch) / 1000.0;
  QuotaReading reading = RateLimitHeaderParser::parse(r.headers, nowEpochS);
  QuotaVerdict verdict = decideVerdict(reading, status, nowEpochS, cfg_.retry.maxServerWaitS);
  // A 429, or GitHub's 403 with a scope at zero (the verdict then classifies it as a rate limit).
  const bool rateLimited = status == http::kTooManyRequests ||
                           (status == http::kForbidden && verdict.classification != VerdictClass::Error);
  // A 503 with Retry-After is an overload, counted as 5xx, but its wait is honoured all the same.
  const bool serverWait = status >= 400 && (verdict.kind == QuotaVerdict::Kind::Throttled ||
                                            verdict.kind == QuotaVerdict::Kind::Exhausted);
  std::optional<QuotaChange> change =
      k.quota.onResponse(reading, k.inFlight, now, nowEpoch, f.sentAt, k.inFlightTokens);
  // After onResponse: a probe answered with a new limit proves nothing about how capacity comes back.
  const auto probeAnswer = status >= 200 && status < 300 && !transportFailed ? QuotaTracker::ProbeAnswer::Accepted
                           : rateLimited                                       ? QuotaTracker::ProbeAnswer::Refused
                                                                               : QuotaTracker::ProbeAnswer::Neither;
  k.quota.settleProbe(f.quotaSend, probeAnswer, now, &reading);
  if (change) {
    const std::string dim(dimensionName(change->dimension));
    char text[96];  // %.0f: any double prints, where a cast to an integer of one out of range is undefined
    std::snprintf(text, sizeof text, "%.0f -> %.0f", change->before, change->after);
    emit(EventKind::QuotaChange, Severity::Warn, g.cfg.name, "upstream " + dim + " limit changed " + text,
         {{"dimension", dim}, {"before", change->before}, {"after", change->after}, {"key", k.fingerprint}},
         nowEpoch);
  }

  if (listeners_.wantsAttempts()) {
    AttemptRecord a;
    a.tsMs = nowEpoch;
    a.group = g.cfg.name;
    a.keyFingerprint = k.fingerprint;
    a.client = p->req.client;
    a.endpoint = endpointRoute(urlPath(p->req.url));
    a.tier = p->req.tier;
    a.status = status;
    a.rateLimited = rateLimited;
    a.latencyMs = latencyMs;
    a.retry = p->attempts > 1;
    listeners_.attempt(a);
  }

  bool exhausted = false;
  double floorS = -1;  // a Retry-After that said nothing of the quota: this request's own wait
  // What this refusal holds the key for, told to the fleet when the key's quota is shared.
  double holdS = 0;
  bool bareRefusal = false;
  std::string holdWhy;
  // Refused with more in flight than the recent acceptances had: the upstream limits concurrency, which the
  // concurrency limit now holds. Lowering the learnt rate for it would only starve the group, and opening the
  // breaker would stall it for a refusal already answered (the next send waits for a free slot).
  bool inFlightLimit = false;
  if (rateLimited) {
    ++g.counters.r429;
    // Only a refusal that states no quota can be an in-flight limit: one whose headers say the quota is spent
    // (a quota drop, an exhausted window) is about the rate, however many were in flight.
    inFlightLimit = g.concurrency.onRateLimited(now, reading.scopes.empty() ? f.groupInFlightAtSend : -1);
    if (verdict.kind == QuotaVerdict::Kind::Exhausted) {
      exhausted = true;
      const auto until = static_cast<EpochMs>(verdict.untilEpochS * 1000);
      k.quota.blockUntil(addSaturating(now, fromSeconds(verdict.waitS)), until,
                         WaitReason{.code = WaitCode::QuotaExhausted, .untilMs = until}, true);
      holdS = verdict.waitS;
      holdWhy = "quota exhausted";
      emit(EventKind::QuotaExhausted, Severity::Error, g.cfg.name,
           "quota exhausted until " + formatClock(until) + " (key " + k.fingerprint + ")",
           {{"until_ms", until}, {"wait_s", verdict.waitS}, {"key", k.fingerprint}}, nowEpoch);
    } else if (verdict.kind == QuotaVerdict::Kind::Unknown429) {
      if (!inFlightLimit)
        holdS = toSeconds(k.quota.onRefusal(f.sentAt, std::numeric_limits<double>::quiet_NaN(),
                                            cfg_.retry.default429WaitS, cfg_.retry.maxBackoffS, now, nowEpoch));
      bareRefusal = !inFlightLimit;
      holdWhy = "429 without quota headers";
    } else if (reading.scopes.empty() || k.quota.onQuotaRefusal(reading, {1.0, p->tokenCost}, now)) {
      // Retry-After alone (nginx, API gateways), or one well short of the stated reset (a window that frees
      // capacity gradually): a floor for this request's retry and a rate signal for the key, not a verdict on
      // the whole window; the key is held only when nothing gets through at all.
      floorS = std::max(verdict.waitS, cfg_.retry.baseBackoffS);
      if (!inFlightLimit)
        holdS = toSeconds(k.quota.onRefusal(f.sentAt, verdict.waitS, cfg_.retry.default429WaitS,
                                            cfg_.retry.maxBackoffS, now, nowEpoch));
      bareRefusal = reading.scopes.empty() && !inFlightLimit;
      holdWhy = "429 with Retry-After";
    } else {
      // A server-directed wait below the floor (Retry-After: 0) still holds the key that long: the
      // upstream would otherwise be asked again at once, by every request queued on it. A whole-second
      // Retry-After over a shorter stated reset, or over the time a continuous refill takes to bring this
      // request's cost back, holds the key until then; this request still waits the Retry-After. A request
      // sent after that hold and refused too doubles the next, up to the Retry-After (resetUnderRetryAfter).
      double waitS = std::max(verdict.waitS, cfg_.retry.baseBackoffS);
      const auto finer = k.quota.resetUnderRetryAfter(reading, {1.0, p->tokenCost}, f.sentAt, now);
      if (finer) {
        floorS = waitS;
        waitS = std::max(*finer, cfg_.retry.baseBackoffS);
      }
      const auto until = nowEpoch + static_cast<EpochMs>(waitS * 1000);
      k.quota.blockUntil(now + fromSeconds(waitS), until,
                         WaitReason{.code = reading.retryAfterS && !finer ? WaitCode::RetryAfter : WaitCode::ResetAt,
                                    .untilMs = until},
                         false);
      holdS = waitS;
      holdWhy = reading.retryAfterS ? "429 with Retry-After" : "429, window exhausted";
    }
    if (shared_ && k.sharedScope >= 0 && sharedHooks_.word && (holdS > 0 || bareRefusal))
      sharedHooks_.word(g.cfg.name, k.fingerprint, holdS, holdWhy, bareRefusal);
    if (auto startEvent = g.bursts.onRateLimited(reading, verdict, now)) {
      emit(startEvent->kind, startEvent->severity, g.cfg.name, std::move(startEvent->message),
           std::move(startEvent->detail), nowEpoch);
      if (startEvent->logAsWarning) logWarn(g.cfg.name, startEvent->logLine);
      else logInfo(g.cfg.name, startEvent->logLine);
    }
  } else if (ownFault) {
    logLimited(g.clientErrors, g.cfg.name, now,
               [&] { return errText + " (" + endpointRoute(urlPath(p->req.url)) + ")"; });
  } else if (status >= 500 || status == 0 || transportFailed) {
    if (serverWait) {
      const auto until = nowEpoch + static_cast<EpochMs>(verdict.waitS * 1000);
      k.quota.blockUntil(now + fromSeconds(std::min(verdict.waitS, cfg_.retry.maxServerWaitS)), until,
                         WaitReason{.code = WaitCode::ServerRetryAfter, .untilMs = until, .status = status}, false);
    }
    if (status >= 500) ++g.counters.r5xx;
    else ++g.counters.netErrors;
    g.concurrency.onOverload(now);
    logLimited(g.serverErrors, g.cfg.name, now, [&] {
      return !transportFailed ? "HTTP " + std::to_string(status) + " from " + endpointRoute(urlPath(p->req.url))
                              : std::string(errorKindName(kind)) + ": " + errText;
    });
  } else if (status >= 400) {
    ++g.counters.other4xx;
    logLimited(g.clientErrors, g.cfg.name, now,
               [&] { return "HTTP " + std::to_string(status) + " from " + endpointRoute(urlPath(p->req.url)); });
  } else {
    ++g.counters.ok;
    k.quota.onSuccess(now, f.sentAt);
    g.concurrency.onSuccess(latencyMs / 1000.0, now, f.groupInFlightAtSend, f.pressing);
    g.latency.add(now, latencyMs);
  }
  // A refusal whose headers show a quota at zero, or short of this request's cost, is that quota's, held above
  // until its reset: it tells the breaker nothing of the upstream's health, so it is not counted (a half-open
  // probe's slot is freed). Counted as a failure, a cold start on a spent quota opened the breaker, which added
  // its open time to the stated wait and then let the saved quota out in one burst.
  if (rateLimited && (verdict.classification == VerdictClass::QuotaExhausted ||
                      QuotaTracker::statedShortOf(reading, {1.0, p->tokenCost}))) {
    g.breaker.onAbandoned();
  } else if (auto tr = g.breaker.record(
                 !ownFault && ((rateLimited && !inFlightLimit) || status >= 500 || status == 0 || transportFailed),
                 now)) {
    const std::string from(breakerStateName(tr->from)), to(breakerStateName(tr->to));
    if (tr->to == BreakerState::Open) ++g.counters.breakerOpens;
    emit(EventKind::BreakerTransition, tr->to == BreakerState::Open ? Severity::Warn : Severity::Info, g.cfg.name,
         "breaker " + from + " -> " + to,
         {{"from", from}, {"to", to}, {"failure_share", tr->failureShare}, {"calls", tr->calls}}, nowEpoch);
    logWarn(g.cfg.name, "breaker " + from + " -> " + to);
  }

  // Tokens: settle the reservation against what the response says it used.
  const bool success = status >= 200 && status < 300;
  const std::int64_t used = !success ? -1 : r.streamTokens >= 0 ? r.streamTokens : usageTokens(r.body);
  if (used >= 0) {
    // What the reservation overstated comes back, unless the upstream stated its token count in this response:
    // its figure already holds whatever it charged (many charge max_tokens up front and refund nothing).
    bool tokensStated = false;
    for (const auto& sc : reading.scopes) tokensStated = tokensStated || sc.dimension == Dimension::Tokens;
    const bool overstated = used < p->tokenCost && !tokensStated;
    if (overstated) k.quota.refund(Dimension::Tokens, p->tokenCost - static_cast<double>(used), now);
    // The fleet's token lease gets back the same (a stale lease returns it to Redis): an upstream that stated
    // its count charged what it says, and the fleet may not spend it twice.
    if (overstated && shared_ && k.sharedScope >= 0)
      shared_->refundTokens(k.sharedScope, p->tokenCost - static_cast<double>(used));
    if (used < p->tokenCost) {  // the operator's tokens/min ceiling counts what was used
      g.rateCeiling.refundTokens(p->tokenCost - static_cast<double>(used), now);
      globalRate_.refundTokens(p->tokenCost - static_cast<double>(used), now);
    } else if (used > p->tokenCost) {  // both ways: requests that used more than reserved went 12x past it
      g.rateCeiling.chargeTokens(static_cast<double>(used) - p->tokenCost, now);
      globalRate_.chargeTokens(static_cast<double>(used) - p->tokenCost, now);
    }
    g.counters.tokensUsed += static_cast<std::uint64_t>(used);
    p->last.tokensUsed = used;
  } else if (success) {
    g.counters.tokensUsed += static_cast<std::uint64_t>(p->tokenCost);
    p->last.tokensUsed = static_cast<std::int64_t>(p->tokenCost);
  }

  p->last.status = status;
  p->last.latencyMs = latencyMs;
  p->last.error = kind;
  p->last.errorMessage = errText.empty() && status >= 400 ? "HTTP " + std::to_string(status) : errText;
  p->last.body = std::move(r.body);
  p->last.committed = r.committed;
  if (status != 0) p->last.headers = std::move(r.headers);
  else p->last.headers.clear();  // this attempt got no response: an earlier one's head is not the answer

  const double serverWaitS = rateLimited && verdict.kind == QuotaVerdict::Kind::Throttled ? verdict.waitS : -1;
  // Relayed bytes may have reached the client, and a sink's abort is the caller's: neither is sent again. Nor is
  // a POST whose 2xx broke off: the upstream did the work (an LLM API charged for it) and would do it twice.
  const bool brokenAnswer = transportFailed && !r.committed && r.headStatus >= 200 && r.headStatus < 300 &&
                            !resendableAfterAnswer(p->req, cfg_.retry);
  const bool final = permanent || r.committed || kind == ErrorKind::Cancelled || brokenAnswer;
  RetryDecision d =
      final ? RetryDecision{kind == ErrorKind::None ? RetryAction::Done : RetryAction::Fail, 0,
                            r.committed    ? "not retried: the answer had begun"
                            : brokenAnswer ? "the upstream answered HTTP " + std::to_string(r.headStatus) +
                                                 " and its body broke off; not sent again, since the upstream may "
                                                 "have done the work (and charged for it): an Idempotency-Key "
                                                 "header or retry.resend_broken_answers allows it"
                                           : "not retried"}
            : retry_.decide(p->attempts, status, kind, rateLimited, exhausted, budget_, serverWaitS);
  // A wait that ends past the request's deadline is not waited: held where no deadline sweep sees it, the
  // request was shed when it ended (a gateway client whose timeout set a 0.5 s deadline got its 429 after a 3 s
  // Retry-After, past its own timeout). It fails now with the upstream's own answer, which says the wait.
  const bool backoff = d.action == RetryAction::RetryAfterBackoff;
  const double waitS = backoff ? d.delayS : d.action == RetryAction::RetryAfterQuota ? floorS : -1;
  if (waitS >= 0 && addSaturating(now, fromSeconds(waitS)) > p->deadline) {
    if (backoff) budget_.refund();  // spent by decide() for a retry never sent
    char why[200];
    std::snprintf(why, sizeof why, "not retried: %s of %.1f s ends %.1f s after this request's deadline (%s)",
                  backoff ? "the retry's backoff" : "the upstream's Retry-After", waitS,
                  toSeconds(addSaturating(now, fromSeconds(waitS)) - p->deadline),
                  std::string(tierName(p->req.tier)).c_str());
    d = RetryDecision{RetryAction::Fail, 0, why};
  }
  switch (d.action) {
    case RetryAction::Done:
      ++g.counters.completed;
      finish(std::move(p), now);
      break;
    case RetryAction::RetryAfterQuota: {
      p->queuedAt = now;
      if (floorS >= 0) {  // not before the upstream's Retry-After; then at the learnt rate like the rest
        pushDelayed(Delayed{addSaturating(now, fromSeconds(floorS)), &g, std::move(p)});
        break;
      }
      // Back to the front of its tier: dispatch holds it until the quota picture allows it.
      const Tier tier = p->req.tier;  // read before the move: argument order is unspecified
      const TimePoint deadline = p->deadline;
      if (auto w = where_.find(p->handle); p->handle && w != where_.end()) w->second.ticket = 0;
      g.queues.pushFront(tier, std::move(p), deadline);
      break;
    }
    case RetryAction::RetryAfterBackoff:
      p->queuedAt = now;
      pushDelayed(Delayed{addSaturating(now, fromSeconds(d.delayS)), &g, std::move(p)});
      break;
    case RetryAction::Fail:
      ++g.counters.failed;
      failureHint(*p, g, k, verdict, rateLimited || serverWait, exhausted, now);
      if (permanent) p->last.retryUseless = true;
      if (exhausted) p->last.error = ErrorKind::QuotaExhausted;
      p->last.errorMessage = (p->last.errorMessage.empty() ? "" : p->last.errorMessage + ": ") + d.reason;
      finish(std::move(p), now);
      break;
  }
}

void Scheduler::failureHint(Pending& p, GroupState& g, KeyState& k, const QuotaVerdict& verdict, bool waitSaid,
                            bool exhausted, TimePoint now) {
  Result& r = p.last;
  if (exhausted) {
    r.shed = ShedReason::QuotaExhausted;  // answered without another send, like a queued request would be
    r.retryUseless = true;
  }
  if (waitSaid && (verdict.kind == QuotaVerdict::Kind::Throttled || verdict.kind == QuotaVerdict::Kind::Exhausted)) {
    r.retryAfterS = verdict.waitS;  // the upstream's own Retry-After or reset
  } else if (waitSaid && k.quota.blockedUntil() > now) {
    r.retryAfterS = toSeconds(k.quota.blockedUntil() - now);  // a bare 429: the backoff the key is held for
  } else if (g.breaker.state() == BreakerState::Open && g.breaker.openUntil() > now) {
    r.retryAfterS = toSeconds(g.breaker.openUntil() - now);
  }
  // The same request would fail the same way: its own fault (too large, malformed), or a 4xx other than
  // the ones a client may retry (408 timeout, 409 conflict, 429 and GitHub's rate-limit 403).
  const int status = r.status;
  if (r.error == ErrorKind::Config || (status >= 400 && status < 500 && !waitSaid && status != 408 && status != 409 &&
                                        status != http::kTooManyRequests))
    r.retryUseless = true;
}

void Scheduler::fillSnapshot(EngineSnapshot& s, TimePoint now) {
  s.globalInFlight = globalInFlight_;
  s.globalConcurrencyLimit = globalLimit_;
  s.globalRateCeiling = globalRate_.config();
  s.tierPaused = globalTierPaused_;
  s.shared = sharedView_;
  if (shared_) {
    s.shared.enabled = true;
    s.shared.mode = std::string(sharedModeName(shared_->mode()));
    s.shared.live = shared_->live();
    s.shared.leaseWaits = shared_->leaseWaits();
    std::tie(s.shared.redisDelayP50Ms, s.shared.redisDelayP99Ms) = shared_->redisDelayMs();
    s.shared.redisDelayMaxMs = shared_->redisDelayMaxMs();
    s.shared.redisDelayed = shared_->redisDelayed();
  }
  s.groups.reserve(groups_.size());
  for (auto& gp : groups_) s.groups.push_back(gp->snapshot(now, globalTierPaused_));
}

void Scheduler::shareQuota(SharedHooks hooks) {
  sharedHooks_ = std::move(hooks);
  shared_ = std::make_unique<SharedLedger>(cfg_.sharedQuota, sharedHooks_.ask);
  sharedView_.instance = sharedHooks_.instance;
  for (auto& g : groups_) {
    if (!cfg_.sharedQuota.shares(g->cfg.name)) continue;
    // Clients' own keys (pass-through) are theirs, not the fleet's: only configured keys share.
    for (auto& k : g->keys)
      if (!k.own) k.sharedScope = shared_->addScope(g->cfg.name, k.fingerprint);
  }
}

void Scheduler::sharedGrant(const LeaseGrant& g, TimePoint now) {
  if (shared_) shared_->onGrant(g, now);
}

void Scheduler::sharedMode(SharedMode m, int live, const std::string& why, TimePoint now, EpochMs nowEpoch) {
  if (!shared_) return;
  const SharedMode before = shared_->mode();
  shared_->setMode(m, live, now);
  sharedView_.why = m == SharedMode::Fallback ? why : std::string();
  if (before == m) return;
  const std::string mode(sharedModeName(m));
  std::string text = m == SharedMode::Fallback
                         ? "shared quota: Redis unreachable or refusing, this instance takes 1/" +
                               std::to_string(shared_->live()) + " of each shared limit (" + why + ")"
                         : "shared quota: shared with the fleet through Redis";
  emit(EventKind::SharedQuota, m == SharedMode::Fallback ? Severity::Warn : Severity::Info, "", std::move(text),
       {{"mode", mode}, {"live", shared_->live()}, {"instance", sharedHooks_.instance},
        {"why", sharedView_.why}},  // a wrong password is not an outage: the dashboard says which
       nowEpoch);
}

void Scheduler::sharedHold(const std::string& group, const std::string& fp, double waitS, const std::string& from,
                           const std::string& reason, TimePoint now, EpochMs nowEpoch) {
  GroupState* g = findGroup(group);
  if (!g || waitS <= 0) return;
  for (auto& k : g->keys) {
    if (k.sharedScope < 0 || k.fingerprint != fp) continue;
    const auto until = nowEpoch + static_cast<EpochMs>(waitS * 1000);
    if (k.quota.blockedUntil() >= now + fromSeconds(waitS)) return;  // already held as long
    k.quota.blockUntil(now + fromSeconds(std::min(waitS, cfg_.retry.maxServerWaitS)), until,
                       WaitReason{.code = WaitCode::FleetHold, .untilMs = until, .note = reason, .from = from}, false);
    std::string text = "key " + fp + " held until " + formatClock(until) + ": " + reason + " on instance " + from;
    logInfo(group, text);
    emit(EventKind::SharedQuota, Severity::Info, group, std::move(text),
         {{"key", fp}, {"wait_s", waitS}, {"from", from}, {"reason", reason}}, nowEpoch);
  }
}

void Scheduler::sharedFleet(std::vector<FleetMemberSnapshot> members) {
  for (auto& m : members) m.self = m.instance == sharedHooks_.instance;
  if (shared_ && !members.empty()) shared_->setLive(static_cast<int>(members.size()));
  sharedView_.members = std::move(members);
}

void Scheduler::publishAction(nlohmann::json a, const std::string& actor) {
  if (!shared_ || applyingFleetAction_ || !cfg_.sharedQuota.fleetActions || !sharedHooks_.action) return;
  a["actor"] = actor;
  // The groups "all groups" means here: an instance of another config on the same namespace applies an action
  // for all groups only to the groups both have.
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : cfg_.groups) groups.push_back(g.name);
  a["groups"] = std::move(groups);
  sharedHooks_.action(a);
}

void Scheduler::sharedAction(const nlohmann::json& a, TimePoint now, EpochMs nowEpoch) {
  if (!cfg_.sharedQuota.fleetActions) return;
  // Anyone who can publish on the namespace's channel reaches this: a field of the wrong type is refused here,
  // not thrown on the engine thread.
  auto text = [&](const char* k, const std::string& fallback) { return fieldString(a, k, fallback); };
  auto number = [&](const char* k, double fallback) {
    const double v = fieldNumber(a, k, fallback);
    return std::isfinite(v) ? std::clamp(v, -1e9, 1e9) : fallback;  // cast to int below
  };
  auto flag = [&](const char* k) { return fieldBool(a, k, false); };
  const std::string from = printable(text("instance", "?"));  // quoted in the log and the audit trail
  const std::string action = text("action", "");
  const std::string actor = printable(text("actor", "operator")) + " on " + from;
  const std::string group = text("group", "");
  if (!group.empty() && group != "*" && !findGroup(group)) return;  // a group this instance does not have
  // Two configs on one namespace share their keys' quota, not all their controls: "pause P2 on all groups" from
  // another deployment paused every group here (and `serve` has no control to resume it). An action for all
  // groups applies to the groups the sender has too (all of them for an instance of the same config).
  std::vector<std::string> common;
  bool all = true;
  if (const auto it = a.find("groups"); group.empty() && it != a.end() && it->is_array()) {
    for (const auto& g : cfg_.groups)
      for (const auto& theirs : *it)
        if (theirs.is_string() && theirs.get<std::string>() == g.name) {
          common.push_back(g.name);  // once, however often the list names it
          break;
        }
    all = common.size() == cfg_.groups.size();
    if (common.empty()) {
      if (foreignInstances_.size() < 64 &&  // bounded: anyone may publish under any name
          std::find(foreignInstances_.begin(), foreignInstances_.end(), from) == foreignInstances_.end()) {
        foreignInstances_.push_back(from);
        logWarn("shared-quota", "operator actions of instance " + from + " name none of this config's groups and are " +
                                    "not applied: two configs share shared_quota.namespace \"" + cfg_.sharedQuota.ns +
                                    "\"; give each its own unless they spend the same keys");
      }
      return;
    }
  }
  applyingFleetAction_ = true;
  if (action == "pause_tier") {
    const int t = static_cast<int>(number("tier", -1));
    if (t >= 0 && t < kTierCount) {
      if (all) setTierPaused(static_cast<Tier>(t), flag("paused"), group, actor, nowEpoch);
      else
        for (const auto& g : common) setTierPaused(static_cast<Tier>(t), flag("paused"), g, actor, nowEpoch);
    }
  } else if (action == "pause_group") {
    setGroupPaused(group, flag("paused"), actor, nowEpoch);
  } else if (action == "group_concurrency") {
    setGroupConcurrency(group, static_cast<int>(number("limit", 1)), actor, nowEpoch);
  } else if (action == "global_concurrency" && all) {  // another config's total is not ours (a sender with all
                                                         // our groups, or an older one that names none, is ours)
    setGlobalConcurrency(static_cast<int>(number("limit", 1)), actor, nowEpoch);
  } else if (action == "drain_group") {
    drainGroup(group, actor, now, nowEpoch);
  } else if (action == "rate_ceiling" && (all || !group.empty())) {  // engine-wide: as global concurrency
    RateCeilingConfig c;
    c.requestsPerS = number("requests_per_s", 0.0);
    c.tokensPerMin = number("tokens_per_min", 0.0);
    setRateCeiling(group, c, actor, now, nowEpoch);
  }
  applyingFleetAction_ = false;
}

}  // namespace tg
