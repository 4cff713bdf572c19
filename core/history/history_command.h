// What `tollgate history ...` does with a history file: list incidents, show a range, export, check.
// Reads only (HistoryReader). The command line itself (usage, exit codes) lives in app/history_cli.cpp;
// this takes the parsed options and returns a typed outcome.
#pragma once

#include "types.h"

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

enum class HistoryAction { Incidents, Show, Export, Check };

std::string_view historyActionName(HistoryAction a);  // "incidents", "show", "export", "check"
std::optional<HistoryAction> historyActionFromName(std::string_view name);

// The options of one history action, as the operator wrote them (values are checked here, in the order the
// action needs them, so a bad value is reported the same way from every caller).
struct HistoryRequest {
  HistoryAction action = HistoryAction::Check;
  std::string db;
  bool strict = false;  // immutable read: nothing is created next to the file
  std::optional<std::string> id;      // incidents: one incident
  std::optional<std::string> from;    // show, export: T (see parseHistoryTime)
  std::optional<std::string> to;
  std::optional<std::string> group;   // show
  std::optional<std::string> points;  // show: 1..100000, default 60
  std::optional<std::string> format;  // export: csv | jsonl
  std::optional<std::string> what;    // export: samples | events | requests
  std::optional<std::string> out;     // export: a file instead of `out`
  EpochMs nowMs = 0;                  // what "now" and relative times count from
};

struct HistoryOutcome {
  enum class Status {
    Ok,
    BadRequest,  // an option's value is wrong (the message names it)
    Failed,      // the file is refused or damaged, or a write failed
  };
  Status status = Status::Ok;
  std::string error;               // one line, without newline; may be empty when status is Failed
  std::vector<std::string> notes;  // warnings and summaries for the operator, in order, before `error`
  bool ok() const { return status == Status::Ok; }
};

// Runs the action; its report goes to `out`. Not thread-safe with respect to `out`.
HistoryOutcome runHistoryAction(const HistoryRequest& request, std::ostream& out);

// T: epoch ms, ISO-8601 UTC (2026-11-29T02:00:00Z, optional .mmm), a date, "now", or relative
// (-90s, -15m, -1h, -2d) counted back from nowMs. Nothing outside 0000-01-01 .. 9999-12-31.
std::optional<EpochMs> parseHistoryTime(const std::string& text, EpochMs nowMs);

}  // namespace tg
