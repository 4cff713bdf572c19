// SqliteTransaction: BEGIN on construction, ROLLBACK unless committed, errors thrown, on a real file.
#include "sqlite_db.h"
#include "sqlite_transaction.h"

#include <QTemporaryDir>
#include <QtTest>

#include <stdexcept>

using namespace tg;

class TestSqliteTransaction : public QObject {
  Q_OBJECT

 private slots:
  void init();
  void cleanup();
  void commitKeepsTheRows();
  void destructorRollsBackWhenNotCommitted();
  void exceptionRollsBack();
  void beginFailureThrowsAndLeavesNothingOpen();
  void commitFailureThrowsAndRollsBack();
  void deferredModeTakesNoWriteLockUntilWritten();

 private:
  std::int64_t rows() { return db_.queryInt("SELECT count(*) FROM t"); }
  bool open() { return !sqlite3_get_autocommit(db_.handle()); }

  QTemporaryDir dir_;
  sql::Db db_;
};

void TestSqliteTransaction::init() {
  db_.open(dir_.filePath("tx.db").toStdString(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db_.exec("DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS child; DROP TABLE IF EXISTS parent; CREATE TABLE t(v INTEGER)");
}

void TestSqliteTransaction::cleanup() { db_.close(); }

void TestSqliteTransaction::commitKeepsTheRows() {
  {
    sql::SqliteTransaction tx(db_);
    QVERIFY(open());
    db_.exec("INSERT INTO t VALUES(1)");
    tx.commit();
    QVERIFY(!open());
  }
  QCOMPARE(rows(), std::int64_t(1));
}

void TestSqliteTransaction::destructorRollsBackWhenNotCommitted() {
  {
    sql::SqliteTransaction tx(db_);
    db_.exec("INSERT INTO t VALUES(1)");
    QCOMPARE(rows(), std::int64_t(1));  // visible inside
  }
  QVERIFY(!open());
  QCOMPARE(rows(), std::int64_t(0));
}

void TestSqliteTransaction::exceptionRollsBack() {
  bool thrown = false;
  try {
    sql::SqliteTransaction tx(db_);
    db_.exec("INSERT INTO t VALUES(1)");
    db_.exec("INSERT INTO no_such_table VALUES(1)");
    tx.commit();
  } catch (const sql::Error&) {
    thrown = true;
  }
  QVERIFY(thrown);
  QVERIFY(!open());
  QCOMPARE(rows(), std::int64_t(0));
}

void TestSqliteTransaction::beginFailureThrowsAndLeavesNothingOpen() {
  sql::SqliteTransaction outer(db_);
  bool thrown = false;
  try {
    sql::SqliteTransaction nested(db_);  // SQLite has no nested BEGIN
  } catch (const sql::Error& e) {
    thrown = true;
    QCOMPARE(e.code, SQLITE_ERROR);
  }
  QVERIFY(thrown);
  QVERIFY(open());  // the failed BEGIN did not roll back the outer transaction
  db_.exec("INSERT INTO t VALUES(1)");
  outer.commit();
  QCOMPARE(rows(), std::int64_t(1));
}

void TestSqliteTransaction::commitFailureThrowsAndRollsBack() {
  // A deferred foreign key is only checked at COMMIT, which then fails and leaves the transaction open.
  db_.exec("PRAGMA foreign_keys = ON");
  db_.exec("CREATE TABLE parent(id INTEGER PRIMARY KEY)");
  db_.exec("CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)");
  bool thrown = false;
  {
    sql::SqliteTransaction tx(db_);
    db_.exec("INSERT INTO t VALUES(1)");
    db_.exec("INSERT INTO child VALUES(42)");
    try {
      tx.commit();
    } catch (const sql::Error& e) {
      thrown = true;
      QCOMPARE(e.code, SQLITE_CONSTRAINT);
    }
    QVERIFY(open());
  }
  QVERIFY(thrown);
  QVERIFY(!open());
  QCOMPARE(rows(), std::int64_t(0));
  QCOMPARE(db_.queryInt("SELECT count(*) FROM child"), std::int64_t(0));
}

void TestSqliteTransaction::deferredModeTakesNoWriteLockUntilWritten() {
  sql::Db other;
  other.open(dir_.filePath("tx.db").toStdString(), SQLITE_OPEN_READWRITE);
  {
    sql::SqliteTransaction tx(db_, sql::SqliteTransaction::Mode::Deferred);
    other.exec("INSERT INTO t VALUES(7)");  // no lock held yet: another connection may write
    tx.commit();
  }
  {
    sql::SqliteTransaction tx(db_);  // IMMEDIATE: the write lock is taken at BEGIN
    bool busy = false;
    try {
      other.exec("INSERT INTO t VALUES(8)");
    } catch (const sql::Error& e) {
      busy = e.code == SQLITE_BUSY;
    }
    QVERIFY(busy);
    tx.commit();
  }
  QCOMPARE(rows(), std::int64_t(1));
}

QTEST_GUILESS_MAIN(TestSqliteTransaction)
#include "test_sqlite_transaction.moc"
