#include "load_scenario.h"

#include "sim_config.h"
#include "tollgate_client.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace tgbench {
namespace {
std::string keyName(std::size_t g) { return "k" + std::to_string(g); }
}  // namespace

nlohmann::json Scenario::simJson() const {
  nlohmann::json groupsJson = nlohmann::json::object();
  for (const auto& g : groups) {
    groupsJson[g.name] = {{"algorithm", algorithm}, {"limit", g.quotaPerS}, {"window_s", 1}};
    for (auto it = simGroupExtra.begin(); it != simGroupExtra.end(); ++it) groupsJson[g.name][it.key()] = it.value();
  }
  groupsJson["default"] = {{"limit", 0}};
  return {{"dialect", dialect},
          {"retry_after", dialect != "none" && retryAfter},
          {"retry_after_format", retryAfterFormat},
          {"refuse_at_once", refuseAtOnce},
          {"group_by", "header"},
          {"default_group", "default"},
          {"seed", 1},
          {"latency_ms", latency},
          {"groups", groupsJson}};
}

nlohmann::json Scenario::engineJson() const {
  nlohmann::json gs = nlohmann::json::array();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    nlohmann::json g{{"name", groups[i].name},
                     {"base_url", "sim"},
                     {"concurrency", concurrencyPerGroup},
                     {"keys", nlohmann::json::array({{{"name", keyName(i)}}})}};
    for (auto it = groupExtra.begin(); it != groupExtra.end(); ++it) g[it.key()] = it.value();
    gs.push_back(g);
  }
  nlohmann::json j{{"name", "bench"}, {"global_concurrency", 256}, {"groups", gs}};
  for (auto it = engineExtra.begin(); it != engineExtra.end(); ++it) j[it.key()] = it.value();
  return j;
}

double Scenario::quotaPerS() const {
  double q = 0;
  for (const auto& g : groups) q += g.quotaPerS;
  return q;
}

std::vector<GroupSpec> threeGroups() { return {{"a", 50}, {"b", 30}, {"c", 20}}; }

std::vector<StreamSpec> mixedWorkload(bool flood) {
  std::vector<StreamSpec> s{{0, tg::Tier::P0, 5},  {0, tg::Tier::P1, 25}, {1, tg::Tier::P0, 3},
                            {1, tg::Tier::P1, 57}, {1, tg::Tier::P2, 30}, {2, tg::Tier::P0, 2},
                            {2, tg::Tier::P1, 38}, {2, tg::Tier::P2, 20}};
  if (flood) s.push_back({0, tg::Tier::P2, 120});
  return s;
}

const std::vector<std::string>& limiterKinds() {
  static const std::vector<std::string> kinds{"fixed-window", "sliding-window", "sliding-counting", "token-bucket",
                                              "gcra",         "leaky-nodelay",  "leaky-delayed",    "concurrency",
                                              "concurrency-at-once"};
  return kinds;
}

void configureLimiterKind(Scenario& sc, const std::string& kind, double limit) {
  if (std::find(limiterKinds().begin(), limiterKinds().end(), kind) == limiterKinds().end())
    throw std::invalid_argument("unknown limiter kind \"" + kind + "\"");
  sc.simGroupExtra = nlohmann::json::object();
  if (kind == "sliding-counting") {
    sc.algorithm = "sliding-window";
    sc.simGroupExtra["count_rejected"] = true;
  } else if (kind == "leaky-nodelay" || kind == "leaky-delayed") {
    sc.algorithm = "leaky-bucket";
    sc.simGroupExtra["burst"] = std::max(1.0, limit / 5);
    sc.simGroupExtra["nodelay"] = kind == "leaky-nodelay";
  } else if (kind == "concurrency" || kind == "concurrency-at-once") {
    sc.refuseAtOnce = kind == "concurrency-at-once";
    sc.algorithm = "fixed-window";
    sc.groups[0].quotaPerS = 0;
    sc.simGroupExtra["max_concurrent"] = kConcurrencyLimit;
    sc.latency = {{"distribution", "fixed"}, {"mean", 1000.0 * kConcurrencyLimit / limit}};
  } else {
    sc.algorithm = kind;
  }
}

void configureAnswerStyle(Scenario& sc, const std::string& style) {
  if (style == "bare") {
    sc.dialect = "none";
    sc.retryAfter = false;
  } else if (style == "retry-after") {
    sc.dialect = "retry-after";
    sc.retryAfter = true;
  } else if (style == "headers") {
    sc.dialect = "x-ratelimit";
    sc.retryAfter = true;
  } else {
    throw std::invalid_argument("unknown answer style \"" + style + "\"");
  }
}

const std::vector<std::string>& strategyNames() {
  static const std::vector<std::string> names{"tollgate", baselineName(BaselineStrategy::Naive),
                                              baselineName(BaselineStrategy::Backoff),
                                              baselineName(BaselineStrategy::RetryAfter)};
  return names;
}

std::vector<std::string> pickStrategies(const Args& args, const char* program) {
  std::vector<std::string> picked{"tollgate"};
  if (args.flag("baselines")) picked = strategyNames();
  if (const std::string named = args.text("strategies", ""); !named.empty()) picked = splitCommas(named);
  for (const auto& name : picked)
    if (std::find(strategyNames().begin(), strategyNames().end(), name) == strategyNames().end()) {
      std::fprintf(stderr, "%s: --strategies: unknown strategy \"%s\"\n", program, name.c_str());
      return {};
    }
  return picked;
}

RunLog runStrategy(const std::string& strategy, const Scenario& s, const std::vector<Arrival>& arrivals, double durationS,
                   const std::vector<TimedSimAction>& simActions) {
  const nlohmann::json simJson = s.simJson();
  tg::SimServer sim(tg::SimConfig::fromJson(simJson, "(bench sim)"));
  const int port = sim.start("127.0.0.1", 0);
  const std::string simUrl = "http://127.0.0.1:" + std::to_string(port);
  const std::string url = s.front ? s.front(simUrl) : simUrl;
  std::vector<TimedAction> actions;
  for (const auto& a : simActions) actions.push_back({a.atS, [&sim, fn = a.fn] { fn(sim); }});

  std::fprintf(stderr, "  running %-15s %.0f s ...\n", strategy.c_str(), durationS);
  RunLog log;
  if (strategy == "tollgate") {
    log = TollgateClient(s.engineJson(), simJson, url).run(arrivals, durationS, actions);
  } else {
    BaselineOptions o;
    for (auto b : {BaselineStrategy::Naive, BaselineStrategy::Backoff, BaselineStrategy::RetryAfter})
      if (strategy == baselineName(b)) o.strategy = b;
    o.baseUrl = url;
    for (std::size_t i = 0; i < s.groups.size(); ++i) {
      o.groups.push_back(s.groups[i].name);
      o.keys.push_back("sim-" + keyName(i));  // what Tollgate sends for a simulator key
    }
    o.concurrencyPerGroup = s.concurrencyPerGroup;
    log = BaselineClient(o).run(arrivals, durationS, actions);
  }
  if (s.frontStop) s.frontStop();
  sim.stop();
  return log;
}

}  // namespace tgbench
