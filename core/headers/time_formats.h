// Parsers for the time notations rate-limit headers use, and the UTC formatting of verdicts.
// All functions are pure, thread-safe, and never throw: malformed input yields std::nullopt.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tg {

// A strict decimal number: the whole (already trimmed) text must be one finite number. No hex, inf, nan.
std::optional<double> parseDecimal(std::string_view s);

// HTTP-date (RFC 9110 §5.6.7) in all three forms, as epoch seconds:
//   IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT",
//   asctime "Sun Nov  6 08:49:37 1994".
// An RFC 850 two-digit year that would lie more than 50 years after `referenceEpochS` is read as the
// previous century, as RFC 9110 requires.
std::optional<double> parseHttpDate(std::string_view s, double referenceEpochS);

// RFC 3339 date-time, e.g. "2024-05-01T12:00:30Z", "2024-05-01T14:00:30.250+02:00", as epoch seconds.
std::optional<double> parseRfc3339(std::string_view s);

// Go time.Duration text ("6m0s", "20ms", "2m52.8s", "1h2m3s", "0") or a plain number of seconds, in
// seconds. Negative durations are rejected.
std::optional<double> parseGoDuration(std::string_view s);

// "2024-05-01 12:00:30 UTC"; with dateToo=false just "12:00:30 UTC".
std::string formatUtc(double epochS, bool dateToo = true);

}  // namespace tg
