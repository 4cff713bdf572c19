// Adaptive concurrency: shrinks on 429 and latency growth, grows back under the operator ceiling.
#include "adaptive_concurrency.h"

#include <QtTest>

using namespace tg;
using namespace std::chrono_literals;

namespace {
const TimePoint t0 = TimePoint{} + 1000s;
}  // namespace

class TestAdaptiveConcurrency : public QObject {
  Q_OBJECT
 private slots:
  void adaptiveShrinksOn429AndGrowsBackUnderCeiling() {
    AdaptiveConcurrency a(20, 1, true, t0);
    QCOMPARE(a.limit(), 20);
    a.onRateLimited(t0 + 2s);
    QCOMPARE(a.limit(), 14);
    a.onRateLimited(t0 + 2100ms);  // same burst: counted once
    QCOMPARE(a.limit(), 14);
    TimePoint t = t0 + 3s;
    for (int i = 0; i < 2000; ++i) a.onSuccess(0.05, t += 1ms);
    QCOMPARE(a.limit(), 20);  // never above the ceiling
    a.setCeiling(5);
    QCOMPARE(a.limit(), 5);
    for (int i = 0; i < 30; ++i) a.onRateLimited(t += 2s);
    QCOMPARE(a.limit(), 1);  // never below the minimum
  }

  void adaptiveBacksOffOnLatencyGrowth() {
    AdaptiveConcurrency a(32, 1, true, t0);
    TimePoint t = t0;
    for (int i = 0; i < 500; ++i) a.onSuccess(0.02, t += 10ms);
    QCOMPARE(a.limit(), 32);
    for (int i = 0; i < 100; ++i) a.onSuccess(0.5, t += 10ms);  // upstream queueing
    QVERIFY2(a.limit() < 32, qPrintable(QString::number(a.limit())));
  }

  void adaptiveOffMeansOperatorCeiling() {
    AdaptiveConcurrency a(8, 1, false, t0);
    a.onRateLimited(t0 + 5s);
    QCOMPARE(a.limit(), 8);
  }
};

QTEST_APPLESS_MAIN(TestAdaptiveConcurrency)
#include "test_adaptive_concurrency.moc"
