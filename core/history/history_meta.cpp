#include "history_meta.h"

#include "json_text.h"

#include <charconv>
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

}  // namespace tg::history
