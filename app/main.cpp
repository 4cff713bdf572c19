// tollgate: the operator's app (GUI by default) and its command line.
//
//   tollgate [--config FILE]                      dashboard on the config (default: embedded demo)
//   tollgate run --headless [--config FILE] [--workload JOB.jsonl] [--results FILE] [--duration S]
//                [--report report.json] [--history FILE]
//   tollgate headers [--status N] [--now EPOCH] [--max-wait S]   < raw response headers
//   tollgate probe [--config FILE] --group G [--steps 1,2,4,8] [--step-s 5] [--path /v1/...]
//   tollgate history incidents|show|export|check --db FILE ...
//   tollgate replay --incident ID [--db FILE] [--override FILE] [--report out.json] [--speed K]
#include "cli.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::fputs(tg::cli::kUsage, stdout);
    return 0;
  }
  const std::string cmd = args.empty() || args[0].rfind("--", 0) == 0 ? std::string("gui") : args[0];
  if (cmd != "gui") args.erase(args.begin());
  if (cmd == "run") return tg::cli::runCommand(args);
  if (cmd == "headers") return tg::cli::headersCommand(args);
  if (cmd == "probe") return tg::cli::probeCommand(args);
  if (cmd == "history") return tg::cli::historyCommand(args);
  if (cmd == "replay") return tg::cli::replayCommand(args);
  if (cmd == "gui") return tg::cli::guiCommand(argc, argv, args);
  std::fprintf(stderr, "tollgate: unknown command \"%s\"\n%s", cmd.c_str(), tg::cli::kUsage);
  return 2;
}
