#include "run_report.h"

#include "json_text.h"
#include "stats.h"

#include <algorithm>
#include <cmath>

namespace tg {

void RunReport::observe(const Result& r) {
  std::lock_guard lock(mutex_);
  PerGroup& g = groups_[r.group];
  ++g.results;
  if (r.ok()) {
    ++g.ok;
    g.latencyMs.push_back(r.latencyMs);
  } else {
    ++g.failed;
    ++g.errors[std::string(errorKindName(r.error))];
  }
  g.waitMs.push_back(r.waitMs);
}

nlohmann::json RunReport::toJson(const EngineSnapshot& snap, double elapsedS) const {
  std::lock_guard lock(mutex_);
  auto num = [](double v) { return numberOrNull(std::round(v * 10) / 10); };
  nlohmann::json groups = nlohmann::json::object();
  nlohmann::json total{{"sent", 0}, {"ok", 0}, {"r429", 0}, {"r5xx", 0}, {"retries", 0}, {"shed", 0}};
  for (const auto& gs : snap.groups) {
    const auto& c = gs.counters;
    nlohmann::json g{{"submitted", c.submitted}, {"sent", c.sends},      {"ok", c.ok},
                     {"r429", c.r429},           {"r5xx", c.r5xx},       {"other_4xx", c.other4xx},
                     {"network_errors", c.netErrors}, {"retries", c.retries}, {"shed", c.shed},
                     {"completed", c.completed}, {"failed", c.failed},   {"tokens", c.tokensUsed}};
    g["goodput_per_s"] = elapsedS > 0 ? std::round(static_cast<double>(c.ok) / elapsedS * 100) / 100 : 0.0;
    g["share_429"] = c.sends ? static_cast<double>(c.r429) / static_cast<double>(c.sends) : 0.0;
    g["amplification"] = c.completed + c.failed > 0
                             ? static_cast<double>(c.sends) / static_cast<double>(std::max<std::uint64_t>(1, c.completed + c.failed - c.shed))
                             : 0.0;
    auto it = groups_.find(gs.group);
    if (it != groups_.end()) {
      g["latency_p50_ms"] = num(percentile(it->second.latencyMs, 0.5));
      g["latency_p95_ms"] = num(percentile(it->second.latencyMs, 0.95));
      g["wait_p50_ms"] = num(percentile(it->second.waitMs, 0.5));
      g["wait_p95_ms"] = num(percentile(it->second.waitMs, 0.95));
      g["errors"] = it->second.errors;
    }
    groups[gs.group] = g;
    total["sent"] = total["sent"].get<std::uint64_t>() + c.sends;
    total["ok"] = total["ok"].get<std::uint64_t>() + c.ok;
    total["r429"] = total["r429"].get<std::uint64_t>() + c.r429;
    total["r5xx"] = total["r5xx"].get<std::uint64_t>() + c.r5xx;
    total["retries"] = total["retries"].get<std::uint64_t>() + c.retries;
    total["shed"] = total["shed"].get<std::uint64_t>() + c.shed;
  }
  nlohmann::json out{{"elapsed_s", std::round(elapsedS * 100) / 100}, {"groups", groups}, {"total", total}};
  if (snap.shared.enabled) {
    const auto& sq = snap.shared;
    out["shared_quota"] = {{"instance", sq.instance},         {"mode", sq.mode},
                           {"live", sq.live},                 {"redis_calls", sq.redisCalls},
                           {"lease_p50_ms", std::round(sq.leaseP50Ms * 1000) / 1000},
                           {"lease_p99_ms", std::round(sq.leaseP99Ms * 1000) / 1000},
                           {"lease_waits", sq.leaseWaits},
                           {"redis_delay_p50_ms", std::round(sq.redisDelayP50Ms * 1000) / 1000},
                           {"redis_delay_p99_ms", std::round(sq.redisDelayP99Ms * 1000) / 1000},
                           {"redis_delay_max_ms", std::round(sq.redisDelayMaxMs * 1000) / 1000},
                           {"redis_delayed", sq.redisDelayed}};
  }
  return out;
}

}  // namespace tg
