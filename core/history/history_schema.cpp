#include "history_schema.h"

#include "json_text.h"

#include "secret.h"
#include "sqlite_transaction.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace tg::history {
namespace {

// Schema 4 stores latencies as integer microseconds (3 bytes instead of an 8-byte double) and keeps, per
// rollup row, the exact integer sum of every count-like metric instead of a REAL average (1-2 bytes
// instead of 8). Remaining quota keeps an exact REAL average: it may be unknown within a row.
constexpr std::array<MetricDef, kMetricCount> kMetrics{{
    {"sends", "sends", "sends", "sends", true, false, 1},
    {"ok", "ok", "ok", "ok", true, false, 1},
    {"r429", "r429", "r429", "r429", true, false, 1},
    {"r5xx", "r5xx", "r5xx", "r5xx", true, false, 1},
    {"retries", "retries", "retries", "retries", true, false, 1},
    {"shed", "shed", "shed", "shed", true, false, 1},
    {"in_flight", "in_flight", "in_flight", "in_flight", true, false, 1},
    {"conc_limit", "conc_limit", "conc_limit", "conc_limit", true, false, 1},
    {"queue", "(q0 + q1 + q2)", "queue", "(q0 + q1 + q2)", true, false, 1},
    {"req_remaining", "req_remaining", "req_remaining", "req_remaining", false, false, 1},
    {"tok_remaining", "tok_remaining", "tok_remaining", "tok_remaining", false, false, 1},
    {"p50_ms", "p50_ms", "p50_us", "p50_us", false, true, 1000},
    {"p95_ms", "p95_ms", "p95_us", "p95_us", false, true, 1000},
    {"breaker", "breaker", "breaker", "breaker", true, false, 1},
}};

// Rollup columns of schemas 2 and 3 (all REAL min/max/avg), for the v1 -> v2 migration.
std::string rollupColumnsV2() {
  std::string s;
  for (const auto& m : kMetrics) {
    s += std::string(",\n  ") + m.name + "_min REAL, " + m.name + "_max REAL, " + m.name + "_avg REAL";
  }
  return s;
}

std::string rollupColumnsV4() {
  std::string s;
  for (const auto& m : kMetrics) {
    const std::string n = m.stem4;
    s += ",\n  " + n + "_min REAL, " + n + "_max REAL, " + n + (m.summed ? "_sum INTEGER" : "_avg REAL");
  }
  return s;
}

// Schema 2's INSERT ... SELECT over every sample (v1 -> v2 migration only; frozen).
std::string rollupAllSamplesSqlV2(const std::string& table, std::int64_t tierMs) {
  const std::string tier = std::to_string(tierMs);
  std::string cols = "group_id, ts_ms, n", select = "group_id, (ts_ms / " + tier + ") * " + tier + ", count(*)";
  std::string merge = "n = n + excluded.n";
  for (const auto& m : kMetrics) {
    const std::string n = m.name, e = m.sampleExpr;
    cols += ", " + n + "_min, " + n + "_max, " + n + "_avg";
    select += ", min(" + e + "), max(" + e + "), avg(" + e + ")";
    merge += ", " + n + "_min = coalesce(min(" + n + "_min, excluded." + n + "_min), " + n + "_min, excluded." + n + "_min)";
    merge += ", " + n + "_max = coalesce(max(" + n + "_max, excluded." + n + "_max), " + n + "_max, excluded." + n + "_max)";
    merge += ", " + n + "_avg = CASE WHEN " + n + "_avg IS NULL THEN excluded." + n + "_avg WHEN excluded." + n +
             "_avg IS NULL THEN " + n + "_avg ELSE (" + n + "_avg * n + excluded." + n + "_avg * excluded.n) / (n + excluded.n) END";
  }
  return "INSERT INTO " + table + "(" + cols + ") SELECT " + select +
         " FROM samples WHERE true GROUP BY group_id, 2 ON CONFLICT(group_id, ts_ms) DO UPDATE SET " + merge;
}

std::string maybeRound(const MetricDef& m, const std::string& e) { return m.roundAvg ? "round(" + e + ")" : e; }

}  // namespace

