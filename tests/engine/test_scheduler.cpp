// The scheduler with time driven by hand (including time going backwards) and no HTTP: admission, tier
// order, deadlines, retries and the retry budget, Retry-After (0 included), the breaker and the quota picture.
#include "scheduler_harness.h"

using namespace tgtest;

class TestScheduler : public QObject {
  Q_OBJECT
 private slots:
  void higherTierGoesFirst() {
    Harness h;
    h.admit("low", Tier::P2);
    h.admit("mid", Tier::P1);
    h.admit("high", Tier::P0);
    QCOMPARE(h.dispatch(t0), 1);  // concurrency 1
    QCOMPARE(h.sent.back().url, std::string("http://127.0.0.1:9/v1/x"));
    h.respond(200, {}, t0 + 10ms);
    QCOMPARE(h.results.at("high").status, 200);
    QCOMPARE(h.dispatch(t0 + 10ms), 1);
    h.respond(200, {}, t0 + 20ms);
    QVERIFY(h.results.count("mid"));
    QVERIFY(!h.results.count("low"));
    QCOMPARE(h.dispatch(t0 + 20ms), 1);
    h.respond(200, {}, t0 + 30ms);
    QCOMPARE(h.results.at("low").error, ErrorKind::None);
    QCOMPARE(h.group(t0 + 30ms).counters.completed, std::uint64_t{3});
  }

  void headersCarryTierGroupAndAuth() {
    EngineConfig c = config();
    c.groups[0].keys[0].secret = "sk-test-secret";
    Harness h(c);
    h.admit("a", Tier::P0);
    QCOMPARE(h.dispatch(t0), 1);
    const auto& lines = *h.sent.back().headerLines;
    QVERIFY(std::find(lines.begin(), lines.end(), "Authorization: Bearer sk-test-secret") != lines.end());
    QVERIFY(std::find(lines.begin(), lines.end(), "X-Tollgate-Tier: P0") != lines.end());
    QVERIFY(std::find(lines.begin(), lines.end(), "X-RateLimit-Group: g") != lines.end());
    QVERIFY(h.sent.back().cacheableHeaders);
  }

  void refusedRequestsAreAnsweredAtOnce() {
    Harness h;
    h.admit("nogroup", Tier::P1, 0, t0, "nope");
    h.admit("elsewhere", Tier::P1, 0, t0, "g", "http://evil.example/steal");
    h.admit("a", Tier::P1);
    h.admit("b", Tier::P1);
    h.admit("c", Tier::P1);  // P1 capacity is 2
    QCOMPARE(h.results.at("nogroup").error, ErrorKind::Config);
    QCOMPARE(h.results.at("elsewhere").error, ErrorKind::Config);
    QVERIFY(h.results.at("elsewhere").errorMessage.find("evil.example") != std::string::npos);
    QCOMPARE(h.results.at("c").error, ErrorKind::Shed);
    QCOMPARE(h.results.at("c").errorMessage, std::string("queue full (P1 capacity 2)"));
    QVERIFY(!h.results.count("a"));
    QCOMPARE(h.group(t0).queueDepth[1], 2);
  }

  void deadlineShedsByTheTimeGiven() {
    Harness h;
    h.s.setGroupPaused("g", true, "test", kEpoch0);
    h.admit("a", Tier::P1, 1.0);
    QCOMPARE(h.dispatch(t0), 0);
    QCOMPARE(h.group(t0).waitReason, std::string("group paused"));
    h.s.sweep(t0 + 500ms, epochAt(t0 + 500ms));
    QVERIFY(!h.results.count("a"));
    h.s.sweep(t0 - 1h, epochAt(t0 - 1h));  // time going backwards sheds nothing
    QVERIFY(!h.results.count("a"));
    h.s.sweep(t0 + 1500ms, epochAt(t0 + 1500ms));
    QCOMPARE(h.results.at("a").error, ErrorKind::Shed);
    QVERIFY2(h.results.at("a").errorMessage.find("deadline passed after 1.5 s queued (P1): group paused") == 0,
             h.results.at("a").errorMessage.c_str());
    QCOMPARE(h.count(EventKind::RequestShed), 1);
    QCOMPARE(h.events.back().tsMs, epochAt(t0 + 1500ms));  // the sweep's time, not the clock's
  }

