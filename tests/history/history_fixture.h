// Shared pieces of the history tests that write a real SQLite file: a fixed "now", options with no
// background work between flushes, a one-group sample, and raw SQL for editing the file as a user could.
#pragma once

#include "history_store.h"

#include <sqlite3.h>

#include <QtTest>

#include <string>

namespace tgtest {

constexpr tg::EpochMs kT0 = 1'796'000'000'000;

inline tg::HistoryOptions quietOptions() {
  tg::HistoryOptions o;
  o.flushIntervalMs = 50;
  o.maintenanceIntervalMs = 3'600'000;
  o.incidentIntervalMs = 3'600'000;
  o.now = [] { return kT0; };
  return o;
}

inline tg::Sample sample(tg::EpochMs ts) {
  tg::Sample s;
  s.tsMs = ts;
  s.group = "g";
  s.sends = 10;
  s.ok = 10;
  return s;
}

// Runs sql on the file through its own connection; fails the calling test on any error.
inline void rawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const QString msg = err ? err : "";
  sqlite3_free(err);
  QCOMPARE(sqlite3_close(db), SQLITE_OK);
  QVERIFY2(rc == SQLITE_OK, qPrintable(msg));
}

}  // namespace tgtest
