// The meta table: key/value text rows the writer keeps its progress in (how far retention and incident
// detection have gone). Writer thread only (one connection, one owner).
#pragma once

#include "sqlite_db.h"
#include "types.h"

#include <optional>
#include <string>

namespace tg::history {

inline constexpr const char* kMetaIncidentsScannedTo = "incidents_scanned_to";
inline constexpr const char* kMetaRolledThrough = "full_resolution_from";  // samples before this were expired
inline constexpr const char* kMeta10sFrom = "tier_10s_from";                 // 10 s rows before this were expired

// A time stamp kept under `key`, or nothing when the key is absent. The table is plain text anyone can
// edit: a value that is not a whole integer throws sql::Error naming the file (`path`) and the key.
std::optional<EpochMs> readMetaMs(sql::Db& db, const char* key, const std::string& path);
// Inserts or replaces `key`; call inside the caller's transaction.
void writeMetaMs(sql::Db& db, const char* key, EpochMs value);

}  // namespace tg::history
