// How much of the UI thread the dashboard spends on data preparation and painting, over a sliding window.
// Fed with steady-clock nanoseconds; UI thread only.
#pragma once

#include <QString>

#include <cstdint>
#include <deque>

namespace tg::ui {

class RedrawStats {
 public:
  explicit RedrawStats(std::int64_t windowNs = 5'000'000'000) : windowNs_(windowNs) {}

  // One slice of work (a tick's data update or one chart's paint) that started at `startNs`.
  void addWork(std::int64_t startNs, std::int64_t durationNs);
  // One dashboard refresh (a timer tick): the unit "per redraw" counts.
  void addRedraw(std::int64_t atNs);

  // Busy time divided by elapsed time over the last window ending at `nowNs` (0..1).
  double busyShare(std::int64_t nowNs) const;
  // Work per refresh over the window, in ns.
  double nsPerRedraw(std::int64_t nowNs) const;
  std::uint64_t totalRedraws() const { return totalRedraws_; }
  QString summary(std::int64_t nowNs) const;  // "2.1 ms/redraw, 3.4% busy"

  static std::int64_t nowNs();  // steady clock

 private:
  void trim(std::int64_t nowNs) const;
  std::int64_t windowNs_;
  mutable std::deque<std::pair<std::int64_t, std::int64_t>> work_;  // (start, duration)
  mutable std::deque<std::int64_t> redraws_;
  std::uint64_t totalRedraws_ = 0;
  std::int64_t firstNs_ = -1;
};

}  // namespace tg::ui
