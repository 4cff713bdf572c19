// Incident persistence: runs the IncidentDetector over the samples written since the last run (re-examining
// the tail, so an incident still growing is updated in place and keeps its id) and stores what it finds in
// the incidents table; how far it got is kept in the meta table.
//
// Writer thread only (not thread-safe). Errors throw sql::Error; the HistoryWriter reports them.
#pragma once

#include <limits>

#include "history_types.h"
#include "sqlite_db.h"

#include <string>

namespace tg {

class IncidentRecorder {
 public:
  // `db` (the file at `path`) must outlive the recorder.
  IncidentRecorder(sql::Db& db, std::string path, IncidentOptions opts, std::int64_t retainMs);

  // Scans what came since the last scan. `unscannedFrom`, `unscannedTo`: the earliest and latest sample written
  // since then; those behind the scan's mark (a clock stepped back) are scanned too, or they never were.
  void detectNew(EpochMs unscannedFrom = std::numeric_limits<EpochMs>::max(),
                 EpochMs unscannedTo = std::numeric_limits<EpochMs>::min());

 private:
  sql::Db& db_;
  std::string path_;
  IncidentOptions opts_;
  std::int64_t retainMs_;
};

}  // namespace tg
