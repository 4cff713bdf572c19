// The start of the step-long bucket (minute, 10 s tier, ...) holding an epoch time, for times before 1970
// too (floor, not truncation toward zero).
#pragma once

#include "types.h"

#include <cstdint>
#include <limits>

namespace tg::history {

// Largest multiple of stepMs (> 0) not above t; held at INT64_MIN where that multiple is not representable
// (history uses INT64_MIN as "nothing yet", and times read from files can be anything).
inline EpochMs floorTo(EpochMs t, std::int64_t stepMs) {
  const std::int64_t into = ((t % stepMs) + stepMs) % stepMs;
  if (t < std::numeric_limits<EpochMs>::min() + into) return std::numeric_limits<EpochMs>::min();
  return t - into;
}

inline constexpr std::int64_t kMinuteMs = 60'000;
inline EpochMs floorMinute(EpochMs t) { return floorTo(t, kMinuteMs); }

}  // namespace tg::history
