// The scheduler's live state of one group and its keys (engine thread only).
#pragma once

#include "adaptive_concurrency.h"
#include "burst_tracker.h"
#include "circuit_breaker.h"
#include "dispatch.h"
#include "engine_config.h"
#include "latency_window.h"
#include "pending.h"
#include "quota_tracker.h"
#include "rate_ceiling.h"
#include "snapshot.h"
#include "tier_queues.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tg {

struct KeyState {
  KeyConfig cfg;
  std::string fingerprint;
  QuotaTracker quota;
  int inFlight = 0;
  double inFlightTokens = 0;  // tokens reserved by the requests in flight on this key
  std::string authLine;  // "Authorization: Bearer ..." (never logged)
  int sharedScope = -1;  // its scope in the fleet's shared quota (SharedLedger), -1 = not shared
  // A client's own key (pass-through): no auth line of ours; chosen only for requests carrying that key.
  bool own = false;
  int users = 0;          // requests holding this slot (queued, backing off or in flight)
  TimePoint lastUsed{};   // an own slot with no users may be taken over by another key, oldest first
  // Header lines per tier for requests without headers of their own (the common case): built once, so
  // the transport can build its native list once too.
  std::array<std::shared_ptr<const std::vector<std::string>>, kTierCount> headerCache{};
};

// Why a tier of a group could not send at the last dispatch: what a request shed from it is told.
struct TierWait {
  enum class Cause : std::uint8_t { None, Paused, Breaker, Quota };
  Cause cause = Cause::None;            // None: nothing, or only concurrency (no time is known for that)
  TimePoint until = TimePoint::max();   // when sending may resume; max = unknown
  bool exhausted = false;               // quota beyond the cap (a daily quota)
};

struct GroupState {
  GroupConfig cfg;
  std::vector<KeyState> keys;
  TierQueues<PendingPtr> queues;
  CircuitBreaker breaker;
  AdaptiveConcurrency concurrency;
  RateCeiling rateCeiling;
  int inFlight = 0;
  std::vector<Ticket> sentThisRound;  // by the dispatch under way
  bool paused = false;
  bool draining = false;
  std::array<bool, kTierCount> tierPaused{};
  GroupCounters counters;
  LatencyWindow latency;
  BurstTracker bursts;
  WaitReason wait;  // as of the last dispatch
  std::array<TierWait, kTierCount> tierWait{};  // as of the last dispatch
  int shedSinceEvent = 0;
  std::string shedReason;
  ShedReason shedCause = ShedReason::None;  // the last shed's, for the event's detail
  std::optional<TimePoint> lastShedEvent;   // sheds in a row are one event per kShedEventEvery
  // One error line a second for each class of failure (5xx and network; 4xx and requests the upstream will never
  // take), the rest counted and told by the sweep: a flood of 401s no longer buries the 500s.
  struct ErrorLog {
    const char* what;  // the class, as the "+N suppressed" line names it
    TimePoint last{};
    int suppressed = 0;
  };
  ErrorLog serverErrors{"5xx, network"}, clientErrors{"4xx, refused requests"};
  // Origins of base_url and allowed_hosts: an absolute request URL must name one of them, since the
  // group's keys go with every request.
  std::vector<std::string> origins;
  std::string configProblem;  // non-empty: the group's own config cannot be sent safely; requests fail with it
  // Slots of clients' own keys (pass-through), by the key itself (memory only); at most kMaxOwnKeys.
  static constexpr int kMaxOwnKeys = 256;
  std::unordered_map<std::string, int> ownKeySlots;

  GroupState(const GroupConfig& c, const EngineConfig& ec, TimePoint now)
      : cfg(c),
        queues({ec.tiers[0].capacity, ec.tiers[1].capacity, ec.tiers[2].capacity}),
        breaker(c.breaker),
        concurrency(c.concurrency, c.minConcurrency, c.adaptive, now),
        rateCeiling(c.rateCeiling, now) {
    if (ec.timeScale != 1) concurrency.setTimeScale(ec.timeScale);
  }

  // Joins a path to base_url; returns why the request may not go out, or empty. An absolute URL must name
  // one of `origins`; method and headers must each make exactly one well-formed line.
  std::string checkRequest(Request& r) const;
  // The header lines of a send of `r` with key `key` (auth, tier and group headers included).
  std::shared_ptr<const std::vector<std::string>> headerLines(int key, const Request& r, const EngineConfig& ec) const;
  // The group's part of a snapshot; `globalTierPaused` adds the engine-wide tier switches.
  GroupSnapshot snapshot(TimePoint now, const std::array<bool, kTierCount>& globalTierPaused);
};

}  // namespace tg
