// Shared pieces of the history tests that write a real SQLite file: a fixed "now", options with no
// background work between flushes, samples, opening a store or reader, and raw SQL for editing the file as
// a user could.
#pragma once

#include "history_reader.h"
#include "history_store.h"

#include <sqlite3.h>

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <memory>
#include <string>

namespace tgtest {

constexpr tg::EpochMs kT0 = 1'796'000'000'000;  // 2026-11-29T..., any fixed wall-clock time works
constexpr int kCurrentSchema = 5;

inline tg::HistoryOptions quietOptions() {
  tg::HistoryOptions o;
  o.flushIntervalMs = 50;
  o.maintenanceIntervalMs = 3'600'000;  // tests run retention and detection explicitly
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

inline tg::Sample makeSample(const std::string& group, tg::EpochMs ts, int sends = 10, int r429 = 0) {
  tg::Sample s;
  s.tsMs = ts;
  s.group = group;
  s.sends = sends;
  s.ok = sends - r429;
  s.r429 = r429;
  s.reqRemaining = 500;
  s.reqLimit = 1000;
  s.inFlight = 2;
  s.concurrencyLimit = 8;
  s.p50Ms = 100;
  s.p95Ms = 200;
  return s;
}

inline QByteArray fileHash(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

inline std::unique_ptr<tg::HistoryStore> openStore(const QString& path, tg::HistoryOptions o = quietOptions()) {
  std::string error;
  auto s = tg::HistoryStore::open(path.toStdString(), std::move(o), &error);
  if (!s) qWarning("open failed: %s", error.c_str());
  return s;
}

inline std::unique_ptr<tg::HistoryReader> openReader(const QString& path, bool strict = false) {
  std::string error;
  tg::HistoryReaderOptions o;
  o.strict = strict;
  auto r = tg::HistoryReader::open(path.toStdString(), o, &error);
  if (!r) qWarning("reader open failed: %s", error.c_str());
  return r;
}

// Base of the store tests: the temporary directory their SQLite files live in, removed after the run.
class TempDirTest : public QObject {
 protected:
  QString file(const char* name) const { return dir_.filePath(name); }
  QTemporaryDir dir_;
};

inline bool sameDouble(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

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
inline void rawExec(const QString& path, const std::string& sql) { rawExec(path.toStdString(), sql); }

}  // namespace tgtest
