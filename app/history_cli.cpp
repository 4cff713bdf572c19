#include "history_cli.h"

#include "cli.h"
#include "command_line.h"
#include "history_command.h"
#include "session.h"

#include <iostream>

namespace tg {
namespace {

using cli::CommandLine;

constexpr const char* kTimes = "  T: epoch ms, 2026-11-29T02:00:00Z, now, or relative -90s/-15m/-1h/-2d";

constexpr const char* kSynopses[] = {
    "usage: tollgate history incidents [--db FILE] [--id N]\n",
    "usage: tollgate history show [--db FILE] --from T --to T [--group G] [--points N]\n",
    "usage: tollgate history export [--db FILE] --from T --to T --format csv|jsonl [--what samples|events|requests] "
    "[--out FILE]\n",
    "usage: tollgate history check [--db FILE]\n",
};

std::string overallUsage() {
  std::string text;
  for (const char* s : kSynopses) text += text.empty() ? s : "       " + std::string(s).substr(7);
  return text + kTimes + "; --strict: immutable read\n  tollgate history ACTION --help: that action's options\n";
}

std::vector<CommandLine::Option> optionsOf(HistoryAction action) {
  std::vector<CommandLine::Option> o = {{"--db", "FILE", "the history file (default: the user's)"}};
  const CommandLine::Option from{"--from", "T", "start of the range"}, to{"--to", "T", "end of the range (after --from)"};
  switch (action) {
    case HistoryAction::Incidents:
      o.push_back({"--id", "N", "one incident in full, with its operator actions"});
      break;
    case HistoryAction::Show:
      o.insert(o.end(), {from, to, {"--group", "G", "one group (default: all)"},
                         {"--points", "N", "rows per group, 1..100000 (default: 60)"}});
      break;
    case HistoryAction::Export:
      o.insert(o.end(), {from, to, {"--format", "csv|jsonl", "output format"},
                         {"--what", "samples|events|requests", "what to export (default: samples)"},
                         {"--out", "FILE", "write to FILE instead of stdout"}});
      break;
    case HistoryAction::Check:
      break;
  }
  o.push_back({"--strict", "", "immutable read: nothing is created or locked next to the file"});
  return o;
}

int exitCode(HistoryOutcome::Status s) {
  switch (s) {
    case HistoryOutcome::Status::Ok: return cli::kExitOk;
    case HistoryOutcome::Status::BadRequest: return cli::kExitUsage;
    case HistoryOutcome::Status::Failed: return cli::kExitFailed;
  }
  return cli::kExitFailed;
}

}  // namespace

int runHistoryCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err,
                      const std::optional<std::string>& defaultDb) {
  std::size_t i = 0;
  if (i < argv.size() && argv[i] == "history") ++i;
  if (i >= argv.size()) {
    err << "history: missing subcommand (incidents, show, export, check)\n" << overallUsage();
    return cli::kExitUsage;
  }
  const std::string name = argv[i++];
  if (name == "--help" || name == "-h") {
    out << overallUsage();
    return cli::kExitOk;
  }
  const std::optional<HistoryAction> action = historyActionFromName(name);
  if (!action) {
    err << "history: unknown subcommand '" << name << "' (expected incidents, show, export or check)\n"
        << overallUsage();
    return cli::kExitUsage;
  }
  const std::string label = "history " + name;
  const bool takesTimes = *action == HistoryAction::Show || *action == HistoryAction::Export;
  CommandLine a(std::string{kSynopses[static_cast<int>(*action)]} + (takesTimes ? kTimes + std::string("\n") : ""),
                optionsOf(*action), CommandLine::Quote::Single);
  if (auto answered = a.parseOrAnswer({argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end()}, label, out, err))
    return *answered;
  HistoryRequest r;
  r.action = *action;
  if (auto db = a.value("--db")) r.db = *db;
  else if (defaultDb) r.db = *defaultDb;
  else {
    err << label << ": missing --db FILE\n";
    return cli::kExitUsage;
  }
  r.strict = a.isSet("--strict");
  r.id = a.value("--id");
  r.from = a.value("--from");
  r.to = a.value("--to");
  r.group = a.value("--group");
  r.points = a.value("--points");
  r.format = a.value("--format");
  r.what = a.value("--what");
  r.out = a.value("--out");
  r.nowMs = nowEpochMs();
  const HistoryOutcome outcome = runHistoryAction(r, out);
  for (const auto& note : outcome.notes) err << note << "\n";
  if (!outcome.error.empty()) err << outcome.error << "\n";
  // What went to standard output must have arrived (`> /dev/full` exited 0 with nothing written).
  if (outcome.error.empty() && !out.flush()) {
    err << label << ": cannot write to standard output\n";
    return cli::kExitFailed;
  }
  return exitCode(outcome.status);
}

int cli::historyCommand(const std::vector<std::string>& args) {
  return runHistoryCommand(args, std::cout, std::cerr, Session::defaultHistoryPath());
}

}  // namespace tg
