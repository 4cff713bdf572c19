#include "gateway_metrics.h"

#include "secret.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace tg::gateway {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

constexpr const char* kKeyAll = "all";     // the group's dims summed over its keys
constexpr const char* kReasonAll = "all";  // every shed, whatever the reason

MetricFamily family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

// Unknown (NaN) gauges are left out: a scrape shows what Tollgate knows, and an absent series reads as
// "unknown" in PromQL where NaN would poison sums and comparisons.
void addGauge(MetricFamily& f, Labels labels, double v) {
  if (!known(v)) return;
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = v;
  f.metric.push_back(std::move(m));
}

void addCounter(MetricFamily& f, Labels labels, std::uint64_t v) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = static_cast<double>(v);
  f.metric.push_back(std::move(m));
}

// Sheds per reason once the engine counts them (GroupCounters::shedByReason), else the total as "all".
template <class Counters>
void addSheds(MetricFamily& f, const std::string& group, const Counters& c) {
  if constexpr (detail::kHasShedByReason<Counters>) {
    for (int r = 0; r < kShedReasonCount; ++r) {
      const auto reason = static_cast<ShedReason>(r);
      if (reason == ShedReason::None) continue;  // not a shed
      addCounter(f, {{"group", group}, {"reason", std::string(shedReasonName(reason))}}, c.shedByReason[r]);
    }
  } else {
    addCounter(f, {{"group", group}, {"reason", kReasonAll}}, c.shed);
  }
}

// Calls fn(keyLabel, dims) per key fingerprint once the snapshot carries them (GroupSnapshot::keyStates),
// else once with the group's summed dims as key="all". A group without per-key entries (no keys
// configured) also reports key="all"; never both, so sum by (group) stays right.
// A pass-through route's client keys are the clients' own, and any client can bring new ones (one series each,
// up to 256 a group, then others in their idle slots, a fingerprint of each readable by whoever scrapes): not
// reported. A group whose keys are all its clients' reports none.
template <class Group, class Fn>
void forEachKeyDims(const Group& g, Fn&& fn) {
  if constexpr (detail::kHasKeyStates<Group>) {
    if (!g.keyStates.empty()) {
      for (const auto& k : g.keyStates)
        if (!k.clientsOwn) fn(k.fingerprint, k.dims);
      return;
    }
  }
  fn(std::string(kKeyAll), g.dims);
}

// The families derived from one engine snapshot, in a fixed order.
std::vector<MetricFamily> snapshotFamilies(const EngineSnapshot& s) {
  auto remaining = family("tollgate_quota_remaining",
                          "Quota left in the current window as the upstream last reported it, per key fingerprint",
                          MetricType::Gauge);
  auto limit = family("tollgate_quota_limit", "Quota limit of the current window (reported or configured)",
                      MetricType::Gauge);
  auto queue = family("tollgate_queue_depth", "Requests waiting in the group's tier queue", MetricType::Gauge);
  auto inFlight = family("tollgate_in_flight", "Requests of the group being sent upstream now", MetricType::Gauge);
  auto concurrency = family("tollgate_concurrency_limit",
                            "Effective concurrency limit of the group now (adaptive, at most the ceiling)",
                            MetricType::Gauge);
  auto ceiling = family("tollgate_concurrency_ceiling", "Operator-set concurrency ceiling of the group",
                        MetricType::Gauge);
  auto r429 = family("tollgate_rate_limited_total", "429 responses from the upstream (and rate-limit 403s)",
                     MetricType::Counter);
  auto shed = family("tollgate_shed_total", "Requests answered without a send, by reason", MetricType::Counter);
  // What the upstream answered, every attempt (retries too): 5xx and network errors the engine retried were
  // visible nowhere, only as the gateway's own 502/503 once the retries ran out.
  auto upstream = family("tollgate_upstream_responses_total",
                         "Answers from the upstream per attempt, by class: 2xx (and 3xx), 429, 4xx, 5xx, network",
                         MetricType::Counter);
  auto retries = family("tollgate_retries_total", "Attempts that were retries", MetricType::Counter);
  auto tokens = family("tollgate_tokens_used_total", "Tokens the upstream reported used (or estimated)",
                       MetricType::Counter);
  // The state gauge alone missed a half-open probe that failed between two scrapes (open throughout).
  auto opens = family("tollgate_breaker_opens_total", "Times the group's breaker opened (from closed or half-open)",
                      MetricType::Counter);
  auto breaker = family("tollgate_breaker_state",
                        "Circuit breaker of the group: 0 closed, 1 open, 2 half-open (also the state label)",
                        MetricType::Gauge);

  for (const auto& g : s.groups) {
    forEachKeyDims(g, [&](const std::string& key, const auto& dims) {
      for (int d = 0; d < kDimensionCount; ++d) {
        Labels labels{{"group", g.group}, {"key", key}, {"dimension", std::string(dimensionName(Dimension(d)))}};
        addGauge(remaining, labels, dims[d].remaining);
        addGauge(limit, std::move(labels), dims[d].limit);
      }
    });
    for (int t = 0; t < kTierCount; ++t)
      addGauge(queue, {{"group", g.group}, {"tier", std::string(tierName(Tier(t)))}}, g.queueDepth[t]);
    addGauge(inFlight, {{"group", g.group}}, g.inFlight);
    addGauge(concurrency, {{"group", g.group}}, g.concurrencyLimit);
    addGauge(ceiling, {{"group", g.group}}, g.concurrencyCeiling);
    addCounter(r429, {{"group", g.group}}, g.counters.r429);
    const std::pair<const char*, std::uint64_t> classes[] = {{"2xx", g.counters.ok},
                                                             {"429", g.counters.r429},
                                                             {"4xx", g.counters.other4xx},
                                                             {"5xx", g.counters.r5xx},
                                                             {"network", g.counters.netErrors}};
    for (const auto& [cls, n] : classes) addCounter(upstream, {{"group", g.group}, {"class", cls}}, n);
    addCounter(retries, {{"group", g.group}}, g.counters.retries);
    addCounter(tokens, {{"group", g.group}}, g.counters.tokensUsed);
    addCounter(opens, {{"group", g.group}}, g.counters.breakerOpens);
    addSheds(shed, g.group, g.counters);
    addGauge(breaker, {{"group", g.group}, {"state", std::string(breakerStateName(g.breaker))}},
             static_cast<double>(g.breaker));
  }

  // Shared quota (config shared_quota): one series per mode, 1 for the mode it is in, so an alert can fire
  // on mode="fallback" == 1; the fleet's size as the last heartbeat saw it; commands sent to Redis.
  auto sharedMode = family("tollgate_shared_quota_mode",
                           "Shared quota through Redis: 1 for the mode this instance is in (shared, fallback, starting)",
                           MetricType::Gauge);
  auto sharedLive = family("tollgate_shared_quota_instances", "Instances sharing quota at the last heartbeat",
                           MetricType::Gauge);
  auto redisCalls = family("tollgate_shared_quota_redis_commands_total", "Commands this instance sent to Redis",
                           MetricType::Counter);
  if (s.shared.enabled) {
    for (const char* m : {"shared", "fallback", "starting"})
      addGauge(sharedMode, {{"mode", m}}, s.shared.mode == m ? 1 : 0);
    addGauge(sharedLive, {}, s.shared.live);
    addCounter(redisCalls, {}, s.shared.redisCalls);
  }

  std::vector<MetricFamily> out;
  for (auto* f : {&remaining, &limit, &queue, &inFlight, &concurrency, &ceiling, &r429, &shed, &upstream, &retries,
                  &tokens, &opens, &breaker, &sharedMode, &sharedLive, &redisCalls})
    if (!f->metric.empty()) out.push_back(std::move(*f));  // a family with no series says nothing
  return out;
}

}  // namespace

