// IncidentDetector: thresholds, merging and summaries over hand-built sample streams (no database).
#include "incident_detector.h"

#include <QtTest>

using namespace tg;

namespace {
constexpr EpochMs kT0 = 1'796'000'000'000;

std::vector<Sample> calm(const std::string& group, int seconds) {
  std::vector<Sample> out;
  for (int t = 1; t <= seconds; ++t) {
    Sample s;
    s.tsMs = kT0 + t * 1000;
    s.group = group;
    s.sends = 10;
    s.ok = 10;
    out.push_back(s);
  }
  return out;
}
Sample& at(std::vector<Sample>& v, int second) { return v[static_cast<std::size_t>(second - 1)]; }
}  // namespace

class TestIncidentDetector : public QObject {
  Q_OBJECT
 private slots:
  void calmHistoryHasNoIncident() {
    QVERIFY(IncidentDetector().detect(calm("a", 600), {}).empty());
  }

  void eachSignalTrips_data() {
    QTest::addColumn<QString>("signal");
    QTest::newRow("429 share") << "429_share";
    QTest::newRow("5xx share") << "5xx_share";
    QTest::newRow("breaker") << "breaker_open";
    QTest::newRow("queue growth") << "queue_growth";
    QTest::newRow("shed") << "shed";
  }
  void eachSignalTrips() {
    QFETCH(QString, signal);
    auto rows = calm("a", 300);
    for (int t = 100; t <= 120; ++t) {
      Sample& s = at(rows, t);
      if (signal == "429_share") s.r429 = 5;
      if (signal == "5xx_share") s.r5xx = 3;  // 30% of 10 a second: an upstream failing, no 429 at all
      if (signal == "breaker_open") s.breaker = BreakerState::Open;
      if (signal == "queue_growth") s.queueDepth[2] = (t - 100) * 10;
      if (signal == "shed") s.shed = 3;
    }
    const auto found = IncidentDetector().detect(rows, {});
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found[0].reasons, std::vector<std::string>{signal.toStdString()});
    QVERIFY(found[0].startMs >= kT0 + 99'000 && found[0].endMs <= kT0 + 120'000);
  }

  void smallSharesAndSingle429sAreIgnored() {
    auto rows = calm("a", 300);
    at(rows, 50).r429 = 1;  // 1 of 100 in the window: below min429InWindow and the share
    for (int t = 100; t < 200; t += 3) at(rows, t).r429 = 1;  // ~3% share
    for (int t = 220; t < 280; t += 4) at(rows, t).r5xx = 1;  // ~2.5% of 5xx: an upstream's usual failures
    QVERIFY(IncidentDetector().detect(rows, {}).empty());
  }

  void closeStretchesMergeFarOnesDoNot() {
    IncidentOptions o;
    o.mergeGapMs = 60'000;
    auto rows = calm("a", 1000);
    auto b = calm("b", 1000);
    rows.insert(rows.end(), b.begin(), b.end());
    auto trip = [&](const char* g, int from, int to) {
      for (auto& s : rows)
        if (s.group == g && s.tsMs > kT0 + from * 1000 && s.tsMs <= kT0 + to * 1000) s.shed = 2;
    };
    trip("a", 100, 110);
    trip("b", 150, 160);  // 40 s after "a" ended: same incident, two groups
    trip("a", 400, 410);  // 240 s later: separate
    const auto found = IncidentDetector(o).detect(rows, {});
    QCOMPARE(found.size(), std::size_t(2));
    QCOMPARE(found[0].groups, (std::vector<std::string>{"a", "b"}));
    QCOMPARE(found[0].shed, std::int64_t(40));
    QCOMPARE(found[1].groups, std::vector<std::string>{"a"});
    o.mergeGapMs = 300'000;  // a wider gap merges all three
    QCOMPARE(IncidentDetector(o).detect(rows, {}).size(), std::size_t(1));
  }

  void summaryCountsPeakAndOperatorActions() {
    auto rows = calm("a", 300);
    auto b = calm("b", 300);
    rows.insert(rows.end(), b.begin(), b.end());
    for (auto& s : rows) {
      const auto t = (s.tsMs - kT0) / 1000;
      if (t > 100 && t <= 110) s.r429 = s.group == "a" ? 6 : 4;
    }
    Event inside;
    inside.tsMs = kT0 + 105'000;
    inside.kind = EventKind::OperatorAction;
    Event outside = inside;
    outside.tsMs = kT0 + 250'000;
    Event notAction = inside;
    notAction.kind = EventKind::Burst429Start;
    const auto found = IncidentDetector().detect(rows, {outside, inside, notAction});
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found[0].peak429PerS, 10.0);  // both groups in the same second
    QCOMPARE(found[0].total429, std::int64_t(100));
    QCOMPARE(found[0].operatorActions.size(), std::size_t(1));
    QCOMPARE(found[0].operatorActions[0].tsMs, kT0 + 105'000);
  }
};

QTEST_GUILESS_MAIN(TestIncidentDetector)
#include "test_incident_detector.moc"
