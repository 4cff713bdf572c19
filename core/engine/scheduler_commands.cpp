// The scheduler's commands from outside the loop's own work: operator actions (concurrency, pauses, drain)
// and cancellation (the engine stopping, a caller giving up on one request).
#include "scheduler.h"

#include "group_state.h"
#include "json_text.h"
#include "log.h"

#include <algorithm>

namespace tg {
namespace {
constexpr const char* kScope = "engine";
}  // namespace

void Scheduler::cancelAll(const std::string& why, TimePoint now) {
  for (auto& gp : groups_) {
    gp->queues.clear([&](PendingPtr p) {
      p->last.error = ErrorKind::Cancelled;
      p->last.errorMessage = why;
      p->last.shed = ShedReason::Draining;
      finish(std::move(p), now);
    });
  }
  while (!delayed_.empty()) {
    PendingPtr p = popDelayed();
    p->last.error = ErrorKind::Cancelled;
    p->last.errorMessage = why;
    p->last.shed = ShedReason::Draining;
    finish(std::move(p), now);
  }
}

void Scheduler::cancelInFlight(Ticket t, const std::string& why, TimePoint now) {
  auto it = inFlight_.find(t);
  if (it == inFlight_.end()) return;
  InFlight f = std::move(it->second);
  inFlight_.erase(it);
  KeyState& k = f.group->keys[static_cast<std::size_t>(f.key)];
  --k.inFlight;
  k.inFlightTokens = std::max(0.0, k.inFlightTokens - f.pending->tokenCost);  // as complete() releases them
  k.quota.settleProbe(f.quotaSend, QuotaTracker::ProbeAnswer::Neither, now);  // a cancelled probe proves nothing
  --f.group->inFlight;
  --globalInFlight_;
  f.group->breaker.onAbandoned();
  f.pending->last.error = ErrorKind::Cancelled;
  f.pending->last.errorMessage = why;
  finish(std::move(f.pending), now);
}

bool Scheduler::cancel(RequestHandle h, const std::string& why, TimePoint now,
                       const std::function<void(Ticket)>& abortTransfer) {
  auto it = where_.find(h);
  if (h == 0 || it == where_.end()) return false;
  const Where w = it->second;
  if (w.ticket) {
    abortTransfer(w.ticket);
    cancelInFlight(w.ticket, why, now);
    return true;
  }
  PendingPtr found;
  if (w.delayed) {
    auto d = std::find_if(delayed_.begin(), delayed_.end(), [h](const Delayed& e) { return e.pending->handle == h; });
    if (d != delayed_.end()) {
      found = std::move(d->pending);
      delayed_.erase(d);
      std::make_heap(delayed_.begin(), delayed_.end(), std::greater<>{});
    }
  } else {
    w.group->queues.removeIf([h](const PendingPtr& p) { return p->handle == h; },
                             [&](PendingPtr p) { found = std::move(p); });
  }
  if (!found) {  // the map and the queues disagree: a bug, but the caller's cancel must not crash the loop
    logError(kScope, "cancel: request " + std::to_string(h) + " is not where the scheduler put it");
    where_.erase(it);
    return false;
  }
  found->waitMs += toSeconds(now - found->queuedAt) * 1000.0;
  found->last.error = ErrorKind::Cancelled;
  found->last.errorMessage = why;
  finish(std::move(found), now);
  return true;
}

Ticket Scheduler::ticketOf(RequestHandle h) const {
  auto it = where_.find(h);
  return it == where_.end() ? 0 : it->second.ticket;
}

void Scheduler::operatorAction(const std::string& action, const std::string& target, nlohmann::json before,
                               nlohmann::json after, const std::string& actor, EpochMs nowEpoch) {
  std::string msg = actor + ": " + action + " " + target + " " + dumpJson(before) + " -> " + dumpJson(after);
  logInfo("operator", msg);
  const std::string group = target.find('*') == 0 ? std::string() : target.substr(0, target.find('/'));
  emit(EventKind::OperatorAction, Severity::Info, group, msg,
       {{"action", action}, {"target", target}, {"before", before}, {"after", after}, {"actor", actor},
        {"instance", cfg_.name}, {"ok", true}},
       nowEpoch);
}

void Scheduler::reject(const std::string& action, const std::string& group, const std::string& actor,
                       EpochMs nowEpoch) {
  emit(EventKind::OperatorAction, Severity::Warn, group, action + " refused: unknown group \"" + group + "\"",
       {{"action", action}, {"target", group}, {"actor", actor}, {"instance", cfg_.name}, {"ok", false}}, nowEpoch);
}

void Scheduler::setGlobalConcurrency(int n, const std::string& actor, EpochMs nowEpoch) {
  const int before = globalLimit_;
  globalLimit_ = std::max(1, n);
  operatorAction("set_concurrency", "*", before, globalLimit_, actor, nowEpoch);
  publishAction({{"action", "global_concurrency"}, {"limit", globalLimit_}}, actor);
}

void Scheduler::setGroupConcurrency(const std::string& group, int n, const std::string& actor, EpochMs nowEpoch) {
  GroupState* g = findGroup(group);
  if (!g) return reject("set_concurrency", group, actor, nowEpoch);
  const int before = g->concurrency.ceiling();
  g->concurrency.setCeiling(std::max(1, n));
  operatorAction("set_concurrency", group, before, g->concurrency.ceiling(), actor, nowEpoch);
  publishAction({{"action", "group_concurrency"}, {"group", group}, {"limit", g->concurrency.ceiling()}}, actor);
}

void Scheduler::setRateCeiling(const std::string& group, const RateCeilingConfig& c, const std::string& actor,
                               TimePoint now, EpochMs nowEpoch) {
  const auto asJson = [](const RateCeilingConfig& r) {
    return nlohmann::json{{"requests_per_s", r.requestsPerS}, {"tokens_per_min", r.tokensPerMin}};
  };
  RateCeiling* ceiling = &globalRate_;
  if (!group.empty()) {
    GroupState* g = findGroup(group);
    if (!g) return reject("set_rate_ceiling", group, actor, nowEpoch);
    ceiling = &g->rateCeiling;
  }
  const RateCeilingConfig before = ceiling->config();
  RateCeilingConfig after = c;
  after.requestsPerS = std::max(0.0, c.requestsPerS);
  after.tokensPerMin = std::max(0.0, c.tokensPerMin);
  ceiling->set(after, now);
  operatorAction("set_rate_ceiling", group.empty() ? "*" : group, asJson(before), asJson(after), actor, nowEpoch);
  publishAction({{"action", "rate_ceiling"}, {"group", group}, {"requests_per_s", after.requestsPerS},
                 {"tokens_per_min", after.tokensPerMin}},
                actor);
}

void Scheduler::setTierPaused(Tier t, bool paused, const std::string& group, const std::string& actor,
                              EpochMs nowEpoch) {
  const auto i = static_cast<std::size_t>(t);
  const std::string action = paused ? "pause_tier" : "resume_tier";
  if (group.empty()) {
    const bool before = globalTierPaused_[i];
    globalTierPaused_[i] = paused;
    operatorAction(action, std::string("*/") + std::string(tierName(t)), before, paused, actor, nowEpoch);
    publishAction({{"action", "pause_tier"}, {"tier", static_cast<int>(t)}, {"paused", paused}}, actor);
    return;
  }
  GroupState* g = findGroup(group);
  if (!g) return reject(action, group, actor, nowEpoch);
  const bool before = g->tierPaused[i];
  g->tierPaused[i] = paused;
  operatorAction(action, group + "/" + std::string(tierName(t)), before, paused, actor, nowEpoch);
  publishAction({{"action", "pause_tier"}, {"group", group}, {"tier", static_cast<int>(t)}, {"paused", paused}}, actor);
}

void Scheduler::setGroupPaused(const std::string& group, bool paused, const std::string& actor, EpochMs nowEpoch) {
  GroupState* g = findGroup(group);
  const std::string action = paused ? "pause_group" : "resume_group";
  if (!g) return reject(action, group, actor, nowEpoch);
  const bool before = g->paused;
  g->paused = paused;
  if (!paused) g->draining = false;
  operatorAction(action, group, before, paused, actor, nowEpoch);
  publishAction({{"action", "pause_group"}, {"group", group}, {"paused", paused}}, actor);
}

void Scheduler::drainGroup(const std::string& group, const std::string& actor, TimePoint now, EpochMs nowEpoch) {
  GroupState* g = findGroup(group);
  if (!g) return reject("drain", group, actor, nowEpoch);
  const int queued = g->queues.total();
  g->queues.clear([&](PendingPtr p) {
    p->last.error = ErrorKind::Cancelled;
    p->last.errorMessage = "drained by " + actor;
    p->last.shed = ShedReason::Draining;
    p->last.retryUseless = true;  // until an operator resumes the group
    countShed(*g, ShedReason::Draining);
    finish(std::move(p), now);
  });
  operatorAction("drain", group, queued, 0, actor, nowEpoch);
  publishAction({{"action", "drain_group"}, {"group", group}}, actor);
}

}  // namespace tg
