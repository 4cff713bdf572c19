// The per-minute request table (requests_1m): HTTP attempts folded into one row per minute, group, key and
// endpoint and client, kept in memory and rewritten until the minute is safely past.
//
// Writer thread only (not thread-safe): the HistoryWriter feeds it attempts and writes it in its batch.
#pragma once

#include "endpoint_route.h"
#include "request.h"
#include "sqlite_db.h"
#include "types.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tg {


class RequestAggregator {
 public:
  // Prepares the two upserts on `db`; the statements live until reset() or destruction (before the Db).
  void prepare(sql::Db& db);
  void reset();

  // Folds one attempt into its minute. Returns the number of attempts dropped because the table is full
  // (0 or 1). 429s are counted from the engine's verdict (rateLimited), never from the status.
  std::size_t add(const AttemptRecord& a);
  bool dirty() const;
  // Writes every changed row inside the caller's transaction; `groupId` maps a group name to its id.
  void write(const std::function<std::int64_t(const std::string&)>& groupId);
  // After a commit: rows are clean; rows merged into the file and minutes well past are forgotten.
  void committed();
  std::size_t size() const { return rows_.size(); }

 private:
  struct Key {
    EpochMs minuteMs;
    std::string group, fp, endpoint, client;
    bool operator<(const Key& o) const;
  };
  struct Row {
    std::int64_t requests = 0, r429 = 0, r5xx = 0, net = 0, retries = 0;
    double latSum = 0;
    std::vector<float> lats;  // a reservoir sample of the minute's latencies
    bool dirty = true;
    bool additive = false;  // minute was already evicted once: merge into the stored row instead of replacing
  };

  std::map<Key, Row> rows_;
  // Per minute and group, the endpoints with rows: past kMaxEndpointsPerMinute, the rest are one "(other)" row.
  std::map<std::pair<EpochMs, std::string>, std::set<std::string>> endpoints_;
  EpochMs newestMinute_ = std::numeric_limits<EpochMs>::min();
  EpochMs evictedThrough_ = std::numeric_limits<EpochMs>::min();
  std::uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
  sql::Stmt replace_, merge_;
};

}  // namespace tg
