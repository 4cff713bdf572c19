// The tokens a response body says it used ("usage": total_tokens, or input + output / prompt + completion).
#pragma once

#include <cstdint>
#include <string_view>

namespace tg {

// -1 when the body has no usage object with a number in it. A scan, not a DOM parse: usage objects have
// unique keys, and parsing every response body was the largest per-response cost in the overhead benchmark.
// Pure and thread-safe.
std::int64_t usageTokens(std::string_view body);

}  // namespace tg
