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

}  // namespace tg
