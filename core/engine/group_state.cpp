#include "group_state.h"

#include "request_safety.h"

#include <algorithm>
#include <strings.h>

namespace tg {

std::string GroupState::checkRequest(Request& r) const {
  if (!r.url.empty() && r.url.front() == '/') {
    if (std::string p = targetProblem(r.url); !p.empty()) return "url \"" + urlShown(r.url) + "\": " + p;
    r.url = cfg.baseUrl + r.url;  // a path cannot change the authority that precedes it
  } else {
    std::string why;
    const std::string origin = originOf(r.url, &why);
    if (origin.empty())
      return "url \"" + urlShown(r.url) + "\": " + why + " (expected a path starting with / or an http(s) URL)";
    if (std::find(origins.begin(), origins.end(), origin) == origins.end())
      return "url names " + origin + ", not the base_url of group \"" + cfg.name +
             "\": the group's key goes only there (list other origins in the group's allowed_hosts)";
  }
  if (!isHttpToken(r.method)) return "method \"" + printable(r.method) + "\" is not an HTTP token";
  for (const auto& [name, value] : r.headers)
    if (std::string p = headerProblem(name, value, "request"); !p.empty()) return p;
  return {};
}

std::shared_ptr<const std::vector<std::string>> GroupState::headerLines(int key, const Request& r,
                                                                         const EngineConfig& ec) const {
  // Header names and values were checked when the group was set up and the request admitted.
  const KeyState& k = keys[static_cast<std::size_t>(key)];
  auto lines = std::make_shared<std::vector<std::string>>();
  lines->push_back("Expect:");
  bool hasContentType = false;
  for (const auto& [name, value] : cfg.headers) {
    if (strcasecmp(name.c_str(), "content-type") == 0) hasContentType = true;
    lines->push_back(name + ": " + value);
  }
  for (const auto& [name, value] : r.headers) {
    if (strcasecmp(name.c_str(), "content-type") == 0) hasContentType = true;
    lines->push_back(name + ": " + value);
  }
  if (!hasContentType && !r.body.empty()) lines->push_back("Content-Type: application/json");
  if (!k.authLine.empty()) lines->push_back(k.authLine);
  if (!ec.tierHeader.empty()) lines->push_back(ec.tierHeader + ": " + std::string(tierName(r.tier)));
  if (!ec.groupHeader.empty()) lines->push_back(ec.groupHeader + ": " + cfg.name);
  return lines;
}

GroupSnapshot GroupState::snapshot(TimePoint now, const std::array<bool, kTierCount>& globalTierPaused) {
  GroupSnapshot gs;
  gs.group = cfg.name;
  gs.keys = static_cast<int>(keys.size());
  gs.keyStates.resize(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    gs.keyStates[k].fingerprint = keys[k].fingerprint;
    gs.keyStates[k].clientsOwn = keys[k].own;
  }
  for (int d = 0; d < kDimensionCount; ++d) {
    DimensionState sum;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const DimensionState ks = keys[k].quota.state(static_cast<Dimension>(d), now);
      gs.keyStates[k].dims[static_cast<std::size_t>(d)] = ks;
      auto add = [](double& acc, double v) {
        if (known(v)) acc = known(acc) ? acc + v : v;
      };
      add(sum.limit, ks.limit);
      add(sum.remaining, ks.remaining);
      add(sum.localTokens, ks.localTokens);
      if (ks.resetAtMs && (!sum.resetAtMs || ks.resetAtMs < sum.resetAtMs)) sum.resetAtMs = ks.resetAtMs;
    }
    gs.dims[static_cast<std::size_t>(d)] = sum;
  }
  gs.inFlight = inFlight;
  gs.concurrencyLimit = concurrency.limit();
  gs.concurrencyCeiling = concurrency.ceiling();
  gs.rateCeiling = rateCeiling.config();
  for (std::size_t t = 0; t < kTierCount; ++t) {
    gs.queueDepth[t] = queues.size(static_cast<Tier>(t));
    gs.tierPaused[t] = tierPaused[t] || globalTierPaused[t];
  }
  gs.paused = paused;
  gs.draining = draining;
  gs.breaker = breaker.state();
  gs.counters = counters;
  auto [p50, p95] = latency.percentiles(now);
  gs.latencyP50Ms = p50;
  gs.latencyP95Ms = p95;
  gs.wait = wait;
  gs.waitReason = waitText(wait);
  return gs;
}

}  // namespace tg
