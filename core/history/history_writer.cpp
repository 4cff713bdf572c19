#include "history_writer.h"

#include "history_meta.h"
#include "history_schema.h"
#include "json_text.h"
#include "log.h"
#include "secret.h"
#include "sqlite_transaction.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>
#include <chrono>
#include <filesystem>
#include <limits>

namespace tg {

namespace {
// Milliseconds since boot, suspended time included (steady_clock stops while the machine sleeps).
EpochMs bootMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<EpochMs>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}
}  // namespace
namespace {

constexpr std::uint64_t kMaxPageCountUnlimited = 4294967294ULL;

// fsync of a file or a folder (for a rename in it): empty when done, else what failed.
std::string syncFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "open " + path + ": " + std::generic_category().message(errno);
  std::string failed;
  if (::fsync(fd) != 0) failed = "fsync " + path + ": " + std::generic_category().message(errno);
  ::close(fd);
  return failed;
}

std::uint64_t fileSize(const std::string& p) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : n;
}

// Drops the oldest rows beyond `bound`, widening [lo, hi] by their times; returns how many.
template <class Row>
std::size_t dropOldest(std::vector<Row>& rows, std::size_t bound, EpochMs& lo, EpochMs& hi) {
  if (rows.size() <= bound) return 0;
  const auto n = rows.size() - bound;
  for (std::size_t i = 0; i < n; ++i) {
    lo = std::min(lo, rows[i].tsMs);
    hi = std::max(hi, rows[i].tsMs);
  }
  rows.erase(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

}  // namespace

void HistoryWriter::LostSpan::add(std::uint64_t n, EpochMs from, EpochMs to) {
  rows += n;
  fromMs = std::min(fromMs, from);
  toMs = std::max(toMs, to);
}

HistoryWriter::HistoryWriter(std::string path, HistoryOptions opts) : path_(std::move(path)), opts_(std::move(opts)) {}

void HistoryWriter::open() {
  history::inspectFile(path_, opts_.checkOnOpen);
  db_.open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
  if (sqlite3_db_readonly(db_.handle(), "main") == 1)
    throw sql::Error(SQLITE_READONLY, "cannot write " + path_ + ": the file or its directory is read-only");
  db_.check(sqlite3_busy_timeout(db_.handle(), 5000), "busy timeout");
  // Only possible before the first table, and before WAL (which writes page 1): lets retention give
  // pages back to the file system.
  if (db_.queryInt("SELECT count(*) FROM sqlite_schema") == 0) db_.exec("PRAGMA auto_vacuum = INCREMENTAL");
  if (db_.queryText("PRAGMA journal_mode = WAL") != "wal")
    throw sql::Error(SQLITE_ERROR, "cannot switch " + path_ + " to WAL mode");
  db_.exec("PRAGMA synchronous = NORMAL");
  db_.exec("PRAGMA journal_size_limit = 67108864");
  // A file of an older schema may be being upgraded by another tollgate (the dashboard, headless runs and serve
  // share the user's file), which takes minutes for a week of history: wait longer for it than for a write, and
  // say what held the file rather than "database is locked".
  const auto fileVersion = db_.queryInt("PRAGMA user_version");
  const bool older = fileVersion > 0 && fileVersion < history::kSchemaVersion;
  if (older) {
    db_.check(sqlite3_busy_timeout(db_.handle(), 0), "busy timeout");
    try {
      db_.exec("BEGIN IMMEDIATE; ROLLBACK;");
    } catch (const sql::Error& e) {
      if ((e.code & 0xff) != SQLITE_BUSY) throw;
      logWarn("history", path_ + " (schema " + std::to_string(fileVersion) + ") is locked by another process, " +
                             "probably a tollgate upgrading it: waiting up to " +
                             std::to_string(opts_.upgradeWaitMs / 1000) + " s");
    }
    db_.check(sqlite3_busy_timeout(db_.handle(), opts_.upgradeWaitMs), "busy timeout");
  }
  try {
    if (older) {
      // Under the write lock: after another process's copy or upgrade, if one is under way (its copy and growing
      // journal are no measure of what this one needs, and the file may be upgraded when it is done), and with no
      // other copying beside this one. Nothing is written here: the lock ends in a rollback.
      sql::SqliteTransaction lock(db_);
      const auto now = static_cast<int>(db_.queryInt("PRAGMA user_version"));
      if (now > history::kSchemaVersion)
        throw sql::Error(SQLITE_ERROR, path_ + " was upgraded to schema " + std::to_string(now) +
                                           " by a newer tollgate while this one waited; this build reads schema " +
                                           std::to_string(history::kSchemaVersion) + " and older: use the newer one");
      if (now < history::kSchemaVersion) prepareUpgrade(now);
    }
    history::migrate(db_);
  } catch (const sql::Error& e) {
    if (!older || (e.code & 0xff) != SQLITE_BUSY) throw;
    throw sql::Error(e.code, path_ + " is locked by another process, probably a tollgate upgrading it from schema " +
                                 std::to_string(fileVersion) + " to " + std::to_string(history::kSchemaVersion) +
                                 " (still locked after " + std::to_string(opts_.upgradeWaitMs / 1000) +
                                 " s); start again when it is done");
  }
  db_.check(sqlite3_busy_timeout(db_.handle(), 5000), "busy timeout");
  pageSize_ = db_.queryInt("PRAGMA page_size");
  setMaxBytes(opts_.maxFileBytes);
  insSample_.prepare(db_, std::string("INSERT OR REPLACE INTO samples(group_id, ") + history::kSampleColumns +
                              ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25)");
  insEvent_.prepare(db_, "INSERT INTO events(ts_ms, kind, severity, grp, message, detail) VALUES(?1,?2,?3,?4,?5,?6)");
  // OR IGNORE and a look-up: another process writing the same file (the dashboard and a headless run share
  // the user's file) may have added the group since this one read the table, and a plain INSERT then failed
  // every batch on its UNIQUE name for good: the whole run's history lost.
  insGroup_.prepare(db_, "INSERT OR IGNORE INTO groups(name) VALUES(?1)");
  selGroup_.prepare(db_, "SELECT id FROM groups WHERE name = ?1");
  requests_.prepare(db_);
  rollups_.open(db_, path_);
  incidents_.emplace(db_, path_, opts_.incidents, opts_.retainMs);
  for (const auto& [id, name] : history::loadGroups(db_)) groupIds_[name] = id;
  markWriters();
  st_.schemaVersion = history::kSchemaVersion;
  thread_ = std::thread([this] { run(); });
}

HistoryWriter::~HistoryWriter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!writerKey_.empty()) {  // a clean close: no row says this process ended without one
    try {
      sql::Stmt done(db_, "DELETE FROM meta WHERE key = ?1");
      done.bind(1, std::string_view(writerKey_));
      done.run();
    } catch (const sql::Error& e) {
      logWarn("history", path_ + ": could not mark this run's clean close (" + e.what() +
                             "); the next start will say it ended without stopping");
    }
  }
  // Statements first, then the connection; closing the last connection checkpoints and removes the WAL.
  insSample_ = {};
  insEvent_ = {};
  insGroup_ = {};
  requests_.reset();
  rollups_.reset();
  db_.close();
}

