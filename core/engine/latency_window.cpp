#include "latency_window.h"

#include "snapshot.h"
#include "stats.h"

#include <algorithm>
#include <vector>

namespace tg {

void LatencyWindow::add(TimePoint t, double ms) {
  ring_[next_] = {t, ms};
  next_ = (next_ + 1) % ring_.size();
  count_ = std::min(count_ + 1, ring_.size());
}

std::pair<double, double> LatencyWindow::percentiles(TimePoint now) const {
  std::vector<double> v;
  v.reserve(count_);
  const TimePoint from = now - fromSeconds(kWindowS);
  for (std::size_t i = 0; i < count_; ++i)
    if (ring_[i].first >= from) v.push_back(ring_[i].second);
  if (v.empty()) return {kUnknown, kUnknown};
  return {percentile(v, 0.5), percentile(std::move(v), 0.95)};
}

}  // namespace tg
