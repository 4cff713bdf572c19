// Reduces a time series to at most two points (the minimum and the maximum, in time order) per pixel
// column, so a 1 h window of 1 Hz samples draws as fast as a 5 min one without hiding spikes.
// Columns sit on a fixed time grid (floor(t / bucketMs)), so a scrolling window does not make the line
// shimmer. A NaN value is a gap: it is kept as one NaN point and never merged into a column.
#pragma once

#include <QPointF>

#include <vector>

namespace tg::ui {

class MinMaxDecimator {
 public:
  // `points` sorted by x (ms since epoch); bucketMs <= 0 returns the input unchanged.
  static std::vector<QPointF> decimate(const std::vector<QPointF>& points, double bucketMs);

  // Splits at NaN values and wherever consecutive x values are more than `maxGapMs` apart (missing
  // samples). Empty segments are dropped.
  static std::vector<std::vector<QPointF>> splitAtGaps(const std::vector<QPointF>& points, double maxGapMs);
};

}  // namespace tg::ui