void HistoryWriter::append(std::vector<Sample> samples) {
  if (samples.empty()) return;
  std::lock_guard lock(mu_);
  // Full queue (writer stuck or far behind): the oldest rows give way, as in the writer's retry buffer.
  for (auto& sample : samples) {
    if (inSamples_.size() >= opts_.maxPendingSamples) {
      if (inSamples_.empty()) break;  // a bound of 0 keeps nothing
      countDroppedLocked(inSamples_.front().tsMs);
      inSamples_.pop_front();
    }
    inSamples_.push_back(std::move(sample));
  }
}

template <class Row>
void HistoryWriter::enqueue(std::vector<Row>& queue, std::size_t bound, Row row) {
  std::lock_guard lock(mu_);
  if (queue.size() >= bound) {
    countDroppedLocked(row.tsMs);
    return;
  }
  queue.push_back(std::move(row));
}

void HistoryWriter::append(Event event) { enqueue(inEvents_, opts_.maxPendingEvents, std::move(event)); }
void HistoryWriter::append(AttemptRecord attempt) {
  enqueue(inAttempts_, opts_.maxPendingAttempts, std::move(attempt));
}

void HistoryWriter::countDroppedLocked(EpochMs ts) {
  lost_.add(1, ts, ts);
  ++st_.rowsDropped;
}

std::future<bool> HistoryWriter::post(CommandKind kind, std::int64_t arg) {
  auto cmd = std::make_unique<Command>();
  cmd->kind = kind;
  cmd->arg = arg;
  auto fut = cmd->done.get_future();
  {
    std::lock_guard lock(mu_);
    commands_.push_back(std::move(cmd));
  }
  wake_.notify_all();
  return fut;
}

