// Relays a server-sent event stream to the client as it arrives. When the gateway asked the upstream for usage
// the client did not ask for (OpenAI's stream_options.include_usage), the usage-only chunk ("choices": [] with
// "usage") is removed; every other byte passes through unchanged. Without filtering, bytes pass at once
// (nothing is held); with it, only the current incomplete event is held. Pure; one per stream.
#pragma once

#include <string>
#include <string_view>

namespace tg::gateway {

class SseRelay {
 public:
  explicit SseRelay(bool dropUsageChunk) : filter_(dropUsageChunk) {}
  // The bytes to send the client now for this piece of upstream body.
  std::string feed(std::string_view piece);
  // At the end of the stream: whatever is held (an unterminated last event).
  std::string finish();

  static bool isUsageOnlyEvent(std::string_view event);

 private:
  bool filter_;
  std::string held_;
};

}  // namespace tg::gateway
