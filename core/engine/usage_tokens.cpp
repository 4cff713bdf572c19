#include "usage_tokens.h"

namespace tg {
namespace {

bool isJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The number after "key": in a JSON text, or -1.
std::int64_t jsonNumberAfter(std::string_view body, std::string_view key, std::size_t from) {
  const std::size_t k = body.find(key, from);
  if (k == std::string_view::npos) return -1;
  std::size_t i = k + key.size();
  while (i < body.size() && isJsonSpace(body[i])) ++i;
  if (i >= body.size() || body[i] != ':') return -1;
  ++i;
  while (i < body.size() && isJsonSpace(body[i])) ++i;
  std::int64_t v = 0;
  bool any = false;
  for (; i < body.size() && body[i] >= '0' && body[i] <= '9' && v < (std::int64_t{1} << 50); ++i) {
    v = v * 10 + (body[i] - '0');
    any = true;
  }
  return any ? v : -1;
}

}  // namespace

std::int64_t usageTokens(std::string_view body) {
  const std::size_t u = body.find("\"usage\"");
  if (u == std::string_view::npos) return -1;
  if (auto t = jsonNumberAfter(body, "\"total_tokens\"", u); t >= 0) return t;
  std::int64_t sum = 0;
  bool any = false;
  for (const char* k : {"\"input_tokens\"", "\"output_tokens\"", "\"prompt_tokens\"", "\"completion_tokens\""}) {
    if (auto t = jsonNumberAfter(body, k, u); t >= 0) {
      sum += t;
      any = true;
    }
  }
  return any ? sum : -1;
}

void StreamUsage::add(std::string_view event) {
  const std::size_t u = event.find("\"usage\"");
  if (u == std::string_view::npos) return;
  if (auto t = jsonNumberAfter(event, "\"total_tokens\"", u); t >= 0) total_ = t;
  for (const char* k : {"\"input_tokens\"", "\"prompt_tokens\""})
    input_ = std::max(input_, jsonNumberAfter(event, k, u));
  for (const char* k : {"\"output_tokens\"", "\"completion_tokens\""})
    output_ = std::max(output_, jsonNumberAfter(event, k, u));
}

std::int64_t StreamUsage::tokens() const {
  if (total_ >= 0) return total_;
  if (input_ < 0 && output_ < 0) return -1;
  return std::max<std::int64_t>(input_, 0) + std::max<std::int64_t>(output_, 0);
}

std::int64_t streamUsageTokens(std::string_view body) {
  StreamUsage usage;
  std::size_t start = 0;
  while (start < body.size()) {
    const std::size_t lf = body.find("\n\n", start), crlf = body.find("\r\n\r\n", start);
    const std::size_t end = std::min(lf, crlf);
    usage.add(body.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + (end == crlf ? 4 : 2);
  }
  return usage.tokens();
}

}  // namespace tg
