#include "min_max_decimator.h"

#include <cmath>

namespace tg::ui {

std::vector<QPointF> MinMaxDecimator::decimate(const std::vector<QPointF>& points, double bucketMs) {
  if (bucketMs <= 0 || points.size() <= 2) return points;
  std::vector<QPointF> out;
  out.reserve(points.size() < 4096 ? points.size() : 4096);

  // A flat run keeps only its ends: constant lines (limits, idle queues) cost two points, not two per column.
  auto append = [&out](const QPointF& p) {
    const std::size_t n = out.size();
    if (n >= 2 && out[n - 1].y() == p.y() && out[n - 2].y() == p.y())
      out[n - 1] = p;
    else
      out.push_back(p);
  };
  bool open = false;
  double bucket = 0;
  QPointF minP, maxP;
  int count = 0;
  auto flush = [&] {
    if (!open) return;
    if (count == 1 || minP.y() == maxP.y()) {
      append(minP);
    } else if (minP.x() <= maxP.x()) {
      append(minP);
      append(maxP);
    } else {
      append(maxP);
      append(minP);
    }
    open = false;
  };

  for (const QPointF& p : points) {
    if (std::isnan(p.y())) {
      flush();
      if (out.empty() || !std::isnan(out.back().y())) out.push_back(p);
      continue;
    }
    const double b = std::floor(p.x() / bucketMs);
    if (open && b == bucket) {
      ++count;
      if (p.y() < minP.y()) minP = p;
      if (p.y() > maxP.y()) maxP = p;
      continue;
    }
    flush();
    open = true;
    bucket = b;
    minP = maxP = p;
    count = 1;
  }
  flush();
  return out;
}

std::vector<std::vector<QPointF>> MinMaxDecimator::splitAtGaps(const std::vector<QPointF>& points,
                                                               double maxGapMs) {
  std::vector<std::vector<QPointF>> segments;
  std::vector<QPointF> current;
  for (const QPointF& p : points) {
    const bool gap = std::isnan(p.y());
    const bool jump = !current.empty() && maxGapMs > 0 && p.x() - current.back().x() > maxGapMs;
    if ((gap || jump) && !current.empty()) {
      segments.push_back(std::move(current));
      current.clear();
    }
    if (!gap) current.push_back(p);
  }
  if (!current.empty()) segments.push_back(std::move(current));
  return segments;
}

}  // namespace tg::ui
