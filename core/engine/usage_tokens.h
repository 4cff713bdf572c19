// The tokens a response body says it used ("usage": total_tokens, or input + output / prompt + completion).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace tg {

// -1 when the body has no usage object with a number in it. A scan, not a DOM parse: usage objects have
// unique keys, and parsing every response body was the largest per-response cost in the overhead benchmark.
// Pure and thread-safe.
std::int64_t usageTokens(std::string_view body);

// The tokens an event stream says it used, over all its events. OpenAI's last chunk states total_tokens;
// Anthropic's message_start states input_tokens and each message_delta the output tokens so far: the last
// event alone left the input out (8 of 35 counted).
class StreamUsage {
 public:
  void add(std::string_view event);  // one event's text; those without a usage object change nothing
  std::int64_t tokens() const;       // -1 when no event stated a number

 private:
  std::int64_t total_ = -1;   // the last total_tokens stated
  std::int64_t input_ = -1;   // the largest input_tokens / prompt_tokens
  std::int64_t output_ = -1;  // the largest output_tokens / completion_tokens (cumulative)
};

// StreamUsage over a whole buffered event stream (events end at a blank line).
std::int64_t streamUsageTokens(std::string_view body);

}  // namespace tg
