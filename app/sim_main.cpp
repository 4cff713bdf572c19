// tollgate-sim: a rate-limited HTTP/1.1 server on loopback that behaves like real providers, so Tollgate
// runs without an account and the engine's integration tests hit a real server.
//
//   tollgate-sim [--config FILE] [--port N] [--host 127.0.0.1]
//
// Prints "tollgate-sim listening on HOST:PORT" once bound; runs until SIGINT/SIGTERM, then exits 0.
// Exit 2: bad arguments or config (message names file, JSON path and expectation); exit 1: cannot listen.
#include "config_error.h"
#include "sim_config.h"
#include "sim_server.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

constexpr int kExitConfig = 2;
constexpr int kExitRuntime = 1;

void usage(std::FILE* to) {
  std::fputs(
      "usage: tollgate-sim [--config FILE] [--port N] [--host 127.0.0.1]\n"
      "  Without --config a built-in default runs (groups interactive and batch, x-ratelimit headers).\n"
      "  Endpoints: any path is a rate-limited API; GET /__sim/stats, POST /__sim/control, POST /__sim/reset.\n",
      to);
}

bool parsePort(const std::string& s, int& port) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0 || v > 65535) return false;
  port = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string configFile, host;
  int port = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--config" && hasValue) {
      configFile = argv[++i];
    } else if (a == "--port" && hasValue) {
      if (!parsePort(argv[++i], port)) {
        std::cerr << "tollgate-sim: --port expects 0..65535, got \"" << argv[i] << "\"\n";
        return kExitConfig;
      }
    } else if (a == "--host" && hasValue) {
      host = argv[++i];
    } else {
      std::cerr << "tollgate-sim: unknown or incomplete argument \"" << a << "\"\n";
      usage(stderr);
      return kExitConfig;
    }
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
