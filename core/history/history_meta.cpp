#include "history_meta.h"

#include "json_text.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string_view>

namespace tg::history {

std::optional<EpochMs> readMetaMs(sql::Db& db, const char* key, const std::string& path) {
  sql::Stmt m(db, "SELECT value FROM meta WHERE key = ?1");
  m.bind(1, std::string_view(key));
  if (!m.step()) return std::nullopt;
  const std::string text = m.text(0);
  EpochMs v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw sql::Error(SQLITE_CORRUPT, path + ": meta key '" + key + "' holds '" + toValidUtf8(text) +
                                         "', expected an integer (epoch ms); fix or delete that row");
  return v;
}

void writeMetaMs(sql::Db& db, const char* key, EpochMs value) {
  sql::Stmt m(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
  m.bind(1, std::string_view(key)).bind(2, std::to_string(value));
  m.run();
}

namespace {

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/PID/stat, the process's start in clock ticks since boot: a pid reused by another process
// has another start. Empty when there is no such process.
std::string processStart(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto at = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (at == std::string::npos) return {};
  for (int field = 2; field < 22 && at != std::string::npos; ++field) at = stat.find(' ', at + 1);
  if (at == std::string::npos) return {};
  const auto end = stat.find(' ', at + 1);
  return stat.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

// "pid:[4026531836]" -> "4026531836"
std::string pidNamespace() {
  char buf[64] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  const std::string link(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  const auto open = link.find('['), close = link.find(']');
  return open == std::string::npos || close == std::string::npos ? "-" : link.substr(open + 1, close - open - 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (auto at = s.find(sep); at != std::string::npos; at = s.find(sep, from)) {
    parts.push_back(s.substr(from, at - from));
    from = at + 1;
  }
  parts.push_back(s.substr(from));
  return parts;
}

// Whether `pid`, started at `start` (field 22), is gone. A pid that exists but cannot be read (hidepid, another
// user's process) is taken as alive: a live writer was reported ended, and its row deleted, at every open.
bool processGone(const std::string& pid, const std::string& start) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(pid.data(), pid.data() + pid.size(), n);
  if (ec != std::errc() || end != pid.data() + pid.size() || n <= 0) return false;
  if (::kill(static_cast<pid_t>(n), 0) != 0 && errno == ESRCH) return true;
  const std::string now = processStart(pid);
  return !now.empty() && !start.empty() && now != start;  // the pid is another process's now
}

}  // namespace

std::string ownWriterKey() {
  const std::string pid = std::to_string(::getpid());
  const std::string boot = firstLine("/proc/sys/kernel/random/boot_id");
  return "writer/" + (boot.empty() ? "-" : boot) + "/" + pidNamespace() + "/" + pid + "/" + processStart(pid);
}

std::int64_t monotonicMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

void writeWriterRow(sql::Db& db, const std::string& key, EpochMs lastWrite) {
  sql::Stmt m(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
  m.bind(1, std::string_view(key)).bind(2, std::to_string(lastWrite) + " " + std::to_string(monotonicMs()));
  m.run();
}

std::vector<EndedWriter> endedWriters(sql::Db& db, const std::string& ownKey, const WriterSightings& seen,
                                      WriterSightings& next, std::chrono::steady_clock::time_point now,
                                      std::chrono::steady_clock::duration silence) {
  const std::vector<std::string> own = split(ownKey, '/');
  std::vector<EndedWriter> ended;
  if (own.size() != 5 || own[4].empty()) return ended;  // no /proc here: nothing can be judged
  next.clear();
  sql::Stmt rows(db, "SELECT key, value FROM meta WHERE key >= 'writer/' AND key < 'writer0'");
  while (rows.step()) {
    EndedWriter w;
    w.key = rows.text(0);
    if (w.key == ownKey) continue;
    const std::string value = rows.text(1);
    const char* end = std::from_chars(value.data(), value.data() + value.size(), w.lastWriteMs).ptr;  // 0: unreadable
    std::int64_t mono = -1;  // the same write on CLOCK_MONOTONIC, after a space
    if (end < value.data() + value.size() && *end == ' ')
      std::from_chars(end + 1, value.data() + value.size(), mono);
    const std::vector<std::string> k = split(w.key, '/');
    if (k.size() != 5) continue;  // not a row this code wrote: not ours to judge
    std::from_chars(k[3].data(), k[3].data() + k[3].size(), w.pid);
    bool gone = false;
    if (k[1] != own[1]) {
      gone = true;  // an earlier boot (or another machine, which WAL cannot share a file with)
    } else if (k[2] != own[2] || k[2] == "-") {  // its pids are not ours to look up: its silence tells
      const std::int64_t monoNow = monotonicMs();
      if (mono >= 0 && mono <= monoNow) {  // this boot's clock, whoever reads it (no time namespace moved it)
        gone = monoNow - mono > std::chrono::duration_cast<std::chrono::milliseconds>(silence).count();
      } else {  // watched from here: a first sighting starts the watch
        auto it = seen.find(w.key);
        WriterSighting s = it != seen.end() && it->second.value == value ? it->second : WriterSighting{value, now};
        gone = now - s.changedAt > silence;
        if (!gone) next.insert_or_assign(w.key, std::move(s));
      }
    } else {
      gone = processGone(k[3], k[4]);
    }
    if (gone) ended.push_back(std::move(w));
  }
  return ended;
}

}  // namespace tg::history
