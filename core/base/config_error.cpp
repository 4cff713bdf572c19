#include "config_error.h"

#include "json_text.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tg {
namespace {
constexpr std::size_t kMaxQuotedValue = 60;  // an error quotes at most this much of a bad value

// A bad value as an error message shows it: short, valid UTF-8. Arrays and objects are named by type and
// size, never dumped: dumping recurses once per nesting level and walks every element before any cut.
std::string shown(const nlohmann::json& v) {
  if (v.is_array() || v.is_object()) {
    const std::size_t n = v.size();
    return std::string(v.is_array() ? "an array of " : "an object of ") + std::to_string(n) +
           (v.is_array() ? (n == 1 ? " element" : " elements") : (n == 1 ? " member" : " members"));
  }
  std::string text = dumpJson(v);
  if (text.size() > kMaxQuotedValue) text = toValidUtf8(text.substr(0, kMaxQuotedValue)) + "...";
  return text;
}
}  // namespace

// Path and expectation quote keys and values from the file, which need not be UTF-8.
ConfigError::ConfigError(std::string file, std::string path, std::string expected)
    : std::runtime_error(file + ": " + toValidUtf8(path.empty() ? "/" : path) + ": " + toValidUtf8(expected)),
      file_(std::move(file)), path_(toValidUtf8(path)), expected_(toValidUtf8(expected)) {}

JsonObjectReader::JsonObjectReader(const nlohmann::json& j, std::string file, std::string path)
    : j_(j), file_(std::move(file)), path_(std::move(path)) {
  if (!j_.is_object()) throw ConfigError(file_, path_, "expected an object, got " + std::string(j_.type_name()));
}

bool JsonObjectReader::has(const std::string& key) const { return j_.contains(key); }

void JsonObjectReader::fail(const std::string& key, const std::string& expected) const {
  throw ConfigError(file_, pathOf(key), expected);
}

double JsonObjectReader::number(const std::string& key, double def, double min, double max) {
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) return def;
  if (!it->is_number()) fail(key, "expected a number, got " + std::string(it->type_name()));
  const double v = it->get<double>();
  if (v < min || v > max) {
    std::ostringstream os;
    os << "expected a number in [" << min << ", " << max << "], got " << v;
    fail(key, os.str());
  }
  return v;
}

double JsonObjectReader::requiredNumber(const std::string& key, double min, double max) {
  if (!has(key)) fail(key, "required number is missing");
  return number(key, 0, min, max);
}

int JsonObjectReader::integer(const std::string& key, int def, int min, int max) {
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) return def;
  if (!it->is_number_integer()) fail(key, "expected an integer, got " + shown(*it));
  const std::string range = "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got ";
  // Above INT64_MAX nlohmann holds the value unsigned; reading it as signed would report a wrapped number.
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    fail(key, range + std::to_string(it->get<std::uint64_t>()));
  const auto v = it->get<std::int64_t>();  // in int64 range now
  if (v < min || v > max) fail(key, range + std::to_string(v));
  return static_cast<int>(v);
}

bool JsonObjectReader::boolean(const std::string& key, bool def) {
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) return def;
  if (!it->is_boolean()) fail(key, "expected true or false, got " + shown(*it));
  return it->get<bool>();
}

std::string JsonObjectReader::string(const std::string& key, const std::string& def,
                                     std::initializer_list<const char*> allowed) {
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) return def;
  if (!it->is_string()) fail(key, "expected a string, got " + std::string(it->type_name()));
  auto v = it->get<std::string>();
  if (allowed.size() == 0) return v;
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += list.empty() ? "" : ", ";
    list += a;
  }
  fail(key, "expected one of " + list + ", got " + shown(nlohmann::json(v)));
}

std::string JsonObjectReader::requiredString(const std::string& key,
                                             std::initializer_list<const char*> allowed) {
  if (!has(key)) fail(key, "required string is missing");
  return string(key, {}, allowed);
}

const nlohmann::json* JsonObjectReader::child(const std::string& key) {
  seen_.insert(key);
  auto it = j_.find(key);
  return it == j_.end() ? nullptr : &*it;
}

void JsonObjectReader::finish() const {
  for (auto it = j_.begin(); it != j_.end(); ++it)
    if (!seen_.count(it.key())) throw ConfigError(file_, pathOf(it.key()), "unknown key");
}

std::string envVariableShown(const std::string& name) {
  bool upper = false, lower = false, ok = !name.empty() && name.size() <= 64 && !(name[0] >= '0' && name[0] <= '9');
  std::size_t part = 0;
  for (const char c : name) {
    upper = upper || (c >= 'A' && c <= 'Z');
    lower = lower || (c >= 'a' && c <= 'z');
    part = c == '_' ? 0 : part + 1;
    ok = ok && part <= 16 && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_');
  }
  if (ok && !(upper && lower)) return "environment variable " + name;
  return "the environment variable named there (its name is not shown: it does not look like one, such as "
         "OPENAI_API_KEY, and may be a key pasted in its place)";
}

nlohmann::json readJsonFile(const std::string& file) {
  std::error_code ec;
  // A directory opens as a stream that reads nothing: "invalid JSON: unexpected end of input" named no reason.
  if (std::filesystem::is_directory(file, ec)) throw ConfigError(file, "", "a directory, not a JSON file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file, "", "cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(file, "", "cannot read file");
  JsonParse parsed = parseJsonText(text.str(), kMaxJsonDepth, JsonKeys::Unique);
  if (!parsed.ok()) {
    std::string error = std::move(parsed.error);
    if (const auto at = error.find("; last read: '"); at != std::string::npos) error.erase(at);
    throw ConfigError(file, "", "invalid JSON: " + error);
  }
  return std::move(parsed.value);
}

}  // namespace tg