std::string metricSampleExpr(int i, int version) {
  return version >= 4 ? kMetrics[i].sampleExpr4 : kMetrics[i].sampleExpr;
}
std::string rollupMinCol(int i, int version) {
  return std::string(version >= 4 ? kMetrics[i].stem4 : kMetrics[i].name) + "_min";
}
std::string rollupMaxCol(int i, int version) {
  return std::string(version >= 4 ? kMetrics[i].stem4 : kMetrics[i].name) + "_max";
}
std::string rollupWeightedSum(int i, int version) {
  if (version >= 4 && kMetrics[i].summed) return std::string(kMetrics[i].stem4) + "_sum";
  return std::string(version >= 4 ? kMetrics[i].stem4 : kMetrics[i].name) + "_avg * n";
}
std::string rollupWeight(int i, int version) {
  if (version >= 4 && kMetrics[i].summed) return "n";
  return "CASE WHEN " + std::string(version >= 4 ? kMetrics[i].stem4 : kMetrics[i].name) + "_avg IS NULL THEN 0 ELSE n END";
}
std::string rollupAvgOfRow(int i, int version) {
  if (version >= 4 && kMetrics[i].summed) return std::string(kMetrics[i].stem4) + "_sum * 1.0 / n";
  return std::string(version >= 4 ? kMetrics[i].stem4 : kMetrics[i].name) + "_avg";
}
double metricScale(int i, int version) { return version >= 4 ? kMetrics[i].scale : 1.0; }

std::string rollupFromSamplesSql(const std::string& table, std::int64_t tierMs, RollupScope scope) {
  const std::string tier = std::to_string(tierMs);
  std::string cols = "group_id, ts_ms, n", select = "group_id, (ts_ms / " + tier + ") * " + tier + ", count(*)";
  std::string fromTier = "group_id, (ts_ms / " + tier + ") * " + tier + ", sum(n)";
  std::string merge = "n = n + excluded.n";
  for (const auto& m : kMetrics) {
    const std::string n = m.stem4, e = m.sampleExpr4;
    const std::string mn = n + "_min", mx = n + "_max";
    cols += ", " + mn + ", " + mx + ", " + n + (m.summed ? "_sum" : "_avg");
    select += ", min(" + e + "), max(" + e + "), " + (m.summed ? "sum(" + e + ")" : maybeRound(m, "avg(" + e + ")"));
    fromTier += ", min(" + mn + "), max(" + mx + "), ";
    fromTier += m.summed ? "sum(" + n + "_sum)"
                         : maybeRound(m, "sum(" + n + "_avg * n) / nullif(sum(CASE WHEN " + n + "_avg IS NULL THEN 0 ELSE n END), 0)");
    // Scalar min()/max() return NULL if either side is NULL; an unknown side must not hide the other.
    merge += ", " + mn + " = coalesce(min(" + mn + ", excluded." + mn + "), " + mn + ", excluded." + mn + ")";
    merge += ", " + mx + " = coalesce(max(" + mx + ", excluded." + mx + "), " + mx + ", excluded." + mx + ")";
    if (m.summed) {
      merge += ", " + n + "_sum = coalesce(" + n + "_sum, 0) + coalesce(excluded." + n + "_sum, 0)";
    } else {
      const std::string a = n + "_avg";
      merge += ", " + a + " = CASE WHEN " + a + " IS NULL THEN excluded." + a + " WHEN excluded." + a + " IS NULL THEN " + a +
               " ELSE " + maybeRound(m, "(" + a + " * n + excluded." + a + " * excluded.n) / (n + excluded.n)") + " END";
    }
  }
  switch (scope) {
    case RollupScope::ReplaceFrom10s:
      return "INSERT OR REPLACE INTO " + table + "(" + cols + ") SELECT " + fromTier +
             " FROM samples_10s WHERE group_id = ?1 AND ts_ms >= ?2 AND ts_ms < ?3 GROUP BY 2";
    case RollupScope::AllSamples:
      return "INSERT INTO " + table + "(" + cols + ") SELECT " + select +
             " FROM samples WHERE true GROUP BY group_id, 2 ON CONFLICT(group_id, ts_ms) DO UPDATE SET " + merge;
    case RollupScope::Replace:
      return "INSERT OR REPLACE INTO " + table + "(" + cols + ") SELECT " + select +
             " FROM samples WHERE group_id = ?1 AND ts_ms >= ?2 AND ts_ms < ?3 GROUP BY 2";
    case RollupScope::Merge:
      return "INSERT INTO " + table + "(" + cols + ") SELECT " + select +
             " FROM samples WHERE group_id = ?1 AND ts_ms >= ?2 AND ts_ms < ?3 GROUP BY 2"
             " ON CONFLICT(group_id, ts_ms) DO UPDATE SET " + merge;
  }
  return {};
}

