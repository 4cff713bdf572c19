#include "chat_body_scan.h"

#include "json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace tg {
namespace {

// Streams the parser's events and keeps the wanted values: the key just read decides where the next value
// goes (top-level keys at depth 1, "include_usage" at depth 2 inside the top-level "stream_options").
class ChatBodyScanner : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<nlohmann::json> maxTokens;  // the last top-level "max_tokens" when it is a number
  bool stream = false, includeUsage = false;
  std::string model;

  bool null() override { return mismatch(); }
  bool boolean(bool v) override {
    const Key k = std::exchange(at_, Key::None);
    if (k == Key::Stream) stream = v;
    else if (k == Key::IncludeUsage) includeUsage = v;
    else reset(k);
    return true;
  }
  bool number_integer(number_integer_t v) override { return number(v); }
  bool number_unsigned(number_unsigned_t v) override { return number(v); }
  bool number_float(number_float_t v, const string_t&) override { return number(v); }
  bool string(string_t& v) override {
    const Key k = std::exchange(at_, Key::None);
    if (k == Key::Model) model = v.size() <= kMaxModelChars ? v : std::string();
    else reset(k);
    return true;
  }
  bool binary(binary_t&) override { return mismatch(); }
  bool start_object(std::size_t) override {
    const Key k = std::exchange(at_, Key::None);
    reset(k);  // a later "stream_options" replaces an earlier one, as in a DOM
    if (k == Key::StreamOptions) inOptions_ = true;
    return ++depth_ <= kMaxJsonDepth;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      at_ = k == "max_tokens"       ? Key::MaxTokens
            : k == "stream"         ? Key::Stream
            : k == "model"          ? Key::Model
            : k == "stream_options" ? Key::StreamOptions
                                    : Key::None;
    } else {
      at_ = depth_ == 2 && inOptions_ && k == "include_usage" ? Key::IncludeUsage : Key::None;
    }
    return true;
  }
  bool end_object() override {
    if (--depth_ == 1) inOptions_ = false;
    return true;
  }
  bool start_array(std::size_t) override {
    mismatch();
    return ++depth_ <= kMaxJsonDepth;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  enum class Key { None, MaxTokens, Stream, Model, StreamOptions, IncludeUsage };
  int depth_ = 0;
  bool inOptions_ = false;
  Key at_ = Key::None;

  // The value for key `k` is of another type than wanted: the field is as if absent ("stream": "yes" is
  // not a stream request, "max_tokens": "20" is no number).
  void reset(Key k) {
    switch (k) {
      case Key::MaxTokens: maxTokens.reset(); break;
      case Key::Stream: stream = false; break;
      case Key::Model: model.clear(); break;
      case Key::StreamOptions:
      case Key::IncludeUsage: includeUsage = false; break;
      case Key::None: break;
    }
  }
  bool mismatch() {
    reset(std::exchange(at_, Key::None));
    return true;
  }
  bool number(nlohmann::json v) {
    const Key k = std::exchange(at_, Key::None);
    if (k == Key::MaxTokens) maxTokens = std::move(v);
    else reset(k);
    return true;
  }
};

std::int64_t clampTokens(const nlohmann::json& v) {
  if (v.is_number_unsigned())
    return static_cast<std::int64_t>(std::min<std::uint64_t>(v.get<std::uint64_t>(), kMaxTokensCap));
  if (v.is_number_integer()) return std::clamp<std::int64_t>(v.get<std::int64_t>(), 0, kMaxTokensCap);
  const double d = v.get<double>();  // a float: converting an out-of-range one to an integer is undefined
  if (!(d > 0)) return 0;
  return d >= static_cast<double>(kMaxTokensCap) ? kMaxTokensCap : static_cast<std::int64_t>(d);
}

}  // namespace

ChatBodyFields scanChatBody(const std::string& body) {
  ChatBodyFields out;
  const auto first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || body[first] != '{') return out;
  ChatBodyScanner scan;
  if (!nlohmann::json::sax_parse(body, &scan)) return out;
  if (scan.maxTokens) out.maxTokens = clampTokens(*scan.maxTokens);
  out.stream = scan.stream;
  out.includeUsage = scan.includeUsage;
  out.model = std::move(scan.model);
  return out;
}

}  // namespace tg
