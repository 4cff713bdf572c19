// SampleSource over the running engine: keeps the latest snapshot for cards and, once per second, turns
// snapshots into Samples (SampleBuilder) kept in a bounded ring buffer per group. UI thread only.
#pragma once

#include "ring_buffer.h"
#include "sample_source.h"

#include <deque>
#include <map>

namespace tg::ui {

class LiveSampleSource : public SampleSource {
  Q_OBJECT
 public:
  static constexpr std::size_t kDefaultSamplesPerGroup = 6 * 3600;  // 6 h at 1 Hz
  static constexpr std::size_t kDefaultMaxEvents = 10000;
  static constexpr std::size_t kMaxGroups = 256;  // bounds memory if group names were ever unbounded

  explicit LiveSampleSource(QObject* parent = nullptr,
                            std::size_t samplesPerGroup = kDefaultSamplesPerGroup,
                            std::size_t maxEvents = kDefaultMaxEvents);

  std::vector<std::string> groups() const override;
  void forEachSample(const std::string& group, EpochMs fromMs, EpochMs toMs,
                     const std::function<void(const Sample&)>& fn) const override;
  std::vector<Event> events(EpochMs fromMs, EpochMs toMs) const override;
  EpochMs endMs() const override;
  EpochMs startMs() const override;
  SnapshotPtr latestSnapshot() const override { return latest_; }
  std::uint64_t revision() const override { return revision_; }

  std::size_t sampleCount(const std::string& group) const;

 public slots:
  // A snapshot at least `sampleIntervalMs` after the last sampled one yields one Sample per group.
  void addSnapshot(const tg::SnapshotPtr& snapshot);
  void addEvent(const tg::Event& event);

 private:
  static constexpr EpochMs kSampleIntervalMs = 1000;
  std::size_t samplesPerGroup_;
  std::size_t maxEvents_;
  SampleBuilder builder_;
  std::vector<std::string> order_;
  std::map<std::string, RingBuffer<Sample>> rings_;
  std::deque<Event> events_;
  SnapshotPtr latest_;
  EpochMs lastSampledMs_ = 0;
  std::uint64_t revision_ = 0;
};

}  // namespace tg::ui
