// SampleSource over a history file: the dashboard's charts, cards and event log show recorded data, ending
// at a movable playhead. Reads go through the source's own HistoryReader (read-only; strict = immutable, for
// a file copied from elsewhere), each one short. A window longer than the point budget is read downsampled
// by SQLite: each bucket yields two samples (its minimum and its maximum), so spikes survive decimation.
// Downsampled buckets sit on a fixed grid (multiples of the bucket size, chosen so whole 10 s / 1 min rollup
// rows make a bucket whenever that costs at most half the resolution), so a moved playhead reuses the
// buckets already read and fetches only the new stretch; the newest, incomplete bucket is read each time.
// Windows within the budget are read at full resolution (exact counts). UI thread only.
#pragma once

#include "history_reader.h"
#include "sample_source.h"

#include <memory>
#include <optional>

namespace tg::ui {

class HistorySampleSource : public SampleSource {
  Q_OBJECT
 public:
  // Returns null and sets *error when the file is refused. `parent` owns the source.
  static HistorySampleSource* open(const QString& path, HistoryReaderOptions opts, QString* error,
                                   QObject* parent = nullptr);
  ~HistorySampleSource() override;

  std::vector<std::string> groups() const override;
  void forEachSample(const std::string& group, EpochMs fromMs, EpochMs toMs,
                     const std::function<void(const Sample&)>& fn) const override;
  // Events of the replay range (not only up to the playhead), filtered to [fromMs, toMs].
  std::vector<Event> events(EpochMs fromMs, EpochMs toMs) const override;
  EpochMs endMs() const override { return playheadMs_; }
  // Where the recording shown starts: the charts' axis starts there until the window is full, as live. It was
  // 0, so a 3-minute range sat in the right fifth of a 15-minute window.
  EpochMs startMs() const override { return rangeFrom_; }
  // Synthesised from the samples at the playhead, so the group cards show recorded state.
  SnapshotPtr latestSnapshot() const override;
  std::uint64_t revision() const override { return revision_; }

  HistoryReader& reader() { return *reader_; }
  const QString& path() const { return path_; }
  TimeRange fileRange() const { return fileRange_; }
  const std::vector<Incident>& incidents() const { return incidents_; }
  QString lastError() const { return lastError_; }

  // The stretch being replayed: the playhead moves within it, events are listed from it. Emits reset().
  void setRange(EpochMs fromMs, EpochMs toMs);
  EpochMs rangeFromMs() const { return rangeFrom_; }
  EpochMs rangeToMs() const { return rangeTo_; }
  void setPlayhead(EpochMs tsMs);  // clamped to the range; emits playheadChanged
  EpochMs playheadMs() const { return playheadMs_; }
  // Points per series for downsampled reads (about the chart's width in pixels).
  void setPointBudget(int points);
  int pointBudget() const { return budget_; }
  // Re-reads groups, time range and incidents (a live file grows).
  void reload();

 signals:
  void playheadChanged(qint64 tsMs);
  void rangeChanged(qint64 fromMs, qint64 toMs);

 private:
  HistorySampleSource(std::unique_ptr<HistoryReader> reader, QString path, QObject* parent);
  void fill(EpochMs fromMs, EpochMs toMs) const;
  void fillBuckets(EpochMs fromMs, EpochMs toMs) const;
  // Reads [fromMs, toMs) as buckets of exactly bucketMs (both ends on the grid) into `out`, per group.
  bool readBuckets(EpochMs fromMs, EpochMs toMs, std::int64_t bucketMs,
                   std::map<std::string, std::vector<Sample>>& out) const;

  std::unique_ptr<HistoryReader> reader_;
  QString path_;
  std::vector<std::string> groups_;
  std::vector<Incident> incidents_;
  TimeRange fileRange_;
  EpochMs rangeFrom_ = 0, rangeTo_ = 0, playheadMs_ = 0;
  int budget_ = 1200;
  std::uint64_t revision_ = 1;
  std::vector<Event> rangeEvents_;
  // One read serves every group's forEachSample for the same window (the chart panel asks per group).
  mutable EpochMs cacheFrom_ = -1, cacheTo_ = -1;
  mutable int cacheBudget_ = 0;
  mutable std::map<std::string, std::vector<Sample>> cache_;
  // Downsampled windows: complete buckets of bucketMs over [bucketFrom_, bucketTo_), kept across playhead moves.
  mutable std::int64_t bucketMs_ = 0;
  mutable EpochMs bucketFrom_ = 0, bucketTo_ = 0;
  mutable std::map<std::string, std::vector<Sample>> buckets_;
  mutable SnapshotPtr snapshot_;
  mutable EpochMs snapshotAt_ = -1;
  mutable QString lastError_;
};

}  // namespace tg::ui
