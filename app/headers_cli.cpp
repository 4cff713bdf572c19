#include "headers_cli.h"

#include "cli.h"
#include "command_line.h"
#include "headers_command.h"
#include "time_formats.h"
#include "types.h"

#include <iostream>
#include <optional>
#include <stdexcept>

namespace tg {
namespace {

using cli::CommandLine;

constexpr const char* kSynopsis =
    "usage: tollgate headers [--status N] [--now EPOCH] [--max-wait S] < response-headers.txt\n";

// The values in the order given (a later one replaces an earlier one); the first bad one is the error.
std::optional<std::string> readOptions(const CommandLine& a, HeadersOptions& o, std::optional<double>& now) {
  for (const auto& [name, v] : a.valuesInOrder()) {
    if (name == "--status") {
      o.status = parseHttpStatus(v);
      if (!o.status) return "--status '" + v + "' is not an HTTP status (100-599)";
      continue;
    }
    // The command line's one number rule (whole word, finite, 0..1e15): "+5" and 1e300 passed parseDecimal.
    auto seconds = CommandLine::parseNumber(v);
    if (!seconds) return name + " '" + v + "' is not a number of seconds from 0 to 1e15";
    if (name == "--now") now = *seconds;
    else o.maxWaitS = *seconds;
  }
  return std::nullopt;
}

}  // namespace

int runHeadersCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  CommandLine a(kSynopsis,
                {{"--status", "N", "HTTP status of the response (default: from an \"HTTP/1.1 429 ...\" line)", true},
                 {"--now", "EPOCH", "local wall clock in epoch seconds (default: now); reset_at = now + reset_in_s",
                  true},
                 {"--max-wait", "S", "longest server-directed wait before the verdict is \"exhausted\" (default: 120)",
                  true}},
                CommandLine::Quote::Single);
  const CommandLine::Result parsed = a.parse(args);
  if (parsed == CommandLine::Result::Error) {
    err << "tollgate headers: " << a.error() << "\n" << a.usage();
    return cli::kExitUsage;
  }
  HeadersOptions o;
  std::optional<double> now;
  if (auto problem = readOptions(a, o, now)) {
    err << "tollgate headers: " << *problem << "\n" << a.usage();
    return cli::kExitUsage;
  }
  if (parsed == CommandLine::Result::Help) {
    out << a.usage();
    return cli::kExitOk;
  }
  try {
    out << describeResponseHead(in, o, now.value_or(static_cast<double>(nowEpochMs()) / 1000.0), err);
  } catch (const std::invalid_argument& e) {
    err << "tollgate headers: " << e.what() << "\n";
    return cli::kExitUsage;
  }
  return cli::kExitOk;
}

int cli::headersCommand(const std::vector<std::string>& args) {
  return runHeadersCommand(args, std::cin, std::cout, std::cerr);
}

}  // namespace tg
