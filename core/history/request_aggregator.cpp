#include "request_aggregator.h"

#include "epoch_floor.h"
#include "secret.h"
#include "snapshot.h"
#include "stats.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace tg {
namespace {

constexpr std::size_t kLatencyReservoir = 2048;
constexpr std::size_t kMaxOpenMinuteRows = 100'000;
constexpr std::int64_t kKeepOpenMinutes = 3;  // a minute's row is rewritten until this many minutes later
// Distinct endpoints a group's minute keeps rows for (a client naming a new path each request, ids the route
// template did not catch); the rest are counted under kOtherEndpoint.
constexpr std::size_t kMaxEndpointsPerMinute = 64;
constexpr const char* kOtherEndpoint = "(other)";

constexpr const char* kInsertRow =
    "INSERT INTO requests_1m(minute_ms, group_id, key_fp, endpoint, requests, r429, r5xx, net_errors, "
    "retries, lat_avg_ms, lat_p95_ms, client) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)";

}  // namespace

bool RequestAggregator::Key::operator<(const Key& o) const {
  return std::tie(minuteMs, group, fp, endpoint, client) < std::tie(o.minuteMs, o.group, o.fp, o.endpoint, o.client);
}

void RequestAggregator::prepare(sql::Db& db) {
  replace_.prepare(db, std::string(kInsertRow) +
                           " ON CONFLICT DO UPDATE SET requests = excluded.requests, "
                           "r429 = excluded.r429, r5xx = excluded.r5xx, net_errors = excluded.net_errors, "
                           "retries = excluded.retries, lat_avg_ms = excluded.lat_avg_ms, "
                           "lat_p95_ms = excluded.lat_p95_ms");
  merge_.prepare(db, std::string(kInsertRow) +
                         " ON CONFLICT DO UPDATE SET "
                         "lat_avg_ms = (coalesce(lat_avg_ms, 0) * requests + coalesce(excluded.lat_avg_ms, 0) * "
                         "excluded.requests) / max(requests + excluded.requests, 1), "
                         "lat_p95_ms = max(coalesce(lat_p95_ms, 0), coalesce(excluded.lat_p95_ms, 0)), "
                         "requests = requests + excluded.requests, r429 = r429 + excluded.r429, "
                         "r5xx = r5xx + excluded.r5xx, net_errors = net_errors + excluded.net_errors, "
                         "retries = retries + excluded.retries");
}

void RequestAggregator::reset() {
  replace_ = {};
  merge_ = {};
}

std::size_t RequestAggregator::add(const AttemptRecord& a) {
  const EpochMs minute = history::floorMinute(a.tsMs);
  newestMinute_ = std::max(newestMinute_, minute);
  std::string endpoint = endpointRoute(SecretRegistry::redact(a.endpoint));
  auto& seen = endpoints_[{minute, a.group}];
  if (!seen.count(endpoint)) {
    if (seen.size() >= kMaxEndpointsPerMinute) endpoint = kOtherEndpoint;
    else seen.insert(endpoint);
  }
  Key k{minute, a.group, SecretRegistry::redact(a.keyFingerprint), std::move(endpoint),
        SecretRegistry::redact(a.client)};
  auto it = rows_.find(k);
  if (it == rows_.end()) {
    if (rows_.size() >= kMaxOpenMinuteRows) return 1;
    it = rows_.emplace(std::move(k), Row{}).first;
    it->second.additive = minute <= evictedThrough_;
  }
  Row& r = it->second;
  r.dirty = true;
  ++r.requests;
  if (a.rateLimited) ++r.r429;
  if (a.status >= 500 && a.status < 600) ++r.r5xx;
  if (a.status == 0) ++r.net;
  if (a.retry) ++r.retries;
  r.latSum += a.latencyMs;
  if (r.lats.size() < kLatencyReservoir) {
    r.lats.push_back(static_cast<float>(a.latencyMs));
  } else {
    rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto j = (rng_ >> 33) % static_cast<std::uint64_t>(r.requests);
    if (j < kLatencyReservoir) r.lats[j] = static_cast<float>(a.latencyMs);
  }
  return 0;
}

bool RequestAggregator::dirty() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const auto& kv) { return kv.second.dirty; });
}

void RequestAggregator::write(const std::function<std::int64_t(const std::string&)>& groupId) {
  for (auto& [k, r] : rows_) {
    if (!r.dirty) continue;
    sql::Stmt& st = r.additive ? merge_ : replace_;
    st.bind(1, static_cast<std::int64_t>(k.minuteMs))
        .bind(2, groupId(k.group))
        .bind(3, k.fp)
        .bind(4, k.endpoint)
        .bind(5, r.requests)
        .bind(6, r.r429)
        .bind(7, r.r5xx)
        .bind(8, r.net)
        .bind(9, r.retries)
        .bind(10, r.requests ? r.latSum / r.requests : kUnknown)
        .bind(11, percentile(r.lats, 0.95))
        .bind(12, k.client);
    st.run();
  }
}

void RequestAggregator::committed() {
  const EpochMs horizon = subSaturating(newestMinute_, kKeepOpenMinutes * history::kMinuteMs);
  for (auto it = rows_.begin(); it != rows_.end();) {
    it->second.dirty = false;
    if (it->second.additive || it->first.minuteMs < horizon) {
      evictedThrough_ = std::max(evictedThrough_, std::min(it->first.minuteMs, horizon));
      it = rows_.erase(it);
    } else {
      ++it;
    }
  }
  // A late attempt for a minute gone starts its own set: rows merged into the file are counted in it anew.
  endpoints_.erase(endpoints_.begin(), endpoints_.lower_bound({horizon, std::string()}));
}

}  // namespace tg
