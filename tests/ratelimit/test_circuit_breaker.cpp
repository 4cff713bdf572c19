// The circuit breaker: trips on a failure share, half-opens, ages old failures; time driven by hand.
#include "circuit_breaker.h"

#include <QtTest>

#include <optional>

using namespace tg;
using namespace std::chrono_literals;

namespace {
const TimePoint t0 = TimePoint{} + 1000s;
}  // namespace

class TestCircuitBreaker : public QObject {
  Q_OBJECT
 private slots:
  void breakerTripsOnFailureShareWithMinimumCalls() {
    BreakerConfig c;
    c.windowS = 10;
    c.minCalls = 10;
    c.failureShare = 0.5;
    c.openS = 5;
    c.halfOpenProbes = 2;
    CircuitBreaker b(c);
    for (int i = 0; i < 9; ++i) QVERIFY(!b.record(true, t0));  // below min calls: stays closed
    auto tr = b.record(true, t0 + 100ms);
    QVERIFY(tr);
    QCOMPARE(tr->to, BreakerState::Open);
    QVERIFY(!b.allow(t0 + 1s));
    std::optional<BreakerTransition> half;
    QVERIFY(b.allow(t0 + 6s, &half));
    QVERIFY(half);
    QCOMPARE(b.state(), BreakerState::HalfOpen);
    b.onSend();
    b.onSend();
    QVERIFY(!b.allow(t0 + 6s));  // probes in flight
    QVERIFY(!b.record(false, t0 + 6500ms));
    auto closed = b.record(false, t0 + 6600ms);
    QVERIFY(closed);
    QCOMPARE(closed->to, BreakerState::Closed);
  }

  void breakerHalfOpenFailureReopens() {
    BreakerConfig c;
    c.minCalls = 2;
    c.openS = 1;
    CircuitBreaker b(c);
    b.record(true, t0);
    b.record(true, t0);
    QCOMPARE(b.state(), BreakerState::Open);
    QVERIFY(b.allow(t0 + 2s));
    b.onSend();
    auto tr = b.record(true, t0 + 2s);
    QVERIFY(tr);
    QCOMPARE(tr->to, BreakerState::Open);
    QVERIFY(!b.allow(t0 + 2500ms));
  }

  void breakerHealthyTrafficStaysClosedAndOldFailuresAge() {
    BreakerConfig c;
    c.minCalls = 5;
    c.windowS = 10;
    CircuitBreaker b(c);
    for (int i = 0; i < 4; ++i) b.record(true, t0);
    for (int i = 0; i < 20; ++i) QVERIFY(!b.record(false, t0 + 20s));  // the old failures left the window
    QCOMPARE(b.state(), BreakerState::Closed);
    QCOMPARE(b.failureShare(t0 + 20s), 0.0);
  }
};

QTEST_APPLESS_MAIN(TestCircuitBreaker)
#include "test_circuit_breaker.moc"
