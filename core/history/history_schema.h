// The history file's schema, its forward migrations, and the checks that decide whether an existing file
// may be opened at all. Private to tollgate_history.
#pragma once

#include "history_types.h"
#include "sqlite_db.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tg::history {

inline constexpr int kSchemaVersion = 5;
inline constexpr int kApplicationId = 0x54474853;  // "TGHS"

struct MetricDef {
  const char* name;        // public name (metricName); column stem in rollups of schema <= 3
  const char* sampleExpr;  // expression over a samples row (schema <= 3)
  // Schema 4 (the compact encoding, see history_schema.cpp):
  const char* stem4;        // rollup column stem: <stem4>_min, <stem4>_max, <stem4>_sum or <stem4>_avg
  const char* sampleExpr4;  // expression over a samples row, in stored units
  bool summed;              // an integer that is never unknown: rollups keep the exact sum, avg = sum / n
  bool roundAvg;            // the stored avg is rounded to whole stored units (latency: 1 us)
  double scale;             // stored units per reported unit (1000: latencies stored as integer us)
};
const MetricDef& metricDef(Metric m);

// SQL pieces for one metric of a file of schema `version`, all in stored units (divide by metricScale()).
std::string metricSampleExpr(int metric, int version);  // over a samples row
std::string rollupMinCol(int metric, int version);
std::string rollupMaxCol(int metric, int version);
std::string rollupWeightedSum(int metric, int version);  // over a rollup row: avg * n (or the stored sum)
std::string rollupWeight(int metric, int version);       // over a rollup row: n where the avg is known, else 0
std::string rollupAvgOfRow(int metric, int version);     // over a rollup row: its avg
double metricScale(int metric, int version);

inline constexpr std::int64_t kTier10sMs = 10'000;
inline constexpr std::int64_t kTier1mMs = 60'000;

enum class RollupScope {
  AllSamples,  // every sample, merged into existing rows (migration)
  Replace,     // ?1 group, [?2, ?3): recompute rows from the samples (the writer, as rows arrive)
  Merge,       // ?1 group, [?2, ?3): add samples to existing rows (late samples for an already expired span)
  ReplaceFrom10s,  // like Replace, but from the 10 s tier (6 rows a minute instead of 60); averages of metrics
                   // that were partly unknown within a 10 s row are weighted by its sample count
};
// INSERT ... SELECT that aggregates `samples` into a rollup table of tierMs rows (min/max/avg per Metric).
std::string rollupFromSamplesSql(const std::string& table, std::int64_t tierMs, RollupScope scope);

// Inspects `path` without writing to it (read-only connection, after a raw header check) and returns its
// schema version: 0 for a missing or empty file. Throws sql::Error with a message fit for an operator when
// the file must be refused: not SQLite, another application's database, newer schema, corrupt.
int inspectFile(const std::string& path, bool quickCheck);

// Same checks on an already-open connection (used by the reader, whose connection may be immutable).
int inspectOpen(sql::Db& db, const std::string& path, bool quickCheck);

// Brings a writable connection to kSchemaVersion, creating the schema for a new file. One transaction
// per step, so a crash mid-migration leaves the previous version intact.
void migrate(sql::Db& db);

// Column list of `samples` in the order bindSample binds them (written: current schema).
extern const char* const kSampleColumns;
// Select list giving readSample's columns for a file of `version` (older files lack later columns; they
// read as 0; schema 4's encodings are decoded in SQL).
std::string sampleColumnsFor(int version);
void bindSample(sql::Stmt& st, std::int64_t groupId, const Sample& s);  // binds ?1..?25
Sample readSample(const sql::Stmt& st, int firstCol);                  // group left empty
// Latency as stored by schema 4: integer microseconds, NaN (unknown) and non-finite as NULL.
std::optional<std::int64_t> latencyToUs(double ms);

// Events: message and detail pass through SecretRegistry::redact on the way in.
std::string eventKindText(EventKind k);
Event readEvent(const sql::Stmt& st, int firstCol);  // ts, kind, severity, grp, message, detail

// Rows in [fromMs, toMs), all groups when `groups` is empty; samples ordered by group then time,
// events by time. Engine-wide events (empty group) are included whatever the group filter.
std::vector<Sample> loadSamples(sql::Db& db, int version, EpochMs fromMs, EpochMs toMs, const std::vector<std::string>& groups);
std::vector<Event> loadEvents(sql::Db& db, EpochMs fromMs, EpochMs toMs, const std::vector<std::string>& groups,
                              const std::vector<EventKind>& kinds);
// (id, name) of every group, by name.
std::vector<std::pair<std::int64_t, std::string>> loadGroups(sql::Db& db);

std::string incidentToDetailJson(const Incident& inc);
void incidentFromDetailJson(const std::string& json, Incident& inc);

}  // namespace tg::history
