// What the file keeps: incidents detected, merged and persisted; older schemas migrated; the compact
// encoding.
// Real SQLite files in a temporary directory; time set by hand (tgtest::kT0).
#include "history_fixture.h"
#include "history_reader.h"
#include "history_store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>
#include <unistd.h>

using namespace tg;
using namespace tgtest;

class TestHistoryPersistence : public TempDirTest {
  Q_OBJECT

 private slots:
  void incidentsDetectedMergedAndPersisted();
  void migratesV1File();
  void migratesTheFirstV2File();
  void waitsForAnotherProcessUpgradingTheFile();
  void migratesV3FileRowsReadBackEqual();
  void anUpgradeKeepsACopyAndNeedsRoom();
  void compactEncodingRoundTrip();
};

void TestHistoryPersistence::incidentsDetectedMergedAndPersisted() {
  const QString path = file("incidents.db");
  auto store = openStore(path);
  QVERIFY(store);
  // One hour, two groups, 1 s samples. Trouble (50% 429s in "a") at 600-630 s and 660-680 s: 30 s apart,
  // so one incident; again at 3550-3580 s in "b": far apart, a second incident.
  std::vector<Sample> rows;
  for (int t = 1; t <= 3600; ++t) {
    for (const char* g : {"a", "b"}) {
      const bool hotA = std::string(g) == "a" && ((t > 600 && t <= 630) || (t > 660 && t <= 680));
      const bool hotB = std::string(g) == "b" && t > 3550 && t <= 3580;
      rows.push_back(makeSample(g, kT0 + t * 1000, 20, hotA || hotB ? 10 : 0));
    }
  }
  store->append(rows);
  Event op;
  op.tsMs = kT0 + 640'000;
  op.kind = EventKind::OperatorAction;
  op.group = "a";
  op.message = "concurrency 8 -> 2";
  op.detail = {{"action", "set_concurrency"}, {"target", "a"}, {"before", 8}, {"after", 2}, {"actor", "bob"},
               {"instance", "host-b"}};
  store->append(op);
  QVERIFY(store->detectIncidents());
  QVERIFY(store->detectIncidents());  // idempotent

  auto reader = openReader(path);
  QVERIFY(reader);
  auto list = reader->incidents();
  QVERIFY2(list.ok(), list.error.c_str());
  QCOMPARE(list.value.size(), std::size_t(2));
  const Incident& first = list.value[0];
  QVERIFY(first.startMs >= kT0 + 600'000 && first.startMs <= kT0 + 610'000);
  QCOMPARE(first.endMs, kT0 + 680'000);
  QCOMPARE(first.groups, std::vector<std::string>{"a"});
  QCOMPARE(first.peak429PerS, 10.0);
  QCOMPARE(first.total429, std::int64_t(500));
  QCOMPARE(first.operatorActions.size(), std::size_t(1));
  QCOMPARE(first.operatorActions[0].detail["actor"].get<std::string>(), std::string("bob"));
  const Incident& second = list.value[1];
  QCOMPARE(second.groups, std::vector<std::string>{"b"});
  QCOMPARE(second.total429, std::int64_t(300));
  QCOMPARE(second.operatorActions.size(), std::size_t(0));

  auto one = reader->incident(second.id);
  QVERIFY(one.ok());
  QVERIFY(one.value.has_value());
  QCOMPARE(one.value->startMs, second.startMs);
  auto none = reader->incident(9999);
  QVERIFY(none.ok());
  QVERIFY(!none.value.has_value());

  // The second incident grows when more trouble arrives within the merge gap; it keeps its id.
  std::vector<Sample> more;
  for (int t = 3601; t <= 3700; ++t) more.push_back(makeSample("b", kT0 + t * 1000, 20, t > 3620 && t <= 3640 ? 10 : 0));
  store->append(more);
  QVERIFY(store->detectIncidents());
  auto again = reader->incidents();
  QVERIFY(again.ok());
  QCOMPARE(again.value.size(), std::size_t(2));
  QCOMPARE(again.value[0].id, first.id);
  QCOMPARE(again.value[1].id, second.id);
  QCOMPARE(again.value[1].endMs, kT0 + 3'640'000);
  QCOMPARE(again.value[1].total429, std::int64_t(500));
}

void TestHistoryPersistence::migratesV1File() {
  const QString path = file("v1.db");
  QFile fixture(HISTORY_FIXTURES "/history_v1.sql");
  QVERIFY(fixture.open(QIODevice::ReadOnly));
  rawExec(path, fixture.readAll().toStdString());

  // The reader reads a v1 file as it is, without migrating or touching it.
  const QByteArray before = fileHash(path);
  {
    auto reader = openReader(path);
    QVERIFY(reader);
    QCOMPARE(reader->schemaVersion(), 1);
    auto rows = reader->requestTable(0, kT0 + 3'600'000);
    QVERIFY2(rows.ok(), rows.error.c_str());
    QCOMPARE(rows.value.size(), std::size_t(1));
    QVERIFY(std::isnan(rows.value[0].p95LatencyMs));  // v1 kept no p95
    auto inc = reader->incidents();
    QVERIFY(inc.ok());
    QVERIFY(inc.value.empty());
  }
  QCOMPARE(fileHash(path), before);

  {
    auto store = openStore(path);
    QVERIFY(store);
    QCOMPARE(store->status().schemaVersion, kCurrentSchema);
    AttemptRecord a;
    a.tsMs = kT0 + 120'000;
    a.group = "interactive";
    a.keyFingerprint = "k:0badf00d";
    a.endpoint = "/v1/chat";
    a.status = 200;
    a.latencyMs = 10;
    store->append(a);
    store->append(std::vector<Sample>{makeSample("interactive", kT0 + 120'000)});
    QVERIFY(store->flush());
    QVERIFY(store->detectIncidents());  // the v2 incidents table exists and works
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  QCOMPARE(reader->schemaVersion(), kCurrentSchema);
  auto samples = reader->rawSamples(0, kT0 + 3'600'000, {"interactive"});
  QVERIFY(samples.ok());
  QCOMPARE(samples.value.size(), std::size_t(3));  // two from v1, one new
  QCOMPARE(samples.value[0].p95Ms, 340.25);
  QCOMPARE(samples.value[0].arrivals, (std::array<int, kTierCount>{0, 0, 0}));  // not recorded before v3
  QVERIFY(std::isnan(samples.value[1].p95Ms));
  auto rows = reader->requestTable(0, kT0 + 3'600'000, true);
  QVERIFY(rows.ok());
  QCOMPARE(rows.value.size(), std::size_t(2));
  QVERIFY(std::isnan(rows.value[0].p95LatencyMs));  // migrated row: unknown, not invented
  QCOMPARE(rows.value[0].requests, std::int64_t(22));
  QCOMPARE(rows.value[1].p95LatencyMs, 10.0);
  auto events = reader->events(0, kT0 + 3'600'000, {}, {EventKind::OperatorAction});
  QVERIFY(events.ok());
  QCOMPARE(events.value.size(), std::size_t(1));
  QCOMPARE(events.value[0].detail["actor"].get<std::string>(), std::string("ops"));
  auto check = reader->integrityCheck();
  QVERIFY(check.ok());
  QCOMPARE(check.value, std::vector<std::string>{"ok"});
}

// The first v2 (d068a72) lacked the 10-s tier, which v2 gained 14 minutes later under the same number: the
// migration failed at step 4 ("no such table: samples_10s") at every start and left the file at version 3.
void TestHistoryPersistence::migratesTheFirstV2File() {
  const QString path = file("v2-first.db");
  QFile fixture(HISTORY_FIXTURES "/history_v1.sql");
  QVERIFY(fixture.open(QIODevice::ReadOnly));
  rawExec(path, fixture.readAll().toStdString());
  rawExec(path, R"sql(BEGIN;
ALTER TABLE requests_1m ADD COLUMN lat_p95_ms REAL;
CREATE TABLE incidents(
  id INTEGER PRIMARY KEY, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL,
  groups TEXT NOT NULL, reasons TEXT NOT NULL, peak_429_per_s REAL NOT NULL, total_429 INTEGER NOT NULL,
  shed INTEGER NOT NULL, operator_actions INTEGER NOT NULL, detail TEXT NOT NULL);
CREATE INDEX incidents_start ON incidents(start_ms);
CREATE INDEX events_kind_ts ON events(kind, ts_ms);
PRAGMA user_version = 2;
COMMIT;)sql");
  {
    auto store = openStore(path);
    QVERIFY(store);
    QCOMPARE(store->status().schemaVersion, kCurrentSchema);
  }
  sqlite3* db = nullptr;
  QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  QCOMPARE(sqlite3_prepare_v2(db, "SELECT sum(n) FROM samples_10s", -1, &st, nullptr), SQLITE_OK);
  QCOMPARE(sqlite3_step(st), SQLITE_ROW);
  const auto tenSecondRows = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  QCOMPARE(tenSecondRows, sqlite3_int64(3));  // the fixture's three samples, in the tier built for them
}

// A file of an older schema held by another process (a tollgate upgrading it: minutes for a week of history) is
// waited for, not given up after the 5 s a write waits: the dashboard, headless runs and serve share the file, and
// the second one to start ran its whole session without history.
void TestHistoryPersistence::waitsForAnotherProcessUpgradingTheFile() {
  const QString path = file("busy-v3.db");
  QFile fixture(HISTORY_FIXTURES "/history_v3.sql");
  QVERIFY(fixture.open(QIODevice::ReadOnly));
  rawExec(path, fixture.readAll().toStdString());
  rawExec(path, "PRAGMA journal_mode = WAL;");
  std::atomic<bool> held{false};
  std::thread other([&] {  // another connection's write transaction, 6 s long
    sqlite3* db = nullptr;
    sqlite3_open(path.toUtf8().constData(), &db);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK) {
      held = true;
      std::this_thread::sleep_for(std::chrono::seconds(6));
      sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
    held = true;
    sqlite3_close(db);
  });
  while (!held) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto t0 = std::chrono::steady_clock::now();
  auto store = openStore(path);
  const double waitedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  other.join();
  QVERIFY2(store, "gave up on the lock");
  QCOMPARE(store->status().schemaVersion, kCurrentSchema);
  QVERIFY2(waitedS > 4.0, qPrintable(QString::number(waitedS)));  // it did wait for the other one's transaction
}

// A v3 file (REAL latencies in ms, absolute reset_at_ms, REAL rollup averages; written by the v3 build)
// migrates to the compact v4 encoding: raw rows and chart buckets read back equal, latencies to 1 us.
void TestHistoryPersistence::migratesV3FileRowsReadBackEqual() {
  const QString path = file("v3.db");
  QFile fixture(HISTORY_FIXTURES "/history_v3.sql");
  QVERIFY(fixture.open(QIODevice::ReadOnly));
  rawExec(path, fixture.readAll().toStdString());
  constexpr EpochMs from = 1'795'999'980'000 - 2 * 86'400'000LL, to = 1'796'000'200'000;
  auto close = [](double a, double b, double tol) {
    return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) <= tol;
  };
  std::vector<Sample> before;
  std::vector<std::vector<SampleSeries>> seriesBefore;
  const std::vector<int> points{1, 7, 25, 2000};
  const std::vector<std::pair<EpochMs, EpochMs>> spans{{from, to}, {1'795'999'980'000, to}, {1'795'999'980'000 + 3'000, 1'795'999'980'000 + 97'000}};
  {
    auto reader = openReader(path);
    QVERIFY(reader);
    QCOMPARE(reader->schemaVersion(), 3);
    auto raw = reader->rawSamples(from, to, {});
    QVERIFY2(raw.ok(), raw.error.c_str());
    before = raw.value;
    for (const auto& [f, t] : spans)
      for (int p : points) {
        auto s = reader->samples(f, t, {}, p);
        QVERIFY2(s.ok(), s.error.c_str());
        seriesBefore.push_back(s.value);
      }
  }
  QCOMPARE(before.size(), std::size_t(300));
  {
    auto store = openStore(path);
    QVERIFY(store);
    QCOMPARE(store->status().schemaVersion, kCurrentSchema);
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  QCOMPARE(reader->schemaVersion(), kCurrentSchema);
  auto raw = reader->rawSamples(from, to, {});
  QVERIFY2(raw.ok(), raw.error.c_str());
  QCOMPARE(raw.value.size(), before.size());
  int nullP95 = 0, zeroReset = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const Sample &a = before[i], &b = raw.value[i];
    QCOMPARE(b.group, a.group);
    QCOMPARE(b.tsMs, a.tsMs);
    QVERIFY(sameDouble(b.reqRemaining, a.reqRemaining));
    QVERIFY(sameDouble(b.reqLimit, a.reqLimit));
    QVERIFY(sameDouble(b.tokRemaining, a.tokRemaining));
    QVERIFY(sameDouble(b.tokLimit, a.tokLimit));
    QCOMPARE(b.resetAtMs, a.resetAtMs);
    QCOMPARE(b.inFlight, a.inFlight);
    QCOMPARE(b.concurrencyLimit, a.concurrencyLimit);
    QCOMPARE(b.queueDepth, a.queueDepth);
    QCOMPARE(b.sends, a.sends);
    QCOMPARE(b.ok, a.ok);
    QCOMPARE(b.r429, a.r429);
    QCOMPARE(b.r5xx, a.r5xx);
    QCOMPARE(b.retries, a.retries);
    QCOMPARE(b.shed, a.shed);
    QCOMPARE(b.arrivals, a.arrivals);
    QCOMPARE(b.breaker, a.breaker);
    QCOMPARE(b.intervalS, a.intervalS);
    QVERIFY2(close(b.p50Ms, a.p50Ms, 0.0005 + 1e-9), qPrintable(QString::number(a.p50Ms) + " " + QString::number(b.p50Ms)));
    QVERIFY(close(b.p95Ms, a.p95Ms, 0.0005 + 1e-9));
    nullP95 += std::isnan(a.p95Ms);
    zeroReset += a.resetAtMs == 0;
  }
  QVERIFY(nullP95 > 0);  // the fixture covers unknowns
  QVERIFY(zeroReset > 0);
  std::size_t k = 0;
  for (const auto& [f, t] : spans)
    for (int p : points) {
      auto s = reader->samples(f, t, {}, p);
      QVERIFY2(s.ok(), s.error.c_str());
      const auto& old = seriesBefore[k++];
      QCOMPARE(s.value.size(), old.size());
      for (std::size_t g = 0; g < old.size(); ++g) {
        QCOMPARE(s.value[g].group, old[g].group);
        QCOMPARE(s.value[g].bucketMs, old[g].bucketMs);
        QCOMPARE(s.value[g].buckets.size(), old[g].buckets.size());
        for (std::size_t i = 0; i < old[g].buckets.size(); ++i) {
          const auto &x = old[g].buckets[i], &y = s.value[g].buckets[i];
          QCOMPARE(y.startMs, x.startMs);
          QCOMPARE(y.firstTsMs, x.firstTsMs);
          QCOMPARE(y.lastTsMs, x.lastTsMs);
          QCOMPARE(y.rows, x.rows);
          QCOMPARE(y.fromRollup, x.fromRollup);
          for (int m = 0; m < kMetricCount; ++m) {
            const double tol = (m == static_cast<int>(Metric::P50Ms) || m == static_cast<int>(Metric::P95Ms)) ? 0.0005 + 1e-9 : 1e-9;
            QVERIFY2(close(y.m[m].min, x.m[m].min, tol) && close(y.m[m].max, x.m[m].max, tol) &&
                         close(y.m[m].avg, x.m[m].avg, std::max(tol, 1e-9 * std::abs(x.m[m].avg))),
                     qPrintable(QString("p=%1 metric %2: %3/%4/%5 vs %6/%7/%8")
                                    .arg(p)
                                    .arg(QString::fromStdString(std::string(metricName(static_cast<Metric>(m)))))
                                    .arg(x.m[m].min).arg(x.m[m].max).arg(x.m[m].avg)
                                    .arg(y.m[m].min).arg(y.m[m].max).arg(y.m[m].avg)));
          }
        }
      }
    }
  auto check = reader->integrityCheck();
  QVERIFY(check.ok());
  QCOMPARE(check.value, std::vector<std::string>{"ok"});
}

// Before an upgrade the file is copied as it was (FILE.schemaN.bak, a schema N file with every row); a disk
// without room for the upgrade refuses it up front, naming what it needs, and leaves the file as it was; with
// room for the upgrade but not the copy, it upgrades without one.
void TestHistoryPersistence::anUpgradeKeepsACopyAndNeedsRoom() {
  QFile fixture(HISTORY_FIXTURES "/history_v3.sql");
  QVERIFY(fixture.open(QIODevice::ReadOnly));
  const std::string v3 = fixture.readAll().toStdString();
  constexpr EpochMs from = 0, to = 1LL << 50;

  const QString path = file("copied.db");
  rawExec(path, v3);
  QVERIFY(QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner));
  const QString stale = path + ".schema3.bak.partial-99999";  // a copy an earlier start did not finish
  {
    QFile f(stale);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(QByteArray(4096, 'x')) == 4096);
  }
  {
    auto store = openStore(path);
    QVERIFY(store);
  }
  const QString backup = path + ".schema3.bak";
  QVERIFY(QFile::exists(backup));
  QVERIFY(!QFile::exists(stale));
  namespace fs = std::filesystem;  // as private as the file it copies
  QVERIFY(fs::status(backup.toStdString()).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  {
    auto reader = openReader(backup);
    QVERIFY(reader);
    QCOMPARE(reader->schemaVersion(), 3);
    auto raw = reader->rawSamples(from, to, {});
    QVERIFY2(raw.ok(), raw.error.c_str());
    QCOMPARE(raw.value.size(), std::size_t(300));
  }
  auto upgraded = openReader(path);
  QVERIFY(upgraded);
  QCOMPARE(upgraded->schemaVersion(), kCurrentSchema);

  const QString tight = file("tight.db");
  rawExec(tight, v3);
  HistoryOptions o = quietOptions();
  const auto size = static_cast<std::uint64_t>(QFileInfo(tight).size());
  o.freeBytes = [size](const std::string&) { return size; };  // a disk with the file's size free
  std::string error;
  QVERIFY(!HistoryStore::open(tight.toStdString(), o, &error));
  QVERIFY2(error.find("needs about") != std::string::npos && error.find("left as it was") != std::string::npos,
           error.c_str());
  {
    auto reader = openReader(tight);  // still schema 3, every row there
    QVERIFY(reader);
    QCOMPARE(reader->schemaVersion(), 3);
    QCOMPARE(reader->rawSamples(from, to, {}).value.size(), std::size_t(300));
  }
  QVERIFY(!QFile::exists(tight + ".schema3.bak"));

  o.freeBytes = [size](const std::string&) { return 5 * size / 2; };  // the upgrade fits, the copy too is more
  QVERIFY(openStore(tight, o));
  QVERIFY(!QFile::exists(tight + ".schema3.bak"));
  QCOMPARE(openReader(tight)->schemaVersion(), kCurrentSchema);

  // A copy that cannot be made (here: a folder where it would go) is no reason to refuse history: it upgrades.
  const QString blocked = file("blocked.db");
  rawExec(blocked, v3);
  const QString in = blocked + ".schema3.bak.partial-" + QString::number(::getpid());
  QVERIFY(QDir().mkpath(in + "/inside"));
  QVERIFY(openStore(blocked));
  QVERIFY(!QFile::exists(blocked + ".schema3.bak"));
  QCOMPARE(openReader(blocked)->schemaVersion(), kCurrentSchema);
}

// What the v4 encoding must not lose: unknown vs zero, negative reset offsets, fractional limits, latency
// to 1 us, huge counts; and rollup sums stay exact.
void TestHistoryPersistence::compactEncodingRoundTrip() {
  const QString path = file("compact.db");
  std::vector<Sample> in;
  for (int i = 0; i < 120; ++i) {
    Sample s = makeSample("g", kT0 - kT0 % 60'000 + i * 1000, 7 + i % 3, i % 2);
    s.p50Ms = i % 10 == 0 ? kUnknown : 0.001 * i + 12.5;
    s.p95Ms = i == 5 ? 0.0 : 3'600'000.123;  // an hour: larger than 3 bytes of us
    s.resetAtMs = i % 3 == 0 ? 0 : s.tsMs + (i % 2 ? -1500 : 59'000);
    s.tokLimit = 1234.75;
    s.tokRemaining = i % 4 == 0 ? kUnknown : 0;
    s.sends = i == 77 ? 2'000'000'000 : s.sends;
    s.intervalS = i == 9 ? 1.25 : 1.0;
    in.push_back(s);
  }
  {
    auto store = openStore(path);
    QVERIFY(store);
    store->append(in);
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  auto out = reader->rawSamples(0, kT0 + 3'600'000, {});
  QVERIFY(out.ok());
  QCOMPARE(out.value.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Sample &a = in[i], &b = out.value[i];
    QCOMPARE(b.resetAtMs, a.resetAtMs);
    QVERIFY(sameDouble(b.tokRemaining, a.tokRemaining));
    QCOMPARE(b.tokLimit, a.tokLimit);
    QCOMPARE(b.sends, a.sends);
    QCOMPARE(b.intervalS, a.intervalS);
    QVERIFY(std::isnan(a.p50Ms) ? std::isnan(b.p50Ms) : std::abs(a.p50Ms - b.p50Ms) < 1e-9);
    QVERIFY(std::abs(a.p95Ms - b.p95Ms) <= 0.0005 + 1e-9);
  }
  // One bucket per minute from the minute tier: exact sums, latency averages over known values.
  auto series = reader->samples(in.front().tsMs, in.front().tsMs + 120'000, {}, 2);
  QVERIFY(series.ok());
  QCOMPARE(series.value.size(), std::size_t(1));
  const auto& buckets = series.value[0].buckets;
  QCOMPARE(buckets.size(), std::size_t(2));
  double sends = 0, p50Sum = 0;
  int p50Known = 0;
  for (int i = 0; i < 60; ++i) {
    sends += in[static_cast<std::size_t>(i)].sends;
    if (!std::isnan(in[static_cast<std::size_t>(i)].p50Ms)) {
      p50Sum += in[static_cast<std::size_t>(i)].p50Ms;
      ++p50Known;
    }
  }
  QVERIFY(std::abs(buckets[0][Metric::Sends].avg * 60 - sends) < 1e-6);
  QCOMPARE(buckets[1][Metric::Sends].max, 2'000'000'000.0);
  QVERIFY(std::abs(buckets[0][Metric::P50Ms].avg - p50Sum / p50Known) <= 0.0005 + 1e-9);
  QCOMPARE(buckets[0][Metric::P95Ms].min, 0.0);
}

QTEST_GUILESS_MAIN(TestHistoryPersistence)
#include "test_history_persistence.moc"
