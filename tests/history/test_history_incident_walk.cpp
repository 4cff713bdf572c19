// Incident detection walks the samples in 6-hour chunks, one transaction each. One absurd ts_ms in the file
// (edited by hand, a clock at 1970, -9e18) used to make that walk start at it: 82 thousand to 4e11
// transactions on the writer thread, which then hung. The walk now starts no earlier than the retention
// horizon before the newest sample.
#include "history_fixture.h"

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>

using namespace tg;
using namespace tgtest;

namespace {
// Far more than one chunk's work, far less than the 82k chunks from 1970.
constexpr auto kDetectBudget = std::chrono::seconds(30);
}  // namespace

class TestHistoryIncidentWalk : public QObject {
  Q_OBJECT
 private slots:
  void absurdOldSampleDoesNotStallDetection_data() {
    QTest::addColumn<qint64>("ts");
    QTest::newRow("1970") << qint64(1);
    QTest::newRow("-9e18") << qint64(-9'000'000'000'000'000'000);
  }
  void absurdOldSampleDoesNotStallDetection() {
    QFETCH(qint64, ts);
    QTemporaryDir dir;
    const std::string path = dir.filePath("h.db").toStdString();
    std::string error;
    auto store = HistoryStore::open(path, quietOptions(), &error);
    QVERIFY2(store, error.c_str());
    store->append(std::vector<Sample>{sample(kT0 - 5000), sample(kT0), sample(kT0 + 1000)});
    QVERIFY(store->flush());
    // The edited row: written as the file would hold it after someone changed it by hand.
    rawExec(path, "UPDATE samples SET ts_ms = " + std::to_string(ts) + " WHERE ts_ms = " + std::to_string(kT0 - 5000));

    auto detection = std::async(std::launch::async, [&] { return store->detectIncidents(); });
    if (detection.wait_for(kDetectBudget) != std::future_status::ready) {
      // The writer thread is stuck in the walk; the store could not be closed. Fail without hanging.
      std::fprintf(stderr, "FAIL: incident detection still running after %lld s\n",
                   static_cast<long long>(kDetectBudget.count()));
      std::_Exit(1);
    }
    QVERIFY(detection.get());
    // The writer is alive and the file still takes rows.
    store->append(std::vector<Sample>{sample(kT0 + 2000)});
    QVERIFY(store->flush());
  }

  // A clock stepped back an hour: the samples written after the step lie an hour before what was scanned. They
  // were never scanned, and the incident in them was never found (replay --incident could not reach it).
  void samplesBehindTheScanMarkAreScanned() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("h.db").toStdString();
    std::string error;
    auto store = HistoryStore::open(path, quietOptions(), &error);
    QVERIFY2(store, error.c_str());
    std::vector<Sample> ahead, now;
    for (int i = 0; i < 30; ++i) ahead.push_back(makeSample("g", kT0 + 3'600'000 + i * 1000, 10, 0));
    store->append(ahead);
    QVERIFY(store->detectIncidents());
    for (int i = 0; i < 30; ++i) now.push_back(makeSample("g", kT0 + i * 1000, 10, 5));  // half refused
    store->append(now);
    QVERIFY(store->detectIncidents());
    store.reset();
    auto reader = openReader(QString::fromStdString(path));
    QVERIFY(reader);
    const auto incidents = reader->incidents();
    QVERIFY2(incidents.ok(), incidents.error.c_str());
    QCOMPARE(incidents.value.size(), std::size_t(1));
    // The refused half-minute after the step (its first sample covers the second before kT0).
    QVERIFY(incidents.value[0].startMs >= kT0 - 1000 && incidents.value[0].endMs <= kT0 + 30'000);
  }

  // A step back longer than a scan chunk (6 h): the incident recorded before the step keeps its id through the
  // rescans behind it (each one deleted it and found it again under a new id; replay --incident N lost it).
  void incidentsKeepTheirIdsThroughARescan() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("h.db").toStdString();
    std::string error;
    auto store = HistoryStore::open(path, quietOptions(), &error);
    QVERIFY2(store, error.c_str());
    const EpochMs ahead = kT0 + 8 * 3'600'000LL;
    std::vector<Sample> rows;
    for (int i = 0; i < 30; ++i) rows.push_back(makeSample("g", ahead + i * 1000, 10, 5));
    store->append(rows);
    QVERIFY(store->detectIncidents());
    auto idOfAhead = [&]() -> std::int64_t {
      store->flush();
      auto reader = openReader(QString::fromStdString(path));
      if (!reader) return -1;
      for (const auto& inc : reader->incidents().value)
        if (inc.startMs >= ahead - 1000) return inc.id;
      return -1;
    };
    const std::int64_t before = idOfAhead();
    QVERIFY(before > 0);
    for (int round = 0; round < 2; ++round) {  // the clock behind: two scans of what it writes
      rows.clear();
      for (int i = 0; i < 10; ++i) rows.push_back(makeSample("g", kT0 + round * 10'000 + i * 1000, 10, 0));
      store->append(rows);
      QVERIFY(store->detectIncidents());
    }
    QCOMPARE(idOfAhead(), before);
  }
};

QTEST_GUILESS_MAIN(TestHistoryIncidentWalk)
#include "test_history_incident_walk.moc"
