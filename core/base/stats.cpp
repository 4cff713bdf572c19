#include "stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tg {

double percentile(std::vector<double> v, double q) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty() || std::isnan(q)) return std::numeric_limits<double>::quiet_NaN();
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(v.size() - 1, lo + 1);
  // Two selections instead of a sort: the low rank, then the smallest value above it.
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double low = v[lo];
  if (hi == lo) return low;
  const double high = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(hi), v.end());
  return low + (high - low) * (rank - static_cast<double>(lo));
}

double percentile(const std::vector<float>& values, double q) {
  return percentile(std::vector<double>(values.begin(), values.end()), q);
}

}  // namespace tg
