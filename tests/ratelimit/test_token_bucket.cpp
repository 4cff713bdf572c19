// A token bucket (and the saturating time conversions it rests on), time driven by hand, backwards included.
#include "token_bucket.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace tg;
using namespace std::chrono_literals;

namespace {
const TimePoint t0 = TimePoint{} + 1000s;
}  // namespace

class TestTokenBucket : public QObject {
  Q_OBJECT
 private slots:
  void bucketAllowsBurstThenRefills() {
    TokenBucket b(10, 5, t0);
    for (int i = 0; i < 5; ++i) QVERIFY(b.tryAcquire(1, t0));
    QVERIFY(!b.tryAcquire(1, t0));
    QCOMPARE(b.timeUntil(1, t0), fromSeconds(0.1));
    QVERIFY(!b.tryAcquire(1, t0 + 50ms));
    QVERIFY(b.tryAcquire(1, t0 + 100ms));
    // Long idle never exceeds the burst.
    QCOMPARE(b.level(t0 + 1h), 5.0);
  }

  void bucketTimeBackwardsAccruesNothing() {
    TokenBucket b(10, 5, t0);
    for (int i = 0; i < 5; ++i) QVERIFY(b.tryAcquire(1, t0));
    QVERIFY(!b.tryAcquire(1, t0 - 10s));
    QCOMPARE(b.level(t0 - 10s), 0.0);
    QVERIFY(b.tryAcquire(1, t0 + 100ms));  // resumes from the last good time
  }

  void bucketOversizedCostWaitsForFullThenGoesIntoDebt() {
    TokenBucket b(10, 5, t0);
    QVERIFY(b.tryAcquire(1, t0));
    QVERIFY(!b.tryAcquire(50, t0));
    QVERIFY(b.tryAcquire(50, t0 + 100ms));  // full again: allowed once
    QVERIFY(b.level(t0 + 100ms) < 0);
    QVERIFY(b.timeUntil(1, t0 + 100ms) > 4s);  // debt repaid before the next unit
  }

  void timeFromOutsideSaturates() {
    // Seconds from headers or deadlines convert without undefined behaviour, and adding them to now stays
    // representable.
    QCOMPARE(fromSeconds(std::nan("")), Duration::zero());
    QVERIFY(fromSeconds(1e10) > fromSeconds(1e9));
    QCOMPARE(fromSeconds(1e300), fromSeconds(kMaxDurationS));
    QCOMPARE(fromSeconds(-1e300), fromSeconds(-kMaxDurationS));
    QCOMPARE(fromSeconds(std::numeric_limits<double>::infinity()), fromSeconds(kMaxDurationS));
    QVERIFY(t0 + fromSeconds(1e19) > t0);
    QCOMPARE(addSaturating(t0, Duration::max()), TimePoint::max());
    QCOMPARE(addSaturating(TimePoint::min() + 1s, -2s), TimePoint::min());
    QCOMPARE(addSaturating(TimePoint::max() - 1s, 2s), TimePoint::max());
    QCOMPARE(addSaturating(t0, 5s), t0 + 5s);
    // A bucket with a vanishing rate answers a long wait, not an overflowed one.
    TokenBucket b(1e-300, 1, t0);
    QVERIFY(b.tryAcquire(1, t0));
    QVERIFY(b.timeUntil(1, t0) > 24h * 365);
  }
};

QTEST_APPLESS_MAIN(TestTokenBucket)
#include "test_token_bucket.moc"
