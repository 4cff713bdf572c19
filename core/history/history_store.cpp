#include "history_store.h"

#include "history_schema.h"
#include "incident_detector.h"
#include "json_text.h"
#include "log.h"
#include "secret.h"
#include "sqlite_db.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace tg {
namespace {

constexpr std::int64_t kMinuteMs = 60'000;
constexpr std::size_t kLatencyReservoir = 2048;
constexpr std::size_t kMaxOpenMinuteRows = 100'000;
constexpr std::int64_t kKeepOpenMinutes = 3;  // a minute's row is rewritten until this many minutes later
constexpr std::int64_t kDetectChunkMs = 6LL * 3600 * 1000;
constexpr std::uint64_t kMaxPageCountUnlimited = 4294967294ULL;
const char* const kMetaIncidentsScannedTo = "incidents_scanned_to";
const char* const kMetaRolledThrough = "full_resolution_from";  // samples before this were expired
const char* const kMeta10sFrom = "tier_10s_from";                 // 10 s rows before this were expired

EpochMs floorMinute(EpochMs t) { return t - ((t % kMinuteMs) + kMinuteMs) % kMinuteMs; }

// A time stamp kept in the meta table, or nothing when the key is absent. The table is plain text anyone
// can edit: a value that is not a whole integer is an error naming the file and the key, never an abort.
std::optional<EpochMs> readMetaMs(sql::Db& db, const char* key, const std::string& path) {
  sql::Stmt m(db, "SELECT value FROM meta WHERE key = ?1");
  m.bind(1, std::string_view(key));
  if (!m.step()) return std::nullopt;
  const std::string text = m.text(0);
  EpochMs v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw sql::Error(SQLITE_CORRUPT, path + ": meta key '" + key + "' holds '" + toValidUtf8(text) +
                                         "', expected an integer (epoch ms); fix or delete that row");
  return v;
}

std::uint64_t fileSize(const std::string& p) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : n;
}

// Per-minute request table rows, kept in memory until the minute is safely past.
class RequestAggregator {
 public:
  struct Key {
    EpochMs minuteMs;
    std::string group, fp, endpoint;
    bool operator<(const Key& o) const {
      return std::tie(minuteMs, group, fp, endpoint) < std::tie(o.minuteMs, o.group, o.fp, o.endpoint);
    }
  };
  struct Row {
    std::int64_t requests = 0, r429 = 0, r5xx = 0, net = 0, retries = 0;
    double latSum = 0;
    std::vector<float> lats;
    bool dirty = true;
    bool additive = false;  // minute was already evicted once: merge into the stored row instead of replacing
  };

  // Returns the number of attempts dropped because the table is full.
  std::size_t add(const AttemptRecord& a) {
    const EpochMs minute = floorMinute(a.tsMs);
    newestMinute_ = std::max(newestMinute_, minute);
    Key k{minute, a.group, SecretRegistry::redact(a.keyFingerprint), SecretRegistry::redact(a.endpoint)};
    auto it = rows_.find(k);
    if (it == rows_.end()) {
      if (rows_.size() >= kMaxOpenMinuteRows) return 1;
      it = rows_.emplace(std::move(k), Row{}).first;
      it->second.additive = minute <= evictedThrough_;
    }
    Row& r = it->second;
    r.dirty = true;
    ++r.requests;
    if (a.rateLimited) ++r.r429;
    if (a.status >= 500 && a.status < 600) ++r.r5xx;
    if (a.status == 0) ++r.net;
    if (a.retry) ++r.retries;
    r.latSum += a.latencyMs;
    if (r.lats.size() < kLatencyReservoir) {
      r.lats.push_back(static_cast<float>(a.latencyMs));
    } else {
      rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
      const auto j = (rng_ >> 33) % static_cast<std::uint64_t>(r.requests);
      if (j < kLatencyReservoir) r.lats[j] = static_cast<float>(a.latencyMs);
    }
    return 0;
  }

  bool dirty() const {
    return std::any_of(rows_.begin(), rows_.end(), [](const auto& kv) { return kv.second.dirty; });
  }

