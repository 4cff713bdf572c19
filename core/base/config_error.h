// Validation of JSON configuration: every error names the file, the JSON path and what was expected.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

namespace tg {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, std::string path, std::string expected);
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }  // e.g. "/groups/0/concurrency"
  const std::string& expected() const { return expected_; }

 private:
  std::string file_, path_, expected_;
};

// Reads one JSON object field by field. Every getter records the key as known; finish() rejects any key
// that was never asked for ("unknown key"), so typos in configs are errors, not silent defaults.
class JsonObjectReader {
 public:
  JsonObjectReader(const nlohmann::json& j, std::string file, std::string path);

  bool has(const std::string& key) const;
  double number(const std::string& key, double def, double min, double max);
  double requiredNumber(const std::string& key, double min, double max);
  int integer(const std::string& key, int def, int min, int max);
  bool boolean(const std::string& key, bool def);
  std::string string(const std::string& key, const std::string& def,
                     std::initializer_list<const char*> allowed = {});
  std::string requiredString(const std::string& key, std::initializer_list<const char*> allowed = {});
  // The raw child (object/array) or nullptr when absent; marks the key as known.
  const nlohmann::json* child(const std::string& key);
  std::string pathOf(const std::string& key) const { return path_ + "/" + key; }
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;
  void finish() const;  // throws ConfigError on the first unknown key

 private:
  const nlohmann::json& j_;
  std::string file_, path_;
  std::set<std::string> seen_;
};

// "environment variable OPENAI_API_KEY" for an *_env field's value that looks like a variable's name (letters of
// one case, digits and underscores, no part between underscores over 16 characters, 64 at most); otherwise "the
// environment variable named there" with a word on why its name is not shown: a key pasted where its variable's
// name belongs would be quoted into the journal and, on a reload, history.
std::string envVariableShown(const std::string& name);

// Parses a whole file; a syntax error names the file, line/byte and the parser's message, never the text it read
// (a file cut short inside a header's value would quote a key).
nlohmann::json readJsonFile(const std::string& file);

}  // namespace tg
