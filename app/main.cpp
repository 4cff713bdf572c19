// tollgate: the operator's app (GUI by default) and its command line. `tollgate --help` lists the commands,
// `tollgate COMMAND --help` each command's options, `tollgate --version` the version.
#include "cli.h"
#include "command_line.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
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
  int rc = kExitUsage;
  if (cmd == "run") rc = runCommand(args);
  else if (cmd == "serve") rc = serveCommand(args);
  else if (cmd == "headers") rc = headersCommand(args);
  else if (cmd == "probe") rc = probeCommand(args);
  else if (cmd == "history") rc = historyCommand(args);
  else if (cmd == "replay") rc = replayCommand(args);
  else if (cmd == "check") rc = checkCommand(args);
  else if (cmd == "gui") rc = guiCommand(argc, argv, args);
  else std::fprintf(stderr, "tollgate: unknown command \"%s\"\n%s", cmd.c_str(), kUsage);
  // What a command printed is its answer: `> /dev/full` (or a closed pipe's reader gone) exited 0 with nothing
  // written for run's report, headers and probe.
  std::cout.flush();
  if (rc == kExitOk && (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout)) {
    std::fprintf(stderr, "tollgate %s: cannot write to standard output: %s\n", cmd.c_str(), std::strerror(errno));
    return kExitFailed;
  }
  return rc;
}