  template <class GroupId>
  void write(sql::Stmt& replace, sql::Stmt& merge, GroupId&& groupId) {
    for (auto& [k, r] : rows_) {
      if (!r.dirty) continue;
      sql::Stmt& st = r.additive ? merge : replace;
      st.bind(1, static_cast<std::int64_t>(k.minuteMs))
          .bind(2, groupId(k.group))
          .bind(3, k.fp)
          .bind(4, k.endpoint)
          .bind(5, r.requests)
          .bind(6, r.r429)
          .bind(7, r.r5xx)
          .bind(8, r.net)
          .bind(9, r.retries)
          .bind(10, r.requests ? r.latSum / r.requests : kUnknown)
          .bind(11, p95(r.lats));
      st.run();
    }
  }

  // After a commit: rows are clean; additive rows and minutes well past are forgotten.
  void committed() {
    const EpochMs horizon = subSaturating(newestMinute_, kKeepOpenMinutes * kMinuteMs);
    for (auto it = rows_.begin(); it != rows_.end();) {
      it->second.dirty = false;
      if (it->second.additive || it->first.minuteMs < horizon) {
        evictedThrough_ = std::max(evictedThrough_, std::min(it->first.minuteMs, horizon));
        it = rows_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::size_t size() const { return rows_.size(); }

 private:
  static double p95(std::vector<float> v) {
    if (v.empty()) return kUnknown;
    const auto idx = static_cast<std::size_t>(0.95 * static_cast<double>(v.size() - 1) + 0.5);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(idx), v.end());
    return v[idx];
  }

  std::map<Key, Row> rows_;
  EpochMs newestMinute_ = std::numeric_limits<EpochMs>::min();
  EpochMs evictedThrough_ = std::numeric_limits<EpochMs>::min();
  std::uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
};

struct LostSpan {
  std::uint64_t rows = 0;
  EpochMs fromMs = std::numeric_limits<EpochMs>::max(), toMs = std::numeric_limits<EpochMs>::min();
  void add(std::uint64_t n, EpochMs from, EpochMs to) {
    rows += n;
    fromMs = std::min(fromMs, from);
    toMs = std::max(toMs, to);
  }
};

enum class CommandKind { Flush, Retention, Detect, SetMaxBytes };
struct Command {
  CommandKind kind;
  std::int64_t arg = 0;
  std::promise<bool> done;
};

}  // namespace

struct HistoryStore::Impl {
  std::string path;
  HistoryOptions opts;
  sql::Db db;  // writer thread only, once started
  std::thread thread;

  // Shared with appenders; guarded by mu.
  mutable std::mutex mu;
  std::condition_variable wake;
  std::deque<Sample> inSamples;
  std::vector<Event> inEvents;
  std::vector<AttemptRecord> inAttempts;
  std::vector<std::unique_ptr<Command>> commands;
  LostSpan lost;
  HistoryStatus st;
  std::uint64_t held = 0;  // rows the writer holds for retry
  bool stopping = false;

  // Writer thread only.
  std::vector<Sample> pendSamples;
  std::vector<Event> pendEvents;
  RequestAggregator requests;
  std::map<std::string, std::int64_t> groupIds;
  sql::Stmt begin, commit, insSample, insEvent, insGroup, reqReplace, reqMerge;
  sql::Stmt roll10s, roll1m, roll1mFull, rollLate, delLate;
  EpochMs rolledThrough = std::numeric_limits<EpochMs>::min();  // full resolution expired before this
  EpochMs tier10sFrom = std::numeric_limits<EpochMs>::min();    // 10 s rows expired before this
  std::int64_t pageSize = 4096;

