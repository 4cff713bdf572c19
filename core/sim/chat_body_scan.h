// The few fields of a chat request body the simulator acts on, read without building a DOM: a body is up
// to 16 MiB of outside bytes and only these values are wanted. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>

namespace tg {

struct ChatBodyFields {
  std::int64_t maxTokens = 0;  // top-level "max_tokens", clamped to [0, kMaxTokensCap]; 0 when absent
  bool stream = false;         // top-level "stream": true
  bool includeUsage = false;   // "stream_options": {"include_usage": true}
  std::string model;           // top-level "model" when a string of at most kMaxModelChars; else empty
};

// Requests asking for more than this are simply "more than any window allows"; the cap keeps the token
// arithmetic (prompt + max_tokens, limiter costs as double) far from overflow.
inline constexpr std::int64_t kMaxTokensCap = std::int64_t{1} << 50;
// A model name is echoed into every stream event: a longer one is not a model name.
inline constexpr std::size_t kMaxModelChars = 256;

// Reads the fields of a JSON object body; a body that is not a JSON object (or nests deeper than
// kMaxJsonDepth) yields the defaults. A later duplicate key wins, as with a DOM parse.
ChatBodyFields scanChatBody(const std::string& body);

}  // namespace tg
