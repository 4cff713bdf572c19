// Rollup tiers and retention: spikes survive expiry, downsampled charts keep min/max.
// Real SQLite files in a temporary directory; time set by hand (tgtest::kT0).
#include "epoch_floor.h"
#include "history_fixture.h"

#include <atomic>
#include <memory>
#include "history_reader.h"
#include "history_store.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace tg;
using namespace tgtest;

class TestHistoryRollups : public TempDirTest {
  Q_OBJECT

 private slots:
  void retentionRollupsKeepSpikes();
  void downsamplingBoundsPointsKeepsMinMax();
  void floorsToTheBucket_data();
  void floorsToTheBucket();
  void aClockFarAheadExpiresNothing();
};

void TestHistoryRollups::retentionRollupsKeepSpikes() {
  const QString path = file("retention.db");
  HistoryOptions o = quietOptions();
  o.fullResolutionMs = 3'600'000;   // 1 h full resolution
  o.retainMs = 24 * 3'600'000LL;    // 1 day in all
  auto store = openStore(path, o);
  QVERIFY(store);
  const EpochMs start = kT0 - kT0 % 60'000;
  std::vector<Sample> rows;
  for (int i = 0; i < 3 * 3600; ++i) {  // 3 hours at 1 s
    Sample s = makeSample("g", start + i * 1000, 10, 0);
    s.inFlight = 2;
    if (i == 1234) {  // a one-second spike in the first hour
      s.r429 = 977;
      s.inFlight = 64;
    }
    if (i == 1300) s.reqRemaining = 3;  // a dip
    rows.push_back(s);
  }
  store->append(rows);
  Event old;
  old.tsMs = start + 10'000;
  old.kind = EventKind::ConfigReload;
  store->append(old);
  QVERIFY(store->flush());

  // Now = start + 3 h: the first 2 h leave full resolution.
  QVERIFY(store->runRetention(start + 3 * 3'600'000));
  auto reader = openReader(path);
  QVERIFY(reader);
  auto raw = reader->rawSamples(start, start + 3 * 3'600'000, {});
  QVERIFY(raw.ok());
  QCOMPARE(raw.value.size(), std::size_t(3600));  // only the last hour is left at 1 s
  QCOMPARE(raw.value.front().tsMs, start + 2 * 3'600'000);

  auto series = reader->samples(start, start + 3 * 3'600'000, {"g"}, 30);
  QVERIFY2(series.ok(), series.error.c_str());
  QCOMPARE(series.value.size(), std::size_t(1));
  const auto& buckets = series.value[0].buckets;
  QVERIFY(buckets.size() <= 30);
  double maxR429 = 0, maxInFlight = 0, minRemaining = 1e9;
  std::int64_t rowsSeen = 0;
  bool anyRollup = false;
  for (const auto& b : buckets) {
    maxR429 = std::max(maxR429, b[Metric::R429].max);
    maxInFlight = std::max(maxInFlight, b[Metric::InFlight].max);
    minRemaining = std::min(minRemaining, b[Metric::ReqRemaining].min);
    rowsSeen += b.rows;
    anyRollup = anyRollup || b.fromRollup;
  }
  QVERIFY(anyRollup);
  QCOMPARE(maxR429, 977.0);  // the spike survives the rollup
  QCOMPARE(maxInFlight, 64.0);
  QCOMPARE(minRemaining, 3.0);
  QCOMPARE(rowsSeen, std::int64_t(3 * 3600));
  // The average over the rolled-up hour is still right: (3599 * 0 + 977) / 3600.
  double sum429 = 0;
  for (const auto& b : buckets)
    if (b.startMs < start + 3'600'000) sum429 += b[Metric::R429].avg * static_cast<double>(b.rows);
  QVERIFY(std::abs(sum429 - 977) < 1e-6);

  // A late sample for the expired span (a clock jump, a backlog) is merged into the minute rollups.
  Sample lateSpike = makeSample("g", start + 600'500, 10, 0);
  lateSpike.inFlight = 99;
  store->append(std::vector<Sample>{lateSpike});
  QVERIFY(store->flush());
  auto lateRaw = reader->rawSamples(start, start + 3'600'000, {});
  QVERIFY(lateRaw.ok());
  QVERIFY(lateRaw.value.empty());
  auto withLate = reader->samples(start, start + 3 * 3'600'000, {"g"}, 30);
  QVERIFY(withLate.ok());
  double lateMax = 0;
  std::int64_t lateRows = 0;
  for (const auto& b : withLate.value[0].buckets) {
    lateMax = std::max(lateMax, b[Metric::InFlight].max);
    lateRows += b.rows;
  }
  QCOMPARE(lateMax, 99.0);
  QCOMPARE(lateRows, std::int64_t(3 * 3600 + 1));

  // Retention twice is harmless, then everything expires.
  QVERIFY(store->runRetention(start + 3 * 3'600'000));
  QVERIFY(store->runRetention(start + 30 * 3'600'000));
  auto gone = reader->samples(start, start + 3 * 3'600'000, {"g"}, 30);
  QVERIFY(gone.ok());
  QVERIFY(gone.value.empty() || gone.value[0].buckets.empty());
  auto events = reader->events(0, start + 30 * 3'600'000, {}, {});
  QVERIFY(events.ok());
  QVERIFY(events.value.empty());
  QVERIFY(store->status().fileBytes > 0);
}

void TestHistoryRollups::downsamplingBoundsPointsKeepsMinMax() {
  const QString path = file("downsample.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    std::vector<Sample> rows;
    for (int i = 0; i < 20'000; ++i) {
      Sample s = makeSample(i % 2 ? "a" : "b", kT0 + (i / 2) * 1000);
      s.sends = 50 + static_cast<int>(40 * std::sin(i / 300.0));
      s.p95Ms = (i / 2 >= 5000 && i / 2 < 5300) ? kUnknown : 100.0 + i % 7;  // a 300 s gap in p95
      if (i == 7777) s.sends = 5000;
      if (i == 8888) s.sends = -3;
      rows.push_back(s);
    }
    store->append(rows);
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  for (int maxPoints : {1, 7, 100, 2000, 50'000}) {
    auto series = reader->samples(kT0, kT0 + 10'000'000, {}, maxPoints);
    QVERIFY2(series.ok(), series.error.c_str());
    QCOMPARE(series.value.size(), std::size_t(2));
    for (const auto& s : series.value) {
      QVERIFY2(s.buckets.size() <= static_cast<std::size_t>(maxPoints),
               qPrintable(QString("%1 buckets for maxPoints %2").arg(s.buckets.size()).arg(maxPoints)));
      double mx = -1e9, mn = 1e9;
      std::int64_t n = 0;
      for (const auto& b : s.buckets) {
        mx = std::max(mx, b[Metric::Sends].max);
        mn = std::min(mn, b[Metric::Sends].min);
        n += b.rows;
        QVERIFY(b[Metric::Sends].min <= b[Metric::Sends].avg && b[Metric::Sends].avg <= b[Metric::Sends].max);
      }
      QCOMPARE(n, std::int64_t(10'000));
      if (s.group == "a") QCOMPARE(mx, 5000.0);
      if (s.group == "b") QCOMPARE(mn, -3.0);
    }
  }
  // Inside the p95 gap every bucket reads NaN: a gap, not a zero.
  auto fine = reader->samples(kT0 + 5'000'000, kT0 + 5'300'000, {"a"}, 30);
  QVERIFY(fine.ok());
  QCOMPARE(fine.value[0].buckets.size(), std::size_t(30));
  for (const auto& b : fine.value[0].buckets) QVERIFY(std::isnan(b[Metric::P95Ms].avg) && std::isnan(b[Metric::P95Ms].max));
}

// The one floor the writer buckets minutes and tiers by: a floor before 1970 too, held at INT64_MIN
// where the bucket start is not representable (never an overflow).
void TestHistoryRollups::floorsToTheBucket_data() {
  constexpr qint64 kMin = std::numeric_limits<qint64>::min();
  constexpr qint64 kMax = std::numeric_limits<qint64>::max();
  QTest::addColumn<qint64>("t");
  QTest::addColumn<qint64>("step");
  QTest::addColumn<qint64>("floor");
  const qint64 m0 = kT0 - kT0 % 60'000;
  QTest::newRow("on the minute") << m0 << qint64(60'000) << m0;
  QTest::newRow("inside the minute") << m0 + 59'999 << qint64(60'000) << m0;
  QTest::newRow("10 s tier") << m0 + 12'345 << qint64(10'000) << m0 + 10'000;
  QTest::newRow("zero") << qint64(0) << qint64(60'000) << qint64(0);
  QTest::newRow("just before 1970") << qint64(-1) << qint64(60'000) << qint64(-60'000);
  QTest::newRow("before 1970, on the minute") << qint64(-120'000) << qint64(60'000) << qint64(-120'000);
  QTest::newRow("int64 max") << kMax << qint64(60'000) << (kMax - kMax % 60'000);
  QTest::newRow("int64 min saturates") << kMin << qint64(60'000) << kMin;
  QTest::newRow("int64 min + 1 saturates") << kMin + 1 << qint64(60'000) << kMin;
  const qint64 lowest = kMin - kMin % 60'000;  // the lowest representable minute start
  QTest::newRow("lowest minute start") << lowest << qint64(60'000) << lowest;
  QTest::newRow("inside the lowest minute") << lowest + 59'999 << qint64(60'000) << lowest;
  QTest::newRow("below the lowest minute") << lowest - 1 << qint64(60'000) << kMin;
}

void TestHistoryRollups::floorsToTheBucket() {
  QFETCH(qint64, t);
  QFETCH(qint64, step);
  QFETCH(qint64, floor);
  QCOMPARE(qint64(history::floorTo(t, step)), floor);
}

// The writer's own retention pass on a wall clock that jumped 60 days ahead: skipped (it deleted everything older
// than 30 days before the wrong "now"). And a full-resolution horizon left weeks ahead by a pass that did run so
// (here: one asked for with that "now") is pulled back once the clock is behind it: new samples are kept, not
// merged into minute rows as late ones for weeks.
void TestHistoryRollups::aClockFarAheadExpiresNothing() {
  const QString path = file("clock.db");
  auto clock = std::make_shared<std::atomic<EpochMs>>(kT0);
  HistoryOptions o = quietOptions();
  o.maintenanceIntervalMs = 20;
  o.now = [clock] { return clock->load(); };
  auto store = openStore(path, o);
  QVERIFY(store);
  // The writer runs its pass when it wakes past the interval: a flush wakes it.
  const auto letPassesRun = [&] {
    for (int i = 0; i < 10; ++i) {
      QTest::qWait(30);
      store->flush();
    }
  };
  std::vector<Sample> rows;
  for (int i = 0; i <= 10; ++i) rows.push_back(makeSample("g", kT0 + i * 1000));
  store->append(rows);
  QVERIFY(store->flush());
  letPassesRun();  // on the right clock
  const EpochMs day = 24 * 3'600'000LL;
  clock->store(kT0 + 60 * day);
  letPassesRun();  // on the wrong one: skipped
  QVERIFY(store->flush());
  auto reader = openReader(path);
  QVERIFY(reader);
  auto kept = reader->rawSamples(kT0, kT0 + 11'000, {});
  QVERIFY2(kept.ok(), kept.error.c_str());
  QCOMPARE(kept.value.size(), std::size_t(11));
  reader.reset();

  QVERIFY(store->runRetention(kT0 + 60 * day));  // as a pass on the clock 60 days ahead would
  clock->store(kT0 + 20'000);                     // the clock comes back
  letPassesRun();
  rows.clear();
  for (int i = 0; i <= 10; ++i) rows.push_back(makeSample("g", kT0 + 20'000 + i * 1000));
  store->append(rows);
  QVERIFY(store->flush());
  reader = openReader(path);
  QVERIFY(reader);
  auto fresh = reader->rawSamples(kT0 + 20'000, kT0 + 31'000, {});
  QVERIFY2(fresh.ok(), fresh.error.c_str());
  QCOMPARE(fresh.value.size(), std::size_t(11));
}

QTEST_GUILESS_MAIN(TestHistoryRollups)
#include "test_history_rollups.moc"
