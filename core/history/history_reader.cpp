#include "history_reader.h"

#include "epoch_floor.h"
#include "history_meta.h"
#include "history_schema.h"
#include "incident_detector.h"
#include "json_text.h"
#include "sqlite_db.h"
#include "sqlite_transaction.h"

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <limits>

namespace tg {
namespace {

struct StoredTier {
  const char* table;
  std::int64_t ms;
};
constexpr StoredTier kFull{"samples", 1000};
constexpr StoredTier k10s{"samples_10s", history::kTier10sMs};
constexpr StoredTier k1m{"samples_1m", history::kTier1mMs};

// One series: ?1 group id, ?2 origin (from, rounded down to the tier's grid), ?3 to, ?4 bucket ms (a whole
// number of tier rows, so no row straddles two buckets), ?5 start of the source tier for this group (rows of
// the 1 min tier that end before it fill in where the source tier has expired; they land in the bucket
// holding their start).
// Everything in stored units (schema 4 keeps latencies in us); the caller divides by metricScale().
std::string seriesSql(const StoredTier& tier, bool withFallback, bool oneRowPerBucket, int version) {
  const bool rollup = tier.ms != kFull.ms;
  const std::string bucket = "max(0, (ts_ms - ?2) / ?4)";
  const std::string range = " WHERE group_id = ?1 AND ts_ms >= ?2 AND ts_ms < ?3";  // ?2 is on the tier's grid
  if (oneRowPerBucket) {  // the tier already holds the buckets: no aggregation, just an index range scan
    std::string sql = "SELECT (ts_ms - ?2) / ?4, ts_ms, ts_ms, n, 1";
    for (int i = 0; i < kMetricCount; ++i) {
      sql += ", " + history::rollupMinCol(i, version) + ", " + history::rollupMaxCol(i, version) + ", " +
             history::rollupAvgOfRow(i, version);
    }
    return sql + " FROM " + tier.table + range + " ORDER BY ts_ms";
  }
  if (!withFallback) {
    std::string sql = "SELECT " + bucket + " AS b, min(ts_ms), max(ts_ms), " + (rollup ? "sum(n), 1" : "count(*), 0");
    for (int i = 0; i < kMetricCount; ++i) {
      const std::string e = history::metricSampleExpr(i, version);
      if (rollup)
        sql += ", min(" + history::rollupMinCol(i, version) + "), max(" + history::rollupMaxCol(i, version) + "), sum(" +
               history::rollupWeightedSum(i, version) + ") * 1.0 / nullif(sum(" + history::rollupWeight(i, version) + "), 0)";
      else
        sql += ", min(" + e + "), max(" + e + "), avg(" + e + ")";
    }
    return sql + " FROM " + tier.table + range + " GROUP BY b ORDER BY b";
  }
  // Source rows and fallback minute rows as one stream of (bucket, min, max, weighted sum, weight).
  auto rows = [&](const StoredTier& t, bool isRollup, const std::string& where) {
    std::string sql = "SELECT " + bucket + " AS b, ts_ms AS t, " + (isRollup ? "n" : "1") + " AS n, " +
                      (isRollup ? "1" : "0") + " AS r";
    for (int i = 0; i < kMetricCount; ++i) {
      const std::string e = history::metricSampleExpr(i, version), k = std::to_string(i);
      if (isRollup)
        sql += ", " + history::rollupMinCol(i, version) + " AS a" + k + ", " + history::rollupMaxCol(i, version) + " AS x" +
               k + ", " + history::rollupWeightedSum(i, version) + " AS s" + k + ", " + history::rollupWeight(i, version) +
               " AS c" + k;
      else
        sql += ", " + e + " AS a" + k + ", " + e + " AS x" + k + ", " + e + " AS s" + k + ", (" + e + " IS NOT NULL) AS c" + k;
    }
    return sql + " FROM " + t.table + where;
  };
  std::string outer = "SELECT b, min(t), max(t), sum(n), max(r)";
  for (int i = 0; i < kMetricCount; ++i) {
    const std::string k = std::to_string(i);
    outer += ", min(a" + k + "), max(x" + k + "), sum(s" + k + ") * 1.0 / nullif(sum(c" + k + "), 0)";
  }
  return outer + " FROM (" + rows(tier, rollup, range) + " UNION ALL " +
         rows(k1m, true, " WHERE group_id = ?1 AND ts_ms > ?2 - 60000 AND ts_ms < ?3 AND ts_ms + 60000 <= ?5") +
         ") GROUP BY b ORDER BY b";
}

}  // namespace

struct HistoryReader::Impl {
  std::string path;
  HistoryReaderOptions opts;
  sql::Db db;
  int version = 0;
  std::string warning;

