#include "sqlite_db.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tg::sql {

void Db::open(const std::string& pathOrUri, int flags) {
  close();
  const int rc = sqlite3_open_v2(pathOrUri.c_str(), &h_, flags | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = h_ ? sqlite3_errmsg(h_) : sqlite3_errstr(rc);
    close();
    throw Error(rc & 0xff, "cannot open " + pathOrUri + ": " + msg);
  }
  check(sqlite3_extended_result_codes(h_, 1), "extended result codes");
}

void Db::close() {
  if (!h_) return;
  // close_v2 defers the close until every statement is finalized; it does not fail for a valid handle.
  sqlite3_close_v2(h_);
  h_ = nullptr;
}

void Db::check(int rc, std::string_view what) const {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  std::string msg(what);
  if (!msg.empty()) msg += ": ";
  msg += h_ ? sqlite3_errmsg(h_) : sqlite3_errstr(rc);
  throw Error(rc & 0xff, msg);
}

void Db::exec(std::string_view sql) {
  char* err = nullptr;
  const std::string s(sql);
  const int rc = sqlite3_exec(h_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw Error(rc & 0xff, msg + " (in: " + s.substr(0, 80) + ")");
  }
}

std::int64_t Db::queryInt(std::string_view sql) {
  Stmt st(*this, sql);
  return st.step() ? st.i64(0) : 0;
}

std::string Db::queryText(std::string_view sql) {
  Stmt st(*this, sql);
  return st.step() ? st.text(0) : std::string();
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (s_) sqlite3_finalize(s_);
    db_ = o.db_;
    s_ = o.s_;
    o.s_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() {
  // finalize returns the last step's error, already reported by step().
  if (s_) sqlite3_finalize(s_);
}

void Stmt::prepare(Db& db, std::string_view sql) {
  if (s_) sqlite3_finalize(s_);
  s_ = nullptr;
  db_ = &db;
  db.check(sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &s_, nullptr),
           "prepare " + std::string(sql.substr(0, 60)));
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  db_->check(sqlite3_bind_int64(s_, i, v), "bind");
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  db_->check(std::isnan(v) ? sqlite3_bind_null(s_, i) : sqlite3_bind_double(s_, i, v), "bind");
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  db_->check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT), "bind");
  return *this;
}

Stmt& Stmt::bindNull(int i) {
  db_->check(sqlite3_bind_null(s_, i), "bind");
  return *this;
}

bool Stmt::step() {
  const int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(s_);  // leaves the statement reusable; its return code repeats rc
  db_->check(rc, "");
  return false;
}

void Stmt::reset() {
  // After an error, step() has already reset and reported; a plain reset after DONE returns OK.
  sqlite3_reset(s_);
  db_->check(sqlite3_clear_bindings(s_), "clear bindings");
}

double Stmt::dbl(int c) const {
  if (isNull(c)) return std::nan("");
  return sqlite3_column_double(s_, c);
}

std::string Stmt::text(int c) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
  if (!p) return {};
  return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, c)));
}

bool hasSqliteHeader(const std::string& path, bool* exists, std::uintmax_t* size) {
  std::error_code ec;
  *exists = std::filesystem::exists(path, ec);
  *size = *exists ? std::filesystem::file_size(path, ec) : 0;
  if (ec) *size = 0;
  if (!*exists) return false;
  std::ifstream in(path, std::ios::binary);
  char buf[16] = {};
  in.read(buf, sizeof buf);
  return in.gcount() == 16 && std::memcmp(buf, "SQLite format 3\0", 16) == 0;
}

std::string readOnlyUri(const std::string& path, bool immutable) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    } else {
      uri += static_cast<char>(c);
    }
  }
  uri += "?mode=ro";
  if (immutable) uri += "&immutable=1";
  return uri;
}

}  // namespace tg::sql
