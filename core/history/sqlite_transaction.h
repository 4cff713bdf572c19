// RAII owner of one SQLite transaction: BEGIN in the constructor, commit() explicit, ROLLBACK in the
// destructor when commit() was not reached, so an exception or early return cannot leave a transaction open.
#pragma once

#include "sqlite_db.h"

namespace tg::sql {

class SqliteTransaction {
 public:
  enum class Mode { Deferred, Immediate };

  // Begins a transaction on `db` (not thread-safe: the connection's owner thread only). Throws Error when
  // BEGIN fails; nothing is then open.
  explicit SqliteTransaction(Db& db, Mode mode = Mode::Immediate);
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  // Rolls back unless committed. A failed ROLLBACK is logged, not thrown: SQLite then rolls back the
  // journal on the next open, and nothing committed is at risk.
  ~SqliteTransaction();

  // Throws Error when COMMIT fails; the destructor then rolls back.
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace tg::sql
