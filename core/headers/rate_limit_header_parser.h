// Reads the rate-limit headers of one HTTP response, whatever dialect the server speaks, into a
// QuotaReading. Dialects: X-RateLimit-* (incl. GitHub), OpenAI/Azure style x-ratelimit-*-{requests,tokens},
// Anthropic anthropic-ratelimit-*, X (Twitter) x-rate-limit-* (epoch reset), the IETF RateLimit-* draft (old
// numeric and structured-field forms; a structured field with a non-integer parameter, a quoted "10" included, is
// malformed and ignored whole, as RFC 8941 has it), Retry-After (seconds or HTTP-date), retry-after-ms /
// x-ms-retry-after-ms, Date. A field stated twice with different values reads as the more conservative: the
// lower limit or remaining, the higher used, the later reset or Retry-After (with a warning either way); so does
// a structured policy named twice (its repeated lines are one list), with the longer window.
#pragma once

#include "quota_reading.h"
#include "request.h"

namespace tg {

class RateLimitHeaderParser {
 public:
  // Header names are matched case-insensitively and values are trimmed. Absolute reset times are
  // turned into seconds-from-now against the server's clock: the Date header when present, else
  // `nowEpochS`. Never throws: a malformed value adds a warning naming the header and the value and
  // leaves its field unknown; negative or non-numeric counts never read as "remaining 0".
  // Pure and thread-safe.
  static QuotaReading parse(const HeaderList& headers, double nowEpochS);
};

}  // namespace tg
