// `tollgate history ...` logic: argument errors, time parsing, and each subcommand on a real file.
#include "history_cli.h"
#include "history_command.h"
#include "history_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <sstream>

using namespace tg;

namespace {
constexpr EpochMs kT0 = 1'796'000'000'000;  // 2026-11-30T...

int run(const std::vector<std::string>& args, std::string* out = nullptr, std::string* err = nullptr) {
  std::ostringstream o, e;
  const int rc = runHistoryCommand(args, o, e);
  if (out) *out = o.str();
  if (err) *err = e.str();
  return rc;
}
}  // namespace

class TestHistoryCommand : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath("h.db").toStdString();
    HistoryOptions o;
    o.incidentIntervalMs = 3'600'000;
    std::string error;
    auto store = HistoryStore::open(db_, o, &error);
    QVERIFY2(store, error.c_str());
    std::vector<Sample> rows;
    for (int t = 1; t <= 600; ++t) {
      Sample s;
      s.tsMs = kT0 + t * 1000;
      s.group = "interactive";
      s.sends = 20;
      s.r429 = (t > 100 && t <= 130) ? 8 : 0;
      rows.push_back(s);
    }
    store->append(rows);
    Event e;
    e.tsMs = kT0 + 110'000;
    e.kind = EventKind::OperatorAction;
    e.group = "interactive";
    e.message = "pause P2, \"batch\" jobs";
    e.detail = {{"action", "pause_tier"}, {"actor", "carol"}};
    store->append(e);
    QVERIFY(store->detectIncidents());
  }

  void parsesTimes_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("expected");  // -1: rejected
    const qint64 now = 1'800'000'000'000;
    QTest::newRow("epoch ms") << "1796000000000" << qint64(1'796'000'000'000);
    QTest::newRow("iso") << "2026-11-29T02:00:00Z" << qint64(1'795'917'600'000);
    QTest::newRow("iso ms") << "2026-11-29T02:00:00.25Z" << qint64(1'795'917'600'250);
    QTest::newRow("date") << "1970-01-02" << qint64(86'400'000);
    QTest::newRow("now") << "now" << now;
    QTest::newRow("-15m") << "-15m" << now - 900'000;
    QTest::newRow("-1h") << "-1h" << now - 3'600'000;
    QTest::newRow("-1.5d") << "-1.5d" << now - 129'600'000;
    QTest::newRow("-90s") << "-90s" << now - 90'000;
    QTest::newRow("no zone") << "2026-11-29T02:00:00" << qint64(-1);
    QTest::newRow("offset") << "2026-11-29T02:00:00+01:00" << qint64(-1);
    QTest::newRow("bad unit") << "-3w" << qint64(-1);
    QTest::newRow("month 13") << "2026-13-01T00:00:00Z" << qint64(-1);
    QTest::newRow("30 February") << "2026-02-30" << qint64(-1);
    QTest::newRow("29 February 2028") << "2028-02-29" << qint64(1'835'395'200'000);
    QTest::newRow("31 April") << "2026-04-31T00:00:00Z" << qint64(-1);
    QTest::newRow("words") << "yesterday" << qint64(-1);
    QTest::newRow("empty") << "" << qint64(-1);
  }
  void parsesTimes() {
    QFETCH(QString, text);
    QFETCH(qint64, expected);
    const auto t = parseHistoryTime(text.toStdString(), 1'800'000'000'000);
    if (expected < 0) {
      QVERIFY2(!t, qPrintable(QString::number(t.value_or(0))));
    } else {
      QVERIFY(t.has_value());
      QCOMPARE(qint64(*t), expected);
    }
  }

  // Times are printed as ISO-8601 UTC with milliseconds (tg::formatUtc, IsoMillis).
  void printsIsoTimes() {
    std::string out, err;
    QCOMPARE(run({"history", "incidents", "--db", db_, "--id", "1"}, &out, &err), 0);
    QVERIFY2(QString::fromStdString(out).contains("2026-11-30T"), out.c_str());
    QVERIFY2(QString::fromStdString(out).contains(".000Z"), out.c_str());
  }

  // The logic takes "now" from the request: relative ranges count back from a hand-set time, also one
  // that lies before the data (time set back), and the outcome is typed, not an exit code.
  void actionsTakeNowFromTheRequest_data() {
    QTest::addColumn<qint64>("now");
    QTest::addColumn<QString>("expected");
    QTest::newRow("just after the data") << qint64(kT0 + 601'000) << "(bucket 10s, 60 points)";
    QTest::newRow("a day before the data") << qint64(kT0 - 86'400'000) << "0 event(s)";
  }
  void actionsTakeNowFromTheRequest() {
    QFETCH(qint64, now);
    QFETCH(QString, expected);
    HistoryRequest r;
    r.action = HistoryAction::Show;
    r.db = db_;
    r.from = "-10m";
    r.to = "now";
    r.nowMs = now;
    std::ostringstream out;
    const HistoryOutcome o = runHistoryAction(r, out);
    QVERIFY2(o.ok(), o.error.c_str());
    QVERIFY2(QString::fromStdString(out.str()).contains(expected), out.str().c_str());
  }

  void outcomesAreTyped_data() {
    QTest::addColumn<int>("action");
    QTest::addColumn<QString>("db");  // "" -> the test's file
    QTest::addColumn<QString>("points");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("missing file") << int(HistoryAction::Check) << "nope.db" << "" << int(HistoryOutcome::Status::Failed)
                                  << "no such history file";
    QTest::newRow("bad points") << int(HistoryAction::Show) << "" << "0" << int(HistoryOutcome::Status::BadRequest)
                                << "--points";
    QTest::newRow("no incident") << int(HistoryAction::Incidents) << "" << "" << int(HistoryOutcome::Status::Ok) << "";
  }
  void outcomesAreTyped() {
    QFETCH(int, action);
    QFETCH(QString, db);
    QFETCH(QString, points);
    QFETCH(int, status);
    QFETCH(QString, mentions);
    HistoryRequest r;
    r.action = static_cast<HistoryAction>(action);
    r.db = db.isEmpty() ? db_ : dir_.filePath(db).toStdString();
    r.from = "-10m";
    r.to = "now";
    if (!points.isEmpty()) r.points = points.toStdString();
    r.nowMs = kT0 + 601'000;
    std::ostringstream out;
    const HistoryOutcome o = runHistoryAction(r, out);
    QCOMPARE(int(o.status), status);
    QVERIFY2(QString::fromStdString(o.error).contains(mentions), o.error.c_str());
  }

  // A file name in another encoding (not UTF-8) reaches the reader byte for byte, through QCommandLineParser.
  void fileNamesThatAreNotUtf8PassUnchanged() {
    const std::string latin1 = dir_.filePath("caf").toStdString() + "\xE9.db";
    std::string out, err;
    QCOMPARE(run({"history", "check", "--db", latin1}, &out, &err), 1);
    QVERIFY2(err.find(latin1) != std::string::npos, err.c_str());
    QVERIFY2(err.find("no such history file") != std::string::npos, err.c_str());
    std::filesystem::copy_file(db_, latin1);
    QVERIFY2(run({"history", "check", "--db", latin1}, &out, &err) == 0, err.c_str());
    QVERIFY2(out.find("file            " + latin1) != std::string::npos, out.c_str());
  }

  void everyActionAnswersHelp_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("usage");
    QTest::newRow("history") << QStringList{"history", "--help"} << "usage: tollgate history incidents";
    QTest::newRow("history -h") << QStringList{"history", "-h"} << "usage: tollgate history incidents";
    for (const char* a : {"incidents", "show", "export", "check"})
      QTest::newRow(a) << QStringList{"history", a, "--help"} << QString("usage: tollgate history %1").arg(a);
    QTest::newRow("after options") << QStringList{"history", "check", "--db", "x", "-h"} << "usage: tollgate history check";
  }
  void everyActionAnswersHelp() {
    QFETCH(QStringList, args);
    QFETCH(QString, usage);
    std::vector<std::string> a;
    for (const auto& s : args) a.push_back(s.toStdString());
    std::string out, err;
    QCOMPARE(run(a, &out, &err), 0);
    QVERIFY2(QString::fromStdString(out).startsWith(usage), out.c_str());
    QVERIFY2(QString::fromStdString(out).contains("--strict"), out.c_str());
    QCOMPARE(QString::fromStdString(err), QString());
  }

  void usageErrorsNameTheArgument_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("no subcommand") << QStringList{"history"} << "subcommand";
    QTest::newRow("unknown subcommand") << QStringList{"history", "purge"} << "'purge'";
    QTest::newRow("unknown flag") << QStringList{"history", "check", "--db", "x", "--fast"} << "'--fast'";
    QTest::newRow("missing db") << QStringList{"history", "incidents"} << "--db";
    QTest::newRow("missing value") << QStringList{"history", "check", "--db"} << "--db";
    QTest::newRow("bad from") << QStringList{"history", "show", "--db", "x", "--from", "soon", "--to", "now"} << "--from";
    QTest::newRow("missing to") << QStringList{"history", "show", "--db", "x", "--from", "-1h"} << "--to";
    QTest::newRow("reversed") << QStringList{"history", "show", "--db", "x", "--from", "now", "--to", "-1h"} << "--to";
    QTest::newRow("bad format") << QStringList{"history", "export", "--db", "x", "--from", "-1h", "--to", "now", "--format", "xml"}
                                << "--format";
    QTest::newRow("bad points") << QStringList{"history", "show", "--db", "x", "--from", "-1h", "--to", "now", "--points", "0"}
                                << "--points";
    QTest::newRow("given twice") << QStringList{"history", "check", "--db", "x", "--db", "y"} << "--db given twice";
    QTest::newRow("switch with a value") << QStringList{"history", "check", "--db", "x", "--strict=1"} << "'--strict=1'";
    QTest::newRow("stray word") << QStringList{"history", "check", "--db", "x", "now"} << "unknown argument 'now'";
    QTest::newRow("option of another action") << QStringList{"history", "check", "--db", "x", "--points", "5"}
                                              << "unknown argument '--points'";
    QTest::newRow("-1e300d") << QStringList{"history", "show", "--db", "x", "--from", "-1e300d", "--to", "now"}
                             << "--from: cannot read '-1e300d'";
  }
  void usageErrorsNameTheArgument() {
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    std::vector<std::string> a;
    for (const auto& s : args) a.push_back(s.toStdString());
    std::string err;
    QCOMPARE(run(a, nullptr, &err), 2);
    QVERIFY2(QString::fromStdString(err).contains(mentions), err.c_str());
  }

  // Arguments that named nothing in the file: a group it never saw (no series, exit 0) and an id past int64 (read
  // as 9223372036854775807).
  void namesTheFileDoesNotHaveAreErrors() {
    std::string err;
    QCOMPARE(run({"history", "show", "--db", db_, "--from", std::to_string(kT0), "--to", std::to_string(kT0 + 5000),
                  "--group", "nosuch"},
                 nullptr, &err),
             2);
    QVERIFY2(err.find("no group 'nosuch'") != std::string::npos && err.find("interactive") != std::string::npos,
             err.c_str());
    QCOMPARE(run({"history", "incidents", "--db", db_, "--id", "99999999999999999999"}, nullptr, &err), 2);
    QVERIFY2(err.find("--id") != std::string::npos, err.c_str());
  }

  // A writer killed before its next incident scan (every 30 s, and at a clean stop): the incident in its last
  // samples was in no list (0 shown; the same run stopped cleanly had incident 1). Readers find it in memory.
  void incidentsNotYetScannedAreShown() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("killed.db").toStdString();
    {
      HistoryOptions o;
      o.incidentIntervalMs = 3'600'000;  // no scan during the test: as a writer killed before its next one
      std::string error;
      auto store = HistoryStore::open(db, o, &error);
      QVERIFY2(store, error.c_str());
      std::vector<Sample> rows;
      for (int t = 1; t <= 60; ++t) {
        Sample s;
        s.tsMs = kT0 + t * 1000;
        s.group = "g";
        s.sends = 20;
        s.r429 = t > 20 && t <= 40 ? 10 : 0;
        rows.push_back(s);
      }
      store->append(rows);
      QVERIFY(store->flush());
    }
    std::string out, err;
    QCOMPARE(run({"history", "incidents", "--db", db}, &out, &err), 0);
    QVERIFY2(out.find("0 incident(s)") != std::string::npos, out.c_str());
    QVERIFY2(out.find("1 more in samples the writer has not scanned yet") != std::string::npos, out.c_str());
    QVERIFY2(out.find("429_share") != std::string::npos, out.c_str());
  }

  void checkReportsASoundFile() {
    std::string out, err;
    QCOMPARE(run({"history", "check", "--db", db_}, &out, &err), 0);
    const QString o = QString::fromStdString(out);
    QVERIFY2(o.contains("integrity       ok"), out.c_str());
    QVERIFY2(o.contains("schema version  5"), out.c_str());
    QVERIFY2(o.contains("rows samples    600"), out.c_str());
    QVERIFY2(o.contains("2026-"), out.c_str());
  }

  void checkRefusesAMissingFile() {
    std::string err;
    QCOMPARE(run({"history", "check", "--db", db_ + ".nope"}, nullptr, &err), 1);
    QVERIFY2(QString::fromStdString(err).contains("no such history file"), err.c_str());
  }

  void listsAndOpensIncidents() {
    std::string out, err;
    QCOMPARE(run({"history", "incidents", "--db", db_}, &out, &err), 0);
    QVERIFY2(QString::fromStdString(out).contains("1 incident(s)"), out.c_str());
    QVERIFY2(QString::fromStdString(out).contains("interactive"), out.c_str());
    QCOMPARE(run({"history", "incidents", "--db", db_, "--id", "1"}, &out, &err), 0);
    QVERIFY2(QString::fromStdString(out).contains("carol"), out.c_str());
    QCOMPARE(run({"history", "incidents", "--db", db_, "--id", "77"}, &out, &err), 1);
  }

  void showsARange() {
    std::string out, err;
    QCOMPARE(run({"history", "show", "--db", db_, "--from", std::to_string(kT0), "--to", std::to_string(kT0 + 600'000),
                  "--group", "interactive", "--points", "10"},
                 &out, &err),
             0);
    QVERIFY2(QString::fromStdString(out).contains("(bucket 1m00s, 10 points)"), out.c_str());
    QVERIFY2(QString::fromStdString(out).contains("1 event(s)"), out.c_str());
  }

  void exportsCsvAndJsonl() {
    const std::string csvPath = dir_.filePath("out.csv").toStdString();
    std::string out, err;
    QCOMPARE(run({"history", "export", "--db", db_, "--from", std::to_string(kT0), "--to", std::to_string(kT0 + 601'000),
                  "--format", "csv", "--out", csvPath},
                 &out, &err),
             0);
    QFile f(QString::fromStdString(csvPath));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 601);  // header + 600
    QVERIFY(lines[0].startsWith("ts_ms,group,"));
    QVERIFY(lines[1].startsWith(QByteArray::number(kT0 + 1000) + ",interactive,,"));  // NaN -> empty field
    // A new file gets the mode a plain create gives, not the 0600 of its exclusive partial file.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    struct stat created {};
    QVERIFY(::stat(csvPath.c_str(), &created) == 0);
    QCOMPARE(created.st_mode & 0777, 0666u & ~static_cast<unsigned>(mask));
    QCOMPARE(run({"history", "export", "--db", db_, "--from", std::to_string(kT0), "--to", std::to_string(kT0 + 601'000),
                  "--format", "jsonl", "--what", "events"},
                 &out, &err),
             0);
    QVERIFY2(QString::fromStdString(out).contains("\"actor\":\"carol\""), out.c_str());
    QCOMPARE(QString::fromStdString(out).count('\n'), 1);
    // The database itself is never an export target.
    QCOMPARE(run({"history", "export", "--db", db_, "--from", "-1h", "--to", "now", "--format", "csv", "--out", db_}, &out, &err),
             2);
    // Nor its write-ahead log, where a killed writer's last samples may be all that holds them.
    QCOMPARE(run({"history", "export", "--db", db_, "--from", "-1h", "--to", "now", "--format", "csv", "--out",
                  db_ + "-wal"},
                 &out, &err),
             2);
    QVERIFY2(err.find("wal file") != std::string::npos, err.c_str());
    // Written beside its name and renamed once whole (a failure part-way: test_cli_limits), the export keeps the
    // mode of the file it replaces (client names and key fingerprints in a 0600 file stay 0600), and through a
    // symlink it replaces the file the link names, not the link.
    QVERIFY(::chmod(csvPath.c_str(), 0600) == 0);
    const std::string link = dir_.filePath("link.csv").toStdString();
    QVERIFY(::symlink(csvPath.c_str(), link.c_str()) == 0);
    QCOMPARE(run({"history", "export", "--db", db_, "--from", std::to_string(kT0), "--to", std::to_string(kT0 + 2'000),
                  "--format", "csv", "--out", link},
                 &out, &err),
             0);
    struct stat st {};
    QVERIFY(::lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode));
    QVERIFY(::stat(csvPath.c_str(), &st) == 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    QFile now(QString::fromStdString(csvPath));
    QVERIFY(now.open(QIODevice::ReadOnly));
    QCOMPARE(now.readAll().count('\n'), 2);  // header + the sample at kT0 + 1 s
    QCOMPARE(QDir(dir_.path()).entryList({"out.csv.partial*"}).size(), 0);
    // A full disk names the file and why.
    QCOMPARE(run({"history", "export", "--db", db_, "--from", std::to_string(kT0), "--to", std::to_string(kT0 + 601'000),
                  "--format", "csv", "--out", "/dev/full"},
                 &out, &err),
             1);
    QVERIFY2(err.find("cannot write '/dev/full': No space left on device") != std::string::npos, err.c_str());
  }

  // Names and messages from a crafted or copied history file reach a terminal without their escape sequences.
  void textFromTheFileIsShownSafely() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("esc.db").toStdString();
    {
      std::string error;
      auto store = HistoryStore::open(db, HistoryOptions{}, &error);
      QVERIFY2(store, error.c_str());
      Event e;
      e.tsMs = kT0 + 1000;
      e.kind = EventKind::OperatorAction;
      e.group = "\x1b[2J\x1b[31mFAKE\nline";
      e.message = "ok\x1b[8m\rhidden";
      store->append(e);
      store->flush();
    }
    std::string out, err;
    QCOMPARE(run({"history", "show", "--db", db, "--from", std::to_string(kT0), "--to", std::to_string(kT0 + 5000)},
                 &out, &err),
             0);
    QVERIFY2(out.find('\x1b') == std::string::npos && out.find('\r') == std::string::npos, out.c_str());
    QVERIFY2(out.find("\\x1b[2J") != std::string::npos, out.c_str());
  }

 private:
  QTemporaryDir dir_;
  std::string db_;
};

QTEST_GUILESS_MAIN(TestHistoryCommand)
#include "test_history_command.moc"