std::future<bool> HistoryWriter::flush() { return post(CommandKind::Flush, 0); }
std::future<bool> HistoryWriter::runRetention(EpochMs nowMs) { return post(CommandKind::Retention, nowMs); }
std::future<bool> HistoryWriter::detectIncidents() { return post(CommandKind::Detect, 0); }
std::future<bool> HistoryWriter::setMaxFileBytes(std::uint64_t bytes) {
  return post(CommandKind::SetMaxBytes, static_cast<std::int64_t>(bytes));
}

HistoryStatus HistoryWriter::status() const {
  HistoryStatus s;
  {
    std::lock_guard lock(mu_);
    s = st_;
    s.rowsPending = inSamples_.size() + inEvents_.size() + inAttempts_.size() + held_;
  }
  s.fileBytes = fileSize(path_) + fileSize(path_ + "-wal");
  return s;
}

void HistoryWriter::run() {
  using SteadyClock = std::chrono::steady_clock;
  auto nextFlush = SteadyClock::now() + std::chrono::milliseconds(opts_.flushIntervalMs);
  auto retryAt = SteadyClock::now();
  int failures = 0;
  auto nextRetention = SteadyClock::now() + std::chrono::milliseconds(opts_.maintenanceIntervalMs);
  lastRetention_ = std::make_pair(opts_.now(), bootMs());  // a jump in the first interval is one too
  auto nextDetect = SteadyClock::now() + std::chrono::milliseconds(opts_.incidentIntervalMs);
  // A container restarted beside this one leaves a row its pid cannot be looked up by: judged by its silence.
  const auto writerCheckEvery = std::chrono::milliseconds(opts_.writerCheckIntervalMs);
  auto nextWriterCheck = SteadyClock::now() + writerCheckEvery;
  for (;;) {
    std::deque<Sample> s;
    std::vector<Event> e;
    std::vector<AttemptRecord> a;
    std::vector<std::unique_ptr<Command>> cmds;
    bool stop = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_until(lock, nextFlush, [&] { return stopping_ || !commands_.empty(); });
      s.swap(inSamples_);
      e.swap(inEvents_);
      a.swap(inAttempts_);
      cmds.swap(commands_);
      stop = stopping_;
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
      retryAt = SteadyClock::now() + std::chrono::milliseconds(wrote ? 0 : opts_.flushIntervalMs << failures);
    }
    nextFlush = SteadyClock::now() + std::chrono::milliseconds(opts_.flushIntervalMs);
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
        std::lock_guard lock(mu_);
        logError("history", "closing with " + std::to_string(held_) + " rows unwritten: " + st_.lastError);
      }
      return;
    }
    const auto now = SteadyClock::now();
    if (now >= nextRetention) {
      retention(opts_.now(), /*periodic=*/true);
      nextRetention = now + std::chrono::milliseconds(opts_.maintenanceIntervalMs);
    }
    if (now >= nextDetect) {
      detect();
      nextDetect = now + std::chrono::milliseconds(opts_.incidentIntervalMs);
    }
    if (now >= nextWriterCheck) {
      markWriters();
      nextWriterCheck = now + writerCheckEvery;
    }
  }
}

// Moves freshly queued rows into the writer's retry buffer, dropping the oldest beyond the bound.
void HistoryWriter::holdIncoming(std::deque<Sample>& s, std::vector<Event>& e, std::vector<AttemptRecord>& a) {
  std::size_t attemptsDropped = 0;
  EpochMs lo = std::numeric_limits<EpochMs>::max(), hi = std::numeric_limits<EpochMs>::min();
  for (const auto& r : a) {
    if (requests_.add(r)) {
      ++attemptsDropped;
      lo = std::min(lo, r.tsMs);
      hi = std::max(hi, r.tsMs);
    }
  }
  pendSamples_.insert(pendSamples_.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
  if (pendEvents_.empty()) pendEvents_.swap(e);
  else pendEvents_.insert(pendEvents_.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));

  std::uint64_t dropped = attemptsDropped;
  dropped += dropOldest(pendSamples_, opts_.maxPendingSamples, lo, hi);
  dropped += dropOldest(pendEvents_, opts_.maxPendingEvents, lo, hi);
  std::lock_guard lock(mu_);
  if (dropped) {
    lost_.add(dropped, lo, hi);
    st_.rowsDropped += dropped;
  }
  held_ = pendSamples_.size() + pendEvents_.size();
}

