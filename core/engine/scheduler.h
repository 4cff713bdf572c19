// The engine's decisions, without curl and without a clock: groups, keys, tier queues, admission, key
// choice, and what an outcome does to the quota picture, the breaker and the retry budget. Every method
// takes the time it acts at (`now` steady, `nowEpoch` wall), so it is driven by hand in tests.
#pragma once

#include "dispatch.h"
#include "engine_config.h"
#include "engine_listeners.h"
#include "pending.h"
#include "quota_tracker.h"
#include "rate_ceiling.h"
#include "retry_policy.h"
#include "shared_ledger.h"
#include "snapshot.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tg {

struct GroupState;
struct KeyState;
struct QuotaVerdict;
struct TierWait;

// Not thread-safe: the engine thread owns it. Callbacks (request results, listeners) run inside its calls.
class Scheduler {
 public:
  // `listeners` must outlive the scheduler. `retrySeed` fixes the backoff jitter (tests).
  Scheduler(EngineConfig cfg, const EngineListeners& listeners, TimePoint now,
            std::optional<unsigned> retrySeed = std::nullopt);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  const EngineConfig& config() const { return cfg_; }  // immutable: safe from any thread

  // Takes a submitted request into its group's tier queue, or answers it at once (unknown group, a URL or
  // header that may not go out, draining, queue full).
  void admit(PendingPtr p, TimePoint now);

  // Starts what may go now through `send`, in tier order across groups. A send that fails fails its request.
  // Returns when dispatch should next be tried (TimePoint::max(): on a completion or command).
  using SendFn = std::function<std::optional<SendError>(const Dispatch&)>;
  TimePoint dispatch(TimePoint now, EpochMs nowEpoch, const SendFn& send);

  // What came back for a ticket: quota, breaker, counters, then done, retried or failed.
  void complete(Response r, TimePoint now, EpochMs nowEpoch);
  // libcurl's own resend of an in-flight ticket: allowed while attempts and retry budget last, and counted (the
  // rate ceilings are charged, borrowing if they must).
  bool allowResend(Ticket t, TimePoint now);

  // Sheds told later (while a group keeps shedding, one event per 10 s): told now (the engine is stopping).
  void flushShedEvents(EpochMs nowEpoch);
  // Sheds requests queued past their deadline and reports sheds, ended 429 bursts and suppressed errors.
  void sweep(TimePoint now, EpochMs nowEpoch);
  // Moves backed-off retries whose time has come to the front of their tier.
  void releaseDelayed(TimePoint now);
  TimePoint nextDelayed() const;  // TimePoint::max() when none

  // Whether the engine may hold this answer back until the answers to requests its group sent before it are
  // read (at most a moment): a 429 stating no quota, of a group whose in-flight evidence is thin
  // (AdaptiveConcurrency::wantsEarlierAnswers), while such earlier requests, not held themselves (`held`), are
  // unanswered. An upstream that holds 4 in flight and refuses the rest answers a burst of 32 together, and
  // a poll may read refusals before the 4 acceptances that show the limit is one of concurrency.
  bool answerWaitsForEarlier(const Response& r, TimePoint now, EpochMs nowEpoch,
                             const std::function<bool(Ticket)>& held) const;
  // Answers everything queued or backing off with Cancelled (`why`).
  void cancelAll(const std::string& why, TimePoint now);
  // An orderly stop's first step: dispatch sends nothing more (retries included); what is in flight finishes.
  // No operator action and nothing told to the fleet: only this process is stopping.
  // Sends nothing more; with `cancelWhy`, what waits now or comes to wait later is cancelled with it.
  void holdSends(std::string cancelWhy = {}) {
    holdSends_ = true;
    holdCancelWhy_ = std::move(cancelWhy);
  }
  int inFlight() const { return globalInFlight_; }
  // Answers an in-flight ticket the transport aborted with Cancelled (`why`).
  void cancelInFlight(Ticket t, const std::string& why, TimePoint now);
  // A caller gave up on one request (Request handle from Pending::handle). Queued or backing off: removed
  // and answered Cancelled (`why`), never sent. In flight: abortTransfer(ticket) runs first (so no Response
  // comes for it), then it is answered the same way. Unknown or finished handles: nothing happens.
  // Returns whether the request was answered.
  bool cancel(RequestHandle h, const std::string& why, TimePoint now,
              const std::function<void(Ticket)>& abortTransfer);
  // The ticket of the request's transfer while it is in flight, else 0.
  Ticket ticketOf(RequestHandle h) const;

