// The history writer: everything the engine observes (Sample rows, Events, HTTP attempts) and every operator
// action (an Event of kind OperatorAction, the audit trail) goes into one SQLite file.
//
// Threads: append() is called from the engine thread and only enqueues under a short lock (bounded; when
// full, rows are dropped and counted, never waited for). A writer thread owns the connection and commits
// everything queued in one transaction about every flushIntervalMs. It also folds attempts into the
// per-minute request table, runs retention and incident detection.
//
// Faults: when a commit fails (disk full, read-only, I/O error) the transaction is rolled back, the rows stay
// in a bounded buffer and are retried on the next flush; status() carries the error. Rows that overflowed
// the buffer are lost, and once writing works again a HistoryGap event records the span. Nothing already
// committed is touched (SQLite's WAL guarantees it).
//
// Files that are not SQLite, belong to another application, are corrupt, or come from a newer schema are
// refused by open() without being written to.
#pragma once

#include "history_types.h"
#include "request.h"

#include <memory>
#include <string>
#include <vector>

namespace tg {

class HistoryWriter;

// The facade the engine, the dashboard and the benchmarks use; the work happens in HistoryWriter.
class HistoryStore {
 public:
  // Opens or creates `path` (WAL, synchronous=NORMAL), migrates an older schema, starts the writer thread.
  // Returns nullptr and sets *error (if given) when the file is refused or cannot be opened.
  // Caller owns the store; destroying it flushes what is queued and stops the thread.
  static std::unique_ptr<HistoryStore> open(const std::string& path, HistoryOptions opts, std::string* error);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  // Thread-safe, non-blocking apart from a short lock: enqueue only.
  void append(std::vector<Sample> samples);
  void append(Event event);
  void append(AttemptRecord attempt);

  // Thread-safe. Commits everything queued before the call and waits for it (tests, shutdown).
  // Returns false if the commit failed (see status()).
  bool flush();
  // Thread-safe. Runs retention (rollups, deletion, incremental vacuum) as of `nowMs` and waits.
  bool runRetention(EpochMs nowMs);
  // Thread-safe. Flushes, then detects incidents over the samples written since the last detection
  // (re-examining the tail, so an incident still growing is updated in place, keeping its id). Waits.
  bool detectIncidents();
  // Thread-safe. Changes the file size cap (0 = none); an operator freeing room after "disk full".
  void setMaxFileBytes(std::uint64_t bytes);

  // Thread-safe snapshot.
  HistoryStatus status() const;
  const std::string& path() const;

 private:
  explicit HistoryStore(std::unique_ptr<HistoryWriter> writer);
  std::unique_ptr<HistoryWriter> d_;
};

}  // namespace tg
