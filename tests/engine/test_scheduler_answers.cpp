// What the scheduler answers besides a response, with time driven by hand: a caller's cancel wherever the
// request is (queued, backing off, in flight), and the truth a shed carries (reason, when to retry).
#include "scheduler_harness.h"

using namespace tgtest;

namespace {

// The abort callback cancel() takes, recording which tickets it was asked to abort.
struct Aborts {
  std::vector<Ticket> tickets;
  std::function<void(Ticket)> fn() {
    return [this](Ticket t) { tickets.push_back(t); };
  }
};

}  // namespace

class TestSchedulerAnswers : public QObject {
  Q_OBJECT
 private slots:
  void cancelQueuedIsNeverSent() {
    Harness h;
    Aborts aborts;
    h.admit("flying");
    h.admit("queued");
    QCOMPARE(h.dispatch(t0), 1);  // concurrency 1: "queued" waits
    QVERIFY(h.s.cancel(h.handles.at("queued"), "client went away", t0 + 100ms, aborts.fn()));
    QCOMPARE(h.answers.at("queued"), 1);
    QCOMPARE(h.results.at("queued").error, ErrorKind::Cancelled);
    QCOMPARE(h.results.at("queued").errorMessage, std::string("client went away"));
    QCOMPARE(h.results.at("queued").attempts, 0);
    QCOMPARE(h.results.at("queued").waitMs, 100.0);
    QVERIFY(aborts.tickets.empty());  // nothing was in flight for it
    QCOMPARE(h.group(t0).queueDepth[1], 0);
    h.respond(200, {}, t0 + 200ms);
    QCOMPARE(h.dispatch(t0 + 200ms), 0);  // the slot is free and nothing else is queued
    QCOMPARE(h.sent.size(), std::size_t{1});
    // Twice, finished, unknown, zero: ignored.
    QVERIFY(!h.s.cancel(h.handles.at("queued"), "again", t0 + 300ms, aborts.fn()));
    QVERIFY(!h.s.cancel(h.handles.at("flying"), "too late", t0 + 300ms, aborts.fn()));
    QVERIFY(!h.s.cancel(9999, "unknown", t0 + 300ms, aborts.fn()));
    QVERIFY(!h.s.cancel(0, "zero", t0 + 300ms, aborts.fn()));
    QCOMPARE(h.answers.at("queued"), 1);
    QCOMPARE(h.answers.at("flying"), 1);
    QCOMPARE(h.results.at("flying").error, ErrorKind::None);
    QVERIFY(aborts.tickets.empty());
  }

  void cancelBackingOffDropsTheRetry() {
    Harness h;
    Aborts aborts;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(0, {}, t0 + 10ms, ErrorKind::Network);
    QVERIFY(h.s.nextDelayed() != TimePoint::max());  // backing off
    QCOMPARE(h.s.ticketOf(h.handles.at("a")), Ticket{0});
    QVERIFY(h.s.cancel(h.handles.at("a"), "bye", t0 + 20ms, aborts.fn()));
    QCOMPARE(h.answers.at("a"), 1);
    QCOMPARE(h.results.at("a").error, ErrorKind::Cancelled);
    QCOMPARE(h.results.at("a").attempts, 1);
    QCOMPARE(h.s.nextDelayed(), TimePoint::max());
    h.s.releaseDelayed(t0 + 1h);
    QCOMPARE(h.dispatch(t0 + 1h), 0);
    QVERIFY(aborts.tickets.empty());
  }