  // Fills the global and per-group parts of a snapshot.
  void fillSnapshot(EngineSnapshot& s, TimePoint now);
  std::size_t groupCount() const { return groups_.size(); }

  // --- Shared quota (config shared_quota): the fleet's admission through Redis (core/shared) ---
  // What the scheduler tells the Redis side. Set once, before the first dispatch; absent = not shared.
  struct SharedHooks {
    SharedLedger::AskFn ask;  // a lease ask or give-back
    // The upstream's word on a key: hold it fleet-wide waitS; refusal = a refusal that stated no quota.
    std::function<void(const std::string& group, const std::string& fp, double waitS, const std::string& reason,
                       bool refusal)> word;
    std::function<void(const nlohmann::json& action)> action;  // an operator action for the whole fleet
    std::string instance;
  };
  void shareQuota(SharedHooks hooks);
  void sharedGrant(const LeaseGrant& g, TimePoint now);
  void sharedMode(SharedMode m, int live, const std::string& why, TimePoint now, EpochMs nowEpoch);
  // Another instance's word: hold (group, fingerprint) for waitS.
  void sharedHold(const std::string& group, const std::string& fp, double waitS, const std::string& from,
                  const std::string& reason, TimePoint now, EpochMs nowEpoch);
  // Another instance's operator action (published by publishAction): applied here, audited with its instance.
  void sharedAction(const nlohmann::json& a, TimePoint now, EpochMs nowEpoch);
  void sharedFleet(std::vector<FleetMemberSnapshot> members);

  // Operator commands, each recorded as an OperatorAction event (refused for an unknown group).
  void setGlobalConcurrency(int n, const std::string& actor, EpochMs nowEpoch);
  void setGroupConcurrency(const std::string& group, int n, const std::string& actor, EpochMs nowEpoch);
  // The rate ceiling of `group`, or of all groups together when `group` is empty (0 rates = none).
  void setRateCeiling(const std::string& group, const RateCeilingConfig& c, const std::string& actor, TimePoint now,
                      EpochMs nowEpoch);
  void setTierPaused(Tier t, bool paused, const std::string& group, const std::string& actor, EpochMs nowEpoch);
  void setGroupPaused(const std::string& group, bool paused, const std::string& actor, EpochMs nowEpoch);
  void drainGroup(const std::string& group, const std::string& actor, TimePoint now, EpochMs nowEpoch);

 private:
  struct InFlight {
    PendingPtr pending;
    GroupState* group = nullptr;
    int key = 0;
    TimePoint sentAt;
    int groupInFlightAtSend = 0;  // the group's other requests in flight when this one left
    QuotaTracker::SendId quotaSend = 0;  // its key's tracker's id for it (settleProbe)
    bool pressing = false;  // sent in a round of the group's sends that its concurrency limit ended
  };
  struct Delayed {
    TimePoint at;
    GroupState* group;
    PendingPtr pending;
    bool operator>(const Delayed& o) const { return at > o.at; }
  };
  // Where a request with a handle is, so cancel() finds it without a search through every queue.
  struct Where {
    GroupState* group = nullptr;
    Ticket ticket = 0;     // in flight with this ticket; 0 = queued or backing off
    bool delayed = false;  // backing off in delayed_
  };

