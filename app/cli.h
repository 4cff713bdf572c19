// The tollgate subcommands. Each returns the process exit code: 0 ok, 1 runtime failure, 2 usage or
// configuration error (the message names the argument, or the file, JSON path and expectation).
#pragma once

#include "config_loader.h"

#include <optional>
#include <string>
#include <vector>

namespace tg {
class Session;
}

namespace tg::cli {

inline constexpr const char* kUsage =
    "usage:\n"
    "  tollgate [--config FILE] [--history FILE|off]   dashboard (default: embedded simulator + demo workload)\n"
    "  tollgate --replay HISTORY.db          replay a history file read-only (e.g. copied from another machine)\n"
    "  tollgate run --headless [--config FILE] [--workload JOB.jsonl] [--results FILE] [--duration S]\n"
    "               [--report report.json] [--history FILE|off] [--quiet]\n"
    "  tollgate headers [--status N] [--now EPOCH] [--max-wait S]   < raw response header lines\n"
    "  tollgate probe [--config FILE] --group G [--steps 1,2,4,8,16] [--step-s 5] [--path /v1/x]\n"
    "  tollgate history incidents|show|export|check --db FILE [...]\n"
    "  tollgate replay --incident ID | --from MS --to MS [--db FILE] [--override FILE] [--report out.json] [--speed K]\n";

// Small argument reader: --flag VALUE pairs and bare --switches; anything else is an error.
class Args {
 public:
  Args(std::vector<std::string> args, std::vector<std::string> valueFlags, std::vector<std::string> switches);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::optional<std::string> value(const std::string& flag) const;
  bool has(const std::string& flag) const;
  // Every number on the command line is a count, a duration or an epoch time: finite, 0..kMaxNumber, and
  // the whole word ("4abc", "nan", "-1", "1e400" are errors naming the flag).
  static constexpr double kMaxNumber = 1e15;
  std::optional<double> number(const std::string& flag, std::string* error) const;

 private:
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::string> switches_;
  std::string error_;
};

// The whole of `text` as an integer in [1, max], else nothing.
std::optional<int> parsePositiveInt(const std::string& text, int max);

// Loads --config FILE, or the embedded demo config when absent. Throws ConfigError.
TollgateConfig loadConfig(const std::optional<std::string>& path);

// --history FILE | off; without it, the config's history.path or the default file.
void applyHistoryFlag(Session& s, const std::optional<std::string>& flag);

int runCommand(const std::vector<std::string>& args);
int headersCommand(const std::vector<std::string>& args);
int probeCommand(const std::vector<std::string>& args);
int historyCommand(const std::vector<std::string>& args);
int replayCommand(const std::vector<std::string>& args);  // replay_cli.cpp
int guiCommand(int argc, char** argv, const std::vector<std::string>& args);

}  // namespace tg::cli