  void transientFailureBacksOffWithinBudget() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(0, {}, t0 + 10ms, ErrorKind::Network);
    QVERIFY(!h.results.count("a"));  // backing off
    const TimePoint retryAt = h.s.nextDelayed();
    QVERIFY(retryAt > t0 + 10ms && retryAt <= t0 + 10ms + 500ms);
    // "b" goes meanwhile; its failure finds the budget (one retry) spent.
    QCOMPARE(h.dispatch(t0 + 10ms), 1);
    h.respond(0, {}, t0 + 20ms, ErrorKind::Timeout);
    QCOMPARE(h.results.at("b").error, ErrorKind::Timeout);
    QVERIFY(h.results.at("b").errorMessage.find("retry budget exhausted") != std::string::npos);
    h.s.releaseDelayed(retryAt - 1ms);
    QCOMPARE(h.dispatch(retryAt - 1ms), 0);
    h.s.releaseDelayed(retryAt);
    QCOMPARE(h.dispatch(retryAt), 1);
    h.respond(200, {}, retryAt + 5ms);
    QCOMPARE(h.results.at("a").attempts, 2);
    QCOMPARE(h.results.at("a").error, ErrorKind::None);
    QCOMPARE(h.group(retryAt).counters.retries, std::uint64_t{1});
  }

  void retryAfterHoldsTheKey() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"Retry-After", "2"}}, t0);
    QVERIFY(!h.results.count("a"));  // back at the front of its tier, waiting on the quota picture
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    QVERIFY2(h.group(t0 + 1s).waitReason.find("Retry-After") != std::string::npos, h.group(t0 + 1s).waitReason.c_str());
    QVERIFY(h.wake > t0 + 1s && h.wake <= t0 + 2s);
    QCOMPARE(h.dispatch(t0 - 30s), 0);  // backwards: still held
    QCOMPARE(h.dispatch(t0 + 2100ms), 1);
    h.respond(200, {}, t0 + 2200ms);
    QCOMPARE(h.results.at("a").attempts, 2);
    QCOMPARE(h.group(t0 + 3s).counters.r429, std::uint64_t{1});
    QCOMPARE(h.count(EventKind::Burst429Start), 1);
  }

  void retryAfterZeroStillWaitsTheFloor() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"Retry-After", "0"}}, t0);
    // "b" may not go at once: the key is held for base_backoff_s (0.5 s).
    QCOMPARE(h.dispatch(t0), 0);
    QCOMPARE(h.dispatch(t0 + 400ms), 0);
    QCOMPARE(h.dispatch(t0 + 600ms), 1);
    QCOMPARE(h.sent.size(), std::size_t{2});
    // "a" backs off at least the floor before its retry.
    QVERIFY(h.s.nextDelayed() >= t0 + 500ms);
  }

  void exhaustedQuotaFailsFastAndHoldsTheKey() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "3600"}}, t0);
    QCOMPARE(h.results.at("a").error, ErrorKind::QuotaExhausted);
    QCOMPARE(h.count(EventKind::QuotaExhausted), 1);
    QCOMPARE(h.events.back().kind, EventKind::Burst429Start);
    QCOMPARE(h.events.back().detail.at("classification").get<std::string>(), std::string("quota_exhausted"));
    h.admit("b", Tier::P1, 0, t0 + 1s);
    QCOMPARE(h.dispatch(t0 + 60s), 0);
    QVERIFY2(h.group(t0 + 60s).waitReason.find("quota exhausted until") == 0, h.group(t0 + 60s).waitReason.c_str());
    QCOMPARE(h.dispatch(t0 + 3601s), 1);
  }

  void remainingZeroWaitsForTheReset() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(200, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "5"}}, t0);
    QCOMPARE(h.results.at("a").error, ErrorKind::None);
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    QVERIFY(!h.group(t0 + 1s).waitReason.empty());
    QCOMPARE(h.dispatch(t0 + 5100ms), 1);
  }

  void bare429BacksOffAndLearnsARate() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {}, t0);
    QVERIFY(!h.results.count("a"));  // waits on the quota picture
    QCOMPARE(h.dispatch(t0 + 500ms), 0);
    QVERIFY2(h.group(t0 + 500ms).waitReason.find("bare 429: backing off") == 0,
             h.group(t0 + 500ms).waitReason.c_str());
    QCOMPARE(h.dispatch(t0 - 5s), 0);  // backwards: still backing off
    QVERIFY(known(h.group(t0 + 500ms).dims[0].localTokens));  // a request rate was learned
    QCOMPARE(h.dispatch(t0 + 3s), 1);
    h.respond(200, {}, t0 + 3s);
    QCOMPARE(h.results.at("a").attempts, 2);
  }

  void breakerOpensProbesAndCloses() {
    Harness h(breakerConfig());
    h.failTwice(t0);
    QCOMPARE(h.group(t0).breaker, BreakerState::Open);
    QCOMPARE(h.count(EventKind::BreakerTransition), 1);
    h.admit("c");
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    QVERIFY(h.group(t0 + 1s).waitReason.find("breaker open until") == 0);
    QCOMPARE(h.wake, t0 + 5s);
    QCOMPARE(h.dispatch(t0 - 1s), 0);  // backwards: still open
    QCOMPARE(h.dispatch(t0 + 5s), 1);  // half-open probe
    QCOMPARE(h.group(t0 + 5s).breaker, BreakerState::HalfOpen);
    h.respond(200, {}, t0 + 5s);
    QCOMPARE(h.group(t0 + 5s).breaker, BreakerState::Closed);
    QCOMPARE(h.count(EventKind::BreakerTransition), 3);
  }

  void resendSpendsAttemptsAndBudget() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    const Ticket t = h.sent.back().ticket;
    QVERIFY(h.s.allowResend(t));   // attempt 2, the one budgeted retry
    QVERIFY(!h.s.allowResend(t));  // budget spent
    QVERIFY(!h.s.allowResend(t + 100));
    h.respond(200, {}, t0);
    QCOMPARE(h.results.at("a").attempts, 2);
  }

  void cancelAnswersEveryRequestOnce() {
    Harness h;
    h.admit("flying");
    h.admit("queued");
    QCOMPARE(h.dispatch(t0), 1);
    h.s.cancelAll("engine stopped", t0);
    h.s.cancelInFlight(h.sent.back().ticket, "engine stopped while in flight", t0);
    h.s.cancelInFlight(h.sent.back().ticket, "again", t0);
    QCOMPARE(h.answers.at("flying"), 1);
    QCOMPARE(h.answers.at("queued"), 1);
    QCOMPARE(h.results.at("flying").errorMessage, std::string("engine stopped while in flight"));
    QCOMPARE(h.results.at("queued").error, ErrorKind::Cancelled);
    QCOMPARE(h.group(t0).inFlight, 0);
  }

  void failedSendFailsTheRequest() {
    Harness h;
    h.admit("a");
    h.s.dispatch(t0, kEpoch0, [](const Dispatch&) -> std::optional<SendError> {
      return SendError{ErrorKind::Config, "curl_easy_setopt(CURLOPT_URL): bad"};
    });
    QCOMPARE(h.results.at("a").error, ErrorKind::Config);
    QCOMPARE(h.group(t0).inFlight, 0);
    QCOMPARE(h.group(t0).counters.sends, std::uint64_t{0});
  }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
