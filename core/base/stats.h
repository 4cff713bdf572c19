// The one percentile of the program: engine latency windows, run and replay reports, history rollups and
// benchmarks all use it, so a p95 means the same thing everywhere.
#pragma once

#include <vector>

namespace tg {

// The q-quantile (q in 0..1, clamped) of the values, linearly interpolated between the two nearest ranks
// (the "type 7" definition of R and numpy's default): q = 0 is the minimum, q = 1 the maximum, q = 0.5 of
// {1, 2, 3, 4} is 2.5. NaN values are ignored; NaN (kUnknown) when no value is left or q is NaN. Takes a copy: the
// caller's order is kept.
double percentile(std::vector<double> values, double q);
double percentile(const std::vector<float>& values, double q);

}  // namespace tg
