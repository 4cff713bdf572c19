#include "endpoint_route.h"

#include <algorithm>
#include <cctype>

namespace tg {
namespace {

bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool isAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

bool isIdSegment(std::string_view s) {
  if (s.empty()) return false;
  if (std::all_of(s.begin(), s.end(), isDigit)) return true;
  if (s.size() == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-') {
    bool uuid = true;
    for (std::size_t i = 0; i < s.size(); ++i)
      uuid = uuid && (s[i] == '-' ? (i == 8 || i == 13 || i == 18 || i == 23) : isHex(s[i]));
    if (uuid) return true;
  }
  if (s.size() >= 16 && std::all_of(s.begin(), s.end(), isHex)) return true;
  const auto sep = s.find_first_of("-_");
  if (sep != std::string_view::npos && sep >= 2 && sep <= 12 &&
      std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(sep), isAlpha)) {
    // A word after it ("balance_transactions", "network-configurations", "prod-gpt4oMini0718") is a name.
    const std::string_view rest = s.substr(sep + 1);
    if (rest.size() >= 14 && std::all_of(rest.begin(), rest.end(), [](char c) { return isAlnum(c) || c == '_'; }) &&
        std::any_of(rest.begin(), rest.end(), isDigit) &&
        std::any_of(rest.begin(), rest.end(), isAlpha))
      return true;
  }
  // A credential some APIs put in the path. After an id and a colon, as Telegram's "bot123456789:AAE_kd8Xq-Zr9...":
  // 24 or more of a token's alphabet with letters and digits ("gemini-1.5-pro:generateContent" has 15 letters).
  if (const auto colon = s.rfind(':'); colon != std::string_view::npos) {
    const std::string_view after = s.substr(colon + 1);
    const auto tokenChar = [](char c) { return isAlnum(c) || c == '-' || c == '_'; };
    if (after.size() >= 24 && std::all_of(after.begin(), after.end(), tokenChar) &&
        std::any_of(after.begin(), after.end(), isDigit) && std::any_of(after.begin(), after.end(), isAlpha))
      return true;
  }
  // Or an unbroken run of 20 or more letters and digits with 2 digits, 3 capitals and 3 small letters in it (a JWT's
  // parts). A model's name breaks into short runs ("Meta-Llama-3.1-8B-Instruct"); a deployment's CamelCase name
  // ("MyGpt4oDeployment01") is shorter.
  for (std::size_t i = 0; i < s.size();) {
    std::size_t j = i;
    int digits = 0, upper = 0, lower = 0;
    for (; j < s.size() && isAlnum(s[j]); ++j) {
      digits += isDigit(s[j]);
      upper += s[j] >= 'A' && s[j] <= 'Z';
      lower += s[j] >= 'a' && s[j] <= 'z';
    }
    if (j - i >= 20 && digits >= 2 && upper >= 3 && lower >= 3) return true;
    i = j + 1;
  }
  if (s.size() >= 24 && std::all_of(s.begin(), s.end(), isAlnum) &&
      std::any_of(s.begin(), s.end(), isDigit) &&
      std::any_of(s.begin(), s.end(), isAlpha))
    return true;
  return false;
}

}  // namespace

std::string urlPath(const std::string& url) {
  auto scheme = url.find("://");
  auto start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (start == std::string::npos) return "/";
  auto end = url.find_first_of("?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string endpointRoute(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const auto slash = path.find('/', pos);
    const auto segEnd = slash == std::string_view::npos ? path.size() : slash;
    const std::string_view seg = path.substr(pos, segEnd - pos);
    out += isIdSegment(seg) ? std::string_view("{id}") : seg;
    if (slash == std::string_view::npos) break;
    out += '/';
    pos = slash + 1;
  }
  return out;
}

}  // namespace tg
