#include "rollup_retention.h"

#include "epoch_floor.h"
#include "history_meta.h"
#include "history_schema.h"
#include "sqlite_transaction.h"

#include <algorithm>

namespace tg {

void RollupRetention::open(sql::Db& db, const std::string& path) {
  db_ = &db;
  using history::RollupScope;
  roll10s_.prepare(db, history::rollupFromSamplesSql("samples_10s", history::kTier10sMs, RollupScope::Replace));
  roll1m_.prepare(db, history::rollupFromSamplesSql("samples_1m", history::kTier1mMs, RollupScope::ReplaceFrom10s));
  roll1mFull_.prepare(db, history::rollupFromSamplesSql("samples_1m", history::kTier1mMs, RollupScope::Replace));
  rollLate_.prepare(db, history::rollupFromSamplesSql("samples_1m", history::kTier1mMs, RollupScope::Merge));
  delLate_.prepare(db, "DELETE FROM samples WHERE group_id = ?1 AND ts_ms >= ?2 AND ts_ms < ?3");
  if (auto v = history::readMetaMs(db, history::kMetaRolledThrough, path)) rolledThrough_ = *v;
  if (auto v = history::readMetaMs(db, history::kMeta10sFrom, path)) tier10sFrom_ = *v;
}

void RollupRetention::reset() {
  roll10s_ = {};
  roll1m_ = {};
  roll1mFull_ = {};
  rollLate_ = {};
  delLate_ = {};
}

// Samples older than the expired span (a clock jump, a replayed backlog) cannot be recomputed from: they
// are merged into the minute rows and not kept at full resolution.
void RollupRetention::update(const TouchedSpans& touched) {
  for (const auto& [gid, span] : touched) {
    auto [lo, hi] = span;
    if (lo < rolledThrough_) {
      const EpochMs lateHi = std::min<EpochMs>(hi + 1, rolledThrough_);
      rollLate_.bind(1, gid).bind(2, static_cast<std::int64_t>(lo)).bind(3, static_cast<std::int64_t>(lateHi));
      rollLate_.run();
      delLate_.bind(1, gid).bind(2, static_cast<std::int64_t>(lo)).bind(3, static_cast<std::int64_t>(lateHi));
      delLate_.run();
      lo = rolledThrough_;
      if (hi < lo) continue;
    }
    // The 10 s tier is not re-created where it has expired; minute rows there are recomputed from the
    // samples (the 10 s rows they are normally built from are gone).
    const EpochMs lo10 = std::max(lo, tier10sFrom_);
    for (auto [st, tier] : {std::pair<sql::Stmt*, std::int64_t>{&roll10s_, history::kTier10sMs}, {&roll1m_, history::kTier1mMs}}) {
      EpochMs from = history::floorTo(lo, tier);
      const EpochMs to = addSaturating(history::floorTo(hi, tier), tier);
      if (st == &roll10s_) {
        if (hi < lo10) continue;
        from = history::floorTo(lo10, tier);
      } else if (from < tier10sFrom_) {
        st = &roll1mFull_;
      }
      st->bind(1, gid).bind(2, static_cast<std::int64_t>(from)).bind(3, static_cast<std::int64_t>(to));
      st->run();
    }
  }
}

// Rollups are already current, so expiring full resolution is a delete; the minute rows live on until retainMs.
void RollupRetention::expire(EpochMs nowMs, const HistoryOptions& opts) {
  sql::Db& db = *db_;
  const EpochMs fullCutoff = history::floorMinute(subSaturating(nowMs, opts.fullResolutionMs));
  const EpochMs deleteCutoff = history::floorMinute(subSaturating(nowMs, opts.retainMs));
  const EpochMs cutoff10s = std::max(fullCutoff, history::floorMinute(subSaturating(nowMs, opts.tier10sRetainMs)));
  sql::Stmt delFull(db, "DELETE FROM samples WHERE group_id = ?1 AND ts_ms < ?2");
  sql::Stmt del10s(db, "DELETE FROM samples_10s WHERE group_id = ?1 AND ts_ms < ?2");
  sql::Stmt del1m(db, "DELETE FROM samples_1m WHERE group_id = ?1 AND ts_ms < ?2");
  for (const auto& [id, name] : history::loadGroups(db)) {
    sql::SqliteTransaction tx(db);
    for (auto [st, cutoff] : {std::pair<sql::Stmt*, EpochMs>{&delFull, fullCutoff}, {&del10s, cutoff10s}, {&del1m, deleteCutoff}}) {
      st->bind(1, id).bind(2, static_cast<std::int64_t>(cutoff));
      st->run();
    }
    tx.commit();
  }
  {
    sql::SqliteTransaction tx(db);
    for (const char* sqlText : {"DELETE FROM events WHERE ts_ms < ?1", "DELETE FROM requests_1m WHERE minute_ms < ?1",
                                "DELETE FROM incidents WHERE end_ms < ?1"}) {
      sql::Stmt del(db, sqlText);
      del.bind(1, static_cast<std::int64_t>(deleteCutoff));
      del.run();
    }
    if (fullCutoff > rolledThrough_) history::writeMetaMs(db, history::kMetaRolledThrough, fullCutoff);
    if (cutoff10s > tier10sFrom_) history::writeMetaMs(db, history::kMeta10sFrom, cutoff10s);
    tx.commit();
  }
  rolledThrough_ = std::max(rolledThrough_, fullCutoff);
  tier10sFrom_ = std::max(tier10sFrom_, cutoff10s);
  db.exec("PRAGMA incremental_vacuum");
  // Give the freed pages back now rather than at the next automatic checkpoint.
  int logFrames = 0, checkpointed = 0;
  db.check(sqlite3_wal_checkpoint_v2(db.handle(), "main", SQLITE_CHECKPOINT_PASSIVE, &logFrames, &checkpointed),
           "checkpoint");
}

bool RollupRetention::rebase(EpochMs nowMs, const HistoryOptions& opts, EpochMs slackMs) {
  const EpochMs fullCutoff = history::floorMinute(subSaturating(nowMs, opts.fullResolutionMs));
  if (rolledThrough_ <= addSaturating(fullCutoff, slackMs)) return false;
  const EpochMs cutoff10s = std::max(fullCutoff, history::floorMinute(subSaturating(nowMs, opts.tier10sRetainMs)));
  sql::SqliteTransaction tx(*db_);
  history::writeMetaMs(*db_, history::kMetaRolledThrough, fullCutoff);
  if (tier10sFrom_ > cutoff10s) history::writeMetaMs(*db_, history::kMeta10sFrom, cutoff10s);
  tx.commit();
  rolledThrough_ = fullCutoff;
  tier10sFrom_ = std::min(tier10sFrom_, cutoff10s);
  return true;
}

}  // namespace tg
