#include "what_if_overrides.h"

#include "config_loader.h"

#include <algorithm>
#include <cmath>

namespace tg {

namespace {

std::array<bool, kTierCount> readTiers(const nlohmann::json* j, const std::string& file, const std::string& path) {
  std::array<bool, kTierCount> out{};
  if (!j) return out;
  if (!j->is_array()) throw ConfigError(file, path, "expected an array of tier names (\"P0\", \"P1\", \"P2\")");
  for (std::size_t i = 0; i < j->size(); ++i) {
    const auto& v = (*j)[i];
    const auto t = v.is_string() ? parseTier(v.get<std::string>()) : std::nullopt;
    if (!t) throw ConfigError(file, path + "/" + std::to_string(i), "expected a tier name (\"P0\", \"P1\", \"P2\")");
    out[int(*t)] = true;
  }
  return out;
}

nlohmann::json tiersJson(const std::array<bool, kTierCount>& t) {
  auto a = nlohmann::json::array();
  for (int i = 0; i < kTierCount; ++i)
    if (t[i]) a.push_back(std::string(tierName(Tier(i))));
  return a;
}

}  // namespace

WhatIfOverrides WhatIfOverrides::fromJson(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw ConfigError(file, "", "expected an object");
  JsonObjectReader r(j, file, "");
  WhatIfOverrides o;
  if (r.has("global_concurrency")) o.globalConcurrency = r.integer("global_concurrency", 64, 1, 100000);
  o.concurrencyScale = r.number("concurrency_scale", 1.0, 0.01, 100);
  o.pausedTiers = readTiers(r.child("paused_tiers"), file, "/paused_tiers");
  if (const auto* groups = r.child("groups")) {
    if (!groups->is_object()) r.fail("groups", "expected an object of group name to settings");
    for (auto it = groups->begin(); it != groups->end(); ++it) {
      const std::string path = "/groups/" + it.key();
      if (!it->is_object()) throw ConfigError(file, path, "expected an object");
      JsonObjectReader g(*it, file, path);
      GroupOverride go;
      if (g.has("concurrency")) go.concurrency = g.integer("concurrency", 16, 1, 100000);
      if (g.has("bucket_fraction")) go.bucketFraction = g.number("bucket_fraction", 0.95, 0.05, 1.0);
      if (g.has("adaptive")) go.adaptive = g.boolean("adaptive", true);
      go.pausedTiers = readTiers(g.child("paused_tiers"), file, path + "/paused_tiers");
      if (const auto* b = g.child("breaker")) go.breaker = ConfigLoader::readBreaker(*b, file, path + "/breaker");
      g.finish();
      o.groups[it.key()] = go;
    }
  }
  r.finish();
  return o;
}

WhatIfOverrides WhatIfOverrides::fromFile(const std::string& path) { return fromJson(readJsonFile(path), path); }

nlohmann::json WhatIfOverrides::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  if (globalConcurrency) j["global_concurrency"] = *globalConcurrency;
  if (concurrencyScale != 1.0) j["concurrency_scale"] = concurrencyScale;
  if (auto t = tiersJson(pausedTiers); !t.empty()) j["paused_tiers"] = t;
  for (const auto& [name, g] : groups) {
    nlohmann::json gj = nlohmann::json::object();
    if (g.concurrency) gj["concurrency"] = *g.concurrency;
    if (g.bucketFraction) gj["bucket_fraction"] = *g.bucketFraction;
    if (g.adaptive) gj["adaptive"] = *g.adaptive;
    if (auto t = tiersJson(g.pausedTiers); !t.empty()) gj["paused_tiers"] = t;
    if (g.breaker)
      gj["breaker"] = {{"window_s", g.breaker->windowS}, {"min_calls", g.breaker->minCalls},
                       {"failure_share", g.breaker->failureShare}, {"open_s", g.breaker->openS},
                       {"half_open_probes", g.breaker->halfOpenProbes}};
    j["groups"][name] = gj;
  }
  return j;
}

void WhatIfOverrides::applyTo(EngineConfig& c, const std::string& file) const {
  if (globalConcurrency) c.globalConcurrency = *globalConcurrency;
  for (const auto& [name, o] : groups) {
    auto it = std::find_if(c.groups.begin(), c.groups.end(), [&](const GroupConfig& g) { return g.name == name; });
    if (it == c.groups.end()) throw ConfigError(file, "/groups/" + name, "a group of the recording");
    if (o.concurrency) it->concurrency = *o.concurrency;
    if (o.bucketFraction) it->bucketFraction = *o.bucketFraction;
    if (o.adaptive) it->adaptive = *o.adaptive;
    if (o.breaker) it->breaker = *o.breaker;
  }
  for (auto& g : c.groups) {
    g.concurrency = std::max(1, int(std::lround(g.concurrency * concurrencyScale)));
    g.minConcurrency = std::min(g.minConcurrency, g.concurrency);
  }
}

}  // namespace tg
