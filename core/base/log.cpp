#include "log.h"

#include "json_text.h"
#include "secret.h"
#include "time_text.h"
#include "types.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace tg {
namespace {
std::atomic<LogLevel> gLevel{LogLevel::Info};
std::atomic<std::FILE*> gSink{nullptr};
std::mutex gWriteMutex;
constexpr const char* kLevelNames[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
}  // namespace

void Log::setLevel(LogLevel level) { gLevel = level; }
LogLevel Log::level() { return gLevel; }
// Under the write lock: once this returns, no line is being written to the sink it replaced, which the caller
// may then close.
void Log::setSink(std::FILE* f) {
  std::lock_guard lock(gWriteMutex);
  gSink = f;
}

void Log::write(LogLevel level, std::string_view scope, std::string_view message) {
  if (level < gLevel.load() || level == LogLevel::Off) return;
  const std::string ts = formatUtc(nowEpochMs(), UtcStyle::IsoMillis);
  // One line per entry whatever the text holds: a CR, LF or escape sequence from a client's path, a config's
  // group name or an upstream's error body would otherwise forge or overwrite lines (on a terminal, too).
  const std::string line = escapeControlBytes(SecretRegistry::redact(std::string(message)));
  const std::string where = escapeControlBytes(scope);
  std::lock_guard lock(gWriteMutex);
  std::FILE* out = gSink.load();
  if (!out) out = stderr;
  std::fprintf(out, "%s %s [%s] %s\n", ts.c_str(), kLevelNames[static_cast<int>(level)], where.c_str(), line.c_str());
  std::fflush(out);
}

}  // namespace tg
