// The short Markdown report of a replayed window or incident: a summary, a timeline of events (operator
// actions marked) and the charts' pictures, referenced by file name (PNG files next to the .md).
#pragma once

#include "history_types.h"

#include <optional>
#include <string>
#include <vector>

namespace tg {

struct IncidentReport {
  std::string title;                  // e.g. "Incident 3" or "History 12:00–12:15"
  EpochMs fromMs = 0, toMs = 0;
  std::optional<Incident> incident;
  std::vector<Event> events;          // oldest first
  std::vector<std::pair<std::string, std::string>> images;  // (caption, file name relative to the .md)
  std::string source;                 // the history file

  std::string markdown() const;
};

}  // namespace tg