  GroupState* findGroup(const std::string& name);
  // The slot of a client's own key in `g` (made, or taken over from the own key idle longest), held for one
  // more request; -1 when every own slot is busy.
  int takeOwnKeySlot(GroupState& g, const std::string& key, TimePoint now);
  // The key with the most headroom that quota lets send `p` now, or -1 with the shortest wait in `shortest`.
  int chooseKey(GroupState& g, Tier tier, const Pending& p, TimePoint now, EpochMs nowEpoch, QuotaWait& shortest);
  // When the front of a tier waits on its key's quota: the first request behind it (within a look-ahead) whose
  // key is another and can send now, as {position, key}; {-1, -1} when none. Only own keys make this differ.
  std::pair<int, int> nextOnAnotherKey(GroupState& g, Tier tier, TimePoint now, EpochMs nowEpoch);
  void start(GroupState& g, int key, PendingPtr p, TimePoint now, const SendFn& send);
  // How long the front of a tier must wait for the operator's rate ceilings (the group's and the global one);
  // zero when it may go. `reason` says which ceiling holds it.
  Duration rateCeilingWait(GroupState& g, const Pending& p, TimePoint now, WaitReason& reason);
  void emitSheds(GroupState& g, EpochMs nowEpoch);  // the group's sheds since its last RequestShed event
  // Answers a request unsent (ErrorKind::Shed) with its reason and retry hint, and counts it.
  void shed(GroupState& g, PendingPtr p, ShedReason reason, const std::string& why, TimePoint now);
  static void countShed(GroupState& g, ShedReason reason);
  // A request queued past its deadline: the reason is what its tier waited on.
  static ShedReason deadlineShedReason(const TierWait& w);
  // Fills a failed request's retry hint (retryAfterS, retryUseless, shed for an exhausted quota).
  // waitSaid: the response named a wait (a rate limit, or a 503 with Retry-After).
  static void failureHint(Pending& p, GroupState& g, KeyState& k, const QuotaVerdict& verdict, bool waitSaid,
                          bool exhausted, TimePoint now);
  // Every answer goes through here: forgets the request's handle, then answers the caller.
  void finish(PendingPtr p, TimePoint now);
  void pushDelayed(Delayed d);
  PendingPtr popDelayed();
  void emit(EventKind kind, Severity sev, const std::string& group, std::string message, nlohmann::json detail,
            EpochMs nowEpoch);
  void operatorAction(const std::string& action, const std::string& target, nlohmann::json before,
                      nlohmann::json after, const std::string& actor, EpochMs nowEpoch);
  void reject(const std::string& action, const std::string& group, const std::string& actor, EpochMs nowEpoch);

  EngineConfig cfg_;
  const EngineListeners& listeners_;
  RetryPolicy retry_;
  RetryBudget budget_;
  std::vector<std::unique_ptr<GroupState>> groups_;
  std::unordered_map<Ticket, InFlight> inFlight_;
  std::vector<Delayed> delayed_;  // a min-heap on `at` (std::push_heap with std::greater), so cancel can reach in
  std::unordered_map<RequestHandle, Where> where_;
  Ticket nextTicket_ = 1;
  // The fleet's quota (null when not shared) and what it was told last.
  std::unique_ptr<SharedLedger> shared_;
  SharedHooks sharedHooks_;
  SharedQuotaSnapshot sharedView_;
  bool applyingFleetAction_ = false;  // an action from another instance: not published again
  std::vector<std::string> foreignInstances_;  // whose actions named none of our groups (warned once each)
  void publishAction(nlohmann::json a, const std::string& actor);
  SharedHint sharedHint(const QuotaTracker& q, Dimension d) const;
  int globalLimit_ = 64;
  int globalInFlight_ = 0;
  bool holdSends_ = false;
  std::string holdCancelWhy_;
  RateCeiling globalRate_;
  std::array<bool, kTierCount> globalTierPaused_{};
  // Per tier, the group dispatch tries first: the one after the last that sent. In config order every round,
  // the first group took every token of a ceiling on all groups and the others sent nothing.
  std::array<std::size_t, kTierCount> firstGroup_{};
};

}  // namespace tg
