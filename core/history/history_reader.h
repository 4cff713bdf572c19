// Read side of the history file, for charts, replay and the CLI. Its own read-only connection
// (SQLITE_OPEN_READONLY, mode=ro): it never writes to the database file. Every query is one short read
// transaction, so a live writer is never held up.
//
// Strict mode opens with immutable=1 as well: SQLite then creates no -wal/-shm files and takes no locks,
// for a file copied from another machine or on read-only media. The price: rows still in a -wal file next
// to it are invisible (warning() says so).
//
// Not thread-safe: one owner thread; open one reader per thread.
#pragma once

#include "history_types.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tg {

struct HistoryReaderOptions {
  bool strict = false;       // immutable=1: nothing at all is created or locked next to the file
  bool quickCheck = false;   // PRAGMA quick_check on open (O(file size))
  int busyTimeoutMs = 250;
};

class HistoryReader {
 public:
  // Refuses (nullptr, *error set) a missing file, a non-SQLite or corrupt file, another application's
  // database and a newer schema. Older schemas are read as they are (never migrated). Caller owns it.
  static std::unique_ptr<HistoryReader> open(const std::string& path, HistoryReaderOptions opts, std::string* error);
  ~HistoryReader();
  HistoryReader(const HistoryReader&) = delete;
  HistoryReader& operator=(const HistoryReader&) = delete;

  int schemaVersion() const;
  const std::string& warning() const;  // e.g. strict mode with a -wal file present; empty if none

  // Per group, buckets of ceil((to - from) / maxPoints) ms over [fromMs, toMs) with min/max/avg of every
  // Metric, computed by SQLite; where full resolution was already rolled up, the per-minute rollups fill in
  // (so a spike's max survives). At most maxPoints buckets per series. Empty `groups` = all.
  HistoryResult<std::vector<SampleSeries>> samples(EpochMs fromMs, EpochMs toMs, const std::vector<std::string>& groups,
                                                   int maxPoints);
  // Full-resolution rows as stored (NaN where unknown), for replay. Ordered by group, then time.
  HistoryResult<std::vector<Sample>> rawSamples(EpochMs fromMs, EpochMs toMs, const std::vector<std::string>& groups);
  // Events in [fromMs, toMs); empty filters = all. Engine-wide events (no group) pass any group filter.
  HistoryResult<std::vector<Event>> events(EpochMs fromMs, EpochMs toMs, const std::vector<std::string>& groups,
                                           const std::vector<EventKind>& kinds);
  // Per-minute rows (perMinute) or totals per (group, key fingerprint, endpoint), busiest first.
  HistoryResult<std::vector<RequestRow>> requestTable(EpochMs fromMs, EpochMs toMs, bool perMinute = false);
  HistoryResult<std::vector<std::string>> groups();
  HistoryResult<TimeRange> timeRange();  // over samples, rollups and events
  HistoryResult<std::vector<Incident>> incidents();
  HistoryResult<std::optional<Incident>> incident(std::int64_t id);
  // Incidents in the samples the writer has not scanned yet (it scans every 30 s and at a clean stop: after a
  // kill -9 the last one was in no list until a later run). Found here in memory with the default thresholds,
  // id 0; the writer's next run records them. Empty when the file is scanned to its newest sample.
  HistoryResult<std::vector<Incident>> unscannedIncidents();
  // The last event of `kind` at or before `atMs` (the kind's index: no walk through other events), if any.
  HistoryResult<std::optional<Event>> lastEvent(EventKind kind, EpochMs atMs);

  // For `history check`: PRAGMA integrity_check lines ("ok" when sound), and row counts per table.
  HistoryResult<std::vector<std::string>> integrityCheck();
  HistoryResult<std::vector<std::pair<std::string, std::int64_t>>> rowCounts();

 private:
  struct Impl;
  explicit HistoryReader(std::unique_ptr<Impl> d);
  std::unique_ptr<Impl> d_;
};

// What `out` would overwrite of the history file `db` (the file itself, or its -wal, -shm or -journal beside it,
// where a killed writer's last samples may be all that holds them): a description, or empty when nothing.
std::string historyFileClash(const std::string& out, const std::string& db);

}  // namespace tg