struct GatewayMetrics::Impl {
  prometheus::Registry registry;  // thread-safe; owns the families below
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("tollgate_gateway_requests_total")
          .Help("Requests the gateway answered, per configured client, route prefix and HTTP status")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& upstream =
      prometheus::BuildHistogram()
          .Name("tollgate_upstream_seconds")
          .Help("Time the upstream took for a gateway request's last attempt (its transfer)")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& wait =
      prometheus::BuildHistogram()
          .Name("tollgate_wait_seconds")
          .Help("Time a gateway request waited in Tollgate before its first send (or until shed)")
          .Register(registry);
};

GatewayMetrics::GatewayMetrics() : impl_(std::make_unique<Impl>()) {}
GatewayMetrics::~GatewayMetrics() = default;

void GatewayMetrics::countRequest(const std::string& client, const std::string& route, int status) {
  impl_->requests.Add({{"client", client}, {"route", route}, {"status", std::to_string(status)}}).Increment();
}

void GatewayMetrics::observeWait(const std::string& group, Tier tier, double seconds) {
  // NaN would make the sum NaN for good, +Inf would pin it at +Inf: clamp to what a wait can be.
  const double v = std::isnan(seconds) ? 0.0 : std::clamp(seconds, 0.0, kMaxDurationS);
  static const prometheus::Histogram::BucketBoundaries kBounds(std::begin(kWaitBuckets), std::end(kWaitBuckets));
  impl_->wait.Add({{"group", group}, {"tier", std::string(tierName(tier))}}, kBounds).Observe(v);
}

void GatewayMetrics::observeUpstream(const std::string& group, double seconds) {
  const double v = std::isnan(seconds) ? 0.0 : std::clamp(seconds, 0.0, kMaxDurationS);
  static const prometheus::Histogram::BucketBoundaries kBounds(std::begin(kUpstreamBuckets),
                                                               std::end(kUpstreamBuckets));
  impl_->upstream.Add({{"group", group}}, kBounds).Observe(v);
}

std::string GatewayMetrics::render(const EngineSnapshot& s, int openConnections) const {
  auto families = snapshotFamilies(s);
  for (auto& f : impl_->registry.Collect())
    if (!f.metric.empty()) families.push_back(std::move(f));

  auto open = family("tollgate_gateway_open_connections", "HTTP connections open on the gateway now",
                     MetricType::Gauge);
  addGauge(open, {}, openConnections);
  families.push_back(std::move(open));

  // Label values only, each on its own: the finished text went through redact whole, so a client's key on a
  // pass-through route that was also a word of the exposition ("group", "tollgate") rewrote label or metric
  // names, and Prometheus refused every scrape from then on.
  for (auto& f : families)
    for (auto& metric : f.metric)
      for (auto& label : metric.label) label.value = SecretRegistry::redact(label.value);
  return prometheus::TextSerializer{}.Serialize(families);
}

}  // namespace tg::gateway