namespace {

// Version 1, as first shipped. Kept verbatim: a new file is created by running every step from here.
std::string schemaV1() {
  return R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE groups(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE samples(
  group_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL,
  req_remaining REAL, req_limit REAL, tok_remaining REAL, tok_limit REAL, reset_at_ms INTEGER,
  in_flight INTEGER, conc_limit INTEGER, q0 INTEGER, q1 INTEGER, q2 INTEGER,
  sends INTEGER, ok INTEGER, r429 INTEGER, r5xx INTEGER, retries INTEGER, shed INTEGER,
  p50_ms REAL, p95_ms REAL, breaker INTEGER, interval_s REAL,
  PRIMARY KEY(group_id, ts_ms)) WITHOUT ROWID;
CREATE TABLE samples_1m(
  group_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL, n INTEGER NOT NULL)sql" +
         rollupColumnsV2() + R"sql(,
  PRIMARY KEY(group_id, ts_ms)) WITHOUT ROWID;
CREATE TABLE events(
  id INTEGER PRIMARY KEY, ts_ms INTEGER NOT NULL, kind TEXT NOT NULL, severity INTEGER NOT NULL,
  grp TEXT NOT NULL, message TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX events_ts ON events(ts_ms);
CREATE TABLE requests_1m(
  minute_ms INTEGER NOT NULL, group_id INTEGER NOT NULL, key_fp TEXT NOT NULL, endpoint TEXT NOT NULL,
  requests INTEGER NOT NULL, r429 INTEGER NOT NULL, r5xx INTEGER NOT NULL, net_errors INTEGER NOT NULL,
  retries INTEGER NOT NULL, lat_avg_ms REAL,
  PRIMARY KEY(minute_ms, group_id, key_fp, endpoint)) WITHOUT ROWID;
)sql";
}

// Version 2: p95 latency in the request table (v1 kept only the average), persisted incidents, an index
// for "events of kind K in a range", and rollups kept up to date as samples arrive instead of only when
// full resolution expires: a 10 s tier beside the 1 min one, so a day-long chart reads ~1/10 or ~1/60 of
// the rows. The migration fills both tiers from the samples a v1 file still holds.
std::string migrateV1toV2() {
  return R"sql(
ALTER TABLE requests_1m ADD COLUMN lat_p95_ms REAL;
CREATE TABLE incidents(
  id INTEGER PRIMARY KEY, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL,
  groups TEXT NOT NULL, reasons TEXT NOT NULL, peak_429_per_s REAL NOT NULL, total_429 INTEGER NOT NULL,
  shed INTEGER NOT NULL, operator_actions INTEGER NOT NULL, detail TEXT NOT NULL);
CREATE INDEX incidents_start ON incidents(start_ms);
CREATE INDEX events_kind_ts ON events(kind, ts_ms);
CREATE TABLE samples_10s(
  group_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL, n INTEGER NOT NULL)sql" +
         rollupColumnsV2() + R"sql(,
  PRIMARY KEY(group_id, ts_ms)) WITHOUT ROWID;
)sql" + rollupAllSamplesSqlV2("samples_10s", 10'000) + ";\n" + rollupAllSamplesSqlV2("samples_1m", 60'000) + ";\n";
}

