// Numbers and paths from the command line that used to reach undefined behaviour or send the key elsewhere:
// `probe --path` joined after the base URL's authority, `probe --step-s 1e15` and `--screenshot-after 1e7`
// converted out of range, `replay --to 1e15` and `--pad 1e15` asking for a billion-second scenario. Each is now
// a usage or replay error naming the argument or the limit; nothing reaches a second loopback server. Also
// the dashboard's `--pause-tier TIER@S`: checked like them, and acting as the operator when it fires.
#include "cli_process.h"
#include "history_store.h"
#include "raw_http_server.h"

#include <sqlite3.h>

#include <QTemporaryDir>
#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QFileInfo>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <csignal>
#include <fstream>

using namespace tgtest;

namespace {
constexpr int kExitUsage = 2;
constexpr int kExitFailed = 1;
constexpr tg::EpochMs kT0 = 1'796'000'000'000;
// The probe's key comes from this variable, which the child inherits.
constexpr const char* kKeyEnv = "TOLLGATE_TEST_PROBE_KEY";
constexpr const char* kSecret = "sk-cli-limits-secret-42";

std::string probeConfig(const std::string& baseUrl, const std::string& prefix = "Bearer ") {
  const nlohmann::json j{
      {"groups", {{{"name", "g"}, {"base_url", baseUrl}, {"keys", {{{"name", "k"}, {"env", kKeyEnv}, {"prefix", prefix}}}}}}}};
  return j.dump();
}

// A history store on `path` with five seconds of samples for group "g", flushed and still open.
std::unique_ptr<tg::HistoryStore> storeWithSamples(const std::string& path) {
  std::string err;
  tg::HistoryOptions o;
  o.incidentIntervalMs = 3'600'000;
  o.maintenanceIntervalMs = 3'600'000;
  o.now = [] { return kT0; };
  auto store = tg::HistoryStore::open(path, o, &err);
  if (!store) qFatal("history: %s", err.c_str());
  std::vector<tg::Sample> rows;
  for (int i = 0; i < 5; ++i) {
    tg::Sample s;
    s.tsMs = kT0 + 1000 * i;
    s.group = "g";
    s.sends = s.ok = 4;
    s.arrivals = {4, 0, 0};
    rows.push_back(s);
  }
  store->append(rows);
  if (!store->flush()) qFatal("history flush failed");
  return store;
}

// A history file with a few seconds of samples for group "g" and one incident over them.
std::string historyFile(const QTemporaryDir& dir) {
  const std::string path = dir.filePath("h.db").toStdString();
  storeWithSamples(path).reset();
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) qFatal("sqlite3_open failed");
  const std::string sql = "INSERT INTO incidents(id, start_ms, end_ms, groups, reasons, peak_429_per_s, total_429, shed, "
                          "operator_actions, detail) VALUES(1, " + std::to_string(kT0) + ", " + std::to_string(kT0 + 4000) +
                          ", '[\"g\"]', '[]', 0, 0, 0, 0, '{}')";
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  if (rc != SQLITE_OK) qFatal("inserting the incident failed");
  return path;
}
}  // namespace

