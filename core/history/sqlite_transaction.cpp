#include "sqlite_transaction.h"

#include "log.h"

#include <string>

namespace tg::sql {

SqliteTransaction::SqliteTransaction(Db& db, Mode mode) : db_(db) {
  db_.exec(mode == Mode::Immediate ? "BEGIN IMMEDIATE" : "BEGIN");
}

SqliteTransaction::~SqliteTransaction() {
  // SQLite may already have rolled back on its own (SQLITE_FULL, SQLITE_IOERR, ...): then nothing is open.
  if (done_ || sqlite3_get_autocommit(db_.handle())) return;
  const int rc = sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) logWarn("history", std::string("ROLLBACK failed: ") + sqlite3_errstr(rc));
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace tg::sql
