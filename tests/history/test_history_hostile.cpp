// History files and arguments nobody meant to write: garbage in the meta table, times at the edge of int64,
// events carrying bytes that are not UTF-8. Each is an error naming the file, key or argument, never an
// abort (run under ASan/UBSan to see the overflows these used to be).
#include "history_cli.h"
#include "history_command.h"
#include "history_fixture.h"
#include "history_reader.h"
#include "history_store.h"

#include <sqlite3.h>

#include <QTemporaryDir>
#include <QtTest>

#include <sstream>

using namespace tg;
using namespace tgtest;

namespace {
int run(const std::vector<std::string>& args, std::string* out = nullptr, std::string* err = nullptr) {
  std::ostringstream o, e;
  const int rc = runHistoryCommand(args, o, e);
  if (out) *out = o.str();
  if (err) *err = e.str();
  return rc;
}

}  // namespace

class TestHistoryHostile : public QObject {
  Q_OBJECT
 private slots:
  void garbageMetaIsAnErrorNamingFileAndKey_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::newRow("rolled through: words") << "full_resolution_from" << "yesterday";
    QTest::newRow("rolled through: trailing") << "full_resolution_from" << "123abc";
    QTest::newRow("10 s tier: empty") << "tier_10s_from" << "";
    QTest::newRow("10 s tier: past int64") << "tier_10s_from" << "99999999999999999999";
  }
  void garbageMetaIsAnErrorNamingFileAndKey() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QTemporaryDir dir;
    const std::string path = dir.filePath("h.db").toStdString();
    std::string error;
    {
      auto store = HistoryStore::open(path, quietOptions(), &error);
      QVERIFY2(store, error.c_str());
      store->append(std::vector<Sample>{sample(kT0)});
      QVERIFY(store->flush());
    }
    rawExec(path, "INSERT OR REPLACE INTO meta(key, value) VALUES('" + key.toStdString() + "', '" +
                      value.toStdString() + "')");
    auto store = HistoryStore::open(path, quietOptions(), &error);
    QVERIFY(!store);
    QVERIFY2(error.find(path) != std::string::npos, error.c_str());
    QVERIFY2(error.find("'" + key.toStdString() + "'") != std::string::npos, error.c_str());
  }

  void garbageIncidentMarkFailsDetectionNotTheProcess() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("h.db").toStdString();
    std::string error;
    auto store = HistoryStore::open(path, quietOptions(), &error);
    QVERIFY2(store, error.c_str());
    store->append(std::vector<Sample>{sample(kT0), sample(kT0 + 1000)});
    QVERIFY(store->flush());
    rawExec(path, "INSERT OR REPLACE INTO meta(key, value) VALUES('incidents_scanned_to', 'garbage')");
    QVERIFY(!store->detectIncidents());  // used to abort the writer thread (uncaught std::invalid_argument)
    const HistoryStatus st = store->status();
    QVERIFY2(st.lastError.find("incidents_scanned_to") != std::string::npos, st.lastError.c_str());
    QVERIFY2(st.lastError.find(path) != std::string::npos, st.lastError.c_str());
    // The writer is alive: more rows still commit.
    store->append(std::vector<Sample>{sample(kT0 + 2000)});
    QVERIFY(store->flush());
  }

  void aFlushWithNoAttemptsDoesNotOverflow() {
    // The request table's "newest minute" starts at INT64_MIN; a commit before any attempt subtracted from it.
    QTemporaryDir dir;
    std::string error;
    auto store = HistoryStore::open(dir.filePath("h.db").toStdString(), quietOptions(), &error);
    QVERIFY2(store, error.c_str());
    store->append(std::vector<Sample>{sample(kT0)});
    QVERIFY(store->flush());
  }

  void timesOutsideYears0To9999AreRejected_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("-1e300d") << "-1e300d";
    QTest::newRow("-1e18ms") << "-1e18ms";
    QTest::newRow("-inf s") << "-infs";
    QTest::newRow("-nan s") << "-nans";
    QTest::newRow("15 digits") << "999999999999999";
    QTest::newRow("negative hour") << "2026-01-01T-1:00:00Z";
  }
  void timesOutsideYears0To9999AreRejected() {
    QFETCH(QString, text);
    const auto t = parseHistoryTime(text.toStdString(), kT0);
    QVERIFY2(!t, qPrintable(QString::number(t.value_or(0))));
  }

  void theEdgesOfTheRangeStillParse() {
    QCOMPARE(parseHistoryTime("9999-12-31T23:59:59.999Z", kT0).value_or(0), kMaxHistoryMs);
    QCOMPARE(parseHistoryTime("0000-01-01", kT0).value_or(0), kMinHistoryMs);
    QCOMPARE(parseHistoryTime("-1000d", kT0).value_or(0), kT0 - 86'400'000'000);
  }

  void outOfRangeTimesAreUsageErrorsNamingTheArgument() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("h.db").toStdString();
    std::string err;
    QCOMPARE(run({"history", "show", "--db", db, "--from", "-1e300d", "--to", "now"}, nullptr, &err), 2);
    QVERIFY2(err.find("--from") != std::string::npos, err.c_str());
    QCOMPARE(run({"history", "export", "--db", db, "--from", "0", "--to", "999999999999999", "--format", "csv"},
                 nullptr, &err),
             2);
    QVERIFY2(err.find("--to") != std::string::npos, err.c_str());
  }

  void theReaderClampsExtremeRanges() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("h.db").toStdString();
    std::string error;
    {
      auto store = HistoryStore::open(path, quietOptions(), &error);
      QVERIFY2(store, error.c_str());
      store->append(std::vector<Sample>{sample(kT0)});
    }
    auto reader = HistoryReader::open(path, {}, &error);
    QVERIFY2(reader, error.c_str());
    const auto lo = std::numeric_limits<EpochMs>::min(), hi = std::numeric_limits<EpochMs>::max();
    auto series = reader->samples(lo, hi, {}, 100);
    QVERIFY2(series.ok(), series.error.c_str());
    QCOMPARE(series.value.size(), std::size_t(1));
    auto requests = reader->requestTable(lo, hi, true);
    QVERIFY2(requests.ok(), requests.error.c_str());
  }

  void eventsWithBytesThatAreNotUtf8ExportAsValidJson() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("h.db").toStdString();
    std::string error;
    {
      auto store = HistoryStore::open(db, quietOptions(), &error);
      QVERIFY2(store, error.c_str());
      Event e;
      e.tsMs = kT0;
      e.kind = EventKind::Burst429Start;
      e.severity = Severity::Warn;
      e.group = "g\xFF";
      e.message = "429 burst on resource \xFF\xFE";
      e.detail = {{"resource", "\xFF\xFE"}, {"classification", "burst"}};
      store->append(e);
      QVERIFY(store->flush());
    }
    for (const char* format : {"jsonl", "csv"}) {
      std::string out, err;
      QCOMPARE(run({"history", "export", "--db", db, "--from", std::to_string(kT0 - 1000), "--to",
                    std::to_string(kT0 + 1000), "--format", format, "--what", "events"},
                   &out, &err),
               0);
      QVERIFY2(out.find("429 burst on resource") != std::string::npos, out.c_str());
      if (std::string(format) == "jsonl") {
        const auto j = nlohmann::json::parse(out);
        QCOMPARE(j["detail"]["resource"].get<std::string>(), std::string("\xEF\xBF\xBD\xEF\xBF\xBD"));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestHistoryHostile)
#include "test_history_hostile.moc"