class TestCliLimits : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY2(!bin().isEmpty(), "TOLLGATE_BIN is not set");
    qputenv(kKeyEnv, kSecret);
  }

  void probePathCannotLeaveTheBaseUrl_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("userinfo") << "@127.0.0.1:%1/x";
    QTest::newRow("port") << ":%1/x";
    QTest::newRow("relative") << "x";
  }
  void probePathCannotLeaveTheBaseUrl() {
    QFETCH(QString, path);
    RawHttpServer home, other;
    QTemporaryDir dir;
    const QString cfg = dir.filePath("c.json");
    writeFile(cfg, probeConfig(home.url()));
    QByteArray err;
    QCOMPARE(runTollgate({"probe", "--config", cfg, "--group", "g", "--rates", "5", "--step-s", "0.2", "--path",
                          path.arg(other.port())},
                         nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("--path"), err.constData());
    QCOMPARE(other.count(), 0);
    QCOMPARE(home.count(), 0);
    QVERIFY(!err.contains(kSecret));
  }

  void probeRefusesAKeyHeaderThatIsNotOneLine() {
    RawHttpServer home;
    QTemporaryDir dir;
    const QString cfg = dir.filePath("c.json");
    writeFile(cfg, probeConfig(home.url(), "Bearer \r\nX-Smuggled: 1\r\nX: "));
    QByteArray err;
    QCOMPARE(runTollgate({"probe", "--config", cfg, "--group", "g", "--rates", "5", "--step-s", "0.2"}, nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("key \"k\""), err.constData());
    QVERIFY2(!err.contains(kSecret), err.constData());  // the secret is never in the message
    QCOMPARE(home.count(), 0);
  }

  void probeStepIsCapped() {
    RawHttpServer home;
    QTemporaryDir dir;
    const QString cfg = dir.filePath("c.json");
    writeFile(cfg, probeConfig(home.url()));
    QByteArray err;
    QCOMPARE(runTollgate({"probe", "--config", cfg, "--group", "g", "--rates", "5", "--step-s", "1e15"}, nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("--step-s"), err.constData());
    QCOMPARE(home.count(), 0);
  }

  void screenshotDelayIsCapped() {
    QTemporaryDir dir;
    QByteArray err;
    QCOMPARE(runTollgate({"--history", "off", "--screenshot", dir.filePath("s.png"), "--screenshot-after", "1e7"},
                         nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("--screenshot-after"), err.constData());
    QVERIFY(!QFile::exists(dir.filePath("s.png")));
  }

  // --pause-tier TIER@S: a tier and seconds within the screenshot's cap, else a usage error naming it.
  void pauseTierIsCheckedBeforeAnyWindow_data() {
    QTest::addColumn<QString>("value");
    QTest::newRow("no seconds") << "P2";
    QTest::newRow("no tier") << "@100";
    QTest::newRow("unknown tier") << "P5@10";
    QTest::newRow("not a number") << "P2@soon";
    QTest::newRow("negative") << "P2@-1";
    QTest::newRow("beyond a day") << "P2@1e7";
  }

  void pauseTierIsCheckedBeforeAnyWindow() {
    QFETCH(QString, value);
    QTemporaryDir dir;
    QByteArray err;
    QCOMPARE(runTollgate({"--history", "off", "--pause-tier", value, "--screenshot", dir.filePath("s.png")}, nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("--pause-tier") && err.contains("P2@100"), err.constData());
    QVERIFY(!QFile::exists(dir.filePath("s.png")));
  }

  void pauseTierNeedsALiveRun() {
    QTemporaryDir dir;
    QByteArray err;
    QCOMPARE(runTollgate({"--replay", QString::fromStdString(historyFile(dir)), "--pause-tier", "P2@1"}, nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("--pause-tier") && err.contains("replay"), err.constData());
  }

  // The demo's dashboard with --pause-tier P2@1: one second in, P2 is paused on all groups as the operator,
  // audited in the history like a click in the Controls menu.
  void pauseTierActsAsTheOperator() {
    QTemporaryDir dir;
    const QString db = dir.filePath("h.db");
    QByteArray err;
    QCOMPARE(runTollgate({"--history", db, "--pause-tier", "P2@1", "--screenshot", dir.filePath("s.png"),
                          "--screenshot-after", "4"},
                         nullptr, &err),
             0);
    QVERIFY2(QFile::exists(dir.filePath("s.png")), err.constData());
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(h, "SELECT detail FROM events WHERE kind = 'operator'", -1, &st, nullptr), SQLITE_OK);
    std::vector<nlohmann::json> actions;
    while (sqlite3_step(st) == SQLITE_ROW)
      actions.push_back(nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))));
    sqlite3_finalize(st);
    sqlite3_close(h);
    QCOMPARE(actions.size(), std::size_t(1));
    QCOMPARE(actions[0].value("action", ""), std::string("pause_tier"));
    QCOMPARE(actions[0].value("target", ""), std::string("*/P2"));
    QCOMPARE(actions[0].value("after", false), true);
  }

  // An override naming a group the recording does not hold is a configuration error (exit 2) naming the file,
  // found before the re-drive; it came after "re-driving 98 s...", as "(overrides): ...", exit 1.
  void replayOverrideOfAnUnknownGroupNamesTheFile() {
    QTemporaryDir dir;
    const std::string db = historyFile(dir);
    const QString override = dir.filePath("o.json");
    std::ofstream(override.toStdString()) << R"({"groups": {"nope": {"concurrency": 2}}})";
    QByteArray err;
    QCOMPARE(runTollgate({"replay", "--db", QString::fromStdString(db), "--incident", "1", "--override", override},
                         nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains((override + ": /groups/nope: expected a group of the recording (g)").toUtf8()),
             err.constData());
    QVERIFY2(!err.contains("re-driving"), err.constData());
  }

  // A history file that opens but is damaged inside (the samples table's root page overwritten): the window
  // shows what can be read and says what could not, where it showed an empty range that looked like calm; the
  // history commands name the file.
  void aDamagedHistoryFileIsSaidToBeDamaged() {
    QTemporaryDir dir;
    const std::string db = historyFile(dir);
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(h, "SELECT rootpage FROM sqlite_master WHERE name = 'samples'", -1, &st, nullptr),
             SQLITE_OK);
    QCOMPARE(sqlite3_step(st), SQLITE_ROW);
    const int root = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    QCOMPARE(sqlite3_prepare_v2(h, "PRAGMA page_size", -1, &st, nullptr), SQLITE_OK);
    QCOMPARE(sqlite3_step(st), SQLITE_ROW);
    const int pageSize = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    QVERIFY(root > 1 && pageSize > 0);
    {
      std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(root - 1) * pageSize);
      const std::string garbage(static_cast<std::size_t>(pageSize), '\x5a');
      f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    QByteArray err;
    QCOMPARE(runTollgate({"--replay", QString::fromStdString(db), "--screenshot", dir.filePath("x.png"),
                          "--screenshot-after", "0.5"},
                         nullptr, &err),
             0);
    QVERIFY2(err.contains((db + ": not all of it could be read: ").c_str()), err.constData());
    QCOMPARE(runTollgate({"history", "check", "--db", QString::fromStdString(db)}, nullptr, &err), 1);
    QVERIFY2(err.contains(("history: " + db + ": ").c_str()), err.constData());
    // An export that fails part-way leaves the file it would have replaced as it was (truncated at the open, a
    // 12 KB export was cut to 228 bytes), and nothing beside it.
    const QString keep = dir.filePath("keep.csv");
    writeFile(keep, "the last good export\n");
    QCOMPARE(runTollgate({"history", "export", "--db", QString::fromStdString(db), "--from", "0", "--to", "now",
                          "--format", "csv", "--out", keep},
                         nullptr, &err),
             1);
    QFile kept(keep);
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QCOMPARE(kept.readAll(), QByteArray("the last good export\n"));
    QCOMPARE(QDir(dir.path()).entryList({"keep.csv.partial*"}).size(), 0);
  }

  // A headless run whose history file is refused (here: a newer schema) runs on, and its report says it was not
  // recorded and why: one log line among the run's was all there was, and the report looked the same either way.
  void aRefusedHistoryFileIsInTheRunReport() {
    QTemporaryDir dir;
    const QString db = dir.filePath("newer.db"), report = dir.filePath("report.json");
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open(db.toUtf8().constData(), &h), SQLITE_OK);
    QCOMPARE(sqlite3_exec(h, "PRAGMA application_id = 1413957715; PRAGMA user_version = 99; CREATE TABLE t(x);",
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(h);
    QByteArray err;
    QCOMPARE(runTollgate({"run", "--headless", "--quiet", "--duration", "1", "--history", db, "--report", report},
                         nullptr, &err),
             0);
    auto readReport = [&] {
      QFile f(report);
      return f.open(QIODevice::ReadOnly) ? nlohmann::json::parse(f.readAll().toStdString(), nullptr, false)
                                         : nlohmann::json();
    };
    const auto j = readReport();
    QVERIFY2(j.contains("history"), j.dump().c_str());
    QCOMPARE(j["history"]["path"].get<std::string>(), db.toStdString());
    QVERIFY(!j["history"]["recording"].get<bool>());
    QVERIFY2(j["history"]["error"].get<std::string>().find("schema version 99 is newer") != std::string::npos,
             j.dump().c_str());
    // Recorded: says so, with no error.
    const QString good = dir.filePath("good.db");
    QCOMPARE(runTollgate({"run", "--headless", "--quiet", "--duration", "1", "--history", good, "--report", report},
                         nullptr, &err),
             0);
    const auto ok = readReport();
    QVERIFY2(ok["history"]["recording"].get<bool>() && !ok["history"].contains("error"), ok.dump().c_str());
  }

  // Ctrl-C (or a TERM, a HUP) part-way through an export left its partial file beside it for good; now the file
  // it would have replaced stays as it was and nothing is left beside it, and the process still ends by the signal.
  void anExportInterruptedLeavesNoPartialFile() {
    QTemporaryDir dir;
    const std::string db = historyFile(dir);
    {
      // 600,000 samples: an export long enough to be interrupted part-way (about a second here).
      sqlite3* h = nullptr;
      QCOMPARE(sqlite3_open(db.c_str(), &h), SQLITE_OK);
      const std::string sql =
          "WITH RECURSIVE k(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM k WHERE x < 120000) "
          "INSERT INTO samples(group_id, ts_ms, sends, ok, r429, interval_s) "
          "SELECT s.group_id, s.ts_ms + 5000 * k.x, 4, 4, 0, 1.0 FROM samples s, k";
      QCOMPARE(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(h);
    }
    const QString keep = dir.filePath("keep.csv");
    for (int sig : {SIGINT, SIGTERM}) {
      writeFile(keep, "the last good export\n");
      QProcess p;
      p.start(bin(), {"history", "export", "--db", QString::fromStdString(db), "--from", "0", "--to", "now",
                      "--format", "csv", "--out", keep});
      QVERIFY(p.waitForStarted(5000));
      bool seen = false;
      for (int i = 0; i < 3000 && !seen && p.state() == QProcess::Running; ++i) {
        seen = !QDir(dir.path()).entryList({"keep.csv.partial*"}).isEmpty();
        if (!seen) QTest::qWait(2);
      }
      QVERIFY2(seen, "the export ended before it could be interrupted");
      QTest::qWait(50);  // into its rows
      QVERIFY(::kill(static_cast<pid_t>(p.processId()), sig) == 0);
      QVERIFY(p.waitForFinished(10000));
      QCOMPARE(p.exitStatus(), QProcess::CrashExit);  // ended by the signal, as before
      QCOMPARE(QDir(dir.path()).entryList({"keep.csv.partial*"}).size(), 0);
      QFile kept(keep);
      QVERIFY(kept.open(QIODevice::ReadOnly));
      QCOMPARE(kept.readAll(), QByteArray("the last good export\n"));
    }
  }

  // A history file whose writer was killed (or still writes) holds its rows in FILE-wal, which an immutable read
  // ignores: --replay refused such a file as "an empty file, not a history file", and showed one that had been
  // checkpointed once only up to then. It now reads the -wal too, read-only, and says so.
  void replayReadsRowsStillInTheWal() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("live.db").toStdString();
    auto store = storeWithSamples(path);  // open through the runs below: a writer still at it
    QVERIFY(QFileInfo(QString::fromStdString(path + "-wal")).size() > 0);
    QByteArray err;
    QCOMPARE(runTollgate({"history", "check", "--strict", "--db", QString::fromStdString(path)}, nullptr, &err), 1);
    QVERIFY2(err.contains("-wal, which an immutable read ignores"), err.constData());
    QCOMPARE(runTollgate({"--replay", QString::fromStdString(path), "--screenshot", dir.filePath("x.png"),
                          "--screenshot-after", "0.5"},
                         nullptr, &err),
             0);
    QVERIFY2(err.contains("reading both, read-only"), err.constData());
    QVERIFY(QFileInfo(dir.filePath("x.png")).size() > 0);
  }

  // A second SIGINT ends a run at once. The first stops in order, and that waited 17 s for a history file
  // another process held locked, deaf to further signals.
  void aSecondSignalEndsARunAtOnce() {
    QTemporaryDir dir;
    const std::string db = historyFile(dir);
    QProcess run;
    run.start(bin(), {"run", "--headless", "--quiet", "--history", QString::fromStdString(db), "--duration", "60"});
    QVERIFY(run.waitForStarted(5000));
    QTest::qWait(2000);
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    sqlite3_busy_timeout(h, 5000);
    QCOMPARE(sqlite3_exec(h, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);  // the writer now waits
    ::kill(static_cast<pid_t>(run.processId()), SIGINT);
    QTest::qWait(500);
    QElapsedTimer t;
    t.start();
    ::kill(static_cast<pid_t>(run.processId()), SIGINT);
    const bool ended = run.waitForFinished(3000);
    sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(h);
    if (!ended) run.waitForFinished(60000);
    QVERIFY2(ended, qPrintable(QStringLiteral("still running %1 ms after the second SIGINT").arg(t.elapsed())));
    QCOMPARE(run.exitStatus(), QProcess::NormalExit);
    QCOMPARE(run.exitCode(), 1);
    QVERIFY2(run.readAllStandardError().contains("second signal: exiting now"), "no word of it");
  }

  void replaySpanIsCapped() {
    QTemporaryDir dir;
    const std::string db = historyFile(dir);
    QByteArray err;
    QCOMPARE(runTollgate({"replay", "--db", QString::fromStdString(db), "--from", "0", "--to", "1e15"}, nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("31 days"), err.constData());
  }

  // The replay report may not land on the history file or its -wal: it exited 0 with the database replaced by the
  // report ("not a SQLite database" after).
  void replayReportNeverOverwritesTheHistory() {
    QTemporaryDir dir;
    const std::string db = historyFile(dir);
    QByteArray err;
    for (const std::string& target : {db, db + "-wal"}) {
      QCOMPARE(runTollgate({"replay", "--db", QString::fromStdString(db), "--incident", "1", "--report",
                            QString::fromStdString(target)},
                           nullptr, &err),
               kExitUsage);
      QVERIFY2(err.contains("refusing to overwrite the history file"), err.constData());
    }
    QCOMPARE(runTollgate({"history", "check", "--db", QString::fromStdString(db)}), 0);
    // An incident number that is none (1.5 re-drove incident 1), --from/--to beside it (ignored), a directory
    // as the overrides ("unexpected end of input").
    QCOMPARE(runTollgate({"replay", "--db", QString::fromStdString(db), "--incident", "1.5"}, nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("--incident"), err.constData());
    QCOMPARE(runTollgate({"replay", "--db", QString::fromStdString(db), "--incident", "1", "--from", "1", "--to", "2"},
                         nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("not both"), err.constData());
    QCOMPARE(runTollgate({"replay", "--db", QString::fromStdString(db), "--incident", "1", "--override", dir.path()},
                         nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains("a directory, not a JSON file"), err.constData());
  }

  void replayPadIsCapped() {
    QTemporaryDir dir;
    const std::string db = historyFile(dir);
    QByteArray err;
    const int rc = runTollgate({"replay", "--db", QString::fromStdString(db), "--incident", "1", "--pad", "1e15"},
                               nullptr, &err);
    QVERIFY2(rc == kExitUsage || rc == kExitFailed, err.constData());
    QVERIFY2(err.contains("31 days"), err.constData());
  }
};

QTEST_GUILESS_MAIN(TestCliLimits)
#include "test_cli_limits.moc"