// Version 3: Sample gained arrivals per tier (the submitted workload, for a what-if re-drive). Older rows
// did not record it: 0. Full resolution only; rollups keep the 14 chart metrics.
constexpr const char* kMigrateV2toV3 = R"sql(
ALTER TABLE samples ADD COLUMN a0 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN a1 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN a2 INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 4: the compact encoding (a week of 10 groups at 1 s plus rollups was ~900 MB; the target is
// < 500 MB). Samples: latencies as integer microseconds (p50_us, p95_us) instead of REAL ms, and the
// quota reset as an offset from ts_ms (reset_in_ms; NULL = unknown, was reset_at_ms 0) instead of a second
// absolute timestamp. Rollups: the exact integer sum of every count-like metric (<m>_sum, avg = sum / n)
// instead of a REAL average, latencies in us. Each table is rebuilt (SQLite cannot change a column's
// meaning in place); the old rows convert exactly, apart from latencies rounded to 1 us.
std::string migrateV3toV4() {
  std::string sql = R"sql(
CREATE TABLE samples_v4(
  group_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL,
  req_remaining REAL, req_limit REAL, tok_remaining REAL, tok_limit REAL, reset_in_ms INTEGER,
  in_flight INTEGER, conc_limit INTEGER, q0 INTEGER, q1 INTEGER, q2 INTEGER,
  sends INTEGER, ok INTEGER, r429 INTEGER, r5xx INTEGER, retries INTEGER, shed INTEGER,
  p50_us INTEGER, p95_us INTEGER, breaker INTEGER, interval_s REAL,
  a0 INTEGER NOT NULL DEFAULT 0, a1 INTEGER NOT NULL DEFAULT 0, a2 INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(group_id, ts_ms)) WITHOUT ROWID;
INSERT INTO samples_v4 SELECT group_id, ts_ms, req_remaining, req_limit, tok_remaining, tok_limit,
  CASE WHEN reset_at_ms IS NULL OR reset_at_ms = 0 THEN NULL ELSE reset_at_ms - ts_ms END,
  in_flight, conc_limit, q0, q1, q2, sends, ok, r429, r5xx, retries, shed,
  CAST(round(p50_ms * 1000) AS INTEGER), CAST(round(p95_ms * 1000) AS INTEGER), breaker, interval_s, a0, a1, a2
  FROM samples;
DROP TABLE samples;
ALTER TABLE samples_v4 RENAME TO samples;
)sql";
  for (const char* table : {"samples_10s", "samples_1m"}) {
    const std::string t = table;
    std::string select = "group_id, ts_ms, n";
    for (const auto& m : kMetrics) {
      const std::string o = m.name;
      const std::string k = m.scale == 1 ? "" : " * " + std::to_string(static_cast<int>(m.scale));
      auto conv = [&](const std::string& col) { return m.scale == 1 ? col : "round(" + col + k + ")"; };
      select += ", " + conv(o + "_min") + ", " + conv(o + "_max") + ", ";
      select += m.summed ? "CAST(round(" + o + "_avg * n) AS INTEGER)" : (m.roundAvg ? conv(o + "_avg") : o + "_avg");
    }
    sql += "CREATE TABLE " + t + "_v4(\n  group_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL, n INTEGER NOT NULL" +
           rollupColumnsV4() + ",\n  PRIMARY KEY(group_id, ts_ms)) WITHOUT ROWID;\n";
    sql += "INSERT INTO " + t + "_v4 SELECT " + select + " FROM " + t + ";\n";
    sql += "DROP TABLE " + t + ";\nALTER TABLE " + t + "_v4 RENAME TO " + t + ";\n";
  }
  return sql;
}

// Version 5: the request table gains the client a request came from (the gateway's client name; '' for
// Tollgate's own work), in its key, so history shows requests per client. The table is rebuilt (a primary
// key cannot change in place); old rows keep client ''.
constexpr const char* kMigrateV4toV5 = R"sql(
CREATE TABLE requests_1m_v5(
  minute_ms INTEGER NOT NULL, group_id INTEGER NOT NULL, key_fp TEXT NOT NULL, endpoint TEXT NOT NULL,
  client TEXT NOT NULL DEFAULT '',
  requests INTEGER NOT NULL, r429 INTEGER NOT NULL, r5xx INTEGER NOT NULL, net_errors INTEGER NOT NULL,
  retries INTEGER NOT NULL, lat_avg_ms REAL, lat_p95_ms REAL,
  PRIMARY KEY(minute_ms, group_id, key_fp, endpoint, client)) WITHOUT ROWID;
INSERT INTO requests_1m_v5(minute_ms, group_id, key_fp, endpoint, requests, r429, r5xx, net_errors, retries,
                           lat_avg_ms, lat_p95_ms)
  SELECT minute_ms, group_id, key_fp, endpoint, requests, r429, r5xx, net_errors, retries, lat_avg_ms, lat_p95_ms
  FROM requests_1m;
DROP TABLE requests_1m;
ALTER TABLE requests_1m_v5 RENAME TO requests_1m;
)sql";

