// The rollup tiers and retention: keeps the 10 s and 1 min rollup rows current as samples arrive, and
// expires old rows (full resolution, then the 10 s tier, then everything past retainMs).
//
// Writer thread only (not thread-safe). Errors throw sql::Error; the HistoryWriter reports them.
#pragma once

#include "history_types.h"
#include "sqlite_db.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>

namespace tg {

class RollupRetention {
 public:
  // group id -> [min, max] ts of the samples a batch wrote
  using TouchedSpans = std::map<std::int64_t, std::pair<EpochMs, EpochMs>>;

  // Prepares the statements on `db` (which must outlive them, see reset()) and reads how far retention has
  // gone from the meta table of the file at `path`.
  void open(sql::Db& db, const std::string& path);
  void reset();

  // Recomputes the rollup rows the just-inserted samples fall into, inside the caller's transaction.
  void update(const TouchedSpans& touched);
  // Expires what `opts` no longer keeps as of `nowMs` (own transactions), then vacuums and checkpoints.
  void expire(EpochMs nowMs, const HistoryOptions& opts);
  // The full-resolution horizon more than `slackMs` later than `nowMs` puts it (a pass that ran while the clock was
  // far ahead): pulled back, so new samples are kept, not merged into minute rows as late ones. True when it was.
  bool rebase(EpochMs nowMs, const HistoryOptions& opts, EpochMs slackMs);

 private:
  sql::Db* db_ = nullptr;
  sql::Stmt roll10s_, roll1m_, roll1mFull_, rollLate_, delLate_;
  EpochMs rolledThrough_ = std::numeric_limits<EpochMs>::min();  // full resolution expired before this
  EpochMs tier10sFrom_ = std::numeric_limits<EpochMs>::min();    // 10 s rows expired before this
};

}  // namespace tg
