// What the scheduler answers besides a response, with time driven by hand: a caller's cancel wherever the
// request is (queued, backing off, in flight), and the truth a shed carries (reason, when to retry).
#include "scheduler_harness.h"
#include "secret.h"

#include <cmath>

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

  // A request cancelled in flight no longer holds the tokens it reserved: the next reading of the upstream's
  // remaining tokens is not lowered by them. (They were kept: every client that hung up on the gateway
  // mid-request left its reservation behind, and the key sent less and less.)
  void cancelInFlightReleasesItsTokens() {
    EngineConfig c = config();
    c.groups[0].concurrency = 2;
    Harness h(c);
    Aborts aborts;
    h.maxTokens = 1000;
    h.admit("big");
    h.maxTokens = 0;
    h.admit("small");
    QCOMPARE(h.dispatch(t0), 2);
    QVERIFY(h.s.cancel(h.handles.at("big"), "client went away", t0 + 10ms, aborts.fn()));
    h.respond(200, {{"x-ratelimit-limit-tokens", "10000"}, {"x-ratelimit-remaining-tokens", "5000"}}, t0 + 20ms,
              ErrorKind::None, h.sent[1].ticket);
    QCOMPARE(h.group(t0 + 20ms).dims[static_cast<int>(Dimension::Tokens)].remaining, 5000.0);
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
    h.respond(429, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "2"}},
              t0);  // back at the front of its tier, waiting for the reset
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

  // --- what a shed tells: reason, when to try again, whether to ---

  // The brief's example: queued behind a quota that resets in 4 s when the deadline passes, the answer
  // says ~4 s (not 0, not the deadline).
  void deadlineShedCarriesTheQuotaWait() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(200, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "6"}}, t0);
    h.admit("b", Tier::P1, 2.0, t0);
    QCOMPARE(h.dispatch(t0 + 100ms), 0);
    h.s.sweep(t0 + 2s, epochAt(t0 + 2s));
    const Result& b = h.results.at("b");
    QCOMPARE(b.error, ErrorKind::Shed);
    QCOMPARE(b.shed, ShedReason::Deadline);
    QVERIFY2(b.retryAfterS > 3.8 && b.retryAfterS < 4.1, QByteArray::number(b.retryAfterS));
    QVERIFY(!b.retryUseless);
    const GroupCounters c = h.group(t0 + 2s).counters;
    QCOMPARE(c.shedByReason[static_cast<std::size_t>(ShedReason::Deadline)], std::uint64_t{1});
    QCOMPARE(c.shed, std::uint64_t{1});
  }

  // Queued behind nothing but concurrency: no time is known.
  void deadlineShedBehindConcurrencyHasNoTime() {
    Harness h;
    h.admit("a");
    h.admit("b", Tier::P1, 1.0);
    QCOMPARE(h.dispatch(t0), 1);
    h.s.sweep(t0 + 1500ms, epochAt(t0 + 1500ms));
    QCOMPARE(h.results.at("b").shed, ShedReason::Deadline);
    QVERIFY(std::isnan(h.results.at("b").retryAfterS));
    QVERIFY(!h.results.at("b").retryUseless);
  }

  void queueFullCarriesTheQuotaWait() {
    Harness h;  // P1 capacity 2
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(200, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "6"}}, t0);
    h.admit("b", Tier::P1, 60, t0);
    h.admit("c", Tier::P1, 60, t0);
    QCOMPARE(h.dispatch(t0 + 100ms), 0);
    h.admit("d", Tier::P1, 60, t0 + 1s);
    const Result& d = h.results.at("d");
    QCOMPARE(d.error, ErrorKind::Shed);
    QCOMPARE(d.shed, ShedReason::QueueFull);
    QVERIFY2(d.retryAfterS > 4.9 && d.retryAfterS < 5.1, QByteArray::number(d.retryAfterS));
    QCOMPARE(h.group(t0 + 1s).counters.shedByReason[static_cast<std::size_t>(ShedReason::QueueFull)],
             std::uint64_t{1});
  }

  void breakerShedCarriesItsCoolDown() {
    Harness h(breakerConfig());
    h.failTwice(t0);
    QCOMPARE(h.group(t0).breaker, BreakerState::Open);  // open until t0 + 5 s
    // The failure that opened it already says when the group takes requests again.
    QVERIFY2(std::abs(h.results.at("b").retryAfterS - 5.0) < 0.01, QByteArray::number(h.results.at("b").retryAfterS));
    h.admit("c", Tier::P1, 2.0, t0 + 1s);
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    h.s.sweep(t0 + 3500ms, epochAt(t0 + 3500ms));
    const Result& r = h.results.at("c");
    QCOMPARE(r.shed, ShedReason::BreakerOpen);
    QVERIFY2(std::abs(r.retryAfterS - 1.5) < 0.01, QByteArray::number(r.retryAfterS));
    QVERIFY(!r.retryUseless);
    QCOMPARE(h.group(t0 + 3500ms).counters.shedByReason[static_cast<std::size_t>(ShedReason::BreakerOpen)],
             std::uint64_t{1});
  }

  // An operator's pause has no end anyone knows: no time, and not worth a client's retry.
  void pausedShedHasNoTime() {
    Harness h;
    h.s.setTierPaused(Tier::P2, true, "", "test", kEpoch0);
    h.admit("tier", Tier::P2, 1.0);
    QCOMPARE(h.dispatch(t0), 0);
    h.s.sweep(t0 + 1500ms, epochAt(t0 + 1500ms));
    h.s.setTierPaused(Tier::P2, false, "", "test", kEpoch0);
    h.s.setGroupPaused("g", true, "test", kEpoch0);
    h.admit("group", Tier::P1, 1.0, t0 + 2s);
    QCOMPARE(h.dispatch(t0 + 2s), 0);
    h.s.sweep(t0 + 3500ms, epochAt(t0 + 3500ms));
    for (const char* id : {"tier", "group"}) {
      const Result& r = h.results.at(id);
      QCOMPARE(r.error, ErrorKind::Shed);
      QCOMPARE(r.shed, ShedReason::TierPaused);
      QVERIFY(std::isnan(r.retryAfterS));
      QVERIFY(r.retryUseless);
    }
    QCOMPARE(h.group(t0 + 4s).counters.shedByReason[static_cast<std::size_t>(ShedReason::TierPaused)],
             std::uint64_t{2});
  }

  void exhaustedQuotaSaysUntilWhenAndNotToRetry() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "3600"}}, t0);
    const Result& a = h.results.at("a");  // sent, then answered without another send
    QCOMPARE(a.error, ErrorKind::QuotaExhausted);
    QCOMPARE(a.shed, ShedReason::QuotaExhausted);
    QVERIFY2(std::abs(a.retryAfterS - 3600) < 1, QByteArray::number(a.retryAfterS));
    QVERIFY(a.retryUseless);
    QCOMPARE(a.status, 429);
    h.admit("b", Tier::P1, 2.0, t0 + 1s);
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    h.s.sweep(t0 + 3500ms, epochAt(t0 + 3500ms));
    const Result& b = h.results.at("b");  // never sent
    QCOMPARE(b.error, ErrorKind::Shed);
    QCOMPARE(b.shed, ShedReason::QuotaExhausted);
    QVERIFY2(std::abs(b.retryAfterS - 3596.5) < 1, QByteArray::number(b.retryAfterS));
    QVERIFY(b.retryUseless);
    const GroupCounters c = h.group(t0 + 4s).counters;
    QCOMPARE(c.shedByReason[static_cast<std::size_t>(ShedReason::QuotaExhausted)], std::uint64_t{1});  // "b" only
    QCOMPARE(c.shed, std::uint64_t{1});
  }

  void drainingShedsAndCounts() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.s.drainGroup("g", "ops", t0 + 1s, epochAt(t0 + 1s));
    const Result& b = h.results.at("b");
    QCOMPARE(b.error, ErrorKind::Cancelled);
    QCOMPARE(b.shed, ShedReason::Draining);
    QVERIFY(std::isnan(b.retryAfterS));
    QVERIFY(b.retryUseless);
    const GroupCounters c = h.group(t0 + 2s).counters;
    QCOMPARE(c.shedByReason[static_cast<std::size_t>(ShedReason::Draining)], std::uint64_t{1});
    QCOMPARE(c.shed, std::uint64_t{1});
    QCOMPARE(c.failed, std::uint64_t{1});
    // The engine stopping answers what is queued the same way, but another instance may take it.
    h.admit("c", Tier::P1, 0, t0 + 2s);
    h.s.cancelAll("engine stopped", t0 + 3s);
    QCOMPARE(h.results.at("c").shed, ShedReason::Draining);
    QVERIFY(!h.results.at("c").retryUseless);
  }

  // A final 503 with Retry-After carries it; a 400 is not worth retrying; headers are the final response's.
  void finalFailuresCarryTheirHint() {
    EngineConfig c = config();
    c.retry.maxAttempts = 1;
    Harness h(c);
    h.admit("busy");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(503, {{"Retry-After", "7"}, {"X-Request-Id", "r-503"}}, t0);
    const Result& busy = h.results.at("busy");
    QCOMPARE(busy.status, 503);
    QCOMPARE(busy.shed, ShedReason::None);
    QVERIFY2(std::abs(busy.retryAfterS - 7) < 0.01, QByteArray::number(busy.retryAfterS));
    QVERIFY(!busy.retryUseless);
    QCOMPARE(busy.headers, (HeaderList{{"Retry-After", "7"}, {"X-Request-Id", "r-503"}}));
    h.admit("bad", Tier::P1, 0, t0 + 10s);
    QCOMPARE(h.dispatch(t0 + 10s), 1);
    h.respond(400, {}, t0 + 10s);
    QVERIFY(h.results.at("bad").retryUseless);
    QVERIFY(std::isnan(h.results.at("bad").retryAfterS));
    h.admit("nogroup", Tier::P1, 0, t0 + 10s, "nope");
    QVERIFY(h.results.at("nogroup").retryUseless);
  }

  // Headers come from the response that ended the request: none when its last attempt got no response.
  void headersAreTheFinalResponses() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(200, {{"X-RateLimit-Remaining", "9"}}, t0);
    QCOMPARE(h.results.at("a").headers, (HeaderList{{"X-RateLimit-Remaining", "9"}}));
    h.admit("b", Tier::P1, 0, t0 + 1s);
    QCOMPARE(h.dispatch(t0 + 1s), 1);
    h.respond(502, {{"X-Upstream", "down"}}, t0 + 1s);  // retried (the one budgeted retry)
    h.s.releaseDelayed(t0 + 1h);
    QCOMPARE(h.dispatch(t0 + 1h), 1);
    h.respond(0, {}, t0 + 1h, ErrorKind::Network);
    QCOMPARE(h.results.at("b").error, ErrorKind::Network);
    QVERIFY(h.results.at("b").headers.empty());
  }

  // --- per-key snapshot entries ---
  void snapshotHasEachKeyByFingerprint() {
    EngineConfig c = config();
    c.groups[0].keys = {KeyConfig{"k1", "", "sk-first-secret-111", "Authorization", "Bearer "},
                        KeyConfig{"k2", "", "sk-second-secret-222", "Authorization", "Bearer "}};
    Harness h(c);
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(200, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "7"}, {"X-RateLimit-Reset", "30"}}, t0);
    const GroupSnapshot g = h.group(t0);
    QCOMPARE(g.keyStates.size(), std::size_t{2});
    QCOMPARE(g.keyStates[0].fingerprint, keyFingerprint("sk-first-secret-111"));
    QCOMPARE(g.keyStates[1].fingerprint, keyFingerprint("sk-second-secret-222"));
    int reported = 0;
    for (const KeySnapshot& k : g.keyStates) {
      QVERIFY(k.fingerprint.find("secret") == std::string::npos);
      const DimensionState& req = k.dims[static_cast<std::size_t>(Dimension::Requests)];
      if (known(req.remaining)) {
        ++reported;
        QCOMPARE(req.limit, 10.0);
        QVERIFY(req.remaining <= 7);
      }
    }
    QCOMPARE(reported, 1);  // only the key that was used heard from the upstream
    const double known0 = g.keyStates[0].dims[0].remaining, known1 = g.keyStates[1].dims[0].remaining;
    QCOMPARE(g.dims[0].remaining, known(known0) ? known0 : known1);  // the group's sum over the known key
  }
};

QTEST_GUILESS_MAIN(TestSchedulerAnswers)
#include "test_scheduler_answers.moc"