bool isCorruptionCode(int code) { return code == SQLITE_CORRUPT || code == SQLITE_NOTADB; }

}  // namespace

const MetricDef& metricDef(Metric m) { return kMetrics[static_cast<int>(m)]; }

int inspectOpen(sql::Db& db, const std::string& path, bool quickCheck) {
  try {
    const auto tables = db.queryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table'");
    const auto appId = db.queryInt("PRAGMA application_id");
    const auto version = static_cast<int>(db.queryInt("PRAGMA user_version"));
    if (appId != kApplicationId && appId != 0)
      throw sql::Error(SQLITE_NOTADB, "refusing " + path + ": a SQLite database of another application (application_id " +
                                          std::to_string(appId) + ")");
    if (appId == 0 && tables > 0)
      throw sql::Error(SQLITE_NOTADB, "refusing " + path + ": a SQLite database that is not a Tollgate history file");
    if (version > kSchemaVersion)
      throw sql::Error(SQLITE_NOTADB, "refusing " + path + ": schema version " + std::to_string(version) +
                                          " is newer than this build supports (" + std::to_string(kSchemaVersion) +
                                          "); use a newer tollgate");
    if (quickCheck && tables > 0) {
      sql::Stmt st(db, "PRAGMA quick_check(5)");
      std::string problems;
      while (st.step()) {
        const auto line = st.text(0);
        if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
      }
      if (!problems.empty())
        throw sql::Error(SQLITE_CORRUPT, "refusing " + path + ": the file is corrupt (" + problems + ")");
    }
    return tables > 0 ? version : 0;
  } catch (const sql::Error& e) {
    if (isCorruptionCode(e.code) && std::string_view(e.what()).rfind("refusing", 0) != 0)
      throw sql::Error(e.code, "refusing " + path + ": corrupt or not a SQLite database (" + e.what() + ")");
    throw;
  }
}

int inspectFile(const std::string& path, bool quickCheck) {
  bool exists = false;
  std::uintmax_t size = 0;
  const bool header = sql::hasSqliteHeader(path, &exists, &size);
  if (!exists || size == 0) return 0;
  if (!header) throw sql::Error(SQLITE_NOTADB, "refusing " + path + ": not a SQLite database");
  sql::Db db;
  // Plain read-only (not immutable): a crashed writer's WAL must be seen, and may be recovered.
  db.open(path, SQLITE_OPEN_READONLY);
  db.check(sqlite3_busy_timeout(db.handle(), 2000), "busy timeout");
  return inspectOpen(db, path, quickCheck);
}