std::int64_t HistoryWriter::groupId(const std::string& name, std::vector<std::string>& added) {
  auto it = groupIds_.find(name);
  if (it != groupIds_.end()) return it->second;
  insGroup_.bind(1, name);
  insGroup_.run();
  selGroup_.bind(1, name);
  if (!selGroup_.step()) {
    selGroup_.reset();
    throw sql::Error(SQLITE_ERROR, path_ + ": group \"" + name + "\" not found after its insert");
  }
  const auto id = selGroup_.i64(0);
  selGroup_.reset();
  groupIds_.emplace(name, id);
  added.push_back(name);
  return id;
}

void HistoryWriter::fail(const std::string& what) {
  std::lock_guard lock(mu_);
  // Logged when writing stops, not only at exit: a run on a full disk kept 20 s of history in memory with no
  // word until it closed. Once a streak, not every flush.
  if (st_.ok) logError("history", what + "; retried at each flush");
  st_.ok = false;
  st_.lastError = what;
  st_.lastErrorMs = opts_.now();
}

void HistoryWriter::insertSamples(std::vector<std::string>& added) {
  RollupRetention::TouchedSpans touched;
  for (const auto& s : pendSamples_) {
    const auto gid = groupId(s.group, added);
    history::bindSample(insSample_, gid, s);
    insSample_.run();
    unscannedFrom_ = std::min(unscannedFrom_, s.tsMs);
    unscannedTo_ = std::max(unscannedTo_, s.tsMs);
    auto [it, fresh] = touched.try_emplace(gid, s.tsMs, s.tsMs);
    if (!fresh) {
      it->second.first = std::min(it->second.first, s.tsMs);
      it->second.second = std::max(it->second.second, s.tsMs);
    }
  }
  rollups_.update(touched);
}

void HistoryWriter::insertEvent(const Event& e) {
  insEvent_.bind(1, static_cast<std::int64_t>(e.tsMs))
      .bind(2, history::eventKindText(e.kind))
      .bind(3, static_cast<int>(e.severity))
      .bind(4, toValidUtf8(e.group))
      .bind(5, SecretRegistry::redact(toValidUtf8(e.message)))
      .bind(6, SecretRegistry::dumpRedacted(e.detail));
  insEvent_.run();
}

bool HistoryWriter::writeBatch() {
  LostSpan gap;
  {
    std::lock_guard lock(mu_);
    gap = lost_;
  }
  if (pendSamples_.empty() && pendEvents_.empty() && !requests_.dirty() && gap.rows == 0) return true;
  std::vector<std::string> added;
  try {
    sql::SqliteTransaction tx(db_);
    insertSamples(added);
    for (const auto& e : pendEvents_) insertEvent(e);
    requests_.write([&](const std::string& g) { return groupId(g, added); });
    if (!writerKey_.empty()) history::writeWriterRow(db_, writerKey_, opts_.now());  // still writing
    if (gap.rows > 0) {
      std::string reason;
      {
        std::lock_guard lock(mu_);
        reason = st_.lastError.empty() ? "write queue overflow" : st_.lastError;
      }
      Event g;
      g.tsMs = gap.fromMs;
      g.kind = EventKind::HistoryGap;
      g.severity = Severity::Warn;
      g.message = "history lost " + std::to_string(gap.rows) + " rows: " + reason;
      g.detail = {{"from_ms", gap.fromMs}, {"to_ms", gap.toMs}, {"reason", reason}, {"rows", gap.rows}};
      insertEvent(g);
    }
    tx.commit();
  } catch (const sql::Error& e) {
    for (const auto& g : added) groupIds_.erase(g);
    fail("history write to " + path_ + " failed: " + e.what() + " (" +
         std::to_string(pendSamples_.size() + pendEvents_.size()) + " rows held for retry)");
    return false;
  }
  requests_.committed();
  {
    std::lock_guard lock(mu_);
    st_.rowsWritten += pendSamples_.size() + pendEvents_.size();
    lost_.rows -= gap.rows;
    if (lost_.rows == 0) lost_ = LostSpan{};
    if (!st_.ok) logInfo("history", path_ + ": writing again");
    st_.ok = true;
    st_.lastFlushMs = opts_.now();
    held_ = 0;
  }
  pendSamples_.clear();  // outside the lock: appenders never wait for the destructors
  pendEvents_.clear();
  return true;
}

