#include "json_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>
#include <vector>

#include <string>

namespace tg {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

struct TooDeep {};
struct DuplicateKey {
  std::string where;  // a JSON pointer: /groups/0/base_url
};

// Where the parser is, for JsonKeys::Unique: one frame per open object or array.
class KeyTracker {
 public:
  void onEvent(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        frames_.push_back({event == E::object_start, {}, {}, 0});
        break;
      case E::object_end:
      case E::array_end:
        if (!frames_.empty()) frames_.pop_back();
        elementDone();
        break;
      case E::key: {
        if (frames_.empty() || !frames_.back().object) break;
        Frame& f = frames_.back();
        f.key = parsed.is_string() ? parsed.get<std::string>() : std::string();
        if (!f.keys.insert(f.key).second) throw DuplicateKey{pointer()};
        break;
      }
      case E::value:
        elementDone();
        break;
    }
  }

 private:
  struct Frame {
    bool object;
    std::unordered_set<std::string> keys;  // hashed: a job row's body may hold an object of 100,000 keys
    std::string key;                // the member being read
    long index;                     // arrays: elements read so far
  };
  void elementDone() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  std::string pointer() const {
    std::string out;
    for (const Frame& f : frames_) {
      out += '/';
      if (!f.object) {
        out += std::to_string(f.index);
        continue;
      }
      for (char c : f.key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    }
    return out;
  }
  std::vector<Frame> frames_;
};

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (RFC 3629: no overlongs,
// no surrogates, nothing above U+10FFFF).
std::size_t validSequenceLength(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

JsonParse parseJsonText(std::string_view text, int maxDepth, JsonKeys keys) {
  JsonParse r;
  KeyTracker tracker;
  // The callback sees every object/array start with its depth before it is built; throwing there stops the
  // parser at once, so a deep document costs neither memory nor stack.
  const nlohmann::json::parser_callback_t limit = [maxDepth, keys, &tracker](
                                                      int depth, nlohmann::json::parse_event_t event,
                                                      nlohmann::json& parsed) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= maxDepth)
      throw TooDeep{};
    if (keys == JsonKeys::Unique) tracker.onEvent(event, parsed);
    return true;
  };
  try {
    r.value = nlohmann::json::parse(text.begin(), text.end(), limit);
  } catch (const TooDeep&) {
    r.value = nullptr;
    r.error = "nested deeper than " + std::to_string(maxDepth) + " levels";
  } catch (const DuplicateKey& d) {
    r.value = nullptr;
    r.error = "duplicate key at " + toValidUtf8(d.where) + " (the JSON names it twice in one object)";
  } catch (const nlohmann::json::exception& e) {
    // parse_error, or out_of_range for a number past double (1e400). The message quotes the input, the whole
    // token last read: kept to its end, where the error is (a 50 MB string put 100 MB on stderr and 227 MB in
    // the rejects file for two lines).
    r.value = nullptr;
    std::string message = e.what();
    constexpr std::size_t kQuoted = 60;
    if (const auto at = message.find("last read: '"); at != std::string::npos && message.size() - at > 2 * kQuoted)
      message = message.substr(0, at + 12) + "..." + message.substr(message.size() - kQuoted - 1);
    if (message.size() > 1000) message = message.substr(0, 1000) + "...";
    r.error = toValidUtf8(message);
  }
  return r;
}

namespace {
bool isControlByte(unsigned char c) { return c < 0x20 || c == 0x7f; }
}  // namespace

std::string csvCell(std::string_view text) {
  std::string s = toValidUtf8(text);
  const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos;
  if (formula) s.insert(0, "'");
  if (!formula && s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

bool hasControlBytes(std::string_view bytes, bool allowTab) {
  return std::any_of(bytes.begin(), bytes.end(), [allowTab](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return isControlByte(c) && !(allowTab && c == '\t');
  });
}

int hexValue(std::string_view text, std::size_t at, std::size_t n) {
  if (at > text.size() || n > text.size() - at) return -1;
  int v = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const char c = text[at + k];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::string escapeControlBytes(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    // C1 controls too, as UTF-8 spells them (U+0080..U+009F: 0xC2 0x80..0x9F): xterm runs U+009B as CSI.
    const bool c1 = c == 0xC2 && i + 1 < bytes.size() && static_cast<unsigned char>(bytes[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(bytes[i + 1]) <= 0x9F;
    if (isControlByte(c) || c1) {
      char buf[16];
      if (c1) std::snprintf(buf, sizeof buf, "\\xc2\\x%02x", static_cast<unsigned char>(bytes[++i]));
      else std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += bytes[i];
    }
  }
  return out;
}

bool isValidUtf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = validSequenceLength(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string toValidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = validSequenceLength(bytes, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string dumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

std::string dumpJson(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                            static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += kAlphabet[v & 63];
  }
  if (const std::size_t left = bytes.size() - i; left > 0) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (left == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += left == 2 ? kAlphabet[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::string fieldString(const nlohmann::json& j, const char* key, const std::string& otherwise) {
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_string() ? it->get<std::string>() : otherwise;
}

double fieldNumber(const nlohmann::json& j, const char* key, double otherwise) {
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

bool fieldBool(const nlohmann::json& j, const char* key, bool otherwise) {
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

nlohmann::json numberOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace tg
