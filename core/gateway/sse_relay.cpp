#include "sse_relay.h"

#include "json_text.h"
#include "secret.h"
#include "request_policy.h"

namespace tg::gateway {
namespace {

// The end of the first complete event in `s` (just past its blank line), or npos. Events end with a blank
// line: "\n\n", "\r\n\r\n" or "\r\r" (the SSE spec allows all three line ends).
std::size_t eventEnd(std::string_view s) {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '\n' && s[i + 1] == '\n') return i + 2;
    if (s[i] == '\r' && s[i + 1] == '\r') return i + 2;
    if (s[i] == '\r' && s[i + 1] == '\n' && i + 3 < s.size() && s[i + 2] == '\r' && s[i + 3] == '\n') return i + 4;
  }
  return std::string_view::npos;
}

std::size_t lineEnd(std::string_view s) {
  const auto nl = s.find('\n');
  return nl == std::string_view::npos ? nl : nl + 1;
}

}  // namespace

std::optional<StreamFraming> streamFramingOf(std::string_view contentType) {
  std::string_view type = contentType.substr(0, contentType.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  if (equalsIgnoreCase(type, "text/event-stream")) return StreamFraming::Events;
  for (const char* lines : {"application/x-ndjson", "application/ndjson", "application/jsonl",
                            "application/x-jsonlines", "application/jsonlines", "application/stream+json",
                            "application/json-seq"})
    if (equalsIgnoreCase(type, lines)) return StreamFraming::Lines;
  return std::nullopt;
}

bool SseRelay::isUsageOnlyEvent(std::string_view event) {
  // Cheap test first: most chunks are content deltas.
  if (event.find("\"usage\"") == std::string_view::npos) return false;
  std::string data;
  std::size_t pos = 0;
  while (pos < event.size()) {
    auto nl = event.find('\n', pos);
    std::string_view line = event.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 5) == "data:") {
      line.remove_prefix(5);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      if (!data.empty()) data += '\n';
      data += line;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  auto parsed = parseJsonText(data);
  if (!parsed.ok() || !parsed.value.is_object()) return false;
  const auto& j = parsed.value;
  auto choices = j.find("choices");
  auto usage = j.find("usage");
  return choices != j.end() && choices->is_array() && choices->empty() && usage != j.end() && usage->is_object();
}

std::string SseRelay::feed(std::string_view piece) {
  held_.append(piece);
  std::string out;
  std::size_t start = 0;
  while (true) {
    const std::string_view rest = std::string_view(held_).substr(start);
    const auto end = framing_ == StreamFraming::Events ? eventEnd(rest) : lineEnd(rest);
    if (end == std::string_view::npos) break;
    std::string_view event = std::string_view(held_).substr(start, end);
    if (!filter_ || !isUsageOnlyEvent(event)) out.append(event);
    start += end;
  }
  held_.erase(0, start);
  out = SecretRegistry::redact(std::move(out));  // an event is whole: a key in it is whole too
  if (held_.size() > kMaxHeld) {
    // No unit's end for this long: not a stream of them (an error body, a plain chunked answer). All but the
    // last kKeep bytes go now, redacted; a key cut by the end of what arrived stays held, whole, for the next.
    held_ = SecretRegistry::redact(std::move(held_));
    out.append(held_, 0, held_.size() - kKeep);
    held_.erase(0, held_.size() - kKeep);
  }
  return out;
}

std::string SseRelay::finish() {
  std::string rest;
  rest.swap(held_);
  if (filter_ && isUsageOnlyEvent(rest)) return {};
  return SecretRegistry::redact(std::move(rest));
}

}  // namespace tg::gateway
