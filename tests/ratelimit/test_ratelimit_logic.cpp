// Buckets, breaker, adaptive concurrency, retry policy, tier queues and the quota tracker with time
// driven by hand, including time that goes backwards.
#include "adaptive_concurrency.h"
#include "circuit_breaker.h"
#include "quota_tracker.h"
#include "retry_policy.h"
#include "tier_queues.h"
#include "token_bucket.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace tg;
using namespace std::chrono_literals;

namespace {
const TimePoint t0 = TimePoint{} + 1000s;

QuotaScope scope(Dimension d, double limit, double remaining, std::optional<double> resetIn) {
  QuotaScope s;
  s.name = d == Dimension::Requests ? "requests" : "tokens";
  s.dimension = d;
  s.limit = limit;
  s.remaining = remaining;
  s.resetInS = resetIn;
  s.dialect = "x-ratelimit";  // window semantics: capacity returns at the reset
  return s;
}
}  // namespace

class TestRateLimitLogic : public QObject {
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

  void retryPolicyClassifies() {
    RetryConfig c;
    c.maxAttempts = 3;
    RetryPolicy p(c, 42);
    RetryBudget budget(0.1, 10);
    QCOMPARE(p.decide(1, 200, ErrorKind::None, false, false, budget).action, RetryAction::Done);
    QCOMPARE(p.decide(1, 429, ErrorKind::RateLimited, true, false, budget).action, RetryAction::RetryAfterQuota);
    QCOMPARE(p.decide(1, 429, ErrorKind::RateLimited, true, true, budget).action, RetryAction::Fail);
    QCOMPARE(p.decide(1, 400, ErrorKind::Http, false, false, budget).action, RetryAction::Fail);
    QCOMPARE(p.decide(1, 404, ErrorKind::Http, false, false, budget).action, RetryAction::Fail);
    auto d = p.decide(1, 503, ErrorKind::Http, false, false, budget);
    QCOMPARE(d.action, RetryAction::RetryAfterBackoff);
    QVERIFY(d.delayS >= 0 && d.delayS <= c.baseBackoffS);
    QCOMPARE(p.decide(2, 0, ErrorKind::Timeout, false, false, budget).action, RetryAction::RetryAfterBackoff);
    QCOMPARE(p.decide(3, 500, ErrorKind::Http, false, false, budget).action, RetryAction::Fail);  // out of attempts
  }

