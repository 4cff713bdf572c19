// Intake and the writer thread behind HistoryStore: bounded queues the engine thread appends to, and one
// thread that owns the SQLite connection, commits what is queued about every flushIntervalMs (samples,
// events, the per-minute request rows, rollups) and runs retention and incident detection.
//
// Faults: a failed commit is rolled back and its rows held (bounded) for the next flush, with backoff;
// rows lost to the bounds are recorded as one HistoryGap event once writing works again.
#pragma once

#include "history_meta.h"
#include "history_types.h"
#include "incident_recorder.h"
#include "request.h"
#include "request_aggregator.h"
#include "rollup_retention.h"
#include "sqlite_db.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tg {

class HistoryWriter {
 public:
  HistoryWriter(std::string path, HistoryOptions opts);
  // Stops the thread after a last flush of everything queued, then closes the file.
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Not thread-safe; once, before anything else. Opens (or creates and migrates) the file and starts the
  // writer thread. Throws sql::Error when the file is refused or cannot be opened.
  void open();

  // Thread-safe, non-blocking apart from a short lock: enqueue only; beyond the bounds rows are dropped
  // and counted.
  void append(std::vector<Sample> samples);
  void append(Event event);
  void append(AttemptRecord attempt);

  // Thread-safe. Each is done on the writer thread after a write of everything queued; the future says
  // whether it (and that write) succeeded.
  std::future<bool> flush();
  std::future<bool> runRetention(EpochMs nowMs);
  std::future<bool> detectIncidents();
  std::future<bool> setMaxFileBytes(std::uint64_t bytes);

  // Thread-safe snapshot.
  HistoryStatus status() const;
  const std::string& path() const { return path_; }

 private:
  enum class CommandKind { Flush, Retention, Detect, SetMaxBytes };
  struct Command {
    CommandKind kind;
    std::int64_t arg = 0;
    std::promise<bool> done;
  };
  struct LostSpan {
    std::uint64_t rows = 0;
    EpochMs fromMs = std::numeric_limits<EpochMs>::max(), toMs = std::numeric_limits<EpochMs>::min();
    void add(std::uint64_t n, EpochMs from, EpochMs to);
  };

  // Appends `row` unless `queue` holds `bound` rows already; then counts it as lost.
  template <class Row>
  void enqueue(std::vector<Row>& queue, std::size_t bound, Row row);
  void countDroppedLocked(EpochMs ts);  // mu_ held
  std::future<bool> post(CommandKind kind, std::int64_t arg);
  void run();
  bool writeBatch();
  void insertSamples(std::vector<std::string>& added);
  void insertEvent(const Event& e);
  std::int64_t groupId(const std::string& name, std::vector<std::string>& added);
  void holdIncoming(std::deque<Sample>& s, std::vector<Event>& e, std::vector<AttemptRecord>& a);
  void fail(const std::string& what);
  // `periodic`: the writer's own pass on its clock (not a caller's runRetention), checked against clock steps.
  bool retention(EpochMs nowMs, bool periodic = false);
  bool detect();
  void setMaxBytes(std::uint64_t bytes);
  // Before an upgrade from `fileVersion`: refuses it (sql::Error) when the disk cannot hold it, and copies the file
  // as it was beside it when there is room.
  void prepareUpgrade(int fileVersion);
  // At open and every minute: an EngineStop for every writer the file lists that ended without closing, and this
  // one's own row.
  void markWriters();

  const std::string path_;
  const HistoryOptions opts_;
  sql::Db db_;  // writer thread only, once started
  std::thread thread_;

  // Shared with appenders; guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Sample> inSamples_;
  std::vector<Event> inEvents_;
  std::vector<AttemptRecord> inAttempts_;
  std::vector<std::unique_ptr<Command>> commands_;
  LostSpan lost_;
  HistoryStatus st_;
  std::uint64_t held_ = 0;  // rows the writer holds for retry
  bool stopping_ = false;

  // Writer thread only.
  std::vector<Sample> pendSamples_;
  std::vector<Event> pendEvents_;
  std::map<std::string, std::int64_t> groupIds_;
  sql::Stmt insSample_, insEvent_, insGroup_, selGroup_;
  RequestAggregator requests_;
  RollupRetention rollups_;
  // Writer thread: the earliest and latest sample written since the last incident scan; the last retention pass that
  // ran, on both clocks (a wall clock that ran far ahead of the steady one is not trusted to expire history).
  EpochMs unscannedFrom_ = std::numeric_limits<EpochMs>::max();
  EpochMs unscannedTo_ = std::numeric_limits<EpochMs>::min();
  std::optional<std::pair<EpochMs, EpochMs>> lastRetention_;  // wall clock, ms since boot
  bool retentionSkipSaid_ = false;
  std::optional<IncidentRecorder> incidents_;
  std::int64_t pageSize_ = 4096;
  std::string writerKey_;  // this process's row in meta while it writes (history_meta.h)
  history::WriterSightings seenWriters_;  // the other writers' rows, as this one saw them change
  bool writersFailSaid_ = false;          // a failing look at them is said once while it fails
};

}  // namespace tg
