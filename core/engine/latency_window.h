// Recent completion latencies of a group for p50/p95: a fixed ring, entries older than the window ignored.
#pragma once

#include "types.h"

#include <array>
#include <cstddef>
#include <utility>

namespace tg {

// Not thread-safe: one per group, on the engine thread.
class LatencyWindow {
 public:
  static constexpr double kWindowS = 10;

  void add(TimePoint t, double ms);
  // {p50, p95} (tg::percentile) of the entries in (now - kWindowS, now]; kUnknown when there are none.
  std::pair<double, double> percentiles(TimePoint now) const;

 private:
  std::array<std::pair<TimePoint, double>, 1024> ring_{};
  std::size_t next_ = 0, count_ = 0;
};

}  // namespace tg
