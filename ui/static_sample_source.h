// SampleSource over samples held in memory: the what-if comparison (recorded and re-driven series under
// distinct group names, drawn by the same charts on the same axes). UI thread only.
#pragma once

#include "sample_source.h"

#include <map>

namespace tg::ui {

class StaticSampleSource : public SampleSource {
  Q_OBJECT
 public:
  using SampleSource::SampleSource;

  // Adds the samples under `group` (renamed), oldest first after sorting. Emits reset().
  void addSeries(const std::string& group, std::vector<Sample> samples);
  void setEvents(std::vector<Event> events);
  void clear();

  std::vector<std::string> groups() const override { return order_; }
  void forEachSample(const std::string& group, EpochMs fromMs, EpochMs toMs,
                     const std::function<void(const Sample&)>& fn) const override;
  std::vector<Event> events(EpochMs fromMs, EpochMs toMs) const override;
  EpochMs endMs() const override { return endMs_; }
  SnapshotPtr latestSnapshot() const override { return nullptr; }
  std::uint64_t revision() const override { return revision_; }

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::vector<Sample>> series_;
  std::vector<Event> events_;
  EpochMs endMs_ = 0;
  std::uint64_t revision_ = 1;
};

}  // namespace tg::ui
