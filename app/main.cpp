// tollgate: the operator's app (GUI by default) and its command line. `tollgate --help` lists the commands,
// `tollgate COMMAND --help` each command's options, `tollgate --version` the version.
#include "cli.h"
#include "command_line.h"

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace tg::cli;
  // A file-size limit (ulimit -f) then fails a write with EFBIG, which each writer reports and takes back,
  // instead of killing the process mid-line with no word.
  std::signal(SIGXFSZ, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  // The dashboard's own options too (--replay, --screenshot, --pause-tier): its parser prints them after the usage.
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help"))
    return guiCommand(argc, argv, {"--help"});
  if (!args.empty() && (args[0] == "--version" || args[0] == "-v")) {
    std::printf("%s\n", versionText());
    return kExitOk;
  }
  // No command, or options first: the dashboard.
  const std::string cmd = args.empty() || args[0].rfind("--", 0) == 0 ? std::string("gui") : args[0];
  if (cmd != "gui") args.erase(args.begin());
  if (cmd == "run") return runCommand(args);
  if (cmd == "serve") return serveCommand(args);
  if (cmd == "headers") return headersCommand(args);
  if (cmd == "probe") return probeCommand(args);
  if (cmd == "history") return historyCommand(args);
  if (cmd == "replay") return replayCommand(args);
  if (cmd == "gui") return guiCommand(argc, argv, args);
  std::fprintf(stderr, "tollgate: unknown command \"%s\"\n%s", cmd.c_str(), kUsage);
  return kExitUsage;
}
