// tollgate check --config FILE: reads a config as run, serve and the dashboard do (every section, every key's and
// token's environment variable, the gateway's routes, the simulator and workload sections) and says what it
// would run, or names the first error (file, JSON path, expectation). Nothing is started, bound or contacted:
// it can run beside the serve it is for, before a SIGHUP or a restart (as `nginx -t`).
#include "cli.h"

#include "command_line.h"
#include "request_safety.h"
#include "session.h"

#include <cstdio>
#include <iostream>

namespace tg::cli {
namespace {

constexpr const char* kCheckSynopsis = "usage: tollgate check --config FILE [--serve] [--history FILE|off]\n";

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

int checkCommand(const std::vector<std::string>& argv) {
  CommandLine a(kCheckSynopsis,
                {{"--config", "FILE", "the config to check (as run, serve and the dashboard read it)"},
                 {"--serve", "", "as serve reads it: a gateway section is required"},
                 {"--history", "FILE|off", "the history file a run would use (default: the config's or the user's)"}});
  if (auto answered = a.parseOrAnswer(argv, "tollgate check", std::cout, std::cerr)) return *answered;
  const auto path = a.value("--config");
  if (!path) {
    std::fprintf(stderr, "tollgate check: --config FILE is required\n%s", kCheckSynopsis);
    return kExitUsage;
  }
  try {
    Session session(ConfigLoader::fromFile(*path));  // validates the workload, gateway and simulator sections too
    applyHistoryFlag(session, a.value("--history"));
    const TollgateConfig& c = session.config();
    if (a.isSet("--serve") && !session.hasGatewayConfig()) {  // serve exits 2 on it: a unit restarted it forever
      std::fprintf(stderr, "tollgate check: %s has no \"gateway\" section, which serve needs\n", path->c_str());
      return kExitUsage;
    }
    std::printf("%s: valid\n", path->c_str());
    for (const auto& g : c.engine.groups)
      std::printf("group %s: %s, %s, concurrency %d\n", g.name.c_str(),
                  g.baseUrl == "sim" ? "the embedded simulator" : urlShown(g.baseUrl).c_str(),
                  plural(g.keys.size(), "key", "keys").c_str(), g.concurrency);
    if (session.hasGatewayConfig()) {
      const auto& gw = session.gatewayConfig();
      std::printf("gateway: %s:%d, %s, %s, /metrics %s\n", gw.listenHost.c_str(), gw.port,
                  plural(gw.routes.size(), "route", "routes").c_str(),
                  gw.clients.empty() ? "no client tokens (loopback only)"
                                     : plural(gw.clients.size(), "client token", "client tokens").c_str(),
                  gw.metricsToken.empty() ? "open" : "behind a token");
    }
    if (c.engine.sharedQuota.enabled)
      std::printf("shared quota: redis %s:%d, namespace %s (not contacted)\n", c.engine.sharedQuota.host.c_str(),
                  c.engine.sharedQuota.port, c.engine.sharedQuota.ns.c_str());
    std::printf("history: %s\n", session.historyPath().empty() ? "off" : session.historyPath().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate check: %s\n", e.what());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace tg::cli
