// The tollgate subcommands, one function each. Each returns the process exit code (command_line.h):
// 0 ok, 1 runtime failure, 2 usage or configuration error (the message names the argument, or the file,
// JSON path and expectation). Each answers -h/--help with its own usage.
#pragma once

#include "config_loader.h"

#include <optional>
#include <string>
#include <vector>

namespace tg {
class Session;
}

namespace tg::cli {

// `tollgate --help`: every command in one screen.
extern const char* const kUsage;

// "tollgate X.Y.Z", from CMake's project(VERSION).
const char* versionText();

// Loads --config FILE, or the embedded demo config when absent. Throws ConfigError.
TollgateConfig loadConfig(const std::optional<std::string>& path);

// --history FILE | off; without it, the config's history.path or the default file.
void applyHistoryFlag(Session& s, const std::optional<std::string>& flag);

class CommandLine;
// --max-rps [GROUP=]N and --max-tpm [GROUP=]N (each repeatable): the operator's rate ceilings, written into
// `c` (no GROUP = all groups together; 0 = none). False with `error` naming the word when one is wrong.
bool applyRateCeilingFlags(const CommandLine& a, TollgateConfig& c, std::string* error);
inline constexpr const char* kMaxRpsHelp = "rate ceiling in requests/s, of GROUP or of all groups together (repeatable)";
inline constexpr const char* kMaxTpmHelp = "rate ceiling in tokens/min, of GROUP or of all groups together (repeatable)";

// `args` are the words after the subcommand's name.
int runCommand(const std::vector<std::string>& args);      // run_cli.cpp
int serveCommand(const std::vector<std::string>& args);    // serve_cli.cpp
int probeCommand(const std::vector<std::string>& args);    // probe_cli.cpp
int headersCommand(const std::vector<std::string>& args);  // headers_cli.cpp
int historyCommand(const std::vector<std::string>& args);  // history_cli.cpp
int replayCommand(const std::vector<std::string>& args);   // replay_cli.cpp
int checkCommand(const std::vector<std::string>& args);    // check_cli.cpp
int guiCommand(int argc, char** argv, const std::vector<std::string>& args);  // gui.cpp

}  // namespace tg::cli
