// tollgate-sim: a rate-limited HTTP/1.1 server on loopback that behaves like real providers, so Tollgate
// runs without an account and the engine's integration tests hit a real server.
//
//   tollgate-sim [--config FILE] [--port N] [--host 127.0.0.1]
//
// Prints "tollgate-sim listening on HOST:PORT" once bound; runs until SIGINT/SIGTERM, then exits 0.
// Exit 2: bad arguments or config (message names file, JSON path and expectation); exit 1: cannot listen.
#include "command_line.h"
#include "config_error.h"
#include "sim_config.h"
#include "sim_server.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr int kExitConfig = 2;
constexpr int kExitRuntime = 1;

constexpr const char* kSynopsis =
    "usage: tollgate-sim [--config FILE] [--port N] [--host 127.0.0.1] | --version\n"
    "  Without --config a built-in default runs (groups interactive and batch, x-ratelimit headers).\n"
    "  Endpoints: any path is a rate-limited API; GET /__sim/stats, POST /__sim/control, POST /__sim/reset.\n";

bool parsePort(const std::string& s, int& port) {
  // Digits only: strtol took " 0" and "+5", against the rule every other number on the command line keeps.
  if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  const long v = std::strtol(s.c_str(), nullptr, 10);
  if (v > 65535) return false;
  port = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "-v")) {
    std::puts("tollgate-sim " TOLLGATE_VERSION);
    return 0;
  }
  tg::cli::CommandLine args(kSynopsis, {{"--config", "FILE", "simulator config (default: the built-in one)"},
                                        {"--port", "N", "port to listen on, 0..65535 (0: any free port)"},
                                        {"--host", "HOST", "loopback host to listen on (127.0.0.1, ::1, localhost)"}});
  switch (args.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    case tg::cli::CommandLine::Result::Help:
      std::fputs(args.usage().c_str(), stdout);
      return 0;
    case tg::cli::CommandLine::Result::Error:
      std::cerr << "tollgate-sim: " << args.error() << "\n" << args.usage();
      return kExitConfig;
    case tg::cli::CommandLine::Result::Ok:
      break;
  }
  const std::string configFile = args.value("--config").value_or("");
  const std::string host = args.value("--host").value_or("");
  int port = -1;
  if (auto p = args.value("--port"); p && !parsePort(*p, port)) {
    std::cerr << "tollgate-sim: --port expects 0..65535, got \"" << *p << "\"\n";
    return kExitConfig;
  }

  tg::SimConfig config;
  try {
    config = configFile.empty() ? tg::SimConfig::builtinDefault() : tg::SimConfig::fromFile(configFile);
  } catch (const tg::ConfigError& e) {
    std::cerr << "tollgate-sim: config error: " << e.what() << "\n";
    return kExitConfig;
  }
  if (!host.empty()) {
    if (!tg::isLoopbackHost(host)) {
      std::cerr << "tollgate-sim: --host expects a loopback host (127.0.0.1, ::1, localhost), got \"" << host
                << "\"\n";
      return kExitConfig;
    }
    config.host = host;
  }
  if (port >= 0) config.port = port;

  // Block the stop signals before the server thread starts so only sigwait() below receives them.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  tg::SimServer server(config);
  int bound = 0;
  try {
    bound = server.start(config.host, config.port);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitRuntime;
  }
  std::printf("tollgate-sim listening on %s:%d\n", config.host.c_str(), bound);
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stopSignals, &sig);
  server.stop();
  return 0;
}
