// The one way the program writes a time or a duration for people and files (std::chrono, always UTC).
#pragma once

#include "types.h"

#include <string>

namespace tg {

enum class UtcStyle {
  Iso,        // 2026-11-30T15:02:59Z        (files, JSON, HTTP-facing text)
  IsoMillis,  // 2026-11-30T15:02:59.123Z    (logs)
  Readable,   // 2026-11-30 15:02:59 UTC     (reports and dialogs)
  Clock,      // 15:02:59                    (charts, live progress, verdict reasons)
  DateTime,   // 2026-11-30 15:02:59         (tables and spans whose heading names UTC once)
  HttpDate,   // Mon, 30 Nov 2026 15:02:59 GMT  (RFC 9110 IMF-fixdate: Date, Retry-After)
};

// Any EpochMs prints; times outside std::chrono's years (-32767..32767) print clamped to those bounds.
std::string formatUtc(EpochMs ms, UtcStyle style = UtcStyle::Iso);

// A duration for people: "850 ms", "8.5 s", "42 s", "4 min 10 s", "3 h 05 min", "2 d 04 h"; "-" for NaN;
// negative values get a leading minus; infinity prints as "forever". Rounded to what the band shows, then
// the band is chosen, so 0.9996 s is "1.0 s" (never "1000 ms") and 59.7 s is "1 min 0 s".
std::string formatDuration(double seconds);

// Whole days since 1970-01-01 of a civil UTC date (and back): the one calendar conversion.
std::int64_t daysFromCivil(int year, unsigned month, unsigned day);

}  // namespace tg
