// tollgate probe: steps a group's concurrency up against the upstream, without the engine's protection,
// and prints where the soft and hard limits showed.
#include "cli.h"

#include "command_line.h"
#include "probe.h"
#include "request_safety.h"
#include "session.h"

#include <cstdio>
#include <iostream>

namespace tg::cli {
namespace {

// A probe step is a concurrency: the most a group may be configured with.
constexpr int kMaxProbeStep = 100000;

constexpr const char* kProbeSynopsis =
    "usage: tollgate probe [--config FILE] --group G [--key NAME] [--steps 1,2,4,8,16] [--step-s 5] [--path /v1/x]\n";

}  // namespace

int probeCommand(const std::vector<std::string>& argv) {
  CommandLine a(kProbeSynopsis, {{"--config", "FILE", "upstream config (default: the embedded simulator demo)"},
                                  {"--group", "G", "the group to probe (required)"},
                                  {"--key", "NAME", "the group's key to use (default: its first)"},
                                  {"--steps", "1,2,4,8,16", "concurrency of each step"},
                                  {"--step-s", "S", "seconds per step, above 0 and at most 3600 (default: 5)"},
                                  {"--path", "/v1/x", "path requested below the group's base_url"}});
  if (auto answered = a.parseOrAnswer(argv, "tollgate probe", std::cout, std::cerr)) return *answered;
  std::string err;
  ProbeOptions o;
  if (auto s = a.number("--step-s", &err)) o.stepS = *s;
  if (!err.empty() || o.stepS <= 0 || o.stepS > kMaxProbeStepS) {
    std::fprintf(stderr, "tollgate probe: %s\n",
                 err.empty() ? "--step-s: expected seconds above 0 and at most 3600" : err.c_str());
    return kExitUsage;
  }
  if (auto steps = a.value("--steps")) {
    o.steps.clear();
    std::size_t pos = 0;
    while (pos <= steps->size()) {
      const auto comma = steps->find(',', pos);
      const std::string item = steps->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const auto n = parsePositiveInt(item, kMaxProbeStep);
      if (!n) {
        std::fprintf(stderr, "tollgate probe: --steps: expected integers from 1 to %d separated by commas, got \"%s\"\n",
                     kMaxProbeStep, item.c_str());
        return kExitUsage;
      }
      o.steps.push_back(*n);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  if (auto p = a.value("--path")) {
    // Joined after base_url: anything but a path ("@evil.com/x", ".evil.com/x") would change the host the key goes to.
    if (p->empty() || p->front() != '/') {
      std::fprintf(stderr, "tollgate probe: --path: expected a path starting with /, got \"%s\"\n", printable(*p).c_str());
      return kExitUsage;
    }
    o.path = *p;
  }
  std::unique_ptr<Session> session;
  try {
    TollgateConfig cfg = loadConfig(a.value("--config"));
    cfg.workload.reset();
    session = std::make_unique<Session>(std::move(cfg));
    session->setHistoryPath({});
    session->start(false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return kExitUsage;
  }
  const auto group = a.value("--group");
  const GroupConfig* g = group ? session->engine().config().findGroup(*group) : nullptr;
  if (!g) {
    std::fprintf(stderr, "tollgate probe: --group: expected one of the configured groups\n");
    return kExitUsage;
  }
  // The same check the engine makes before it sends anything for the group (base_url, key and group headers).
  if (std::string p = groupConfigProblem(*g, session->engine().config(), nullptr); !p.empty()) {
    std::fprintf(stderr, "tollgate probe: group \"%s\": %s\n", printable(g->name).c_str(), p.c_str());
    return kExitUsage;
  }
  o.baseUrl = g->baseUrl;
  o.group = g->name;
  o.groupHeader = session->engine().config().groupHeader;
  if (!g->keys.empty()) {
    const KeyConfig* key = &g->keys.front();
    if (auto k = a.value("--key")) {
      key = nullptr;
      for (const auto& kc : g->keys)
        if (kc.name == *k) key = &kc;
      if (!key) {
        std::fprintf(stderr, "tollgate probe: --key: no key \"%s\" in group %s\n", k->c_str(), g->name.c_str());
        return kExitUsage;
      }
    }
    o.key = *key;
  }
  session->engine().stop();  // the probe drives the upstream itself, without the engine's protection
  ProbeReport r;
  try {
    r = runProbe(o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return kExitFailed;
  }
  std::fputs(formatProbeTable(r).c_str(), stdout);
  return kExitOk;
}

}  // namespace tg::cli
