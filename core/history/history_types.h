// Value types shared by the history writer, reader, incident detector and CLI.
#pragma once

#include "event.h"
#include "sample.h"
#include "snapshot.h"
#include "types.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

// Times the history commands and reader accept: 0000-01-01 to 9999-12-31 (UTC). Far from the int64 limits,
// so bucket and window arithmetic on them cannot overflow.
inline constexpr EpochMs kMinHistoryMs = -62'167'219'200'000;
inline constexpr EpochMs kMaxHistoryMs = 253'402'300'799'999;

// Thresholds for IncidentDetector. A sample is "hit" when any of these trips; hit stretches closer than
// mergeGapMs merge into one incident.
struct IncidentOptions {
  std::int64_t shareWindowMs = 10'000;  // window for the 429 share
  double share429 = 0.20;               // 429s / sends over the window
  int min429InWindow = 5;               // ignore 1-of-2 style shares
  double share5xx = 0.20;               // 5xx answers / sends over the same window (the upstream failing)
  int min5xxInWindow = 5;               // ignore a few scattered failures
  bool breakerOpen = true;              // breaker Open (or HalfOpen) is a hit
  std::int64_t queueGrowthWindowMs = 10'000;
  int queueGrowth = 50;                 // total queue depth grew by at least this over the window
  int shedPerSample = 1;                // requests shed in one sample
  std::int64_t mergeGapMs = 60'000;     // stretches with a gap below this merge
};

struct HistoryOptions {
  std::int64_t flushIntervalMs = 1000;        // writer commits about this often
  std::size_t maxPendingSamples = 100'000;    // bounded buffer while the file cannot be written
  std::size_t maxPendingEvents = 20'000;      // separate bound: the audit trail is never crowded out
  std::size_t maxPendingAttempts = 200'000;   // attempts not yet folded into the minute table
  std::int64_t fullResolutionMs = 7LL * 24 * 3600 * 1000;  // then per-minute rollups
  // Then deleted. 30 days keeps 7 days x 10 groups at 1 s plus the rollups under 500 MB (schema 4 measured
  // ~65 B per 1 s row, ~130 B per minute row; with 90 days the minute rows alone would add ~160 MB).
  std::int64_t retainMs = 30LL * 24 * 3600 * 1000;
  // The 10 s tier (charts of ~4-22 h ranges) is kept this long (at most fullResolutionMs); older spans of
  // such charts are drawn from the per-minute rollups (min/max exact). Full resolution is not affected.
  std::int64_t tier10sRetainMs = 2LL * 24 * 3600 * 1000;
  std::int64_t maintenanceIntervalMs = 10 * 60 * 1000;     // retention on the writer thread
  std::int64_t incidentIntervalMs = 30'000;                // incident detection on the writer thread
  std::uint64_t maxFileBytes = 0;  // 0 = no cap; else writes fail with "disk full" beyond it
  // How long opening waits for a file of an older schema that another process holds (upgrading it, most likely).
  // The dashboard waits less: it opens history before its window shows.
  int upgradeWaitMs = 60'000;
  bool checkOnOpen = true;         // PRAGMA quick_check before accepting an existing file (O(file size))
  // Before a file of an older schema is upgraded, a copy of it as it was is made beside it (FILE.schemaN.bak),
  // when its disk has room for the copy and the upgrade (about three times the file).
  bool backupBeforeUpgrade = true;
  // Writers of the same file this process cannot look up by pid (another pid namespace) count as ended once their
  // row has not changed for writerSilenceMs of this process's monotonic time; rows are looked at this often.
  std::int64_t writerSilenceMs = 5 * 60'000;
  std::int64_t writerCheckIntervalMs = 60'000;
  // Bytes free to this process on the file system of `dir`; tests pass a fake one.
  std::function<std::uint64_t(const std::string& dir)> freeBytes;
  IncidentOptions incidents;
  // Wall clock for retention and status stamps; tests pass a fixed one.
  std::function<EpochMs()> now = [] { return nowEpochMs(); };
};

struct HistoryStatus {
  bool ok = true;                 // last write succeeded
  std::string lastError;          // text of the last write failure ("" if none since open)
  EpochMs lastErrorMs = 0;
  EpochMs lastFlushMs = 0;        // last successful commit
  std::uint64_t rowsWritten = 0;  // samples + events committed since open
  std::uint64_t rowsPending = 0;  // queued or held for retry
  std::uint64_t rowsDropped = 0;  // lost because the bounded buffer overflowed
  std::uint64_t fileBytes = 0;    // main file + WAL
  int schemaVersion = 0;
};

// Metrics that downsampling and rollups keep min/max/avg of. Counts are per sample (normally per second).
enum class Metric : std::uint8_t {
  Sends, Ok, R429, R5xx, Retries, Shed,
  InFlight, ConcurrencyLimit, QueueDepth,  // QueueDepth = sum over tiers
  ReqRemaining, TokRemaining, P50Ms, P95Ms,
  Breaker,                                 // 0 closed, 1 open, 2 half-open
};
inline constexpr int kMetricCount = 14;
std::string_view metricName(Metric m);

struct MetricStats {
  double min = kUnknown, max = kUnknown, avg = kUnknown;  // NaN: no known value in the bucket (a gap)
};

struct SampleBucket {
  EpochMs startMs = 0;  // bucket [startMs, startMs + bucketMs)
  EpochMs firstTsMs = 0, lastTsMs = 0;
  std::int64_t rows = 0;     // samples represented (rollups count their samples)
  bool fromRollup = false;   // some of it came from per-minute rollups
  std::array<MetricStats, kMetricCount> m{};
  const MetricStats& operator[](Metric k) const { return m[static_cast<int>(k)]; }
};

struct SampleSeries {
  std::string group;
  std::int64_t bucketMs = 0;
  std::vector<SampleBucket> buckets;  // only non-empty buckets, in time order
};

struct RequestRow {
  EpochMs minuteMs = 0;  // start of the minute; 0 for range totals
  std::string group;
  std::string keyFingerprint;
  std::string endpoint;
  std::string client;    // the gateway client it came from; empty for Tollgate's own work (and before schema 5)
  std::int64_t requests = 0, r429 = 0, r5xx = 0, netErrors = 0, retries = 0;
  double avgLatencyMs = kUnknown;
  double p95LatencyMs = kUnknown;  // range totals: the worst minute's p95
};

struct Incident {
  std::int64_t id = 0;  // 0 until persisted
  EpochMs startMs = 0, endMs = 0;
  std::int64_t durationMs() const { return endMs - startMs; }
  std::vector<std::string> groups;
  std::vector<std::string> reasons;  // "429_share", "5xx_share", "breaker_open", "queue_growth", "shed"
  double peak429PerS = 0;            // over all groups, per sample time
  std::int64_t total429 = 0;
  std::int64_t shed = 0;
  std::vector<Event> operatorActions;  // OperatorAction events during the incident
};

struct TimeRange {
  EpochMs fromMs = 0, toMs = 0;
  bool empty = true;
};

// Outcome of a reader call: a value, or an error text naming what failed.
template <class T>
struct HistoryResult {
  T value{};
  std::string error;
  bool ok() const { return error.empty(); }
};

}  // namespace tg