  void retryAfterZeroHasAFloorAndSpendsTheBudget() {
    RetryConfig c;
    c.maxAttempts = 3;
    c.baseBackoffS = 0.25;
    RetryPolicy p(c, 5);
    RetryBudget budget(0.1, 2);
    // A wait the server named at or above the floor is the quota picture's business, free of the budget.
    QCOMPARE(p.decide(1, 429, ErrorKind::RateLimited, true, false, budget, 1.0).action, RetryAction::RetryAfterQuota);
    QCOMPARE(budget.tokens(), 2.0);
    for (int attempt = 1; attempt <= 2; ++attempt) {
      const auto d = p.decide(attempt, 429, ErrorKind::RateLimited, true, false, budget, 0.0);
      QCOMPARE(d.action, RetryAction::RetryAfterBackoff);
      QVERIFY2(d.delayS >= c.baseBackoffS && d.delayS <= c.baseBackoffS * (1 + 2 * attempt), qPrintable(QString::number(d.delayS)));
    }
    QCOMPARE(budget.tokens(), 0.0);
    QCOMPARE(p.decide(1, 429, ErrorKind::RateLimited, true, false, budget, 0.0).action, RetryAction::Fail);  // budget
    budget.onFirstAttempt();
    for (int i = 0; i < 20; ++i) budget.onFirstAttempt();
    QCOMPARE(p.decide(3, 429, ErrorKind::RateLimited, true, false, budget, 0.1).action, RetryAction::Fail);  // attempts
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

  void retryBackoffIsFullJitterAndCapped() {
    RetryConfig c;
    c.baseBackoffS = 0.5;
    c.maxBackoffS = 4;
    RetryPolicy p(c, 7);
    double maxSeen = 0, minSeen = 100;
    for (int i = 0; i < 2000; ++i) {
      const double b = p.backoffS(10);
      maxSeen = std::max(maxSeen, b);
      minSeen = std::min(minSeen, b);
    }
    QVERIFY(maxSeen <= 4.0);
    QVERIFY(maxSeen > 3.5);  // spread over the whole range
    QVERIFY(minSeen < 0.5);
  }

  void retryBudgetLimitsRetriesToAShareOfRequests() {
    RetryConfig c;
    c.maxAttempts = 100;
    RetryPolicy p(c, 1);
    RetryBudget budget(0.1, 10);
    int retries = 0;
    for (int i = 0; i < 1000; ++i) {
      budget.onFirstAttempt();
      if (p.decide(1, 503, ErrorKind::Http, false, false, budget).action == RetryAction::RetryAfterBackoff) ++retries;
    }
    // 10 up front plus 10% of 1000 requests, never one per failure.
    QVERIFY2(retries <= 110 && retries >= 100, qPrintable(QString::number(retries)));
  }

  void tierQueuesBoundedWithDeadlines() {
    TierQueues<int> q({2, 2, 2});
    int a = 1, b = 2, c = 3;
    QVERIFY(q.push(Tier::P2, std::move(a), t0 + 1s));
    QVERIFY(q.push(Tier::P2, std::move(b), t0 + 5s));
    QVERIFY(!q.push(Tier::P2, std::move(c), t0 + 5s));
    QCOMPARE(c, 3);  // refused: left with the caller to shed
    q.pushFront(Tier::P2, 9);  // retries are never refused
    QCOMPARE(q.size(Tier::P2), 3);
    std::vector<int> shed;
    QCOMPARE(q.shedExpired(t0 + 2s, [&](int v) { shed.push_back(v); }), 1);
    QCOMPARE(shed, std::vector<int>{1});
    QCOMPARE(q.popFront(Tier::P2), 9);
    QCOMPARE(q.popFront(Tier::P2), 2);
    QVERIFY(q.empty(Tier::P2));
  }

  void quotaTrackerFollowsRemainingAndReset() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QCOMPARE(qt.check({1, 0}, t0, 0).wait, Duration::zero());  // nothing known: go
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 10, 2, 4.0));
    qt.onResponse(r, 0, t0, 0);
    qt.onSend({1, 0}, t0);
    qt.onSend({1, 0}, t0);
    QuotaWait w = qt.check({1, 0}, t0, 0);
    QVERIFY(w.wait > 3s && w.wait <= 4s);
    QVERIFY2(w.reason.find("requests exhausted") != std::string::npos, w.reason.c_str());
    QCOMPARE(qt.check({1, 0}, t0 + 4s, 0).wait, Duration::zero());  // window turned over
    QCOMPARE(qt.state(Dimension::Requests, t0 + 4s).remaining, 10.0);
  }

  void quotaTrackerCountsInFlightAsSpent() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 100, 5, 30.0));
    qt.onResponse(r, /*inFlightOthers=*/5, t0, 0);
    QVERIFY(qt.check({1, 0}, t0, 0).wait > Duration::zero());
  }

  void quotaTrackerHonoursBlockAndBackwardsTime() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    qt.blockUntil(t0 + 3s, 0, "Retry-After until 12:00:03", false);
    QuotaWait w = qt.check({1, 0}, t0 + 1s, 0);
    QCOMPARE(w.wait, Duration(2s));
    QCOMPARE(w.reason, std::string("Retry-After until 12:00:03"));
    QVERIFY(qt.check({1, 0}, t0 - 5s, 0).wait > 3s);  // earlier clock: still blocked, never negative
    QCOMPARE(qt.check({1, 0}, t0 + 3s, 0).wait, Duration::zero());
  }

  void quotaTrackerBare429BacksOffExponentially() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QCOMPARE(qt.onBare429(1, 10, t0, 0), Duration(1s));
    // 429s of requests that were already in flight belong to the same episode: no escalation.
    QCOMPARE(qt.onBare429(1, 10, t0 + 100ms, 0), Duration(900ms));
    QCOMPARE(qt.onBare429(1, 10, t0 + 1s, 0), Duration(2s));
    QCOMPARE(qt.onBare429(1, 10, t0 + 3s, 0), Duration(4s));
    QCOMPARE(qt.onBare429(1, 10, t0 + 7s, 0), Duration(8s));
    QCOMPARE(qt.onBare429(1, 10, t0 + 15s, 0), Duration(10s));
    qt.onSuccess(t0 + 30s);
    QCOMPARE(qt.onBare429(1, 10, t0 + 1min, 0), Duration(1s));
  }

  void quotaTrackerLearnsARateFromBare429s() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    TimePoint t = t0;
    for (int i = 0; i < 200; ++i) qt.onSuccess(t += 10ms);  // ~100/s getting through
    qt.onBare429(0.01, 1, t, 0);
    t += 20ms;
    // Paced just under what got through: a burst of 100 cannot go at once any more.
    int sent = 0;
    for (int i = 0; i < 100; ++i) {
      if (qt.check({1, 0}, t, 0).wait == Duration::zero()) {
        qt.onSend({1, 0}, t);
        ++sent;
      }
    }
    QVERIFY2(sent < 40, qPrintable(QString::number(sent)));
    const double before = qt.state(Dimension::Requests, t).localTokens;
    QVERIFY(known(before));
  }

  void quotaTrackerContinuousRefillWaitsForTheShortfallOnly() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    auto reading = [](double remaining, double resetIn) {
      QuotaReading r;
      r.scopes.push_back(scope(Dimension::Requests, 60, remaining, resetIn));
      r.scopes.back().dialect = "openai";
      return r;
    };
    // Remaining grows back before the reset, twice: a continuously refilling upstream (a token bucket).
    qt.onResponse(reading(10, 50.0), 0, t0, 0);
    qt.onResponse(reading(20, 40.0), 0, t0 + 10s, 0);
    qt.onResponse(reading(30, 30.0), 0, t0 + 20s, 0);
    // 60 per window, 0 left, full again in 60 s => one request per second comes back.
    qt.onResponse(reading(0, 60.0), 0, t0 + 30s, 0);
    QuotaWait w = qt.check({1, 0}, t0 + 30s, 0);
    QVERIFY2(w.wait >= 900ms && w.wait <= 1100ms, w.reason.c_str());
    QCOMPARE(qt.check({1, 0}, t0 + 31100ms, 0).wait, Duration::zero());
  }

  // OpenAI-style headers (reset = until full) from a fixed 1-s window of 100, seen through 300 ms of latency
  // and some jitter: each window's turnover arrives late, yet it must never pass for a continuous refill.
  void fixedWindowSeenThroughLatencyIsNotTakenForARefill() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    int countedInWindow = 0, window = 0;
    for (int i = 0; i < 50; ++i) {  // one request every 100 ms, counted 150 ms after sending
      const double u = 0.1 * i + 0.15;  // server time, seconds from t0
      if (int(u) != window) {
        window = int(u);
        countedInWindow = 0;
      }
      ++countedInWindow;
      QuotaReading r;
      r.scopes.push_back(scope(Dimension::Requests, 100, 100 - 9 * countedInWindow, std::ceil(u + 1e-9) - u));
      r.scopes.back().dialect = "openai";
      const TimePoint sent = t0 + std::chrono::milliseconds(100 * i);
      // The last response of each window is handled 40 ms late (a busy loop): a receipt-anchored reset then
      // falls after the next window's first response.
      qt.onResponse(r, 2, sent + (i % 10 == 8 ? 340ms : 300ms), 0, sent);
    }
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 100, 0, 0.5));
    r.scopes.back().dialect = "openai";
    qt.onResponse(r, 0, t0 + 5s, 0, t0 + 5s - 300ms);
    const QuotaWait w = qt.check({1, 0}, t0 + 5s, 0);
    QVERIFY2(w.reason.find("exhausted") != std::string::npos && w.wait >= 450ms, w.reason.c_str());
  }

  // A token bucket holding steady under load: remaining stays flat (5, 6, 5, 6...) while we keep spending,
  // which a fixed window cannot do. Continuous refill is recognised, and an empty bucket waits for one token.
  void tokenBucketHoldingSteadyIsRecognisedAsARefill() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    for (int i = 0; i < 20; ++i) {
      const TimePoint sent = t0 + std::chrono::milliseconds(20 * i);
      const double remaining = 5 + i % 2;
      QuotaReading r;
      r.scopes.push_back(scope(Dimension::Requests, 50, remaining, (50 - remaining) / 50));
      r.scopes.back().dialect = "openai";
      qt.onResponse(r, 1, sent + 30ms, 0, sent);
    }
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 50, 0, 1.0));
    r.scopes.back().dialect = "openai";
    qt.onResponse(r, 0, t0 + 1s, 0, t0 + 1s - 30ms);
    const QuotaWait w = qt.check({1, 0}, t0 + 1s, 0);
    QVERIFY2(w.reason.find("refill") != std::string::npos && w.wait <= 100ms, w.reason.c_str());
  }

  void quotaTrackerOpenAiHeadersOnAFixedWindowWaitForTheReset() {
    // The same dialect from a fixed window: remaining never grows before the reset, so nothing is
    // assumed to come back early.
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 60, 0, 2.0));
    r.scopes.back().dialect = "openai";
    qt.onResponse(r, 0, t0, 0);
    QuotaWait w = qt.check({1, 0}, t0 + 500ms, 0);
    QVERIFY2(w.wait >= 1400ms && w.wait <= 1500ms, w.reason.c_str());
  }

  void unreportedWindowComesFromTheConfigElseFromResetsRoundedUp() {
    // OpenAI-style: a limit of 100, no window in the headers. Inferred, the window is the longest reset
    // rounded up to a provider's length (>= 1 s); a time-compressed simulator configures its 0.1 s window.
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 100, kUnknown, 0.05));
    r.scopes.back().dialect = "openai";
    QuotaTracker inferred(1.0, {0, 0}, t0);
    QuotaTracker configured(1.0, {0, 0}, t0, 0.1);
    inferred.onResponse(r, 0, t0, 0);
    configured.onResponse(r, 0, t0, 0);
    for (int i = 0; i < 100; ++i) {
      inferred.onSend({1, 0}, t0);
      configured.onSend({1, 0}, t0);
    }
    const QuotaWait wi = inferred.check({1, 0}, t0, 0), wc = configured.check({1, 0}, t0, 0);
    QVERIFY2(wi.wait >= 9ms && wi.wait <= 11ms, wi.reason.c_str());  // 100 per 1 s
    QVERIFY2(wc.wait > Duration::zero() && wc.wait <= 1100us, wc.reason.c_str());  // 100 per 0.1 s
  }

  void lowerTiersLeaveAReserveForP0() {
    QuotaTracker qt(1.0, {600, 0}, t0);  // 10/s configured, burst 600
    QVERIFY(qt.reserveTokens() >= 1.0);
    for (int i = 0; i < 599; ++i) qt.onSend({1, 0}, t0);
    // One token left: a P2 request (with reserve) waits, a P0 request goes.
    QVERIFY(qt.check({1, 0}, t0, 0, qt.reserveTokens()).wait > Duration::zero());
    QCOMPARE(qt.check({1, 0}, t0, 0, 0).wait, Duration::zero());
  }

  void quotaTrackerPacesTokensAndReportsLimitChanges() {
    QuotaTracker qt(0.5, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 600, 600, 0.1));
    r.scopes.back().windowS = 60;
    r.scopes.push_back(scope(Dimension::Tokens, 60000, 60000, 0.1));
    r.scopes.back().windowS = 60;
    QVERIFY(!qt.onResponse(r, 0, t0, 0));
    // Bucket at half of 60000 tokens/min = 500 tokens/s, burst 30000.
    qt.onSend({1, 30000}, t0);
    QuotaWait w = qt.check({1, 1000}, t0, 0);
    QVERIFY2(w.reason.rfind("tokens", 0) == 0, w.reason.c_str());
    QVERIFY(w.wait >= 1900ms && w.wait <= 2100ms);
    r.scopes[0].limit = 300;  // the upstream halved the quota
    auto change = qt.onResponse(r, 0, t0 + 1s, 0);
    QVERIFY(change);
    QCOMPARE(change->before, 600.0);
    QCOMPARE(change->after, 300.0);
  }

  void garbageNeverReadsAsExhausted() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, kUnknown, kUnknown, std::nullopt));
    qt.onResponse(r, 0, t0, 0);
    QCOMPARE(qt.check({1, 0}, t0, 0).wait, Duration::zero());
  }
};

QTEST_APPLESS_MAIN(TestRateLimitLogic)
#include "test_ratelimit_logic.moc"
