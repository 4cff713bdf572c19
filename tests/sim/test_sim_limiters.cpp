// Limiter algorithms with fake time: each allows up to its limit, blocks, refills, and survives time going
// backwards without negative remaining or a crash.
#include "sim_limiter.h"

#include <QtTest>

using namespace tg;

namespace {
const TimePoint t0 = TimePoint{} + std::chrono::hours(1);
TimePoint at(double s) { return t0 + fromSeconds(s); }
}  // namespace

class TestSimLimiters : public QObject {
  Q_OBJECT

 private slots:
  void allowsUpToLimitThenBlocks_data();
  void allowsUpToLimitThenBlocks();
  void refillsAfterRetryAfter_data();
  void refillsAfterRetryAfter();
  void timeGoingBackwards_data();
  void timeGoingBackwards();
  void checkDoesNotConsume();
  void costLargerThanLimitNeverPasses();
  void fixedWindowResetIsWindowEnd();
  void slidingWindowWeighsPreviousWindow();
  void tokenBucketRefillsGradually();
  void gcraSpacesRequests();
  void setLimitTakesEffect_data();
  void setLimitTakesEffect();

 private:
  void addAlgorithms();
};

void TestSimLimiters::addAlgorithms() {
  QTest::addColumn<int>("algorithm");
  QTest::newRow("fixed-window") << int(LimitAlgorithm::FixedWindow);
  QTest::newRow("sliding-window") << int(LimitAlgorithm::SlidingWindow);
  QTest::newRow("token-bucket") << int(LimitAlgorithm::TokenBucket);
  QTest::newRow("gcra") << int(LimitAlgorithm::Gcra);
}

void TestSimLimiters::allowsUpToLimitThenBlocks_data() { addAlgorithms(); }
void TestSimLimiters::allowsUpToLimitThenBlocks() {
  QFETCH(int, algorithm);
  auto l = makeLimiter(LimitAlgorithm(algorithm), {10, 1, 0}, at(0));
  for (int i = 0; i < 10; ++i) {
    const auto d = l->tryAcquire(1, at(0.001 * i));
    QVERIFY2(d.allowed, qPrintable(QString("request %1 refused").arg(i)));
    QCOMPARE(d.remaining, double(9 - i));
    QCOMPARE(d.limit, 10.0);
  }
  const auto d = l->tryAcquire(1, at(0.01));
  QVERIFY(!d.allowed);
  QCOMPARE(d.remaining, 0.0);
  QVERIFY2(d.retryAfterS > 0 && d.retryAfterS <= 2.0, qPrintable(QString::number(d.retryAfterS)));
  QVERIFY(d.resetInS >= d.retryAfterS - 1e-9);
}

void TestSimLimiters::refillsAfterRetryAfter_data() { addAlgorithms(); }
void TestSimLimiters::refillsAfterRetryAfter() {
  QFETCH(int, algorithm);
  auto l = makeLimiter(LimitAlgorithm(algorithm), {5, 2, 0}, at(0));
  for (int i = 0; i < 5; ++i) QVERIFY(l->tryAcquire(1, at(0.1)).allowed);
  const auto refused = l->tryAcquire(1, at(0.2));
  QVERIFY(!refused.allowed);
  // Just before the announced retry-after still refused, at it allowed: a client honouring it never waits in vain.
  QVERIFY(!l->check(1, at(0.2 + refused.retryAfterS - 0.01)).allowed);
  QVERIFY(l->tryAcquire(1, at(0.2 + refused.retryAfterS + 1e-6)).allowed);
  // After a full quiet reset period everything is back.
  const auto d = l->check(0, at(10));
  QCOMPARE(d.remaining, 5.0);
  if (LimitAlgorithm(algorithm) != LimitAlgorithm::FixedWindow) QCOMPARE(d.resetInS, 0.0);
}

void TestSimLimiters::timeGoingBackwards_data() { addAlgorithms(); }
void TestSimLimiters::timeGoingBackwards() {
  QFETCH(int, algorithm);
  auto l = makeLimiter(LimitAlgorithm(algorithm), {3, 1, 0}, at(5));
  for (int i = 0; i < 3; ++i) QVERIFY(l->tryAcquire(1, at(5)).allowed);
  // The clock jumps back: nothing refills, nothing goes negative, no window is re-opened.
  for (double s : {4.0, 0.0, -100.0, 4.999}) {
    const auto d = l->tryAcquire(1, at(s));
    QVERIFY2(!d.allowed, qPrintable(QString("allowed at %1").arg(s)));
    QVERIFY(d.remaining >= 0);
    QVERIFY(d.retryAfterS >= 0 && d.retryAfterS < 10);
    QVERIFY(d.resetInS >= 0);
  }
  // And time resumes normally afterwards.
  QVERIFY(l->tryAcquire(1, at(7)).allowed);
}