void migrate(sql::Db& db) {
  auto version = static_cast<int>(db.queryInt("PRAGMA user_version"));
  auto step = [&](int to, const std::string& sql) {
    sql::SqliteTransaction tx(db);
    // Re-read inside the write lock: another process may have migrated meanwhile.
    if (db.queryInt("PRAGMA user_version") < to) {
      db.exec(sql);
      db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
      db.exec("PRAGMA user_version = " + std::to_string(to));
    }
    tx.commit();
  };
  if (version < 1) step(1, schemaV1());
  if (version < 2) step(2, migrateV1toV2());
  if (version < 3) step(3, kMigrateV2toV3);
  // Version 2 gained its 10-s tier 14 minutes after it was first written (4a701d1 after d068a72) under the same
  // number: a file of that first v2 (or one stopped at 3 on its way up) lacks the table step 4 rebuilds, and
  // failed there at every start. The tier is built from the samples, as the v2 step builds it.
  auto lacksTenSecondTier = [&] {
    return db.queryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'samples_10s'") == 0;
  };
  if (version >= 2 && version < 4 && lacksTenSecondTier()) {
    sql::SqliteTransaction tx(db);
    // Again under the write lock: another process may have repaired or upgraded the file meanwhile (the tier
    // built twice doubled its counts; built into a v4 file it failed on the old columns).
    const auto now = db.queryInt("PRAGMA user_version");
    if (now >= 2 && now < 4 && lacksTenSecondTier())
      db.exec("CREATE TABLE samples_10s(group_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL, n INTEGER NOT NULL" +
              rollupColumnsV2() + ", PRIMARY KEY(group_id, ts_ms)) WITHOUT ROWID;\n" +
              rollupAllSamplesSqlV2("samples_10s", 10'000) + ";");
    tx.commit();
  }
  if (version < 4) step(4, migrateV3toV4());
  if (version < 5) step(5, kMigrateV4toV5);
  version = static_cast<int>(db.queryInt("PRAGMA user_version"));
  if (version != kSchemaVersion)
    throw sql::Error(SQLITE_ERROR, "migration ended at schema " + std::to_string(version));
}

const char* const kSampleColumns =
    "ts_ms, req_remaining, req_limit, tok_remaining, tok_limit, reset_in_ms, in_flight, conc_limit, q0, q1, q2, "
    "sends, ok, r429, r5xx, retries, shed, p50_us, p95_us, breaker, interval_s, a0, a1, a2";

std::string sampleColumnsFor(int version) {
  if (version >= 4)
    return "ts_ms, req_remaining, req_limit, tok_remaining, tok_limit, coalesce(ts_ms + reset_in_ms, 0), in_flight, "
           "conc_limit, q0, q1, q2, sends, ok, r429, r5xx, retries, shed, p50_us / 1000.0, p95_us / 1000.0, breaker, "
           "interval_s, a0, a1, a2";
  std::string cols =
      "ts_ms, req_remaining, req_limit, tok_remaining, tok_limit, reset_at_ms, in_flight, conc_limit, q0, q1, q2, "
      "sends, ok, r429, r5xx, retries, shed, p50_ms, p95_ms, breaker, interval_s, a0, a1, a2";
  if (version < 3) cols.replace(cols.find(", a0, a1, a2"), std::string::npos, ", 0, 0, 0");
  return cols;
}

std::optional<std::int64_t> latencyToUs(double ms) {
  if (!std::isfinite(ms)) return std::nullopt;
  const double us = std::round(ms * 1000.0);
  if (std::abs(us) > 9.0e15) return std::nullopt;
  return static_cast<std::int64_t>(us);
}

void bindSample(sql::Stmt& st, std::int64_t groupId, const Sample& s) {
  st.bind(1, groupId)
      .bind(2, static_cast<std::int64_t>(s.tsMs))
      .bind(3, s.reqRemaining)
      .bind(4, s.reqLimit)
      .bind(5, s.tokRemaining)
      .bind(6, s.tokLimit)
      .bindNull(7)
      .bind(8, s.inFlight)
      .bind(9, s.concurrencyLimit)
      .bind(10, s.queueDepth[0])
      .bind(11, s.queueDepth[1])
      .bind(12, s.queueDepth[2])
      .bind(13, s.sends)
      .bind(14, s.ok)
      .bind(15, s.r429)
      .bind(16, s.r5xx)
      .bind(17, s.retries)
      .bind(18, s.shed)
      .bindNull(19)
      .bindNull(20)
      .bind(21, static_cast<int>(s.breaker))
      .bind(22, s.intervalS)
      .bind(23, s.arrivals[0])
      .bind(24, s.arrivals[1])
      .bind(25, s.arrivals[2]);
  if (s.resetAtMs != 0) st.bind(7, static_cast<std::int64_t>(s.resetAtMs - s.tsMs));
  if (const auto us = latencyToUs(s.p50Ms)) st.bind(19, *us);
  if (const auto us = latencyToUs(s.p95Ms)) st.bind(20, *us);
}

Sample readSample(const sql::Stmt& st, int c) {
  Sample s;
  s.tsMs = st.i64(c + 0);
  s.reqRemaining = st.dbl(c + 1);
  s.reqLimit = st.dbl(c + 2);
  s.tokRemaining = st.dbl(c + 3);
  s.tokLimit = st.dbl(c + 4);
  s.resetAtMs = st.i64(c + 5);
  s.inFlight = st.i32(c + 6);
  s.concurrencyLimit = st.i32(c + 7);
  s.queueDepth = {st.i32(c + 8), st.i32(c + 9), st.i32(c + 10)};
  s.sends = st.i32(c + 11);
  s.ok = st.i32(c + 12);
  s.r429 = st.i32(c + 13);
  s.r5xx = st.i32(c + 14);
  s.retries = st.i32(c + 15);
  s.shed = st.i32(c + 16);
  s.p50Ms = st.dbl(c + 17);
  s.p95Ms = st.dbl(c + 18);
  s.breaker = static_cast<BreakerState>(st.i32(c + 19));
  s.intervalS = st.isNull(c + 20) ? 1.0 : st.dbl(c + 20);
  s.arrivals = {st.i32(c + 21), st.i32(c + 22), st.i32(c + 23)};
  return s;
}

std::string eventKindText(EventKind k) { return std::string(eventKindName(k)); }

Event readEvent(const sql::Stmt& st, int c) {
  Event e;
  e.tsMs = st.i64(c);
  const auto kind = st.text(c + 1);
  e.kind = parseEventKind(kind).value_or(EventKind::RequestFailed);
  e.severity = static_cast<Severity>(std::clamp(st.i32(c + 2), 0, 2));
  e.group = st.text(c + 3);
  e.message = st.text(c + 4);
  JsonParse detail = parseJsonText(st.text(c + 5));
  e.detail = detail.ok() ? std::move(detail.value) : nlohmann::json::object();
  if (!parseEventKind(kind)) e.detail["stored_kind"] = kind;  // a kind this build does not know
  return e;
}

std::vector<std::pair<std::int64_t, std::string>> loadGroups(sql::Db& db) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  sql::Stmt st(db, "SELECT id, name FROM groups ORDER BY name");
  while (st.step()) out.emplace_back(st.i64(0), st.text(1));
  return out;
}

std::vector<Sample> loadSamples(sql::Db& db, int version, EpochMs fromMs, EpochMs toMs,
                                const std::vector<std::string>& groups) {
  std::vector<Sample> out;
  sql::Stmt st(db, "SELECT " + sampleColumnsFor(version) +
                       " FROM samples WHERE group_id = ?1 AND ts_ms >= ?2 AND ts_ms < ?3 ORDER BY ts_ms");
  for (const auto& [id, name] : loadGroups(db)) {
    if (!groups.empty() && std::find(groups.begin(), groups.end(), name) == groups.end()) continue;
    st.bind(1, id).bind(2, static_cast<std::int64_t>(fromMs)).bind(3, static_cast<std::int64_t>(toMs));
    while (st.step()) {
      out.push_back(readSample(st, 0));
      out.back().group = name;
    }
    st.reset();
  }
  return out;
}

std::vector<Event> loadEvents(sql::Db& db, EpochMs fromMs, EpochMs toMs, const std::vector<std::string>& groups,
                              const std::vector<EventKind>& kinds) {
  std::vector<Event> out;
  sql::Stmt st(db, "SELECT ts_ms, kind, severity, grp, message, detail FROM events "
                   "WHERE ts_ms >= ?1 AND ts_ms < ?2 ORDER BY ts_ms, id");
  st.bind(1, static_cast<std::int64_t>(fromMs)).bind(2, static_cast<std::int64_t>(toMs));
  while (st.step()) {
    Event e = readEvent(st, 0);
    if (!groups.empty() && !e.group.empty() && std::find(groups.begin(), groups.end(), e.group) == groups.end())
      continue;
    if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), e.kind) == kinds.end()) continue;
    out.push_back(std::move(e));
  }
  return out;
}

