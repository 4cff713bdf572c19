// HistoryStore facade and intake: round trip, crash safety, faults, refused files, secrets.
// Real SQLite files in a temporary directory; time set by hand (tgtest::kT0).
#include "history_fixture.h"
#include "history_reader.h"
#include "history_store.h"
#include "log.h"
#include "secret.h"

#include <sqlite3.h>

#include <QDateTime>
#include <QFile>
#include <QProcess>
#include <QtTest>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>
#include <unistd.h>

using namespace tg;
using namespace tgtest;

class TestHistoryStore : public TempDirTest {
  Q_OBJECT

 private slots:
  void roundTripSamplesAndEvents();
  void survivesKill9();
  void writersElsewhereAreJudgedByTheirSilence();
  void diskFullIsReportedAndRecovered();
  void refusesWithoutTouching_data();
  void refusesWithoutTouching();
  void readerLeavesFileUnchanged();
  void secretsNeverReachTheFile();
  void twoWritersOfOneFileKeepBoth();
};

// The dashboard and a headless run share the user's history file. The second to open it read the groups
// table before the first added its groups; its own insert of one then failed on the UNIQUE name, and so did
// every batch after it: that process's whole history lost ("41 rows unwritten" at exit).
void TestHistoryStore::twoWritersOfOneFileKeepBoth() {
  const QString path = file("shared.db");
  auto first = openStore(path);
  auto second = openStore(path);
  QVERIFY(first && second);
  first->append(std::vector<Sample>{makeSample("batch", kT0, 10, 0)});
  QVERIFY(first->flush());
  second->append(std::vector<Sample>{makeSample("batch", kT0 + 1000, 20, 0)});
  QVERIFY(second->flush());
  const auto st = second->status();
  QVERIFY2(st.ok, st.lastError.c_str());
  first.reset();
  second.reset();
  auto reader = openReader(path);
  QVERIFY(reader);
  auto out = reader->rawSamples(kT0, kT0 + 10'000, {});
  QVERIFY2(out.ok(), out.error.c_str());
  QCOMPARE(out.value.size(), std::size_t(2));
  auto groups = reader->groups();
  QCOMPARE(groups.value, (std::vector<std::string>{"batch"}));
}

void TestHistoryStore::roundTripSamplesAndEvents() {
  const QString path = file("roundtrip.db");
  std::vector<Sample> in;
  for (int i = 0; i < 50; ++i) {
    Sample s = makeSample(i % 2 ? "batch" : "interactive", kT0 + (i / 2) * 1000, 10 + i, i % 3);
    s.queueDepth = {i, 2 * i, 3 * i};
    s.arrivals = {i + 1, 0, 7};
    s.breaker = i % 5 == 0 ? BreakerState::Open : BreakerState::Closed;
    s.resetAtMs = kT0 + 60'000;
    s.tokLimit = 90'000.5;
    if (i % 4 == 0) {  // unknowns: stored as NULL, read back as NaN
      s.reqRemaining = kUnknown;
      s.p95Ms = kUnknown;
      s.tokRemaining = kUnknown;
    }
    in.push_back(s);
  }
  Event op;
  op.tsMs = kT0 + 5'000;
  op.kind = EventKind::OperatorAction;
  op.group = "interactive";
  op.message = "concurrency 8 -> 4";
  op.detail = {{"action", "set_concurrency"}, {"target", "interactive"}, {"before", 8}, {"after", 4},
               {"actor", "alice"}, {"instance", "host-a"}};
  Event burst;
  burst.tsMs = kT0 + 6'000;
  burst.kind = EventKind::Burst429Start;
  burst.severity = Severity::Warn;
  burst.group = "batch";
  burst.message = "429 burst";
  burst.detail = {{"peak_per_s", 12.5}};
  {
    auto store = openStore(path);
    QVERIFY(store);
    store->append(in);
    store->append(op);
    store->append(burst);
    QVERIFY(store->flush());
    const auto st = store->status();
    QVERIFY2(st.ok, st.lastError.c_str());
    QCOMPARE(st.rowsWritten, std::uint64_t(52));
    QCOMPARE(st.rowsPending, std::uint64_t(0));
    QVERIFY(st.fileBytes > 0);
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  QCOMPARE(reader->schemaVersion(), kCurrentSchema);
  auto groups = reader->groups();
  QVERIFY(groups.ok());
  QCOMPARE(groups.value, (std::vector<std::string>{"batch", "interactive"}));
  auto out = reader->rawSamples(kT0, kT0 + 3'600'000, {});
  QVERIFY2(out.ok(), out.error.c_str());
  QCOMPARE(out.value.size(), in.size());
  for (const Sample& a : in) {
    auto it = std::find_if(out.value.begin(), out.value.end(),
                           [&](const Sample& b) { return b.group == a.group && b.tsMs == a.tsMs; });
    QVERIFY(it != out.value.end());
    const Sample& b = *it;
    QVERIFY(sameDouble(a.reqRemaining, b.reqRemaining));
    QVERIFY(sameDouble(a.p95Ms, b.p95Ms));
    QVERIFY(sameDouble(a.tokRemaining, b.tokRemaining));
    QCOMPARE(b.tokLimit, a.tokLimit);
    QCOMPARE(b.queueDepth, a.queueDepth);
    QCOMPARE(b.arrivals, a.arrivals);
    QCOMPARE(b.sends, a.sends);
    QCOMPARE(b.r429, a.r429);
    QCOMPARE(b.breaker, a.breaker);
    QCOMPARE(b.resetAtMs, a.resetAtMs);
    QCOMPARE(b.intervalS, a.intervalS);
  }
  auto events = reader->events(kT0, kT0 + 10'000, {}, {});
  QVERIFY(events.ok());
  QCOMPARE(events.value.size(), std::size_t(2));
  QCOMPARE(events.value[0].kind, EventKind::OperatorAction);
  QCOMPARE(events.value[0].detail, op.detail);
  QCOMPARE(events.value[0].message, op.message);
  QCOMPARE(events.value[1].severity, Severity::Warn);
  QCOMPARE(events.value[1].detail["peak_per_s"].get<double>(), 12.5);
  auto onlyOps = reader->events(kT0, kT0 + 10'000, {"batch"}, {EventKind::OperatorAction});
  QVERIFY(onlyOps.ok());
  QCOMPARE(onlyOps.value.size(), std::size_t(0));  // operator action was on "interactive"
  auto range = reader->timeRange();
  QVERIFY(range.ok());
  QVERIFY(!range.value.empty);
  QCOMPARE(range.value.fromMs, kT0);
  QCOMPARE(range.value.toMs, kT0 + 24'000);
}

void TestHistoryStore::survivesKill9() {
  const QString path = file("crash.db");
  QProcess child;
  child.start(HISTORY_CRASH_WRITER, {path});
  QVERIFY(child.waitForStarted(5000));
  QByteArray output;
  int flushes = 0;
  QElapsedTimer timer;
  timer.start();
  while (flushes < 8 && timer.elapsed() < 15'000) {
    child.waitForReadyRead(200);
    output += child.readAllStandardOutput();
    flushes = static_cast<int>(output.count("flushed"));
  }
  QVERIFY2(flushes >= 8, child.readAllStandardError().constData());
  const auto stopEvents = [&] {
    auto reader = openReader(path);
    auto events = reader ? reader->events(0, 1LL << 50, {}, {EventKind::EngineStop}) : HistoryResult<std::vector<Event>>{};
    return events.value;
  };
  {  // A writer opened beside one still writing (the dashboard beside a headless run) says nothing of it.
    const auto before = QDateTime::currentMSecsSinceEpoch();
    auto beside = openStore(path);
    QVERIFY(beside);
    QVERIFY(stopEvents().empty());
    QVERIFY(QDateTime::currentMSecsSinceEpoch() - before < 10'000);
  }
  QVERIFY(stopEvents().empty());  // nor does that one's clean close
  const qint64 pid = child.processId();
  child.kill();  // SIGKILL, mid-write
  QVERIFY(child.waitForFinished(5000));
  output += child.readAllStandardOutput();
  const auto lines = output.trimmed().split('\n');
  qint64 confirmed = 0;
  for (const auto& l : lines)
    if (l.startsWith("flushed ")) confirmed = std::max(confirmed, l.mid(8).toLongLong());
  QVERIFY(confirmed > 0);

  {
    auto reader = openReader(path);
    QVERIFY(reader);
    auto check = reader->integrityCheck();
    QVERIFY2(check.ok(), check.error.c_str());
    QCOMPARE(check.value, std::vector<std::string>{"ok"});
    auto rows = reader->rawSamples(0, 1LL << 40, {"g"});
    QVERIFY(rows.ok());
    const auto n = static_cast<qint64>(rows.value.size());
    // Everything confirmed is there, and what is there is a gap-free prefix (whole transactions only).
    QVERIFY2(n >= confirmed, qPrintable(QString("%1 rows, %2 confirmed").arg(n).arg(confirmed)));
    QCOMPARE(rows.value.back().tsMs, n);
    // At most the batches appended after the last confirmed flush (10 x 500) plus one flush are missing.
    qInfo("kill -9: %lld rows confirmed before the kill, %lld rows in the file", confirmed, n);
  }
  const auto killedAt = QDateTime::currentMSecsSinceEpoch();
  {
    auto store = openStore(path);  // and the writer carries on
    QVERIFY(store);
    store->append(std::vector<Sample>{makeSample("g", 1LL << 39)});
    QVERIFY(store->flush());
  }
  // ... saying that the one before it ended without stopping, at its last write, once.
  const std::vector<Event> stops = stopEvents();
  QCOMPARE(stops.size(), std::size_t(1));
  const Event& stop = stops.front();
  QCOMPARE(stop.severity, Severity::Warn);
  QVERIFY2(stop.message.find("pid " + std::to_string(pid) + ") ended without stopping") !=
               std::string::npos, stop.message.c_str());
  QVERIFY(stop.detail.value("unclean", false));
  QCOMPARE(stop.detail.value("pid", std::int64_t(0)), std::int64_t(pid));
  QVERIFY2(stop.tsMs <= killedAt && stop.tsMs > killedAt - 5'000, qPrintable(QString::number(killedAt - stop.tsMs)));
  QVERIFY(openStore(path));
  QCOMPARE(stopEvents().size(), std::size_t(1));
}

// Rows of writers this process cannot look up by pid: another pid namespace (a container restarted beside this
// one) counts as ended once its row stays unchanged for the silence this writer watched it for (not by comparing
// two wall clocks); one that keeps writing does not; an earlier boot's at once; and in this namespace a pid alive
// now but started at another time is another process's.
namespace {
// The pids of the writers the file says ended without stopping.
std::set<std::int64_t> stopPids(const QString& path) {
  std::set<std::int64_t> pids;
  auto reader = openReader(path);
  auto stops = reader ? reader->events(0, 1LL << 50, {}, {EventKind::EngineStop}) : HistoryResult<std::vector<Event>>{};
  for (const auto& e : stops.value) pids.insert(e.detail.value("pid", std::int64_t(0)));
  return pids;
}
}  // namespace

void TestHistoryStore::writersElsewhereAreJudgedByTheirSilence() {
  const QString path = file("writers.db");
  QFile bootFile("/proc/sys/kernel/random/boot_id");
  if (!bootFile.open(QIODevice::ReadOnly)) QSKIP("no /proc here: writers are not judged at all");
  const std::string boot = bootFile.readAll().trimmed().toStdString();
  char link[64] = {};
  if (::readlink("/proc/self/ns/pid", link, sizeof link - 1) <= 0) QSKIP("no pid namespace link here");
  const std::string nsLink(link);
  const std::string ownNs = nsLink.substr(nsLink.find('[') + 1, nsLink.find(']') - nsLink.find('[') - 1);
  QVERIFY(openStore(path));  // creates the file
  sqlite3* db = nullptr;
  QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  // A writer's row: its last write, and (newer rows) the same moment on the machine's monotonic clock.
  const auto monoMs = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
  };
  const auto put = [&](const std::string& key, EpochMs value, std::int64_t mono = -1) {
    const std::string text = std::to_string(value) + (mono >= 0 ? " " + std::to_string(mono) : std::string());
    const std::string sql = "INSERT OR REPLACE INTO meta(key, value) VALUES('" + key + "', '" + text + "')";
    return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  };
  const std::string writing = "writer/" + boot + "/4026500002/8/12345";
  QVERIFY(put("writer/" + boot + "/4026500001/7/12345", kT0 + 1000));  // silent from now on: ended
  QVERIFY(put(writing, kT0));                                           // keeps writing: alive
  QVERIFY(put("writer/earlier-boot/4026500003/9/12345", kT0));           // another boot: ended
  QVERIFY(put("writer/" + boot + "/" + ownNs + "/" + std::to_string(::getpid()) + "/1", kT0));  // pid reused
  // Rows that carry the machine's monotonic clock are judged without watching: one last written a minute ago at
  // once, one that keeps writing never.
  const std::string writingMono = "writer/" + boot + "/4026500005/12/12345";
  QVERIFY(put("writer/" + boot + "/4026500004/11/12345", kT0, monoMs() - 60'000));
  QVERIFY(put(writingMono, kT0, monoMs()));
  {
    HistoryOptions o = quietOptions();
    o.writerSilenceMs = 1000;  // 20 times the other writer's pace below: a loaded machine stays well inside it
    o.writerCheckIntervalMs = 50;
    auto store = openStore(path, o);
    QVERIFY(store);
    QCOMPARE(stopPids(path), (std::set<std::int64_t>{9, 11, ::getpid()}));  // at open; 7 needs watching
    for (int i = 1; i <= 50; ++i) {  // 2.5 s of the other writer's writes, one every 50 ms
      QTest::qWait(50);
      QVERIFY(put(writing, kT0 + i));
      QVERIFY(put(writingMono, kT0 + i, monoMs()));
    }
  }
  sqlite3_close(db);
  QCOMPARE(stopPids(path), (std::set<std::int64_t>{7, 9, 11, ::getpid()}));
}

void TestHistoryStore::diskFullIsReportedAndRecovered() {
  const QString path = file("full.db");
  HistoryOptions o = quietOptions();
  o.maxFileBytes = 160 * 1024;  // PRAGMA max_page_count: 40 pages
  o.maxPendingSamples = 2000;
  std::FILE* log = std::tmpfile();
  Log::setSink(log);
  auto store = openStore(path, o);
  QVERIFY(store);
  std::vector<Sample> early;
  for (int i = 0; i < 100; ++i) early.push_back(makeSample("g", kT0 + i * 1000));
  store->append(early);
  QVERIFY(store->flush());

  // Fill the file; the engine side keeps appending and must never wait for the writer.
  std::int64_t worstAppendUs = 0;
  bool failed = false;
  for (int batch = 0; batch < 100 && !failed; ++batch) {
    std::vector<Sample> rows;
    for (int i = 0; i < 100; ++i) rows.push_back(makeSample("g", kT0 + 100'000 + (batch * 100 + i) * 1000));
    const auto t0 = std::chrono::steady_clock::now();
    store->append(std::move(rows));
    worstAppendUs = std::max<std::int64_t>(
        worstAppendUs, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    if (batch % 10 == 9) failed = !store->flush();
  }
  QVERIFY(failed);
  // Keep appending while it is failing.
  for (int batch = 0; batch < 30; ++batch) {
    std::vector<Sample> rows;
    for (int i = 0; i < 100; ++i) rows.push_back(makeSample("g", kT0 + 20'000'000 + (batch * 100 + i) * 1000));
    const auto t0 = std::chrono::steady_clock::now();
    store->append(std::move(rows));
    worstAppendUs = std::max<std::int64_t>(
        worstAppendUs, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  QVERIFY(!store->flush());
  auto st = store->status();
  QVERIFY(!st.ok);
  QVERIFY2(st.lastError.find("full") != std::string::npos, st.lastError.c_str());
  QVERIFY(st.rowsDropped > 0);
  QVERIFY(st.rowsPending > 0 && st.rowsPending <= o.maxPendingSamples);
  QVERIFY2(worstAppendUs < 20'000, qPrintable(QString("append took %1 us").arg(worstAppendUs)));
  qInfo("disk full: '%s', %llu dropped, %llu pending, worst append %lld us", st.lastError.c_str(),
        static_cast<unsigned long long>(st.rowsDropped), static_cast<unsigned long long>(st.rowsPending),
        static_cast<long long>(worstAppendUs));

  store->setMaxFileBytes(0);  // room again
  QVERIFY(store->flush());
  st = store->status();
  QVERIFY2(st.ok, st.lastError.c_str());
  QCOMPARE(st.rowsPending, std::uint64_t(0));
  // Said when writing stopped (once, not at every failed flush) and when it resumed; it was said only at exit.
  Log::setSink(stderr);
  std::rewind(log);
  std::string said;
  for (int c; (c = std::fgetc(log)) != EOF;) said += static_cast<char>(c);
  std::fclose(log);
  QCOMPARE(QString::fromStdString(said).count("retried at each flush"), 1);
  QVERIFY2(said.find("full") != std::string::npos, said.c_str());
  QCOMPARE(QString::fromStdString(said).count("writing again"), 1);

  auto reader = openReader(path);
  QVERIFY(reader);
  auto gaps = reader->events(0, 1LL << 50, {}, {EventKind::HistoryGap});
  QVERIFY(gaps.ok());
  QCOMPARE(gaps.value.size(), std::size_t(1));
  const auto& gap = gaps.value[0].detail;
  QVERIFY(gap["from_ms"].get<EpochMs>() >= kT0 + 100'000);
  QVERIFY(gap["to_ms"].get<EpochMs>() >= gap["from_ms"].get<EpochMs>());
  QCOMPARE(gap["rows"].get<std::uint64_t>(), st.rowsDropped);
  auto rows = reader->rawSamples(kT0, kT0 + 100'000, {"g"});
  QVERIFY(rows.ok());
  QCOMPARE(rows.value.size(), std::size_t(100));  // earlier rows intact
  auto late = reader->rawSamples(kT0 + 20'000'000, 1LL << 50, {"g"});
  QVERIFY(late.ok());
  // The buffer kept the newest rows (its bound), and they were written once there was room.
  QCOMPARE(late.value.size(), o.maxPendingSamples);
  QCOMPARE(late.value.back().tsMs, kT0 + 20'000'000 + 2999 * 1000);
  auto check = reader->integrityCheck();
  QVERIFY(check.ok());
  QCOMPARE(check.value, std::vector<std::string>{"ok"});
}

void TestHistoryStore::refusesWithoutTouching_data() {
  QTest::addColumn<QString>("kind");
  QTest::addColumn<QString>("expected");
  QTest::newRow("newer schema") << "newer" << "newer than this build";
  QTest::newRow("corrupt") << "corrupt" << "corrupt";
  QTest::newRow("not sqlite") << "text" << "not a SQLite database";
  QTest::newRow("other application") << "foreign" << "not a Tollgate history file";
}

void TestHistoryStore::refusesWithoutTouching() {
  QFETCH(QString, kind);
  QFETCH(QString, expected);
  const QString path = dir_.filePath("refuse-" + kind + ".db");
  if (kind == "text") {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("ts,group\n1,a\nthis is a CSV export, not a database\n");
  } else if (kind == "foreign") {
    rawExec(path, "CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES('x');");
  } else {
    {
      auto store = openStore(path);
      QVERIFY(store);
      std::vector<Sample> rows;
      for (int i = 0; i < 5000; ++i) rows.push_back(makeSample("g", kT0 + i * 1000));
      store->append(rows);
      QVERIFY(store->flush());
    }
    if (kind == "newer") {
      rawExec(path, "PRAGMA user_version = 99;");
    } else {
      QFile f(path);
      QVERIFY(f.open(QIODevice::ReadWrite));
      QVERIFY(f.size() > 16 * 4096);
      QVERIFY(f.seek(4 * 4096));
      f.write(QByteArray(8 * 4096, '\x5a'));  // pages 5..12: b-tree pages turned to garbage
    }
  }
  QFile::remove(path + "-wal");
  QFile::remove(path + "-shm");
  const QByteArray before = fileHash(path);
  QVERIFY(!before.isEmpty());

  std::string error;
  auto store = HistoryStore::open(path.toStdString(), quietOptions(), &error);
  QVERIFY(!store);
  QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
  QVERIFY2(QString::fromStdString(error).contains(path), error.c_str());  // names the file
  HistoryReaderOptions ro;
  ro.quickCheck = true;
  auto reader = HistoryReader::open(path.toStdString(), ro, &error);
  QVERIFY(!reader);
  QCOMPARE(fileHash(path), before);
  QVERIFY(!QFile::exists(path + "-wal") || QFileInfo(path + "-wal").size() == 0);
}

void TestHistoryStore::readerLeavesFileUnchanged() {
  const QString path = file("readonly.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    std::vector<Sample> rows;
    for (int i = 0; i < 1000; ++i) rows.push_back(makeSample("g", kT0 + i * 1000));
    store->append(rows);
    QVERIFY(store->detectIncidents());
  }
  QVERIFY(!QFile::exists(path + "-wal"));  // the writer checkpointed on close
  const QByteArray before = fileHash(path);
  const QDateTime mtime = QFileInfo(path).lastModified();
  for (bool strict : {true, false}) {
    auto reader = openReader(path, strict);
    QVERIFY(reader);
    QVERIFY(reader->samples(kT0, kT0 + 1'000'000, {}, 100).ok());
    QVERIFY(reader->rawSamples(kT0, kT0 + 1'000'000, {}).ok());
    QVERIFY(reader->events(kT0, kT0 + 1'000'000, {}, {}).ok());
    QVERIFY(reader->requestTable(kT0, kT0 + 1'000'000).ok());
    QVERIFY(reader->incidents().ok());
    QVERIFY(reader->integrityCheck().ok());
    if (strict) {  // immutable: nothing at all next to the file
      QVERIFY(!QFile::exists(path + "-wal"));
      QVERIFY(!QFile::exists(path + "-shm"));
    }
    reader.reset();
    QCOMPARE(fileHash(path), before);
    QCOMPARE(QFileInfo(path).lastModified(), mtime);
  }
  // A read-only file on disk: reading works, writing is refused with a clear message.
  QFile::remove(path + "-wal");
  QFile::remove(path + "-shm");
  QVERIFY(QFile::setPermissions(path, QFile::ReadOwner));
  if (QFileInfo(path).isWritable()) QSKIP("running as root: permissions are not enforced");
  auto strictReader = openReader(path, true);
  QVERIFY(strictReader);
  QVERIFY(strictReader->rawSamples(kT0, kT0 + 1'000'000, {}).ok());
  std::string error;
  QVERIFY(!HistoryStore::open(path.toStdString(), quietOptions(), &error));
  QVERIFY2(QString::fromStdString(error).contains("read-only") || QString::fromStdString(error).contains("readonly"),
           error.c_str());
  QCOMPARE(fileHash(path), before);
}

void TestHistoryStore::secretsNeverReachTheFile() {
  const std::string secret = "sk-live-TOLLGATE-TEST-4f9b2c7d1e";
  SecretRegistry::add(secret);
  const QString path = file("secrets.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    AttemptRecord good;
    good.tsMs = kT0;
    good.group = "g";
    good.keyFingerprint = keyFingerprint(secret);
    good.endpoint = "/v1/chat";
    good.status = 200;
    store->append(good);
    AttemptRecord careless = good;  // a caller that passed the key itself
    careless.keyFingerprint = secret;
    careless.endpoint = "/v1/chat/" + secret;
    store->append(careless);
    Event e;
    e.tsMs = kT0;
    e.kind = EventKind::RequestFailed;
    e.group = "g";
    e.message = "401 for key " + secret;
    e.detail = {{"header", "Authorization: Bearer " + secret}};
    store->append(e);
    QVERIFY(store->flush());
  }
  // No text value in any table holds the secret...
  sqlite3* db = nullptr;
  QCOMPARE(sqlite3_open_v2(path.toStdString().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::vector<std::string> tables;
  {
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table'", -1, &st, nullptr), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    QCOMPARE(sqlite3_finalize(st), SQLITE_OK);
  }
  QVERIFY(tables.size() >= 7);
  int fingerprints = 0;
  for (const auto& t : tables) {
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(db, ("SELECT * FROM " + t).c_str(), -1, &st, nullptr), SQLITE_OK);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        if (sqlite3_column_type(st, c) != SQLITE_TEXT) continue;
        const std::string v(reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
        QVERIFY2(v.find(secret) == std::string::npos, (t + ": " + v).c_str());
        if (v.find(keyFingerprint(secret)) != std::string::npos) ++fingerprints;
      }
    }
    QCOMPARE(rc, SQLITE_DONE);
    QCOMPARE(sqlite3_finalize(st), SQLITE_OK);
  }
  QCOMPARE(sqlite3_close(db), SQLITE_OK);
  QVERIFY(fingerprints >= 3);  // the key is still identifiable by its fingerprint
  // ...and neither do the raw bytes (free pages, WAL).
  for (const QString& f : {path, path + "-wal"}) {
    QFile in(f);
    if (!in.open(QIODevice::ReadOnly)) continue;
    QVERIFY(!in.readAll().contains(QByteArray::fromStdString(secret)));
  }
}

QTEST_GUILESS_MAIN(TestHistoryStore)
#include "test_history_store.moc"
