// 429-burst tracking with time driven by hand: one start event per burst, the end after a quiet spell.
#include "burst_tracker.h"

#include <QtTest>

using namespace tg;
using namespace std::chrono_literals;

namespace {
const TimePoint t0 = TimePoint{} + 5000s;

QuotaVerdict verdict(VerdictClass c, std::string reason = "r") {
  QuotaVerdict v;
  v.classification = c;
  v.reason = std::move(reason);
  return v;
}
}  // namespace

class TestBurstTracker : public QObject {
  Q_OBJECT
 private slots:
  void startsOnceAndEndsAfterQuiet() {
    BurstTracker b;
    QuotaReading r;
    r.retryAfterS = 3.0;
    auto start = b.onRateLimited(r, verdict(VerdictClass::Burst, "Retry-After until 12:00:03 UTC"), t0);
    QVERIFY(start);
    QCOMPARE(start->kind, EventKind::Burst429Start);
    QCOMPARE(start->severity, Severity::Info);
    QCOMPARE(start->message, std::string("429 burst: Retry-After until 12:00:03 UTC"));
    QCOMPARE(start->detail.at("classification").get<std::string>(), std::string("burst"));
    QCOMPARE(start->detail.at("retry_after_s").get<double>(), 3.0);
    QCOMPARE(start->logLine, std::string("429 burst: Retry-After until 12:00:03 UTC"));
    QVERIFY(!b.onRateLimited(r, verdict(VerdictClass::Burst), t0 + 100ms));
    QVERIFY(!b.onRateLimited(r, verdict(VerdictClass::Burst), t0 + 200ms));
    QVERIFY(!b.onRateLimited(r, verdict(VerdictClass::Burst), t0 + 1500ms));
    QCOMPARE(b.count(), 4);
    QCOMPARE(b.peakPerSecond(), 3);
    QVERIFY(!b.sweep(t0 + 3s));             // 1.5 s quiet: still on
    QVERIFY(!b.sweep(t0 - 10s));            // time going backwards ends nothing
    auto end = b.sweep(t0 + 3600ms);        // 2.1 s quiet
    QVERIFY(end);
    QCOMPARE(end->kind, EventKind::Burst429End);
    QCOMPARE(end->message, std::string("429 burst over: 4 in 2 s, peak 3/s"));
    QCOMPARE(end->detail.at("count").get<int>(), 4);
    QCOMPARE(end->detail.at("duration_s").get<double>(), 1.5);
    QVERIFY(!b.active());
    QVERIFY(!b.sweep(t0 + 10s));
  }

  void exhaustedIsAWarningAndANewBurstStartsAfresh() {
    BurstTracker b;
    QuotaReading r;
    QVERIFY(b.onRateLimited(r, verdict(VerdictClass::Unknown, ""), t0));
    QVERIFY(b.sweep(t0 + 3s));
    auto again = b.onRateLimited(r, verdict(VerdictClass::QuotaExhausted, "requests exhausted"), t0 + 4s);
    QVERIFY(again);
    QCOMPARE(again->severity, Severity::Warn);
    QVERIFY(again->logAsWarning);
    QCOMPARE(again->message, std::string("429 quota exhausted: requests exhausted"));
    QCOMPARE(b.count(), 1);
    QCOMPARE(b.peakPerSecond(), 1);
  }

  void unknownHasNoQuotaHeaders() {
    BurstTracker b;
    auto e = b.onRateLimited(QuotaReading{}, verdict(VerdictClass::Unknown, ""), t0);
    QVERIFY(e);
    QCOMPARE(e->message, std::string("429 (no quota headers)"));
    QCOMPARE(e->logLine, std::string("429 unknown"));
  }
};

QTEST_GUILESS_MAIN(TestBurstTracker)
#include "test_burst_tracker.moc"
