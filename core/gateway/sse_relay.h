// Relays a streamed answer to the client as it arrives, unit by unit: a server-sent event stream event by event
// (a client acts on an event only at its blank line, so holding the incomplete one delays nothing it could use), a
// stream of JSON lines (Ollama's native API, NDJSON) line by line. When the gateway asked the
// upstream for usage the client did not ask for (OpenAI's stream_options.include_usage), the usage-only chunk
// ("choices": [] with "usage") is removed. Every registered secret is redacted (an upstream that echoes the key
// it was sent must not hand it to the gateway's client); events are whole, so a key cut across two pieces of
// the upstream's body is still caught. A body with no blank line for kMaxHeld bytes (not an event stream) is
// passed on past that, less its last kKeep bytes. One per stream; uses the process's SecretRegistry.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tg::gateway {

// How a stream's units end: an event at a blank line, a JSON text at a line end.
enum class StreamFraming : unsigned char { Events, Lines };

// The framing of an answer whose Content-Type says it is a stream (text/event-stream; application/x-ndjson,
// application/jsonl and their kin); nullopt for any other (sent whole, with its length).
std::optional<StreamFraming> streamFramingOf(std::string_view contentType);

class SseRelay {
 public:
  explicit SseRelay(bool dropUsageChunk, StreamFraming framing = StreamFraming::Events)
      : filter_(dropUsageChunk && framing == StreamFraming::Events), framing_(framing) {}
  StreamFraming framing() const { return framing_; }
  // The bytes to send the client now for this piece of upstream body.
  std::string feed(std::string_view piece);
  // At the end of the stream: whatever is held (an unterminated last event).
  std::string finish();

  static bool isUsageOnlyEvent(std::string_view event);

  static constexpr std::size_t kMaxHeld = 64 * 1024;
  static constexpr std::size_t kKeep = 1024;  // longer than any key

 private:
  bool filter_;
  StreamFraming framing_;
  std::string held_;
};

}  // namespace tg::gateway
