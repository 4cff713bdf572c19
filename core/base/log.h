// Minimal thread-safe logger: one line per record, "2026-11-29T14:03:41.123Z WARN  [group] message".
// Every line passes through SecretRegistry::redact before it is written.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace tg {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

class Log {
 public:
  static void setLevel(LogLevel level);  // thread-safe
  static LogLevel level();
  static void setSink(std::FILE* f);  // default stderr; caller keeps ownership
  static void write(LogLevel level, std::string_view scope, std::string_view message);
  static bool enabled(LogLevel level) { return level >= Log::level(); }
};

inline void logDebug(std::string_view scope, std::string_view m) { Log::write(LogLevel::Debug, scope, m); }
inline void logInfo(std::string_view scope, std::string_view m) { Log::write(LogLevel::Info, scope, m); }
inline void logWarn(std::string_view scope, std::string_view m) { Log::write(LogLevel::Warn, scope, m); }
inline void logError(std::string_view scope, std::string_view m) { Log::write(LogLevel::Error, scope, m); }

}  // namespace tg
