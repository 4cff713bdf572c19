#include "static_sample_source.h"

#include <algorithm>

namespace tg::ui {

void StaticSampleSource::addSeries(const std::string& group, std::vector<Sample> samples) {
  for (auto& s : samples) s.group = group;
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.tsMs < b.tsMs; });
  if (!samples.empty()) endMs_ = std::max(endMs_, samples.back().tsMs);
  if (!series_.count(group)) order_.push_back(group);
  series_[group] = std::move(samples);
  ++revision_;
  emit reset();
}

void StaticSampleSource::setEvents(std::vector<Event> events) {
  events_ = std::move(events);
  std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.tsMs < b.tsMs; });
  ++revision_;
  emit reset();
}

void StaticSampleSource::clear() {
  order_.clear();
  series_.clear();
  events_.clear();
  endMs_ = 0;
  ++revision_;
  emit reset();
}

void StaticSampleSource::forEachSample(const std::string& group, EpochMs fromMs, EpochMs toMs,
                                       const std::function<void(const Sample&)>& fn) const {
  auto it = series_.find(group);
  if (it == series_.end()) return;
  auto lo = std::lower_bound(it->second.begin(), it->second.end(), fromMs,
                             [](const Sample& s, EpochMs t) { return s.tsMs < t; });
  for (; lo != it->second.end() && lo->tsMs <= toMs; ++lo) fn(*lo);
}

std::vector<Event> StaticSampleSource::events(EpochMs fromMs, EpochMs toMs) const {
  std::vector<Event> out;
  for (const auto& e : events_)
    if (e.tsMs >= fromMs && e.tsMs <= toMs) out.push_back(e);
  return out;
}

}  // namespace tg::ui
