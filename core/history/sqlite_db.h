// Thin RAII over the SQLite C API, private to tollgate_history. Every sqlite3_* return code goes through
// check(); a failure throws sql::Error, which the public classes catch at their boundary and turn into an
// error string (nothing in tollgate_history throws past its public API).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tg::sql {

struct Error : std::runtime_error {
  Error(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;  // primary SQLite result code (SQLITE_FULL, SQLITE_CORRUPT, ...)
};

// One connection; not thread-safe (one owner thread).
class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() { close(); }

  // `flags` are SQLITE_OPEN_*; SQLITE_OPEN_URI is always added.
  void open(const std::string& pathOrUri, int flags);
  void close();
  bool isOpen() const { return h_ != nullptr; }
  sqlite3* handle() const { return h_; }

  void exec(std::string_view sql);
  // Runs a single-value query (PRAGMA user_version, SELECT count(*), ...).
  std::int64_t queryInt(std::string_view sql);
  std::string queryText(std::string_view sql);
  void check(int rc, std::string_view what) const;
  std::int64_t lastInsertId() const { return sqlite3_last_insert_rowid(h_); }
  int changes() const { return sqlite3_changes(h_); }

 private:
  sqlite3* h_ = nullptr;
};

// One prepared statement; reset() before reuse. Doubles: NaN binds as NULL, NULL reads back as NaN.
class Stmt {
 public:
  Stmt() = default;
  Stmt(Db& db, std::string_view sql) { prepare(db, sql); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  ~Stmt();

  void prepare(Db& db, std::string_view sql);
  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bindNull(int i);
  // Returns true when a row is available, false when done.
  bool step();
  void run() { step(); reset(); }
  void reset();

  bool isNull(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::int64_t i64(int c) const { return sqlite3_column_int64(s_, c); }
  int i32(int c) const { return sqlite3_column_int(s_, c); }
  double dbl(int c) const;  // NULL -> NaN
  std::string text(int c) const;
  bool prepared() const { return s_ != nullptr; }
  int columns() const { return sqlite3_column_count(s_); }
  std::string columnName(int c) const { return sqlite3_column_name(s_, c); }
  int columnType(int c) const { return sqlite3_column_type(s_, c); }

 private:
  Db* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
};

// Bytes 0..15 of every SQLite 3 database file.
bool hasSqliteHeader(const std::string& path, bool* exists, std::uintmax_t* size);

// "file:<percent-encoded path>?mode=ro[&immutable=1]"
std::string readOnlyUri(const std::string& path, bool immutable);

}  // namespace tg::sql
