// API keys: read from the environment by name, shown only as a fingerprint, and scrubbed from any text
// that leaves the process (logs, history, exports).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tg {

// "k:3f9a1c2e" — stable, short, not reversible in practice. Empty secret -> "k:none".
std::string keyFingerprint(std::string_view secret);

// Process-wide registry of secrets to scrub. Thread-safe.
class SecretRegistry {
 public:
  static void add(const std::string& secret);  // ignores secrets shorter than 4 characters
  // Registers a secret for as long as someone holds it (a client's own key while the engine tracks it):
  // release() as often as hold(); one add() keeps it for good.
  static void hold(const std::string& secret);
  static void release(const std::string& secret);
  // Replaces every registered secret in `text` with its fingerprint.
  static std::string redact(std::string text);
  // `j` with every string and object key redacted: an event's detail before anyone sees it (the dashboard, the
  // gateway's /healthz, history).
  static nlohmann::json redacted(nlohmann::json j);
  // The text of `j` as written out (results, rejects, exports): every string and object key is redacted
  // before serialising, so a secret the JSON form would escape is caught too, and the text once more after.
  // Never throws: bytes that are not UTF-8 come out as U+FFFD.
  static std::string dumpRedacted(const nlohmann::json& j, int indent = -1);
};

}  // namespace tg
