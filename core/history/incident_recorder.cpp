#include "incident_recorder.h"

#include "history_meta.h"
#include "history_schema.h"
#include "incident_detector.h"
#include "json_text.h"
#include "secret.h"
#include "sqlite_transaction.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace tg {
namespace {

constexpr std::int64_t kDetectChunkMs = 6LL * 3600 * 1000;

}  // namespace

IncidentRecorder::IncidentRecorder(sql::Db& db, std::string path, IncidentOptions opts, std::int64_t retainMs)
    : db_(db), path_(std::move(path)), opts_(opts), retainMs_(retainMs) {}

void IncidentRecorder::detectNew(EpochMs unscannedFrom, EpochMs unscannedTo) {
  // Newest sample over all groups (the primary key makes each max() a single lookup).
  EpochMs newest = std::numeric_limits<EpochMs>::min(), oldest = std::numeric_limits<EpochMs>::max();
  {
    sql::Stmt mx(db_, "SELECT max(ts_ms), min(ts_ms) FROM samples WHERE group_id = ?1");
    for (const auto& [id, name] : history::loadGroups(db_)) {
      mx.bind(1, id);
      if (mx.step() && !mx.isNull(0)) {
        newest = std::max<EpochMs>(newest, mx.i64(0));
        oldest = std::min<EpochMs>(oldest, mx.i64(1));
      }
      mx.reset();
    }
  }
  if (newest == std::numeric_limits<EpochMs>::min()) return;
  // The walk starts no earlier than the retention horizon before the newest sample: one absurd old ts_ms
  // (a hand-edited file, a clock at 1970) would otherwise mean up to 4e11 chunk transactions on the writer.
  const EpochMs floor = std::max(subSaturating(oldest, 1), subSaturating(newest, retainMs_));
  EpochMs mark = floor;
  if (auto v = history::readMetaMs(db_, history::kMetaIncidentsScannedTo, path_)) mark = std::max<EpochMs>(mark, *v);
  const IncidentDetector detector(opts_);
  const std::int64_t lookback = opts_.mergeGapMs + std::max(opts_.shareWindowMs, opts_.queueGrowthWindowMs);
  EpochMs scanned = mark, end = newest;
  // Written behind the mark (a clock stepped back an hour: its samples lay an hour before what was scanned):
  // scanned from there, within the same horizon, and only as far as what was written reaches (merges included)
  // when all of it lies behind the mark; the mark stays.
  if (unscannedFrom <= mark) {
    scanned = std::max(floor, subSaturating(unscannedFrom, 1));
    if (unscannedTo <= mark) end = std::min(newest, addSaturating(unscannedTo, lookback));
  }
  while (scanned < end) {
    const EpochMs to = std::min<EpochMs>(end, addSaturating(scanned, kDetectChunkMs));
    EpochMs from = subSaturating(scanned, lookback);
    // Incidents that may still grow or merge are re-detected from their start and keep their ids.
    std::vector<std::pair<std::int64_t, Incident>> tail;
    {
      // Only those this chunk can reach: one starting after it (a rescan behind the mark, a clock stepped back
      // by more than a chunk) was deleted and found again by a later chunk under a new id.
      sql::Stmt t(db_, "SELECT id, start_ms, end_ms FROM incidents WHERE end_ms >= ?1 AND start_ms <= ?2 "
                       "ORDER BY start_ms");
      t.bind(1, static_cast<std::int64_t>(subSaturating(from, opts_.mergeGapMs)));
      t.bind(2, static_cast<std::int64_t>(addSaturating(to, opts_.mergeGapMs)));
      while (t.step()) {
        Incident inc;
        inc.startMs = t.i64(1);
        inc.endMs = t.i64(2);
        from = std::min(from, inc.startMs);
        tail.emplace_back(t.i64(0), inc);
      }
    }
    auto found = detector.detect(history::loadSamples(db_, history::kSchemaVersion, from, to + 1, {}),
                                 history::loadEvents(db_, from, to + 1, {}, {EventKind::OperatorAction}));
    sql::SqliteTransaction tx(db_);
    sql::Stmt del(db_, "DELETE FROM incidents WHERE id = ?1");
    for (const auto& [id, inc] : tail) {
      del.bind(1, id);
      del.run();
    }
    sql::Stmt ins(db_, "INSERT INTO incidents(id, start_ms, end_ms, groups, reasons, peak_429_per_s, total_429, shed, "
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
    history::writeMetaMs(db_, history::kMetaIncidentsScannedTo, std::max(mark, to));
    tx.commit();
    scanned = to;
  }
}

}  // namespace tg