void HistoryWriter::prepareUpgrade(int fileVersion) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string dir = fs::absolute(fs::path(path_)).parent_path().string();
  const fs::path backup = path_ + ".schema" + std::to_string(fileVersion) + ".bak";
  // Copies under way hold the write lock this process holds now: a partial copy found here is a dead one's
  // (a kill, a power loss), and its space is given back before the room is measured.
  const std::string partialPrefix = backup.filename().string() + ".partial-";
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().rfind(partialPrefix, 0) == 0) {
      logInfo("history", "removing " + entry.path().string() + ", a copy cut short by an earlier start");
      std::error_code removed;
      fs::remove(entry.path(), removed);
    }
  const std::uint64_t size = fileSize(path_) + fileSize(path_ + "-wal");
  std::uint64_t free = std::numeric_limits<std::uint64_t>::max();  // unknown: let SQLite say
  if (opts_.freeBytes) free = opts_.freeBytes(dir);
  else if (const auto space = fs::space(dir, ec); !ec) free = space.available;
  const auto mb = [](std::uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MB"; };
  const std::string from = "schema " + std::to_string(fileVersion) + " to " + std::to_string(history::kSchemaVersion);
  // An upgrade rewrites the sample tables in one transaction: the new tables and the journal, up to about twice
  // the file. Tried on a disk without that room, it filled the disk, rolled back, and did the same at every start.
  if (free < 2 * size)
    throw sql::Error(SQLITE_FULL, "upgrading " + path_ + " from " + from + " needs about " + mb(2 * size) +
                                      " free on its disk, " + mb(free) + " is: the file is left as it was; free some "
                                      "space and start again");
  if (!opts_.backupBeforeUpgrade) return;
  if (fs::exists(backup, ec)) {  // an earlier start's, whole (renamed only once complete): the file before any upgrade
    logInfo("history", "upgrading " + path_ + " from " + from + "; the copy of it as it was is " + backup.string());
    return;
  }
  if (free < 3 * size) {
    logWarn("history", "upgrading " + path_ + " from " + from + " without a copy of it as it was: its disk has " +
                           mb(free) + " free, the copy and the upgrade need about " + mb(3 * size));
    return;
  }
  logInfo("history", "upgrading " + path_ + " from " + from + ": copying it as it was to " + backup.string() + " (" +
                         mb(size) + ") first; delete the copy once this version suits you");
  // Under a name of its own, made durable, then renamed: a copy cut short is never taken for the backup. From a
  // second connection: VACUUM INTO cannot run inside the transaction that holds the lock.
  const fs::path partial = backup.string() + ".partial-" + std::to_string(::getpid());
  std::string failed;
  try {
    sql::Db copier;
    copier.open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
    sql::Stmt copy(copier, "VACUUM INTO ?1");
    copy.bind(1, std::string_view(partial.string()));
    copy.run();
  } catch (const sql::Error& e) {
    failed = e.what();
  }
  if (failed.empty()) {  // the copy is as private as the file it copies
    fs::permissions(partial, fs::status(path_, ec).permissions(), ec);
    failed = syncFile(partial.string());
  }
  if (failed.empty()) {
    fs::rename(partial, backup, ec);
    if (ec) failed = "rename: " + ec.message();
  }
  if (!failed.empty()) {  // a read-only folder, a quota: as without room, the upgrade goes on without a copy
    fs::remove(partial, ec);
    logWarn("history", "upgrading " + path_ + " from " + from + " without a copy of it as it was: copying it to " +
                           backup.string() + " failed: " + failed);
    return;
  }
  if (const std::string why = syncFile(dir); !why.empty())  // the rename itself
    logWarn("history", "the copy " + backup.string() + " is made, but its folder could not be synced: " + why);
}