std::string incidentToDetailJson(const Incident& inc) {
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& e : inc.operatorActions) actions.push_back(toJson(e));
  return dumpJson(nlohmann::json{{"operator_actions", actions}});
}

void incidentFromDetailJson(const std::string& text, Incident& inc) {
  const nlohmann::json j = parseJsonText(text).value;
  if (!j.is_object() || !j.contains("operator_actions") || !j["operator_actions"].is_array()) return;
  // The file may have been edited: a field of the wrong type reads as absent instead of throwing.
  const auto str = [](const nlohmann::json& a, const char* k) { return fieldString(a, k); };
  for (const auto& a : j["operator_actions"]) {
    if (!a.is_object()) continue;
    Event e;
    if (const auto ts = a.find("ts_ms"); ts != a.end() && ts->is_number_integer()) e.tsMs = ts->get<EpochMs>();
    e.kind = parseEventKind(str(a, "kind")).value_or(EventKind::OperatorAction);
    e.severity = parseSeverity(str(a, "severity")).value_or(Severity::Info);
    e.group = str(a, "group");
    e.message = str(a, "message");
    if (a.contains("detail")) e.detail = a["detail"];
    inc.operatorActions.push_back(std::move(e));
  }
}

}  // namespace tg::history

namespace tg {
std::string_view metricName(Metric m) { return history::metricDef(m).name; }
}  // namespace tg