  template <class T, class F>
  HistoryResult<T> guarded(F&& f) {
    HistoryResult<T> r;
    try {
      // One read transaction per call: a consistent view, released as soon as the call returns.
      sql::SqliteTransaction read(db, sql::SqliteTransaction::Mode::Deferred);
      r.value = f();
      read.commit();
    } catch (const std::exception& e) {
      r.value = T{};
      r.error = e.what();
      if (r.error.empty()) r.error = "history read failed";
    }
    return r;
  }
};

std::unique_ptr<HistoryReader> HistoryReader::open(const std::string& path, HistoryReaderOptions opts,
                                                   std::string* error) {
  auto d = std::make_unique<Impl>();
  d->path = path;
  d->opts = opts;
  try {
    bool exists = false;
    std::uintmax_t size = 0;
    const bool header = sql::hasSqliteHeader(path, &exists, &size);
    if (!exists) throw sql::Error(SQLITE_CANTOPEN, "no such history file: " + path);
    if (!header) throw sql::Error(SQLITE_NOTADB, "refusing " + path + ": not a SQLite database");
    auto openAs = [&](bool strict) {
      d->db.open(sql::readOnlyUri(path, strict), SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
      d->db.check(sqlite3_busy_timeout(d->db.handle(), opts.busyTimeoutMs), "busy timeout");
      d->version = history::inspectOpen(d->db, path, opts.quickCheck);
    };
    try {
      openAs(opts.strict);
    } catch (const sql::Error& e) {
      // Read-only media (a mounted backup, a read-only bind): SQLite's read-only mode cannot make the -shm index
      // beside the file, "unable to open database file". Read it as --strict would, and say so.
      if (opts.strict || (e.code != SQLITE_CANTOPEN && e.code != SQLITE_READONLY)) throw;
      d->db.close();
      opts.strict = d->opts.strict = true;
      openAs(true);
      d->warning = path + ": nothing can be made beside it (read-only media?): read as --strict, without its -wal";
    }
    std::error_code ec;
    const bool walHasRows =
        std::filesystem::exists(path + "-wal", ec) && std::filesystem::file_size(path + "-wal", ec) > 0;
    if (d->version == 0)
      throw sql::Error(SQLITE_NOTADB, "refusing " + path + ": an empty file, not a history file" +
                                          (opts.strict && walHasRows ? std::string(" (its rows may all be in ") + path +
                                                                           "-wal, which an immutable read ignores)"
                                                                     : std::string()));
    if (opts.strict && walHasRows && d->warning.empty())
      d->warning = "strict read-only: " + path + "-wal exists; rows not yet checkpointed into the file are not shown";
  } catch (const sql::Error& e) {
    if (error) *error = e.what();
    return nullptr;
  }
  return std::unique_ptr<HistoryReader>(new HistoryReader(std::move(d)));
}

HistoryReader::HistoryReader(std::unique_ptr<Impl> d) : d_(std::move(d)) {}
HistoryReader::~HistoryReader() = default;

int HistoryReader::schemaVersion() const { return d_->version; }
const std::string& HistoryReader::warning() const { return d_->warning; }

HistoryResult<std::vector<SampleSeries>> HistoryReader::samples(EpochMs fromMs, EpochMs toMs,
                                                                const std::vector<std::string>& groups, int maxPoints) {
  return d_->guarded<std::vector<SampleSeries>>([&] {
    std::vector<SampleSeries> out;
    // Bucket arithmetic below is exact only well inside int64; no stored time lies outside this range.
    fromMs = std::clamp(fromMs, kMinHistoryMs, kMaxHistoryMs);
    toMs = std::clamp(toMs, kMinHistoryMs, kMaxHistoryMs);
    if (toMs <= fromMs || maxPoints <= 0) return out;
    // The coarsest stored tier that still gives at least 2/3 of the points asked for: a day-long chart reads
    // ~1,440 minute rows per group instead of 86,400 samples. Each bucket is at least one tier row wide.
    const std::int64_t raw = std::max<std::int64_t>(1, (toMs - fromMs + maxPoints - 1) / maxPoints);
    // Buckets of a rollup tier are whole tier rows on the tier's grid; a tier is taken only if that costs at
    // most a third of the points asked for.
    StoredTier tier = kFull;
    EpochMs origin = fromMs;
    std::int64_t bucketMs = raw;
    for (const StoredTier& t : {k1m, k10s}) {
      if (d_->version < 2) break;  // v1 kept rollups only for expired spans
      const EpochMs o = history::floorTo(fromMs, t.ms);
      const std::int64_t b = ((toMs - o + maxPoints - 1) / maxPoints + t.ms - 1) / t.ms * t.ms;
      if (2 * b <= 3 * raw) {
        tier = t;
        origin = o;
        bucketMs = b;
        break;
      }
    }
    const bool rollupTier = tier.ms != kFull.ms;
    std::array<double, kMetricCount> scale{};
    for (int i = 0; i < kMetricCount; ++i) scale[static_cast<std::size_t>(i)] = history::metricScale(i, d_->version);
    sql::Stmt sourceStart(d_->db, std::string("SELECT min(ts_ms) FROM ") + tier.table + " WHERE group_id = ?1");
    sql::Stmt anyFallback(d_->db, "SELECT 1 FROM samples_1m WHERE group_id = ?1 AND ts_ms > ?2 - 60000 AND ts_ms < ?3 "
                                  "AND ts_ms + 60000 <= ?4 LIMIT 1");
    sql::Stmt plain, mixed, direct;
    for (const auto& [id, name] : history::loadGroups(d_->db)) {
      if (!groups.empty() && std::find(groups.begin(), groups.end(), name) == groups.end()) continue;
      // Where the source tier has expired (or never existed), minute rollups fill in.
      bool withFallback = false;
      EpochMs start = std::numeric_limits<EpochMs>::max();
      if (tier.ms != k1m.ms) {
        sourceStart.bind(1, id);
        if (sourceStart.step() && !sourceStart.isNull(0)) start = sourceStart.i64(0);
        sourceStart.reset();
        if (start > fromMs) {
          anyFallback.bind(1, id).bind(2, static_cast<std::int64_t>(fromMs)).bind(3, static_cast<std::int64_t>(toMs))
              .bind(4, static_cast<std::int64_t>(start));
          withFallback = anyFallback.step();
          anyFallback.reset();
        }
      }
      const bool oneRow = rollupTier && !withFallback && bucketMs == tier.ms;
      sql::Stmt& st = oneRow ? direct : (withFallback ? mixed : plain);
      if (!st.prepared()) st.prepare(d_->db, seriesSql(tier, withFallback, oneRow, d_->version));
      st.bind(1, id).bind(2, static_cast<std::int64_t>(origin)).bind(3, static_cast<std::int64_t>(toMs)).bind(4, bucketMs);
      if (withFallback) st.bind(5, static_cast<std::int64_t>(start));
      SampleSeries series;
      series.group = name;
      series.bucketMs = bucketMs;
      while (st.step()) {
        SampleBucket b;
        b.startMs = origin + st.i64(0) * bucketMs;
        b.firstTsMs = st.i64(1);
        b.lastTsMs = st.i64(2);
        b.rows = st.i64(3);
        b.fromRollup = st.i64(4) != 0;
        for (int i = 0; i < kMetricCount; ++i) {
          const double k = scale[static_cast<std::size_t>(i)];
          b.m[i] = MetricStats{st.dbl(5 + 3 * i) / k, st.dbl(6 + 3 * i) / k, st.dbl(7 + 3 * i) / k};
        }
        series.buckets.push_back(b);
      }
      st.reset();
      out.push_back(std::move(series));
    }
    return out;
  });
}

HistoryResult<std::vector<Sample>> HistoryReader::rawSamples(EpochMs fromMs, EpochMs toMs,
                                                             const std::vector<std::string>& groups) {
  return d_->guarded<std::vector<Sample>>([&] { return history::loadSamples(d_->db, d_->version, fromMs, toMs, groups); });
}

HistoryResult<std::vector<Event>> HistoryReader::events(EpochMs fromMs, EpochMs toMs, const std::vector<std::string>& groups,
                                                        const std::vector<EventKind>& kinds) {
  return d_->guarded<std::vector<Event>>([&] { return history::loadEvents(d_->db, fromMs, toMs, groups, kinds); });
}

HistoryResult<std::vector<RequestRow>> HistoryReader::requestTable(EpochMs fromMs, EpochMs toMs, bool perMinute) {
  return d_->guarded<std::vector<RequestRow>>([&] {
    const std::string p95 = d_->version >= 2 ? "lat_p95_ms" : "NULL";  // v1 files kept no p95
    const std::string client = d_->version >= 5 ? "client" : "''";     // v5 added the client
    std::string sql;
    if (perMinute) {
      sql = "SELECT minute_ms, g.name, key_fp, endpoint, requests, r429, r5xx, net_errors, retries, lat_avg_ms, " + p95 +
            ", " + client + " AS c FROM requests_1m r JOIN groups g ON g.id = r.group_id WHERE minute_ms >= ?1 AND minute_ms < ?2"
            " ORDER BY minute_ms, g.name, key_fp, endpoint, c";
    } else {
      sql = "SELECT 0, g.name, key_fp, endpoint, sum(requests), sum(r429), sum(r5xx), sum(net_errors), sum(retries), "
            "sum(lat_avg_ms * requests) / nullif(sum(CASE WHEN lat_avg_ms IS NULL THEN 0 ELSE requests END), 0), max(" +
            p95 + "), " + client +
            " AS c FROM requests_1m r JOIN groups g ON g.id = r.group_id WHERE minute_ms >= ?1 AND minute_ms < ?2"
            " GROUP BY g.name, key_fp, endpoint, c ORDER BY sum(requests) DESC, g.name, key_fp, endpoint, c";
    }
    sql::Stmt st(d_->db, sql);
    const EpochMs clamped = std::clamp(fromMs, kMinHistoryMs, kMaxHistoryMs);
    const EpochMs from = history::floorMinute(clamped);  // the minute containing fromMs
    st.bind(1, static_cast<std::int64_t>(from)).bind(2, static_cast<std::int64_t>(toMs));
    std::vector<RequestRow> out;
    while (st.step()) {
      RequestRow r;
      r.minuteMs = st.i64(0);
      r.group = st.text(1);
      r.keyFingerprint = st.text(2);
      r.endpoint = st.text(3);
      r.requests = st.i64(4);
      r.r429 = st.i64(5);
      r.r5xx = st.i64(6);
      r.netErrors = st.i64(7);
      r.retries = st.i64(8);
      r.avgLatencyMs = st.dbl(9);
      r.p95LatencyMs = st.dbl(10);
      r.client = st.text(11);
      out.push_back(std::move(r));
    }
    return out;
  });
}

HistoryResult<std::vector<std::string>> HistoryReader::groups() {
  return d_->guarded<std::vector<std::string>>([&] {
    std::vector<std::string> out;
    for (auto& [id, name] : history::loadGroups(d_->db)) out.push_back(std::move(name));
    return out;
  });
}

HistoryResult<TimeRange> HistoryReader::timeRange() {
  return d_->guarded<TimeRange>([&] {
    TimeRange r;
    auto take = [&](sql::Stmt& st) {
      while (st.step()) {
        if (st.isNull(0)) continue;
        r.fromMs = r.empty ? st.i64(0) : std::min<EpochMs>(r.fromMs, st.i64(0));
        r.toMs = r.empty ? st.i64(1) : std::max<EpochMs>(r.toMs, st.i64(1));
        r.empty = false;
      }
      st.reset();
    };
    // Full resolution where it exists; minute rollups only for what has expired (they also shadow the
    // recent span, rounded out to whole minutes).
    sql::Stmt full(d_->db, "SELECT min(ts_ms), max(ts_ms) FROM samples WHERE group_id = ?1");
    sql::Stmt roll(d_->db, "SELECT min(ts_ms), max(ts_ms) + 60000 FROM samples_1m WHERE group_id = ?1 AND ts_ms + 60000 <= ?2");
    for (const auto& [id, name] : history::loadGroups(d_->db)) {
      full.bind(1, id);
      EpochMs start = std::numeric_limits<EpochMs>::max();
      if (full.step() && !full.isNull(0)) start = full.i64(0);
      full.reset();
      full.bind(1, id);
      take(full);
      roll.bind(1, id).bind(2, static_cast<std::int64_t>(start));
      take(roll);
    }
    sql::Stmt ev(d_->db, "SELECT min(ts_ms), max(ts_ms) FROM events");
    take(ev);
    return r;
  });
}

namespace {
Incident readIncident(const sql::Stmt& st) {
  Incident inc;
  inc.id = st.i64(0);
  inc.startMs = st.i64(1);
  inc.endMs = st.i64(2);
  auto strings = [](const std::string& text) {
    std::vector<std::string> v;
    const nlohmann::json j = parseJsonText(text).value;
    if (j.is_array())
      for (const auto& s : j)
        if (s.is_string()) v.push_back(s.get<std::string>());
    return v;
  };
  inc.groups = strings(st.text(3));
  inc.reasons = strings(st.text(4));
  inc.peak429PerS = st.dbl(5);
  inc.total429 = st.i64(6);
  inc.shed = st.i64(7);
  history::incidentFromDetailJson(st.text(9), inc);
  return inc;
}
constexpr const char* kIncidentColumns =
    "SELECT id, start_ms, end_ms, groups, reasons, peak_429_per_s, total_429, shed, operator_actions, detail FROM incidents";
}  // namespace

HistoryResult<std::vector<Incident>> HistoryReader::incidents() {
  return d_->guarded<std::vector<Incident>>([&] {
    std::vector<Incident> out;
    if (d_->version < 2) return out;  // v1 files had no incident table
    sql::Stmt st(d_->db, std::string(kIncidentColumns) + " ORDER BY start_ms, id");
    while (st.step()) out.push_back(readIncident(st));
    return out;
  });
}

HistoryResult<std::vector<Incident>> HistoryReader::unscannedIncidents() {
  return d_->guarded<std::vector<Incident>>([&] {
    std::vector<Incident> out;
    if (d_->version < 2) return out;
    EpochMs newest = std::numeric_limits<EpochMs>::min();
    {
      // Per group, on the (group_id, ts_ms) key: max over the whole table scanned it (0.23 s on 3 M rows).
      sql::Stmt mx(d_->db, "SELECT max(ts_ms) FROM samples WHERE group_id = ?1");
      for (const auto& [id, name] : history::loadGroups(d_->db)) {
        mx.bind(1, id);
        if (mx.step() && !mx.isNull(0)) newest = std::max<EpochMs>(newest, mx.i64(0));
        mx.reset();
      }
    }
    if (newest == std::numeric_limits<EpochMs>::min()) return out;
    const auto scanned = history::readMetaMs(d_->db, history::kMetaIncidentsScannedTo, d_->path);
    if (scanned && *scanned >= newest) return out;
    const IncidentOptions opts;
    const std::int64_t lookback = opts.mergeGapMs + std::max(opts.shareWindowMs, opts.queueGrowthWindowMs);
    // A day of samples at most: a file never scanned at all is the writer's to walk, chunk by chunk.
    const EpochMs from = std::max(scanned ? subSaturating(*scanned, lookback) : kMinHistoryMs,
                                  subSaturating(newest, 86'400'000));
    // Recorded incidents that may still have grown after the scan: what the detector finds within the merge gap of
    // one is that one (listed with its id), not another.
    std::vector<std::pair<EpochMs, EpochMs>> recorded;
    {
      sql::Stmt t(d_->db, "SELECT start_ms, end_ms FROM incidents WHERE end_ms >= ?1");
      t.bind(1, static_cast<std::int64_t>(subSaturating(from, opts.mergeGapMs)));
      while (t.step()) recorded.emplace_back(t.i64(0), t.i64(1));
    }
    const IncidentDetector detector(opts);
    for (Incident& inc : detector.detect(history::loadSamples(d_->db, d_->version, from, newest + 1, {}),
                                         history::loadEvents(d_->db, from, newest + 1, {},
                                                             {EventKind::OperatorAction}))) {
      const bool known = std::any_of(recorded.begin(), recorded.end(), [&](const auto& r) {
        return inc.startMs <= addSaturating(r.second, opts.mergeGapMs) && r.first <= inc.endMs;
      });
      if (!known && (!scanned || inc.endMs > *scanned)) out.push_back(std::move(inc));
    }
    return out;
  });
}

HistoryResult<std::optional<Event>> HistoryReader::lastEvent(EventKind kind, EpochMs atMs) {
  return d_->guarded<std::optional<Event>>([&]() -> std::optional<Event> {
    sql::Stmt st(d_->db, "SELECT ts_ms, kind, severity, grp, message, detail FROM events WHERE kind = ?1 AND "
                         "ts_ms <= ?2 ORDER BY ts_ms DESC, id DESC LIMIT 1");
    st.bind(1, std::string(eventKindName(kind))).bind(2, static_cast<std::int64_t>(atMs));
    if (!st.step()) return std::nullopt;
    return history::readEvent(st, 0);
  });
}

HistoryResult<std::optional<Incident>> HistoryReader::incident(std::int64_t id) {
  return d_->guarded<std::optional<Incident>>([&]() -> std::optional<Incident> {
    if (d_->version < 2) return std::nullopt;
    sql::Stmt st(d_->db, std::string(kIncidentColumns) + " WHERE id = ?1");
    st.bind(1, id);
    if (!st.step()) return std::nullopt;
    return readIncident(st);
  });
}

HistoryResult<std::vector<std::string>> HistoryReader::integrityCheck() {
  return d_->guarded<std::vector<std::string>>([&] {
    std::vector<std::string> out;
    sql::Stmt st(d_->db, "PRAGMA integrity_check(20)");
    while (st.step()) out.push_back(st.text(0));
    return out;
  });
}

HistoryResult<std::vector<std::pair<std::string, std::int64_t>>> HistoryReader::rowCounts() {
  return d_->guarded<std::vector<std::pair<std::string, std::int64_t>>>([&] {
    std::vector<std::pair<std::string, std::int64_t>> out;
    std::vector<std::string> tables{"groups", "samples", "samples_1m", "events", "requests_1m"};
    if (d_->version >= 2) tables.push_back("incidents");
    for (const auto& t : tables) out.emplace_back(t, d_->db.queryInt("SELECT count(*) FROM " + t));
    return out;
  });
}

std::string historyFileClash(const std::string& out, const std::string& db) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string part = db + suffix;
    std::error_code ec, e1, e2;
    bool same = std::filesystem::equivalent(out, part, ec);
    if (ec) {  // one of them does not exist: the same path, as written?
      const auto a = std::filesystem::weakly_canonical(out, e1), b = std::filesystem::weakly_canonical(part, e2);
      same = !e1 && !e2 && a == b;
    }
    if (same) return *suffix ? "the history file's " + std::string(suffix + 1) + " file (" + part + ")"
                             : "the history file itself (" + db + ")";
  }
  return {};
}

}  // namespace tg