void HistoryWriter::markWriters() {
  writerKey_ = history::ownWriterKey();  // kept even if this pass fails: the next write adds the row
  const EpochMs now = opts_.now();
  std::vector<std::string> said;
  history::WriterSightings seen;  // kept once the ended ones are recorded: a failed pass watches them again
  try {
    sql::SqliteTransaction tx(db_);
    for (const auto& w : history::endedWriters(db_, writerKey_, seenWriters_, seen,
                                               std::chrono::steady_clock::now(),
                                               std::chrono::milliseconds(opts_.writerSilenceMs))) {
      Event e;
      e.tsMs = w.lastWriteMs > 0 ? w.lastWriteMs : now;
      e.kind = EventKind::EngineStop;
      e.severity = Severity::Warn;
      e.message = "tollgate (pid " + std::to_string(w.pid) +
                  ") ended without stopping: killed, crashed or the machine went down; history holds what it wrote "
                  "until here (what it held for the next write, about a second, is lost)";
      e.detail = {{"unclean", true}, {"pid", w.pid}, {"last_write_ms", w.lastWriteMs}};
      insertEvent(e);
      sql::Stmt gone(db_, "DELETE FROM meta WHERE key = ?1");
      gone.bind(1, std::string_view(w.key));
      gone.run();
      said.push_back(e.message);
    }
    history::writeWriterRow(db_, writerKey_, now);
    tx.commit();
    seenWriters_ = std::move(seen);
  } catch (const sql::Error& e) {  // a full disk: the writer holds rows and retries, as for any write
    if (!std::exchange(writersFailSaid_, true))
      logWarn("history", path_ + ": could not look for runs that ended without stopping: " + e.what());
    return;
  }
  writersFailSaid_ = false;
  for (const auto& m : said) logWarn("history", path_ + ": " + m);
}

void HistoryWriter::setMaxBytes(std::uint64_t bytes) {
  const std::uint64_t pages = bytes == 0 ? kMaxPageCountUnlimited
                                         : std::max<std::uint64_t>(1, bytes / static_cast<std::uint64_t>(pageSize_));
  try {
    db_.exec("PRAGMA max_page_count = " + std::to_string(pages));
  } catch (const sql::Error& e) {
    fail(std::string("cannot set the file size cap: ") + e.what());
  }
}

bool HistoryWriter::retention(EpochMs nowMs, bool periodic) {
  // A wall clock far ahead (a wrong year at boot, a clock set by hand) expired history for good: everything
  // older than 30 days before the wrong "now", and a full-resolution horizon weeks ahead that then merged every
  // new sample into minute rows until the clock got there. The periodic pass now trusts the wall clock only as
  // far as the time since boot agrees (CLOCK_BOOTTIME: a night suspended is time that passed), or after a day of
  // disagreeing, and pulls back a horizon the clock is behind by more than an hour.
  constexpr EpochMs kStepMs = 3'600'000;
  constexpr EpochMs kTrustAfterMs = 24 * kStepMs;
  if (periodic) {
    const EpochMs bootNow = bootMs();
    if (lastRetention_) {
      const auto [wall, boot] = *lastRetention_;
      const EpochMs passed = subSaturating(bootNow, boot);
      const EpochMs ahead = subSaturating(subSaturating(nowMs, wall), passed);
      if (ahead > kStepMs && passed < kTrustAfterMs) {
        if (std::exchange(retentionSkipSaid_, true)) return true;  // said once while it lasts
        logWarn("history", path_ + ": retention skipped: the clock moved " + std::to_string(ahead / 60000) +
                               " minutes further than the time that passed; it runs once the two agree, or after "
                               "a day");
        return true;
      }
      // A clock stepped back is no baseline: its correction forward would read as a jump ahead.
      if (ahead >= -kStepMs) lastRetention_ = std::make_pair(nowMs, bootNow);
    } else {
      lastRetention_ = std::make_pair(nowMs, bootNow);
    }
    retentionSkipSaid_ = false;
    try {
      if (rollups_.rebase(nowMs, opts_, kStepMs))
        logWarn("history", path_ + ": the clock is behind the last retention pass: full resolution kept from now on");
    } catch (const sql::Error& e) {
      fail(std::string("history retention failed: ") + e.what());
      return false;
    }
  }
  try {
    rollups_.expire(nowMs, opts_);
  } catch (const sql::Error& e) {
    fail(std::string("history retention failed: ") + e.what());
    return false;
  }
  return true;
}

bool HistoryWriter::detect() {
  try {
    incidents_->detectNew(unscannedFrom_, unscannedTo_);
    unscannedFrom_ = std::numeric_limits<EpochMs>::max();
    unscannedTo_ = std::numeric_limits<EpochMs>::min();
  } catch (const sql::Error& e) {
    fail(std::string("incident detection failed: ") + e.what());
    return false;
  }
  return true;
}

}  // namespace tg