  void prepare();
  std::future<bool> post(CommandKind kind, std::int64_t arg);
  void run();
  bool writeBatch();
  std::int64_t groupId(const std::string& name, std::vector<std::string>& added);
  void holdIncoming(std::deque<Sample>& s, std::vector<Event>& e, std::vector<AttemptRecord>& a);
  void rollback();
  void updateRollups(const std::map<std::int64_t, std::pair<EpochMs, EpochMs>>& touched);
  void fail(const std::string& what);
  bool retention(EpochMs nowMs);
  bool detect();
  void setMaxBytes(std::uint64_t bytes);
};

std::unique_ptr<HistoryStore> HistoryStore::open(const std::string& path, HistoryOptions opts, std::string* error) {
  auto d = std::make_unique<Impl>();
  d->path = path;
  d->opts = std::move(opts);
  try {
    history::inspectFile(path, d->opts.checkOnOpen);
    d->db.open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    if (sqlite3_db_readonly(d->db.handle(), "main") == 1)
      throw sql::Error(SQLITE_READONLY, "cannot write " + path + ": the file or its directory is read-only");
    d->db.check(sqlite3_busy_timeout(d->db.handle(), 5000), "busy timeout");
    // Only possible before the first table, and before WAL (which writes page 1): lets retention give
    // pages back to the file system.
    if (d->db.queryInt("SELECT count(*) FROM sqlite_schema") == 0) d->db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    if (d->db.queryText("PRAGMA journal_mode = WAL") != "wal")
      throw sql::Error(SQLITE_ERROR, "cannot switch " + path + " to WAL mode");
    d->db.exec("PRAGMA synchronous = NORMAL");
    d->db.exec("PRAGMA journal_size_limit = 67108864");
    history::migrate(d->db);
    d->pageSize = d->db.queryInt("PRAGMA page_size");
    d->setMaxBytes(d->opts.maxFileBytes);
    d->prepare();
    for (const auto& [id, name] : history::loadGroups(d->db)) d->groupIds[name] = id;
    if (auto v = readMetaMs(d->db, kMetaRolledThrough, path)) d->rolledThrough = *v;
    if (auto v = readMetaMs(d->db, kMeta10sFrom, path)) d->tier10sFrom = *v;
  } catch (const sql::Error& e) {
    if (error) *error = e.what();
    return nullptr;
  }
  d->st.schemaVersion = history::kSchemaVersion;
  d->thread = std::thread([p = d.get()] { p->run(); });
  return std::unique_ptr<HistoryStore>(new HistoryStore(std::move(d)));
}

HistoryStore::HistoryStore(std::unique_ptr<Impl> impl) : d_(std::move(impl)) {}

HistoryStore::~HistoryStore() {
  {
    std::lock_guard lock(d_->mu);
    d_->stopping = true;
  }
  d_->wake.notify_all();
  if (d_->thread.joinable()) d_->thread.join();
  // Statements first, then the connection; closing the last connection checkpoints and removes the WAL.
  d_->begin = {};
  d_->commit = {};
  d_->insSample = {};
  d_->insEvent = {};
  d_->insGroup = {};
  d_->reqReplace = {};
  d_->reqMerge = {};
  d_->roll10s = {};
  d_->roll1m = {};
  d_->roll1mFull = {};
  d_->rollLate = {};
  d_->delLate = {};
  d_->db.close();
}

void HistoryStore::Impl::prepare() {
  begin.prepare(db, "BEGIN IMMEDIATE");
  commit.prepare(db, "COMMIT");
  insSample.prepare(db, std::string("INSERT OR REPLACE INTO samples(group_id, ") + history::kSampleColumns +
                            ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25)");
  insEvent.prepare(db, "INSERT INTO events(ts_ms, kind, severity, grp, message, detail) VALUES(?1,?2,?3,?4,?5,?6)");
  insGroup.prepare(db, "INSERT INTO groups(name) VALUES(?1)");
  roll10s.prepare(db, history::rollupFromSamplesSql("samples_10s", history::kTier10sMs, history::RollupScope::Replace));
  roll1m.prepare(db, history::rollupFromSamplesSql("samples_1m", history::kTier1mMs, history::RollupScope::ReplaceFrom10s));
  roll1mFull.prepare(db, history::rollupFromSamplesSql("samples_1m", history::kTier1mMs, history::RollupScope::Replace));
  rollLate.prepare(db, history::rollupFromSamplesSql("samples_1m", history::kTier1mMs, history::RollupScope::Merge));
  delLate.prepare(db, "DELETE FROM samples WHERE group_id = ?1 AND ts_ms >= ?2 AND ts_ms < ?3");
  const char* cols = "INSERT INTO requests_1m(minute_ms, group_id, key_fp, endpoint, requests, r429, r5xx, net_errors, "
                     "retries, lat_avg_ms, lat_p95_ms) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)";
  reqReplace.prepare(db, std::string(cols) + " ON CONFLICT DO UPDATE SET requests = excluded.requests, "
                                             "r429 = excluded.r429, r5xx = excluded.r5xx, net_errors = excluded.net_errors, "
                                             "retries = excluded.retries, lat_avg_ms = excluded.lat_avg_ms, "
                                             "lat_p95_ms = excluded.lat_p95_ms");
  reqMerge.prepare(db, std::string(cols) +
                           " ON CONFLICT DO UPDATE SET "
                           "lat_avg_ms = (coalesce(lat_avg_ms, 0) * requests + coalesce(excluded.lat_avg_ms, 0) * "
                           "excluded.requests) / max(requests + excluded.requests, 1), "
                           "lat_p95_ms = max(coalesce(lat_p95_ms, 0), coalesce(excluded.lat_p95_ms, 0)), "
                           "requests = requests + excluded.requests, r429 = r429 + excluded.r429, "
                           "r5xx = r5xx + excluded.r5xx, net_errors = net_errors + excluded.net_errors, "
                           "retries = retries + excluded.retries");
}

void HistoryStore::append(std::vector<Sample> samples) {
  if (samples.empty()) return;
  std::lock_guard lock(d_->mu);
  // Full queue (writer stuck or far behind): the oldest rows give way, as in the writer's retry buffer.
  for (auto& sample : samples) {
    if (d_->inSamples.size() >= d_->opts.maxPendingSamples) {
      if (d_->inSamples.empty()) break;  // a bound of 0 keeps nothing
      const EpochMs ts = d_->inSamples.front().tsMs;
      d_->lost.add(1, ts, ts);
      ++d_->st.rowsDropped;
      d_->inSamples.pop_front();
    }
    d_->inSamples.push_back(std::move(sample));
  }
}

void HistoryStore::append(Event event) {
  std::lock_guard lock(d_->mu);
  if (d_->inEvents.size() >= d_->opts.maxPendingEvents) {
    d_->lost.add(1, event.tsMs, event.tsMs);
    ++d_->st.rowsDropped;
    return;
  }
  d_->inEvents.push_back(std::move(event));
}

void HistoryStore::append(AttemptRecord attempt) {
  std::lock_guard lock(d_->mu);
  if (d_->inAttempts.size() >= d_->opts.maxPendingAttempts) {
    d_->lost.add(1, attempt.tsMs, attempt.tsMs);
    ++d_->st.rowsDropped;
    return;
  }
  d_->inAttempts.push_back(std::move(attempt));
}

std::future<bool> HistoryStore::Impl::post(CommandKind kind, std::int64_t arg) {
  auto cmd = std::make_unique<Command>();
  cmd->kind = kind;
  cmd->arg = arg;
  auto fut = cmd->done.get_future();
  {
    std::lock_guard lock(mu);
    commands.push_back(std::move(cmd));
  }
  wake.notify_all();
  return fut;
}

bool HistoryStore::flush() { return d_->post(CommandKind::Flush, 0).get(); }
bool HistoryStore::runRetention(EpochMs nowMs) { return d_->post(CommandKind::Retention, nowMs).get(); }
bool HistoryStore::detectIncidents() { return d_->post(CommandKind::Detect, 0).get(); }
void HistoryStore::setMaxFileBytes(std::uint64_t bytes) {
  d_->post(CommandKind::SetMaxBytes, static_cast<std::int64_t>(bytes));
}

HistoryStatus HistoryStore::status() const {
  HistoryStatus s;
  {
    std::lock_guard lock(d_->mu);
    s = d_->st;
    s.rowsPending = d_->inSamples.size() + d_->inEvents.size() + d_->inAttempts.size() + d_->held;
  }
  s.fileBytes = fileSize(d_->path) + fileSize(d_->path + "-wal");
  return s;
}

const std::string& HistoryStore::path() const { return d_->path; }

void HistoryStore::Impl::run() {
  using SteadyClock = std::chrono::steady_clock;
  auto nextFlush = SteadyClock::now() + std::chrono::milliseconds(opts.flushIntervalMs);
  auto retryAt = SteadyClock::now();
  int failures = 0;
  auto nextRetention = SteadyClock::now() + std::chrono::milliseconds(opts.maintenanceIntervalMs);
  auto nextDetect = SteadyClock::now() + std::chrono::milliseconds(opts.incidentIntervalMs);
  for (;;) {
    std::deque<Sample> s;
    std::vector<Event> e;
    std::vector<AttemptRecord> a;
    std::vector<std::unique_ptr<Command>> cmds;
    bool stop = false;
    {
      std::unique_lock lock(mu);
      wake.wait_until(lock, nextFlush, [&] { return stopping || !commands.empty(); });
      s.swap(inSamples);
      e.swap(inEvents);
      a.swap(inAttempts);
      cmds.swap(commands);
      stop = stopping;
    }
    holdIncoming(s, e, a);
    for (auto& c : cmds)
      if (c->kind == CommandKind::SetMaxBytes) setMaxBytes(static_cast<std::uint64_t>(c->arg));
    // After a failure, periodic retries back off (a full disk is not freed in a second, and each attempt
    // re-inserts everything held); an explicit flush, a new size cap or shutdown tries at once.
    const bool urgent = stop || !cmds.empty();
    bool wrote = false;
    if (urgent || SteadyClock::now() >= retryAt) {
      wrote = writeBatch();
      failures = wrote ? 0 : std::min(failures + 1, 5);
      retryAt = SteadyClock::now() + std::chrono::milliseconds(wrote ? 0 : opts.flushIntervalMs << failures);
    }
    nextFlush = SteadyClock::now() + std::chrono::milliseconds(opts.flushIntervalMs);
    for (auto& c : cmds) {
      switch (c->kind) {
        case CommandKind::Flush: c->done.set_value(wrote); break;
        case CommandKind::Retention: c->done.set_value(wrote && retention(c->arg)); break;
        case CommandKind::Detect: c->done.set_value(wrote && detect()); break;
        case CommandKind::SetMaxBytes: c->done.set_value(true); break;
      }
    }
    if (stop) {
      if (!wrote) {
        std::lock_guard lock(mu);
        logError("history", "closing with " + std::to_string(held) + " rows unwritten: " + st.lastError);
      }
      return;
    }
    const auto now = SteadyClock::now();
    if (now >= nextRetention) {
      retention(opts.now());
      nextRetention = now + std::chrono::milliseconds(opts.maintenanceIntervalMs);
    }
    if (now >= nextDetect) {
      detect();
      nextDetect = now + std::chrono::milliseconds(opts.incidentIntervalMs);
    }
  }
}

// Moves freshly queued rows into the writer's retry buffer, dropping the oldest beyond the bound.
void HistoryStore::Impl::holdIncoming(std::deque<Sample>& s, std::vector<Event>& e, std::vector<AttemptRecord>& a) {
  std::size_t attemptsDropped = 0;
  EpochMs lo = std::numeric_limits<EpochMs>::max(), hi = std::numeric_limits<EpochMs>::min();
  for (const auto& r : a) {
    if (requests.add(r)) {
      ++attemptsDropped;
      lo = std::min(lo, r.tsMs);
      hi = std::max(hi, r.tsMs);
    }
  }
  pendSamples.insert(pendSamples.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
  if (pendEvents.empty()) pendEvents.swap(e);
  else pendEvents.insert(pendEvents.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));

  std::uint64_t dropped = attemptsDropped;
  if (pendSamples.size() > opts.maxPendingSamples) {
    const auto n = pendSamples.size() - opts.maxPendingSamples;
    for (std::size_t i = 0; i < n; ++i) {
      lo = std::min(lo, pendSamples[i].tsMs);
      hi = std::max(hi, pendSamples[i].tsMs);
    }
    pendSamples.erase(pendSamples.begin(), pendSamples.begin() + static_cast<std::ptrdiff_t>(n));
    dropped += n;
  }
  if (pendEvents.size() > opts.maxPendingEvents) {
    const auto n = pendEvents.size() - opts.maxPendingEvents;
    for (std::size_t i = 0; i < n; ++i) {
      lo = std::min(lo, pendEvents[i].tsMs);
      hi = std::max(hi, pendEvents[i].tsMs);
    }
    pendEvents.erase(pendEvents.begin(), pendEvents.begin() + static_cast<std::ptrdiff_t>(n));
    dropped += n;
  }
  std::lock_guard lock(mu);
  if (dropped) {
    lost.add(dropped, lo, hi);
    st.rowsDropped += dropped;
  }
  held = pendSamples.size() + pendEvents.size();
}

std::int64_t HistoryStore::Impl::groupId(const std::string& name, std::vector<std::string>& added) {
  auto it = groupIds.find(name);
  if (it != groupIds.end()) return it->second;
  insGroup.bind(1, name);
  insGroup.run();
  const auto id = db.lastInsertId();
  groupIds.emplace(name, id);
  added.push_back(name);
  return id;
}

void HistoryStore::Impl::rollback() {
  if (!sqlite3_get_autocommit(db.handle())) {
    // A failed ROLLBACK leaves SQLite to roll back on the next open; nothing committed is at risk.
    sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void HistoryStore::Impl::fail(const std::string& what) {
  std::lock_guard lock(mu);
  st.ok = false;
  st.lastError = what;
  st.lastErrorMs = opts.now();
}

bool HistoryStore::Impl::writeBatch() {
  LostSpan gap;
  {
    std::lock_guard lock(mu);
    gap = lost;
  }
  if (pendSamples.empty() && pendEvents.empty() && !requests.dirty() && gap.rows == 0) return true;
  std::vector<std::string> added;
  try {
    begin.run();
    std::map<std::int64_t, std::pair<EpochMs, EpochMs>> touched;  // group -> [min, max] ts written
    for (const auto& s : pendSamples) {
      const auto gid = groupId(s.group, added);
      history::bindSample(insSample, gid, s);
      insSample.run();
      auto [it, fresh] = touched.try_emplace(gid, s.tsMs, s.tsMs);
      if (!fresh) {
        it->second.first = std::min(it->second.first, s.tsMs);
        it->second.second = std::max(it->second.second, s.tsMs);
      }
    }
    updateRollups(touched);
    auto insertEvent = [&](const Event& e) {
      insEvent.bind(1, static_cast<std::int64_t>(e.tsMs))
          .bind(2, history::eventKindText(e.kind))
          .bind(3, static_cast<int>(e.severity))
          .bind(4, toValidUtf8(e.group))
          .bind(5, SecretRegistry::redact(toValidUtf8(e.message)))
          .bind(6, SecretRegistry::dumpRedacted(e.detail));
      insEvent.run();
    };
    for (const auto& e : pendEvents) insertEvent(e);
    requests.write(reqReplace, reqMerge, [&](const std::string& g) { return groupId(g, added); });
    if (gap.rows > 0) {
      std::string reason;
      {
        std::lock_guard lock(mu);
        reason = st.lastError.empty() ? "write queue overflow" : st.lastError;
      }
      Event g;
      g.tsMs = gap.fromMs;
      g.kind = EventKind::HistoryGap;
      g.severity = Severity::Warn;
      g.message = "history lost " + std::to_string(gap.rows) + " rows: " + reason;
      g.detail = {{"from_ms", gap.fromMs}, {"to_ms", gap.toMs}, {"reason", reason}, {"rows", gap.rows}};
      insertEvent(g);
    }
    commit.run();
  } catch (const sql::Error& e) {
    rollback();
    for (const auto& g : added) groupIds.erase(g);
    fail("history write to " + path + " failed: " + e.what() + " (" + std::to_string(pendSamples.size() + pendEvents.size()) +
         " rows held for retry)");
    return false;
  }
  requests.committed();
  {
    std::lock_guard lock(mu);
    st.rowsWritten += pendSamples.size() + pendEvents.size();
    lost.rows -= gap.rows;
    if (lost.rows == 0) lost = LostSpan{};
    st.ok = true;
    st.lastFlushMs = opts.now();
    held = 0;
  }
  pendSamples.clear();  // outside the lock: appenders never wait for the destructors
  pendEvents.clear();
  return true;
}

void HistoryStore::Impl::setMaxBytes(std::uint64_t bytes) {
  const std::uint64_t pages = bytes == 0 ? kMaxPageCountUnlimited
                                         : std::max<std::uint64_t>(1, bytes / static_cast<std::uint64_t>(pageSize));
  try {
    db.exec("PRAGMA max_page_count = " + std::to_string(pages));
  } catch (const sql::Error& e) {
    fail(std::string("cannot set the file size cap: ") + e.what());
  }
}

// Recomputes the 10 s and 1 min rollup rows that the just-inserted samples fall into (same transaction).
// Samples older than the expired span (a clock jump, a replayed backlog) cannot be recomputed from: they
// are merged into the minute rows and not kept at full resolution.
void HistoryStore::Impl::updateRollups(const std::map<std::int64_t, std::pair<EpochMs, EpochMs>>& touched) {
  for (const auto& [gid, span] : touched) {
    auto [lo, hi] = span;
    if (lo < rolledThrough) {
      const EpochMs lateHi = std::min<EpochMs>(hi + 1, rolledThrough);
      rollLate.bind(1, gid).bind(2, static_cast<std::int64_t>(lo)).bind(3, static_cast<std::int64_t>(lateHi));
      rollLate.run();
      delLate.bind(1, gid).bind(2, static_cast<std::int64_t>(lo)).bind(3, static_cast<std::int64_t>(lateHi));
      delLate.run();
      lo = rolledThrough;
      if (hi < lo) continue;
    }
    // The 10 s tier is not re-created where it has expired; minute rows there are recomputed from the
    // samples (the 10 s rows they are normally built from are gone).
    const EpochMs lo10 = std::max(lo, tier10sFrom);
    for (auto [st, tier] : {std::pair<sql::Stmt*, std::int64_t>{&roll10s, history::kTier10sMs}, {&roll1m, history::kTier1mMs}}) {
      EpochMs from = lo - ((lo % tier) + tier) % tier;
      const EpochMs to = hi - ((hi % tier) + tier) % tier + tier;
      if (st == &roll10s) {
        if (hi < lo10) continue;
        from = lo10 - ((lo10 % tier) + tier) % tier;
      } else if (from < tier10sFrom) {
        st = &roll1mFull;
      }
      st->bind(1, gid).bind(2, static_cast<std::int64_t>(from)).bind(3, static_cast<std::int64_t>(to));
      st->run();
    }
  }
}

// Rollups are already current, so expiring full resolution is a delete; the minute rows live on until retainMs.
bool HistoryStore::Impl::retention(EpochMs nowMs) {
  const EpochMs fullCutoff = floorMinute(nowMs - opts.fullResolutionMs);
  const EpochMs deleteCutoff = floorMinute(nowMs - opts.retainMs);
  const EpochMs cutoff10s = std::max(fullCutoff, floorMinute(nowMs - opts.tier10sRetainMs));
  try {
    sql::Stmt delFull(db, "DELETE FROM samples WHERE group_id = ?1 AND ts_ms < ?2");
    sql::Stmt del10s(db, "DELETE FROM samples_10s WHERE group_id = ?1 AND ts_ms < ?2");
    sql::Stmt del1m(db, "DELETE FROM samples_1m WHERE group_id = ?1 AND ts_ms < ?2");
    for (const auto& [id, name] : history::loadGroups(db)) {
      begin.run();
      try {
        for (auto [st, cutoff] : {std::pair<sql::Stmt*, EpochMs>{&delFull, fullCutoff}, {&del10s, cutoff10s}, {&del1m, deleteCutoff}}) {
          st->bind(1, id).bind(2, static_cast<std::int64_t>(cutoff));
          st->run();
        }
        commit.run();
      } catch (...) {
        rollback();
        throw;
      }
    }
    begin.run();
    try {
      for (const char* sqlText : {"DELETE FROM events WHERE ts_ms < ?1", "DELETE FROM requests_1m WHERE minute_ms < ?1",
                                  "DELETE FROM incidents WHERE end_ms < ?1"}) {
        sql::Stmt del(db, sqlText);
        del.bind(1, static_cast<std::int64_t>(deleteCutoff));
        del.run();
      }
      sql::Stmt m(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
      if (fullCutoff > rolledThrough) {
        m.bind(1, std::string_view(kMetaRolledThrough)).bind(2, std::to_string(fullCutoff));
        m.run();
      }
      if (cutoff10s > tier10sFrom) {
        m.bind(1, std::string_view(kMeta10sFrom)).bind(2, std::to_string(cutoff10s));
        m.run();
      }
      commit.run();
    } catch (...) {
      rollback();
      throw;
    }
    rolledThrough = std::max(rolledThrough, fullCutoff);
    tier10sFrom = std::max(tier10sFrom, cutoff10s);
    db.exec("PRAGMA incremental_vacuum");
    // Give the freed pages back now rather than at the next automatic checkpoint.
    int logFrames = 0, checkpointed = 0;
    db.check(sqlite3_wal_checkpoint_v2(db.handle(), "main", SQLITE_CHECKPOINT_PASSIVE, &logFrames, &checkpointed),
             "checkpoint");
  } catch (const sql::Error& e) {
    fail(std::string("history retention failed: ") + e.what());
    return false;
  }
  return true;
}

bool HistoryStore::Impl::detect() {
  try {
    // Newest sample over all groups (the primary key makes each max() a single lookup).
    EpochMs newest = std::numeric_limits<EpochMs>::min(), oldest = std::numeric_limits<EpochMs>::max();
    {
      sql::Stmt mx(db, "SELECT max(ts_ms), min(ts_ms) FROM samples WHERE group_id = ?1");
      for (const auto& [id, name] : history::loadGroups(db)) {
        mx.bind(1, id);
        if (mx.step() && !mx.isNull(0)) {
          newest = std::max<EpochMs>(newest, mx.i64(0));
          oldest = std::min<EpochMs>(oldest, mx.i64(1));
        }
        mx.reset();
      }
    }
    if (newest == std::numeric_limits<EpochMs>::min()) return true;
    // The walk starts no earlier than the retention horizon before the newest sample: one absurd old ts_ms
    // (a hand-edited file, a clock at 1970) would otherwise mean up to 4e11 chunk transactions on the writer.
    EpochMs scanned = std::max(subSaturating(oldest, 1), subSaturating(newest, opts.retainMs));
    if (auto v = readMetaMs(db, kMetaIncidentsScannedTo, path)) scanned = std::max<EpochMs>(scanned, *v);
    const IncidentDetector detector(opts.incidents);
    const auto& io = opts.incidents;
    const std::int64_t lookback = io.mergeGapMs + std::max(io.shareWindowMs, io.queueGrowthWindowMs);
    while (scanned < newest) {
      const EpochMs to = std::min<EpochMs>(newest, addSaturating(scanned, kDetectChunkMs));
      EpochMs from = subSaturating(scanned, lookback);
      // Incidents that may still grow or merge are re-detected from their start and keep their ids.
      std::vector<std::pair<std::int64_t, Incident>> tail;
      {
        sql::Stmt t(db, "SELECT id, start_ms, end_ms FROM incidents WHERE end_ms >= ?1 ORDER BY start_ms");
        t.bind(1, static_cast<std::int64_t>(subSaturating(from, io.mergeGapMs)));
        while (t.step()) {
          Incident inc;
          inc.startMs = t.i64(1);
          inc.endMs = t.i64(2);
          from = std::min(from, inc.startMs);
          tail.emplace_back(t.i64(0), inc);
        }
      }
      auto found = detector.detect(history::loadSamples(db, history::kSchemaVersion, from, to + 1, {}),
                                   history::loadEvents(db, from, to + 1, {}, {EventKind::OperatorAction}));
      begin.run();
      try {
        sql::Stmt del(db, "DELETE FROM incidents WHERE id = ?1");
        for (const auto& [id, inc] : tail) {
          del.bind(1, id);
          del.run();
        }
        sql::Stmt ins(db, "INSERT INTO incidents(id, start_ms, end_ms, groups, reasons, peak_429_per_s, total_429, shed, "
                          "operator_actions, detail) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)");
        std::vector<bool> reused(tail.size(), false);
        for (const auto& inc : found) {
          ins.bindNull(1);
          for (std::size_t k = 0; k < tail.size(); ++k) {
            if (!reused[k] && tail[k].second.startMs <= inc.endMs && inc.startMs <= tail[k].second.endMs) {
              ins.bind(1, tail[k].first);
              reused[k] = true;
              break;
            }
          }
          ins.bind(2, static_cast<std::int64_t>(inc.startMs))
              .bind(3, static_cast<std::int64_t>(inc.endMs))
              .bind(4, dumpJson(nlohmann::json(inc.groups)))
              .bind(5, dumpJson(nlohmann::json(inc.reasons)))
              .bind(6, inc.peak429PerS)
              .bind(7, inc.total429)
              .bind(8, inc.shed)
              .bind(9, static_cast<std::int64_t>(inc.operatorActions.size()))
              .bind(10, SecretRegistry::redact(history::incidentToDetailJson(inc)));
          ins.run();
        }
        sql::Stmt m(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
        m.bind(1, std::string_view(kMetaIncidentsScannedTo)).bind(2, std::to_string(to));
        m.run();
        commit.run();
      } catch (...) {
        rollback();
        throw;
      }
      scanned = to;
    }
  } catch (const sql::Error& e) {
    fail(std::string("incident detection failed: ") + e.what());
    return false;
  }
  return true;
}

}  // namespace tg
