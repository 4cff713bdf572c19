// tollgate: the operator's app (GUI by default) and its command line. `tollgate --help` lists the commands,
// `tollgate COMMAND --help` each command's options, `tollgate --version` the version.
#include "cli.h"
#include "command_line.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {
// What a command printed is its answer: `> /dev/full` (or a pipe whose reader left) exited 0 with nothing written
// for run's report, headers, probe, check and --version. Not for serve and the dashboard, whose lines are progress
// (a journald restart breaks serve's pipe, and a clean stop then failed the unit).
int answerWritten(int rc, const std::string& cmd) {
  errno = 0;
  std::cout.flush();
  const bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
  const int why = errno;
  if (rc != tg::cli::kExitOk || ok) return rc;
  std::fprintf(stderr, "tollgate%s%s: cannot write to standard output%s%s\n", cmd.empty() ? "" : " ", cmd.c_str(),
               why ? ": " : "", why ? std::strerror(why) : "");
  return tg::cli::kExitFailed;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace tg::cli;
  // A file-size limit (ulimit -f) then fails a write with EFBIG, which each writer reports and takes back,
  // instead of killing the process mid-line with no word.
  std::signal(SIGXFSZ, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  // The dashboard's own options too (--replay, --screenshot, --pause-tier): its parser prints them after the usage.
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help"))
    return answerWritten(guiCommand(argc, argv, {"--help"}), "");
  if (!args.empty() && (args[0] == "--version" || args[0] == "-v")) {
    std::printf("%s\n", versionText());
    return answerWritten(kExitOk, "");
  }
  // No command, or options first: the dashboard; `tollgate gui ...` names it (its parser took "gui" for an argument).
  const std::string cmd = args.empty() || args[0].rfind("--", 0) == 0 ? std::string("gui") : args[0];
  if (!args.empty() && args[0] == cmd) args.erase(args.begin());
  // serve's and the dashboard's own lines are progress; their --help and --version are answers.
  const bool asksForText = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--help" || a == "-h" || a == "--version" || a == "-v";
  });
  if (cmd == "serve") return asksForText ? answerWritten(serveCommand(args), cmd) : serveCommand(args);
  if (cmd == "gui") return asksForText ? answerWritten(guiCommand(argc, argv, args), "") : guiCommand(argc, argv, args);
  int rc = kExitUsage;
  if (cmd == "run") rc = runCommand(args);
  else if (cmd == "headers") rc = headersCommand(args);
  else if (cmd == "probe") rc = probeCommand(args);
  else if (cmd == "history") rc = historyCommand(args);
  else if (cmd == "replay") rc = replayCommand(args);
  else if (cmd == "check") rc = checkCommand(args);
  else std::fprintf(stderr, "tollgate: unknown command \"%s\"\n%s", cmd.c_str(), kUsage);
  return answerWritten(rc, cmd);
}