void TestSimLimiters::checkDoesNotConsume() {
  for (auto a : {LimitAlgorithm::FixedWindow, LimitAlgorithm::SlidingWindow, LimitAlgorithm::TokenBucket,
                 LimitAlgorithm::Gcra}) {
    auto l = makeLimiter(a, {2, 1, 0}, at(0));
    for (int i = 0; i < 10; ++i) QVERIFY(l->check(1, at(0)).allowed);
    QCOMPARE(l->check(0, at(0)).remaining, 2.0);
  }
}

void TestSimLimiters::costLargerThanLimitNeverPasses() {
  for (auto a : {LimitAlgorithm::FixedWindow, LimitAlgorithm::SlidingWindow, LimitAlgorithm::TokenBucket,
                 LimitAlgorithm::Gcra}) {
    auto l = makeLimiter(a, {100, 60, 0}, at(0));
    const auto d = l->check(101, at(0));
    QVERIFY(!d.allowed);
    QCOMPARE(d.retryAfterS, kNever);
  }
}

void TestSimLimiters::fixedWindowResetIsWindowEnd() {
  auto l = makeLimiter(LimitAlgorithm::FixedWindow, {2, 10, 0}, at(0));
  QVERIFY(l->tryAcquire(1, at(3)).allowed);
  QVERIFY(l->tryAcquire(1, at(4)).allowed);
  const auto d = l->tryAcquire(1, at(4));
  QVERIFY(!d.allowed);
  QCOMPARE(d.resetInS, 6.0);
  QCOMPARE(d.retryAfterS, 6.0);
  // Windows follow back to back: 25 s is in the window [20, 30).
  QVERIFY(l->tryAcquire(1, at(25)).allowed);
  QCOMPARE(l->check(0, at(25)).resetInS, 5.0);
}

void TestSimLimiters::slidingWindowWeighsPreviousWindow() {
  auto l = makeLimiter(LimitAlgorithm::SlidingWindow, {10, 1, 0}, at(0));
  for (int i = 0; i < 10; ++i) QVERIFY(l->tryAcquire(1, at(0.5)).allowed);
  // At 1.5 s half of the previous window still counts: estimate 5, so 5 more pass.
  for (int i = 0; i < 5; ++i) QVERIFY(l->tryAcquire(1, at(1.5)).allowed);
  const auto d = l->tryAcquire(1, at(1.5));
  QVERIFY(!d.allowed);
  // Needs 10*(1 - t) + 5 + 1 <= 10 -> t >= 0.6 into the window: 0.1 s from now.
  QVERIFY2(std::abs(d.retryAfterS - 0.1) < 1e-6, qPrintable(QString::number(d.retryAfterS)));
  QVERIFY(l->tryAcquire(1, at(1.5 + d.retryAfterS + 1e-6)).allowed);
}

void TestSimLimiters::tokenBucketRefillsGradually() {
  auto l = makeLimiter(LimitAlgorithm::TokenBucket, {10, 1, 5}, at(0));  // 10/s, burst 5
  for (int i = 0; i < 5; ++i) QVERIFY(l->tryAcquire(1, at(0)).allowed);
  QVERIFY(!l->check(1, at(0)).allowed);
  QCOMPARE(l->check(1, at(0)).retryAfterS, 0.1);
  QCOMPARE(l->check(0, at(0.3)).remaining, 3.0);
  QCOMPARE(l->check(0, at(100)).remaining, 5.0);  // capped at the burst
}

void TestSimLimiters::gcraSpacesRequests() {
  auto l = makeLimiter(LimitAlgorithm::Gcra, {4, 1, 1}, at(0));  // one every 250 ms, no burst
  QVERIFY(l->tryAcquire(1, at(0)).allowed);
  const auto d = l->tryAcquire(1, at(0.1));
  QVERIFY(!d.allowed);
  QVERIFY(std::abs(d.retryAfterS - 0.15) < 1e-9);
  QVERIFY(l->tryAcquire(1, at(0.25)).allowed);
}

void TestSimLimiters::setLimitTakesEffect_data() { addAlgorithms(); }
void TestSimLimiters::setLimitTakesEffect() {
  QFETCH(int, algorithm);
  auto l = makeLimiter(LimitAlgorithm(algorithm), {10, 1, 0}, at(0));
  for (int i = 0; i < 5; ++i) QVERIFY(l->tryAcquire(1, at(0)).allowed);
  l->setLimit(5, at(0));
  QCOMPARE(l->limit(), 5.0);
  const auto d = l->tryAcquire(1, at(0));
  QVERIFY(!d.allowed);
  QCOMPARE(d.limit, 5.0);
  QCOMPARE(d.remaining, 0.0);
}

QTEST_GUILESS_MAIN(TestSimLimiters)
#include "test_sim_limiters.moc"
