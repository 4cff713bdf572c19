#include "live_sample_source.h"

#include <algorithm>

namespace tg::ui {

LiveSampleSource::LiveSampleSource(QObject* parent, std::size_t samplesPerGroup, std::size_t maxEvents)
    : SampleSource(parent), samplesPerGroup_(samplesPerGroup), maxEvents_(maxEvents) {}

std::vector<std::string> LiveSampleSource::groups() const { return order_; }

void LiveSampleSource::forEachSample(const std::string& group, EpochMs fromMs, EpochMs toMs,
                                     const std::function<void(const Sample&)>& fn) const {
  auto it = rings_.find(group);
  if (it == rings_.end()) return;
  const auto& ring = it->second;
  for (std::size_t i = ring.partitionPoint([&](const Sample& s) { return s.tsMs < fromMs; });
       i < ring.size() && ring[i].tsMs <= toMs; ++i)
    fn(ring[i]);
}

std::vector<Event> LiveSampleSource::events(EpochMs fromMs, EpochMs toMs) const {
  auto first = std::partition_point(events_.begin(), events_.end(),
                                    [&](const Event& e) { return e.tsMs < fromMs; });
  std::vector<Event> out;
  for (auto it = first; it != events_.end() && it->tsMs <= toMs; ++it) out.push_back(*it);
  return out;
}

EpochMs LiveSampleSource::endMs() const { return latest_ ? latest_->tsMs : 0; }

EpochMs LiveSampleSource::startMs() const {
  EpochMs first = 0;
  for (const auto& [group, ring] : rings_)
    if (!ring.empty() && (first == 0 || ring[0].tsMs < first)) first = ring[0].tsMs;
  return first;
}

std::size_t LiveSampleSource::sampleCount(const std::string& group) const {
  auto it = rings_.find(group);
  return it == rings_.end() ? 0 : it->second.size();
}

void LiveSampleSource::addSnapshot(const SnapshotPtr& snapshot) {
  if (!snapshot) return;
  latest_ = snapshot;
  ++revision_;
  // A clock step backwards restarts sampling rather than stalling it until the clock catches up.
  if (lastSampledMs_ != 0 && snapshot->tsMs >= lastSampledMs_ &&
      snapshot->tsMs - lastSampledMs_ < kSampleIntervalMs)
    return;
  lastSampledMs_ = snapshot->tsMs;
  for (auto& s : builder_.next(*snapshot)) {
    auto it = rings_.find(s.group);
    if (it == rings_.end()) {
      if (rings_.size() >= kMaxGroups) continue;
      order_.push_back(s.group);
      it = rings_.emplace(s.group, RingBuffer<Sample>(samplesPerGroup_)).first;
    }
    auto& ring = it->second;
    // Sorted by time: after a clock step back, the samples stamped later than this one are dropped (for a
    // step of an hour, all of them: the window follows the clock). Dropping the new ones instead left every
    // chart blank until the clock caught up.
    if (!ring.empty() && s.tsMs < ring.back().tsMs)
      ring.truncate(ring.partitionPoint([&](const Sample& x) { return x.tsMs <= s.tsMs; }));
    ring.push(std::move(s));
  }
}

void LiveSampleSource::addEvent(const Event& event) {
  // Events arrive in engine order; an out-of-order time stamp is clamped so range queries stay sorted. Over a
  // sample interval out of order is a clock stepped back: the markers stamped after it go (the event log keeps
  // them), as the samples do, or every new marker sat at the old time, out of the window, for as long as the step.
  Event e = event;
  if (!events_.empty() && e.tsMs < events_.back().tsMs) {
    if (events_.back().tsMs - e.tsMs > kSampleIntervalMs) {
      while (!events_.empty() && events_.back().tsMs > e.tsMs) events_.pop_back();
    } else {
      e.tsMs = events_.back().tsMs;
    }
  }
  events_.push_back(e);
  while (events_.size() > maxEvents_) events_.pop_front();
  ++revision_;
  emit eventAdded(event);
}

}  // namespace tg::ui
