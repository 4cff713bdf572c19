// What the gateway shows on `GET /metrics`: the engine's latest snapshot (quota, queues, breakers, 429s,
// sheds) plus the gateway's own counts (requests per client/route/status, time waited in Tollgate), in
// Prometheus text format 0.0.4.
//
// Label values are config names (group, client, route prefix) and key fingerprints only: never a key or a
// token. As a second guard the rendered text goes through SecretRegistry::redact, so a secret that reached
// a label by mistake comes out as its fingerprint.
#pragma once

#include "snapshot.h"
#include "types.h"

#include <memory>
#include <string>

namespace tg::gateway {

class GatewayMetrics {
 public:
  GatewayMetrics();
  ~GatewayMetrics();
  GatewayMetrics(const GatewayMetrics&) = delete;
  GatewayMetrics& operator=(const GatewayMetrics&) = delete;

  // One answered gateway request. client = the configured client name or "anonymous"; route = the
  // configured route prefix ("-" when no route matched). Both must come from config, never from the
  // request line, or a scanner could grow one series per path. Thread-safe.
  void countRequest(const std::string& client, const std::string& route, int status);

  // Time a request waited in Tollgate before its first send (or until shed), per group and tier.
  // NaN or negative seconds count as 0. Thread-safe.
  void observeWait(const std::string& group, Tier tier, double seconds);

  // The upstream's time for a request's last attempt (its transfer), per group: latency in seconds, for alerts
  // on a slow upstream. NaN or negative count as 0. Thread-safe.
  void observeUpstream(const std::string& group, double seconds);

  // The whole /metrics body in Prometheus text format 0.0.4, from the engine's latest snapshot plus the
  // above. Unknown values (a quota the server never reported) are left out rather than written as NaN.
  // Thread-safe.
  std::string render(const EngineSnapshot& s, int openConnections) const;

  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // The wait-time histogram's upper bounds in seconds (a +Inf bucket follows).
  // Up to an hour: tiers wait that long (P2 600 s in the demo, 3600 s in examples/gateway-openai.json), and
  // every wait over 60 s fell in +Inf, so "p95 wait over 5 min" could not be asked.
  static constexpr double kWaitBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                            5,     10,   30,    60,   120, 300,  600, 1800, 3600};
  // The upstream time histogram's upper bounds in seconds: an LLM call takes from 0.1 s to minutes.
  static constexpr double kUpstreamBuckets[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};

 private:
  struct Impl;  // the prometheus-cpp registry and the gateway's own families
  std::unique_ptr<Impl> impl_;
};

namespace detail {
// The engine's snapshot is gaining per-reason shed counts (GroupCounters::shedByReason) and per-key quota
// (GroupSnapshot::keyStates). The metrics use them as soon as the fields exist and fall back to
// reason="all" / key="all" until then; these two traits are the whole switch.
template <class Counters>
inline constexpr bool kHasShedByReason = requires(const Counters& c) { c.shedByReason[0]; };
template <class Group>
inline constexpr bool kHasKeyStates = requires(const Group& g) { g.keyStates.front().fingerprint; };
}  // namespace detail

}  // namespace tg::gateway
