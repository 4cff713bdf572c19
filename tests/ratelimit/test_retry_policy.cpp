// The retry policy and its budget: what is retried, Retry-After floors, full-jitter backoff, the budget.
#include "retry_policy.h"

#include <QtTest>

using namespace tg;

class TestRetryPolicy : public QObject {
  Q_OBJECT
 private slots:
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
};

QTEST_APPLESS_MAIN(TestRetryPolicy)
#include "test_retry_policy.moc"
