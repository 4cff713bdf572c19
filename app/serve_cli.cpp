// tollgate serve: the local gateway without a window. Services point their API base URL at it; every call
// goes through the engine (tier queues, quota, retries) to the route's upstream. A line per group every
// second (like `run`), and the gateway's address first so scripts and tests can read it.
#include "cli.h"

#include "command_line.h"
#include "config_loader.h"
#include "gateway_config.h"
#include "log.h"
#include "session.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace tg::cli {
namespace {

constexpr const char* kServeSynopsis =
    "usage: tollgate serve [--config FILE] [--listen HOST:PORT] [--duration S] [--history FILE|off] [--quiet]\n"
    "The config needs a \"gateway\" section (see examples/gateway-openai.json, installed under\n"
    "/usr/share/tollgate/examples/); without --config, the embedded demo: the gateway in front of the simulator.\n"
    "SIGHUP reads --config again: concurrency and rate ceilings change live, the rest at the next start.\n";

std::atomic<bool> gStop{false};
// As run's: a second SIGINT/SIGTERM ends it at once, however long the orderly stop takes.
void onSignal(int) {
  if (gStop.exchange(true)) {
    const char msg[] = "tollgate serve: second signal: exiting now\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(kExitFailed);
  }
}

std::atomic<bool> gReload{false};
void onHangUp(int) { gReload = true; }

std::string ceilingText(const RateCeilingConfig& c) {
  if (!c.any()) return "none";
  char rps[48], tpm[48];
  std::snprintf(rps, sizeof rps, "%g req/s", c.requestsPerS);
  std::snprintf(tpm, sizeof tpm, "%g tokens/min", c.tokensPerMin);
  if (c.requestsPerS > 0 && c.tokensPerMin > 0) return std::string(rps) + " and " + tpm;
  return c.requestsPerS > 0 ? rps : tpm;
}

// SIGHUP: the config file read again; the operator's controls it sets (concurrency, rate ceilings) applied
// live, as the dashboard would, each recorded as an operator action by "config reload"; what else changed is
// named as a restart's. A file that no longer loads changes nothing.
void reloadConfig(Session& session, const std::string& path, const std::optional<std::string>& listen,
                  const nlohmann::json& startedRaw, EngineConfig& applied) {
  constexpr const char* kActor = "config reload";
  ConfigReload plan;
  try {
    const nlohmann::json raw = readJsonFile(path);
    TollgateConfig fresh = ConfigLoader::fromJson(raw, path);
    if (!fresh.gateway) throw ConfigError(path, "/gateway", "expected the gateway section serve runs");
    if (listen) (*fresh.gateway)["listen"] = *listen;  // as at the start: the file's own may not be one to bind
    gateway::loadGatewayConfig(*fresh.gateway, fresh.engine, path);  // its routes and tokens must load too
    plan = ConfigLoader::planReload(startedRaw, applied, raw, fresh.engine);
  } catch (const std::exception& e) {
    // A save cut short can end inside a header's value (a token): readJsonFile names its position, never the text.
    const std::string what = e.what();
    logError("serve", "SIGHUP: " + what + "; nothing changed");
    session.engine().recordEvent(Event{0, EventKind::ConfigReload, Severity::Error, "",
                                       "config reload refused, nothing changed: " + what,
                                       {{"file", path}, {"error", what}}});
    return;
  }
  Engine& engine = session.engine();
  std::vector<std::string> done;
  if (plan.globalConcurrency) {
    done.push_back("global_concurrency " + std::to_string(applied.globalConcurrency) + " -> " +
                   std::to_string(*plan.globalConcurrency));
    engine.setGlobalConcurrency(*plan.globalConcurrency, kActor);
    applied.globalConcurrency = *plan.globalConcurrency;
  }
  if (plan.rateCeiling) {
    done.push_back("rate_ceiling " + ceilingText(applied.rateCeiling) + " -> " + ceilingText(*plan.rateCeiling));
    engine.setRateCeiling("", *plan.rateCeiling, kActor);
    applied.rateCeiling = *plan.rateCeiling;
  }
  for (auto& g : applied.groups) {
    for (const auto& [name, limit] : plan.groupConcurrency)
      if (name == g.name) {
        done.push_back(name + " concurrency " + std::to_string(g.concurrency) + " -> " + std::to_string(limit));
        engine.setGroupConcurrency(name, limit, kActor);
        g.concurrency = limit;
      }
    for (const auto& [name, ceiling] : plan.groupRateCeiling)
      if (name == g.name) {
        done.push_back(name + " rate_ceiling " + ceilingText(g.rateCeiling) + " -> " + ceilingText(ceiling));
        engine.setRateCeiling(name, ceiling, kActor);
        g.rateCeiling = ceiling;
      }
  }
  std::string summary = done.empty() ? "no concurrency or rate ceiling changed" : "";
  for (std::size_t i = 0; i < done.size(); ++i) summary += (i ? "; " : "") + done[i];
  logInfo("serve", "SIGHUP: " + path + ": " + summary);
  constexpr std::size_t kNamed = 12;
  std::string rest;
  for (std::size_t i = 0; i < plan.restartOnly.size() && i < kNamed; ++i) rest += (i ? ", " : "") + plan.restartOnly[i];
  if (plan.restartOnly.size() > kNamed) rest += " and " + std::to_string(plan.restartOnly.size() - kNamed) + " more";
  if (!rest.empty())
    logWarn("serve", "SIGHUP: not applied until a restart (only concurrency and rate ceilings change live): " + rest);
  // In history too: the actions are there already, this says that a reload happened and what it left for later.
  session.engine().recordEvent(Event{0, EventKind::ConfigReload, rest.empty() ? Severity::Info : Severity::Warn, "",
                                     "config reloaded from " + path + ": " + summary +
                                         (rest.empty() ? "" : "; at the next start: " + rest),
                                     {{"file", path}, {"applied", done}, {"restart_only", plan.restartOnly}}});
}

}  // namespace