  // Of several backing off, only the cancelled one goes; the others keep their order.
  void cancelOneOfSeveralBackingOff() {
    EngineConfig c = config();
    c.groups[0].concurrency = 3;
    c.tiers[1].capacity = 10;
    c.retry.budgetMinRetries = 10;
    Harness h(c);
    Aborts aborts;
    for (const char* id : {"a", "b", "c"}) h.admit(id);
    QCOMPARE(h.dispatch(t0), 3);
    for (std::size_t i = 0; i < 3; ++i)
      h.respond(0, {}, t0 + std::chrono::milliseconds(10 * (i + 1)), ErrorKind::Network, h.sent[i].ticket);
    QVERIFY(h.s.cancel(h.handles.at("b"), "bye", t0 + 50ms, aborts.fn()));
    h.s.releaseDelayed(t0 + 1h);
    QCOMPARE(h.dispatch(t0 + 1h), 2);
    QCOMPARE(h.answers.count("a"), std::size_t{0});
    QCOMPARE(h.answers.at("b"), 1);
    QCOMPARE(h.answers.count("c"), std::size_t{0});
  }

  void cancelInFlightAbortsItsTransferFirst() {
    Harness h;
    Aborts aborts;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    const Ticket t = h.sent.back().ticket;
    QCOMPARE(h.s.ticketOf(h.handles.at("a")), t);
    QCOMPARE(h.s.ticketOf(h.handles.at("b")), Ticket{0});
    bool answeredBeforeAbort = false;
    QVERIFY(h.s.cancel(h.handles.at("a"), "client went away", t0 + 1s, [&](Ticket x) {
      answeredBeforeAbort = h.answers.count("a") > 0;
      aborts.tickets.push_back(x);
    }));
    QVERIFY(!answeredBeforeAbort);
    QCOMPARE(aborts.tickets, std::vector<Ticket>{t});
    QCOMPARE(h.answers.at("a"), 1);
    QCOMPARE(h.results.at("a").error, ErrorKind::Cancelled);
    QCOMPARE(h.group(t0 + 1s).inFlight, 0);
    QCOMPARE(h.s.ticketOf(h.handles.at("a")), Ticket{0});
    // A late response for the aborted ticket changes nothing; the freed slot takes "b".
    h.respond(200, {}, t0 + 1s, ErrorKind::None, t);
    QCOMPARE(h.answers.at("a"), 1);
    QCOMPARE(h.results.at("a").error, ErrorKind::Cancelled);
    QCOMPARE(h.dispatch(t0 + 1s), 1);
  }

  void cancelAfterARetryFindsItInTheQueue() {
    Harness h;
    Aborts aborts;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"Retry-After", "2"}}, t0);  // back at the front of its tier
    QCOMPARE(h.group(t0).queueDepth[1], 1);
    QVERIFY(h.s.cancel(h.handles.at("a"), "bye", t0 + 1s, aborts.fn()));
    QVERIFY(aborts.tickets.empty());
    QCOMPARE(h.results.at("a").error, ErrorKind::Cancelled);
    QCOMPARE(h.group(t0 + 1s).queueDepth[1], 0);
    QCOMPARE(h.dispatch(t0 + 3s), 0);
  }

  // A half-open probe the caller cancels frees its slot: the breaker is not stuck half-open for good.
  void cancelledProbeFreesTheBreaker() {
    EngineConfig c = config();
    c.groups[0].breaker = BreakerConfig{10, 1, 0.5, 5, 1};
    c.groups[0].concurrency = 2;
    c.retry.maxAttempts = 1;
    Harness h(c);
    Aborts aborts;
    h.admit("fail");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(500, {}, t0);
    QCOMPARE(h.group(t0).breaker, BreakerState::Open);
    h.admit("probe", Tier::P1, 60);
    h.admit("next", Tier::P1, 60);
    QCOMPARE(h.dispatch(t0 + 5s), 1);  // one probe at a time
    QCOMPARE(h.group(t0 + 5s).breaker, BreakerState::HalfOpen);
    QVERIFY(h.s.cancel(h.handles.at("probe"), "bye", t0 + 6s, aborts.fn()));
    QCOMPARE(h.dispatch(t0 + 6s), 1);  // "next" is the new probe
    h.respond(200, {}, t0 + 6s);
    QCOMPARE(h.group(t0 + 6s).breaker, BreakerState::Closed);
  }
};

QTEST_GUILESS_MAIN(TestSchedulerAnswers)
#include "test_scheduler_answers.moc"
