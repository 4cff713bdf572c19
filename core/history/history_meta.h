// The meta table: key/value text rows the writer keeps its progress in (how far retention and incident
// detection have gone). Writer thread only (one connection, one owner).
#pragma once

#include "sqlite_db.h"
#include "types.h"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tg::history {

inline constexpr const char* kMetaIncidentsScannedTo = "incidents_scanned_to";
inline constexpr const char* kMetaRolledThrough = "full_resolution_from";  // samples before this were expired
inline constexpr const char* kMeta10sFrom = "tier_10s_from";                 // 10 s rows before this were expired

// A time stamp kept under `key`, or nothing when the key is absent. The table is plain text anyone can
// edit: a value that is not a whole integer throws sql::Error naming the file (`path`) and the key.
std::optional<EpochMs> readMetaMs(sql::Db& db, const char* key, const std::string& path);
// Inserts or replaces `key`; call inside the caller's transaction.
void writeMetaMs(sql::Db& db, const char* key, EpochMs value);

// Each writing process keeps a row in meta while it writes: key "writer/<boot id>/<pid namespace>/<pid>/<start
// time>", value the epoch ms of its last committed write. A clean close removes it; a row left behind is a
// process that was killed or crashed, or a machine that went down, which nothing else in the file can tell from
// a process still writing beside this one.
std::string ownWriterKey();

struct EndedWriter {
  std::string key;
  std::int64_t pid = 0;
  EpochMs lastWriteMs = 0;
};
// What a writer has seen of the others' rows: each one's value and when, on this process's monotonic clock, it
// last changed. Silence is judged by it, not by comparing two processes' wall clocks (a clock step, a resume).
struct WriterSighting {
  std::string value;
  std::chrono::steady_clock::time_point changedAt;
};
using WriterSightings = std::map<std::string, WriterSighting>;

// The writers meta lists, other than this process, that cannot be running: on this boot of this machine (WAL
// shares the file only within one machine) under this process's pid namespace, a pid that is gone or now another
// process's (one that exists but cannot be read counts as running); one of an earlier boot; and one of another pid
// namespace (a container), or where namespaces cannot be told, silent for `silence`: its row's last write on the
// machine's monotonic clock (the same in every container of one boot) that long ago, or, a row without one, shown
// unchanged that long by `seen`. `next` gets the sightings to keep (none of the ended: the caller keeps them once
// it has recorded those).
std::vector<EndedWriter> endedWriters(sql::Db& db, const std::string& ownKey, const WriterSightings& seen,
                                      WriterSightings& next, std::chrono::steady_clock::time_point now,
                                      std::chrono::steady_clock::duration silence);

// A writer's row value: its last write, epoch ms, and the same moment on CLOCK_MONOTONIC (ms).
void writeWriterRow(sql::Db& db, const std::string& key, EpochMs lastWrite);

}  // namespace tg::history
