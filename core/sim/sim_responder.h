// The simulator's behaviour without the sockets: maps a parsed request to a group and key, applies the
// schedule (errors, resets, outage), charges the limiters, writes the dialect's headers, and keeps the
// statistics. SimServer feeds it requests and tells it when replies leave.
//
// Not thread-safe: SimServer guards it with one mutex (the loop thread holds it per request; stats() and
// the control methods hold it briefly).
#pragma once

#include "http_request_parser.h"
#include "http_response_writer.h"
#include "rate_limit_header_writer.h"
#include "sim_config.h"
#include "sim_limiter.h"
#include "sim_stream_builder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace tg {

struct SimReply {
  std::string bytes;             // serialized response; empty when resetConnection
  double delayS = 0;             // simulated latency before it is sent
  bool resetConnection = false;  // close without a response
  bool closeAfter = false;       // "Connection: close"
  bool counted = false;          // a simulated API request (not /__sim/): in flight until sent or dropped
  int group = -1;
  std::string keyId;             // key fingerprint
  double announcedS = 0;         // on a 429: wait the client was told (from decidedAt)
  TimePoint decidedAt{};
  int tierSlot = 3;              // P0, P1, P2, none
  bool holdsSlot = false;        // holds one of its group's max_concurrent slots until sent or dropped
  // A streamed reply: `bytes` is the head, these follow it (offsets from when the head is written).
  std::vector<SimStreamStep> stream;
  bool streamed() const { return !stream.empty(); }
};

class SimResponder {
 public:
  SimResponder(SimConfig config, TimePoint start);  // start: t = 0 of the schedule and the history

  SimReply handle(const HttpRequest& req, TimePoint now, double wallNowS);
  // A request the parser refused: answered with `status`, then the connection closes.
  SimReply protocolError(int status, const std::string& message, double wallNowS);
  void onSent(const SimReply& reply, TimePoint now);  // the reply left (or the reset happened)
  void onDropped(const SimReply& reply);              // the connection closed before it left
  // A streamed reply's head was written; it ends with onSent (the last event left) or, when the connection
  // closes first (the client went away or stopped reading), onStreamAborted and onDropped.
  void onStreamStarted(const SimReply& reply);
  void onStreamAborted(const SimReply& reply);

  // Due schedule entries are applied; returns when the next one is due (TimePoint::max() if none).
  TimePoint runSchedule(TimePoint now);
  // Throws std::invalid_argument for an unknown group.
  void apply(const SimAction& action, TimePoint now);
  void scaleQuota(const std::string& group, double factor, TimePoint now);
  void setLimit(const std::string& group, double limitPerWindow, TimePoint now);

  nlohmann::json stats(TimePoint now) const;
  void resetStats(TimePoint now);

 private:
  struct Counters {
    std::uint64_t requests = 0, ok = 0, r429 = 0, r5xx = 0, other4xx = 0, resets = 0, tokens = 0, early = 0;
    std::uint64_t streamsStarted = 0, streamsCompleted = 0, streamsAborted = 0;
    nlohmann::json toJson() const;
  };
  static constexpr int kHistoryS = 120;
  struct History {
    struct Second {
      std::int64_t s = -1;
      std::uint64_t ok = 0, r429 = 0;
    };
    std::array<Second, kHistoryS> ring{};
    Second& at(std::int64_t s);
    nlohmann::json toJson(std::int64_t nowS) const;
  };
  struct Usage {  // counts of one group, key or tier
    Counters c;
    int inFlight = 0, maxInFlight = 0;
  };
  struct Quota {
    std::unique_ptr<SimLimiter> requests, tokens;
  };
  struct KeyState {
    Counters c;
    TimePoint earlyFrom{}, earlyUntil{};  // a 429 told this key to stay away during [from, until)
  };
  static constexpr int kTierSlots = 4;  // P0, P1, P2, none
  struct Group {
    std::string name;
    SimGroupConfig cfg;   // cfg.limit is the base the scale applies to
    double scale = 1;
    std::unordered_map<std::string, Quota> quotas;  // by key fingerprint ("" when shared)
    std::map<std::string, KeyState> keys;
    Usage usage;
    std::array<Counters, kTierSlots> tiers{};
    History history;
    int admitted = 0;  // accepted requests in flight, for max_concurrent
    bool limited() const { return cfg.limit > 0; }
    // Scaled, yet never under one a window (scale_quota 0.01 of 20): a request is whole or not at all.
    double requestLimit() const { return std::max(1.0, cfg.limit * scale); }
    double tokenLimit() const { return std::max(1.0, cfg.tokensPerWindow * scale); }
    // max_concurrent scaled as the limits are (scale_quota), never under one; 0 = no concurrency limit.
    int concurrencyLimit() const {
      return cfg.maxConcurrent > 0 ? std::max(1, static_cast<int>(std::lround(cfg.maxConcurrent * scale))) : 0;
    }
  };
  struct Effect {
    SimAction action;
    TimePoint until;
  };

  int groupFor(const HttpRequest& req) const;
  Quota& quotaFor(Group& g, const std::string& keyId, TimePoint now);
  std::vector<int> groupsMatching(const std::string& group) const;
  SimReply handleControl(const HttpRequest& req, TimePoint now, double wallNowS);
  SimReply jsonReply(int status, const nlohmann::json& body, bool close, double wallNowS);
  double sampleLatencyS();
  bool chance(double share);
  void count(Group& g, KeyState& k, int tierSlot, std::uint64_t Counters::*field, TimePoint now);
  void retire(const SimReply& reply);
  void countStream(const SimReply& reply, std::uint64_t Counters::*field);
  void countPath(std::string_view path);

  SimConfig config_;
  TimePoint start_;
  RateLimitHeaderWriter headers_;
  std::vector<Group> groups_;
  std::map<std::string, int> groupIndex_;
  Usage total_;
  History totalHistory_;
  std::array<Counters, kTierSlots> totalTiers_{};
  std::map<std::string, std::uint64_t, std::less<>> paths_;  // API requests received per path (no query)
  std::size_t nextSchedule_ = 0;
  std::vector<Effect> effects_;
  std::mt19937_64 rng_;
  std::uint64_t nextId_ = 1;
  HttpResponseWriter writer_;
  double lognormalMu_ = 0, lognormalSigma_ = 0;
};

}  // namespace tg