int serveCommand(const std::vector<std::string>& argv) {
  CommandLine a(kServeSynopsis, {{"--config", "FILE", "config with a \"gateway\" section (default: the embedded demo)"},
                                  {"--listen", "HOST:PORT", "listen here instead of the config's gateway.listen"},
                                  {"--duration", "S", "stop after S seconds"},
                                  {"--history", "FILE|off", "history file (default: the config's or the user's)"},
                                  {"--quiet", "",
                                   "no progress lines (else: every second on a terminal, every minute otherwise)"}});
  if (auto answered = a.parseOrAnswer(argv, "tollgate serve", std::cout, std::cerr)) return *answered;
  std::string err;
  const std::optional<double> duration = a.number("--duration", &err);
  if (!err.empty() || (duration && *duration <= 0)) {
    std::fprintf(stderr, "tollgate serve: %s\n", err.empty() ? "--duration: expected a positive number of seconds" : err.c_str());
    return kExitUsage;
  }
  std::unique_ptr<Session> session;
  nlohmann::json startedRaw;  // what a SIGHUP compares the file with
  EngineConfig applied;
  try {
    const auto path = a.value("--config");
    if (path) startedRaw = readJsonFile(*path);
    TollgateConfig cfg = path ? ConfigLoader::fromJson(startedRaw, *path) : loadConfig(std::nullopt);
    if (!cfg.gateway) {
      std::fprintf(stderr,
                   "tollgate serve: %s has no \"gateway\" section: add one with \"listen\" and \"routes\" (see "
                   "examples/gateway-openai.json, installed under /usr/share/tollgate/examples/)\n",
                   cfg.file.c_str());
      return kExitUsage;
    }
    if (auto listen = a.value("--listen")) (*cfg.gateway)["listen"] = *listen;
    applied = cfg.engine;
    session = std::make_unique<Session>(std::move(cfg));
  } catch (const std::exception& e) {
    // --listen is written into the config's gateway section: its error named the config file, not the flag.
    const std::string what = e.what(), at = "/gateway/listen: ";
    const auto pos = what.find(at);
    if (const auto listen = a.value("--listen"); listen && pos != std::string::npos)
      std::fprintf(stderr, "tollgate serve: --listen %s: %s\n", listen->c_str(), what.c_str() + pos + at.size());
    else
      std::fprintf(stderr, "tollgate serve: %s\n", e.what());
    return kExitUsage;
  }
  applyHistoryFlag(*session, a.value("--history"));
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGHUP, onHangUp);
  try {
    session->start(/*startSyntheticWorkload=*/false, /*gatewayRequired=*/true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate serve: %s\n", e.what());
    return kExitFailed;
  }
  if (!session->gateway()) {
    std::fprintf(stderr, "tollgate serve: %s\n", session->gatewayError().c_str());
    return kExitFailed;
  }
  const bool quiet = a.isSet("--quiet");
  std::printf("gateway: http://%s\n", session->gateway()->listenAddress().c_str());
  for (const auto& r : session->gatewayConfig().routes)
    std::printf("route: http://%s%s -> group %s\n", session->gateway()->listenAddress().c_str(), r.prefix.c_str(),
                r.group.c_str());
  if (!session->simulatorUrl().empty()) std::printf("embedded simulator: %s\n", session->simulatorUrl().c_str());
  std::fflush(stdout);

  // A service's output goes to a journal or a file: a status block a second was ~26 MB a day there.
  const auto every = isatty(STDOUT_FILENO) ? std::chrono::seconds(1) : std::chrono::seconds(60);
  auto last = std::chrono::steady_clock::now();
  SnapshotPtr prev;
  while (!gStop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (gReload.exchange(false)) {
      if (const auto path = a.value("--config"))
        reloadConfig(*session, *path, a.value("--listen"), startedRaw, applied);
      else
        logWarn("serve", "SIGHUP: nothing to reload: this is the embedded demo (start with --config FILE)");
    }
    if (duration && session->elapsedS() >= *duration) {
      gStop = true;  // the stop is under way: a signal during its drain exits at once, as a second one does
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (quiet || now - last < every) continue;
    SnapshotPtr snap = session->engine().latestSnapshot();
    std::printf("--- t=%.0fs  gateway: %d connections\n", session->elapsedS(), session->gateway()->openConnections());
    for (const auto& g : snap->groups) {
      const GroupSnapshot* pg = prev ? prev->find(g.group) : nullptr;
      const double dt = std::chrono::duration<double>(now - last).count();
      const double ok = pg && dt > 0 ? static_cast<double>(g.counters.ok - pg->counters.ok) / dt : 0;
      std::printf("%-12s ok %6.1f/s  429 %llu  shed %llu  q %d/%d/%d  in-flight %d/%d%s\n", g.group.c_str(), ok,
                  static_cast<unsigned long long>(g.counters.r429), static_cast<unsigned long long>(g.counters.shed),
                  g.queueDepth[0], g.queueDepth[1], g.queueDepth[2], g.inFlight, g.concurrencyLimit,
                  g.waitReason.empty() ? "" : ("  waiting: " + g.waitReason).c_str());
    }
    std::fflush(stdout);
    prev = snap;
    last = now;
  }
  // An orderly stop: no new connection, queued requests answered 503 at once, and those the upstream is working on
  // get the request timeout (at most 30 s) to be answered; a second signal exits at once.
  session->stop(std::min(30.0, session->config().engine.requestTimeoutS + 1));
  return kExitOk;
}

}  // namespace tg::cli
