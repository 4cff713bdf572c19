// Outside bytes in and out of JSON: upstream bodies, JSONL lines, config files, header values.
// nlohmann::json throws on text that is not UTF-8 when dumping, and its dump, copy and compare recurse once
// per nesting level; these helpers keep both from reaching std::terminate or the end of the stack.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tg {

// Deepest nesting accepted from outside (objects and arrays count one level each). Real API bodies and
// configs stay far below; a thousand levels of recursion is still well within a thread's stack.
inline constexpr int kMaxJsonDepth = 256;

struct JsonParse {
  nlohmann::json value;  // null when error is set
  std::string error;     // empty on success; otherwise names the position ("line 1, column 7") or the depth
  bool ok() const { return error.empty(); }
};

// A key named twice in one object: nlohmann keeps the last silently, so a config line read by a person (the
// first "base_url") is not the one used. Where a person writes the text (configs, JSONL jobs), Unique makes
// it an error naming the key and where it is; bodies relayed to and from upstreams keep LastWins.
enum class JsonKeys { LastWins, Unique };

// Parses outside text without throwing. Text nested deeper than maxDepth is an error, found while parsing
// (the deep value is never built). Thread-safe.
JsonParse parseJsonText(std::string_view text, int maxDepth = kMaxJsonDepth, JsonKeys keys = JsonKeys::LastWins);

bool isValidUtf8(std::string_view bytes);
// The bytes with every invalid or truncated UTF-8 sequence replaced by U+FFFD; valid text is unchanged.
std::string toValidUtf8(std::string_view bytes);

// Control bytes (below 0x20, and 0x7f) as \xNN, and the C1 controls as UTF-8 spells them (0xC2 0x80..0x9F, xterm runs
// U+009B as CSI) as \xc2\xNN; everything else as it is: text from outside for one line of a log or an error message,
// which a CR, LF or escape sequence would otherwise split or rewrite on a terminal.
std::string escapeControlBytes(std::string_view bytes);
// Text for one CSV cell (RFC 4180): valid UTF-8, quoted when it holds a comma, quote, CR or LF; and one that begins
// with = + - @ or a tab or CR, which a spreadsheet would run as a formula (a group named =HYPERLINK(...)), is
// prefixed with ' (OWASP's advice on CSV injection) and quoted.
std::string csvCell(std::string_view text);
// Whether the text holds a control byte (below 0x20, or 0x7f). `allowTab`: a horizontal tab is not one (an HTTP
// field value may hold it). Names and values that go into a header line, a log line or a tab-separated message
// are checked with it.
bool hasControlBytes(std::string_view bytes, bool allowTab = false);
// The number the `n` hex digits at text[at] spell (either case), or -1 when they are not all there: "%XX" and
// "\uXXXX" decoded where an encoded form must be read as the byte it stands for.
int hexValue(std::string_view text, std::size_t at, std::size_t n);

// Serialises without throwing: strings that are not UTF-8 come out with U+FFFD in place of the bad bytes.
std::string dumpJson(const nlohmann::json& j, int indent = -1);
std::string dumpJson(const nlohmann::ordered_json& j, int indent = -1);

// A field of an object read by type: missing, of another type (a file edited by hand, a message anyone may
// publish) or in a value that is no object, it reads as `otherwise`; json::value() throws type_error instead.
std::string fieldString(const nlohmann::json& j, const char* key, const std::string& otherwise = {});
double fieldNumber(const nlohmann::json& j, const char* key, double otherwise);
bool fieldBool(const nlohmann::json& j, const char* key, bool otherwise);

// A finite number as itself, NaN or infinity (kUnknown and friends) as JSON null: the one way an unknown
// figure reaches JSON, since JSON has no NaN.
nlohmann::json numberOrNull(double v);

// RFC 4648 base64 (with padding), for bytes that must be kept exactly but are not text.
std::string base64Encode(std::string_view bytes);

}  // namespace tg
