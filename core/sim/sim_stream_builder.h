// The events of a simulated streaming chat completion, as providers send them over SSE, with when each
// one is due. OpenAI's chat-completions chunks ("data: {...}", a usage chunk only when the request asked
// with stream_options.include_usage, then "data: [DONE]") for every dialect but anthropic, which gets the
// Messages stream (message_start ... message_stop, each "event: X\ndata: {...}"). Pure; thread-safe.
#pragma once

#include "sim_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tg {

// Bytes to write once `atS` seconds have passed since the response head was written: whole SSE events,
// already framed as one HTTP chunk when the response is chunked. The last step ends the body.
struct SimStreamStep {
  double atS = 0;
  std::string bytes;
};

struct SimStreamRequest {
  SimDialect dialect = SimDialect::OpenAi;
  std::string id;          // "chatcmpl-…" / "msg_…"
  std::string model;
  std::int64_t createdS = 0;  // wall-clock seconds, OpenAI's "created"
  std::int64_t promptTokens = 0, completionTokens = 0;
  bool includeUsage = false;  // OpenAI: the request asked for the usage chunk
  bool chunked = true;        // false: close-delimited (an HTTP/1.0 client), no chunk framing
};

class SimStreamBuilder {
 public:
  // Content chunks when the config leaves the count to the completion: one per token up to this many.
  static constexpr int kMaxDerivedChunks = 16;

  // The content is split into stream.chunks pieces (0: from the completion tokens, at least 1, at most
  // kMaxDerivedChunks). The opening events and the first piece are due at ttft, the k-th further piece
  // k intervals later; the closing events (and usage) go with the last piece.
  static std::vector<SimStreamStep> build(const SimStreamRequest& req, const SimStreamConfig& stream);
  // How many content chunks `build` makes.
  static int chunkCount(std::int64_t completionTokens, const SimStreamConfig& stream);
};

}  // namespace tg
