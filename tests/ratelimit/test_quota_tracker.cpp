// The quota tracker: remaining and reset from headers, in-flight counted as spent, blocks, bare 429s,
// learned rates and windows, the P0 reserve; time driven by hand, backwards included.
#include "quota_tracker.h"

#include <QtTest>

#include <array>
#include <cmath>
#include <limits>

#include <optional>
#include <string>

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

// A reading of a requests limit of 50, `remaining` left, reset in `resetS`.
QuotaReading requestsOf50(double remaining, double resetS) {
  QuotaReading r;
  r.scopes.push_back(scope(Dimension::Requests, 50, remaining, resetS));
  return r;
}

// A gradual (sliding) window told in x-ratelimit headers, refused once with a short Retry-After at `at`:
// the learnt rate paces it from then on.
QuotaTracker learntSlidingWindow(TimePoint at) {
  QuotaTracker qt(1.0, {0, 0}, t0);
  for (int i = 0; i < 50; ++i) {
    QuotaReading ok;
    ok.scopes.push_back(scope(Dimension::Requests, 50, 49 - i, 1.0 + 0.02 * i));
    qt.onResponse(ok, 0, t0 + std::chrono::milliseconds(20 * i), 0);
    qt.onSuccess(t0 + std::chrono::milliseconds(20 * i));
  }
  QuotaReading r;
  r.scopes.push_back(scope(Dimension::Requests, 50, 0, 2.0));  // the simulator rounds both up
  r.retryAfterS = 1.0;
  qt.onResponse(r, 0, at, 0);
  qt.onQuotaRefusal(r, {1, 0}, at);
  qt.onRefusal(at - 20ms, 1.0, 1.0, 30.0, at, 0);
  return qt;
}

// One accepted answer stating `remaining`, with `inFlightOthers` not yet counted in it.
void answer(QuotaTracker& qt, double remaining, int inFlightOthers, TimePoint sent, TimePoint now) {
  QuotaReading ok;
  ok.scopes.push_back(scope(Dimension::Requests, 50, remaining, 1.5));
  qt.onResponse(ok, inFlightOthers, now, 0, sent);
  qt.onSuccess(now, sent);
}

// A learner that got `perS` through in a second, was refused (slow start), then 2 s later again: its first
// ceiling is perS/s, after one refusal (at 50/s a plateau of 2 s less the regain; at 500/s none). `t` ends at that
// second refusal.
RateLearner learntCeilingOf(TimePoint& t, int perS) {
  RateLearner l;
  const auto gap = std::chrono::microseconds(1000000 / perS);
  for (int i = 0; i < perS; ++i) l.onSuccess(t += gap);
  l.onRefusal(t, t);  // slow start
  t += 2s;
  for (int i = 0; i < perS; ++i) l.onSuccess(t += gap);
  l.onRefusal(t, t);
  return l;
}
RateLearner learntCeilingOf50(TimePoint& t) { return learntCeilingOf(t, 50); }

}  // namespace

class TestQuotaTracker : public QObject {
  Q_OBJECT
 private slots:
  void quotaTrackerFollowsRemainingAndReset() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QCOMPARE(qt.check({1, 0}, t0, 0).wait, Duration::zero());  // nothing known: go
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 10, 2, 4.0));
    qt.onResponse(r, 0, t0, 0);
    qt.onSend({1, 0}, t0);
    qt.onSend({1, 0}, t0);
    QuotaWait w = qt.check({1, 0}, t0, 0);
    QVERIFY(w.backIn > 3s && w.backIn <= 4s);  // back for everyone at the reset
    QVERIFY2(w.reason.find("requests exhausted") != std::string::npos, w.reason.c_str());
    // One request may test the window halfway to the soonest it can turn (a whole-second reset may be a second
    // early: 3 s); a sliding window would have freed capacity by then, a fixed window refuses it, and from
    // then on every exhaustion waits for its reset.
    QVERIFY2(w.wait > 1400ms && w.wait <= 1500ms, w.reason.c_str());
    QCOMPARE(qt.check({1, 0}, t0 + 1500ms, 0).wait, Duration::zero());
    const QuotaTracker::SendId probe = qt.onSend({1, 0}, t0 + 1500ms);
    const QuotaWait during = qt.check({1, 0}, t0 + 1600ms, 0);  // one probe at a time
    QVERIFY2(during.wait > 2300ms && during.wait <= 2400ms, during.reason.c_str());
    qt.settleProbe(probe, QuotaTracker::ProbeAnswer::Refused, t0 + 1550ms);
    QVERIFY(!qt.gradual(Dimension::Requests));
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
    const EpochMs until = (12 * 3600 + 3) * 1000;  // 1970-01-01 12:00:03 UTC
    qt.blockUntil(t0 + 3s, until, WaitReason{.code = WaitCode::RetryAfter, .untilMs = until}, false);
    QuotaWait w = qt.check({1, 0}, t0 + 1s, 0);
    QCOMPARE(w.wait, Duration(2s));
    QCOMPARE(w.reason, std::string("Retry-After until 12:00:03"));
    QVERIFY(w.why.code == WaitCode::RetryAfter && w.why.untilMs == until);  // the dashboard's code, the same wait
    QVERIFY(qt.check({1, 0}, t0 - 5s, 0).wait > 3s);  // earlier clock: still blocked, never negative
    QCOMPARE(qt.check({1, 0}, t0 + 3s, 0).wait, Duration::zero());
  }

  // A refusal that says nothing of the quota teaches a rate; the key is held only when nothing gets through
  // between episodes (a hard refusal), doubling, at least the Retry-After when one was given.
  void quotaTrackerHoldsTheKeyOnlyOnHardRefusals() {
    const double none = std::numeric_limits<double>::quiet_NaN();
    QuotaTracker qt(1.0, {0, 0}, t0);
    // An ordinary refusal: a pause of one interval at the learnt rate (1/s from a cold start), no hold.
    QCOMPARE(qt.onRefusal(t0, none, 1, 10, t0, 0), Duration(1s));
    QVERIFY(qt.learner().active());
    // Sent before that pause began: in flight already, the pause does not grow (nor does the episode).
    QVERIFY(qt.onRefusal(t0 - 10ms, none, 1, 10, t0 + 100ms, 0) <= Duration(900ms));
    // Nothing got through between episodes: the key is held, twice a pause's cap (a window that turns soon
    // is found open), then doubling up to the cap.
    TimePoint at = t0 + 1s;
    for (const Duration hold : {Duration(250ms), Duration(250ms), Duration(500ms), Duration(1s), Duration(2s),
                                Duration(4s), Duration(8s), Duration(10s)}) {
      QCOMPARE(qt.onRefusal(at, none, 1, 10, at, 0), hold);
      at += hold;
    }
    // Retry-After floors the hold: a whole-second one less a second (it may be a shorter wait rounded up; the
    // refused request itself waits all of it), any other all of it.
    QCOMPARE(qt.onRefusal(at, 30.0, 1, 10, at, 0), Duration(29s));
    at += 29s;
    QCOMPARE(qt.onRefusal(at, 40.5, 1, 10, at, 0), Duration(40500ms));
    // Something got through: an ordinary refusal again, the key not held, only paused one interval.
    qt.onSuccess(t0 + 100s);
    const Duration pause = qt.onRefusal(t0 + 101s, 1.0, 1, 10, t0 + 101s, 0);
    const double interval = 1 / qt.learner().rate(t0 + 101s);
    QVERIFY2(pause > Duration::zero() && std::abs(toSeconds(pause) - interval) < 1e-3 && pause < 2s,
             qPrintable(QString::number(toSeconds(pause))));
  }

  // The pause after a refusal doubles while requests sent after it are refused too (a fixed window full until
  // it turns), and a success ends it. The first refusal of all, which ends an unpaced start, pauses a cap.
  void refusalPauseDoublesUntilSomethingPasses() {
    const double none = std::numeric_limits<double>::quiet_NaN();
    QuotaTracker qt(1.0, {0, 0}, t0);
    const RateLearner& l = qt.learner();
    TimePoint t = t0;
    for (int i = 0; i < 100; ++i) qt.onSuccess(t += 10ms);  // 100/s getting through
    const Duration cold = qt.onRefusal(t, none, 1, 10, t, 0);  // learnt rate 50/s, yet a cap's pause
    QCOMPARE(cold, 250ms);
    t += cold;
    for (int i = 0; i < 100; ++i) qt.onSuccess(t += 10ms);  // the probe passed, and 100/s got through again
    // Past slow start (this refusal measures the ceiling): intervals of the learnt rate, at least
    // kProbePauseS and two, at most three (at 85/s, three).
    const Duration first = qt.onRefusal(t, none, 1, 10, t, 0);
    QVERIFY(!l.slowStarting());
    QVERIFY2(std::abs(toSeconds(first) - 3 / l.rate(t)) < 1e-3, qPrintable(QString::number(toSeconds(first))));
    t += first;
    const Duration second = qt.onRefusal(t, none, 1, 10, t + 5ms, 0);  // sent after the pause: doubled
    QVERIFY2(std::abs(toSeconds(second) - 6 / l.rate(t + 5ms)) < 1e-3, qPrintable(QString::number(toSeconds(second))));
    t += second;
    const Duration third = qt.onRefusal(t, none, 1, 10, t + 5ms, 0);
    QVERIFY2(third > second * 3 / 2, qPrintable(QString::number(toSeconds(third))));  // ~4 intervals of a rate still growing
    for (int i = 0; i < 100; ++i) qt.onSuccess(t += 10ms);  // getting through again: the pause starts over
    const Duration after = qt.onRefusal(t, none, 1, 10, t, 0);
    QVERIFY2(after <= first, qPrintable(QString::number(toSeconds(after))));
  }

  // The learnt rate: slow start from below what got through, doubling up to it, then cubic (flat first); the
  // next refusal sets the ceiling to what the limiter accepted over the last second, the rate drops to 85% of
  // it and climbs back along the cubic.
  void quotaTrackerLearnsARateFromRefusals() {
    const double none = std::numeric_limits<double>::quiet_NaN();
    QuotaTracker qt(1.0, {0, 0}, t0);
    TimePoint t = t0;
    for (int i = 0; i < 100; ++i) qt.onSuccess(t += 10ms);  // 100/s getting through
    qt.onRefusal(t, none, 1, 10, t, 0);
    const RateLearner& l = qt.learner();
    QCOMPARE(l.rate(t), 50.0);  // half of what got through: a first burst may have doubled it
    QVERIFY(std::abs(l.rate(t + 500ms) - 100.0) < 1e-6);  // doubling every half second up to what got through
    QVERIFY(l.rate(t + 1s) < 101);                          // then flat there: no doubling past it
    QVERIFY(l.rate(t + 3500ms) > 200);                      // and beyond it within seconds
    // After the refusal's pause one request goes alone, and nothing more until it is answered.
    int sent = 0;
    QuotaTracker::SendId probe = 0;
    const TimePoint probeAt = t + 260ms;  // the first refusal of all pauses a cap (kPauseCapS)
    for (int i = 0; i < 100; ++i)
      if (qt.check({1, 0}, probeAt, 0).wait == Duration::zero()) probe = qt.onSend({1, 0}, probeAt), ++sent;
    QCOMPARE(sent, 1);
    QVERIFY(qt.check({1, 0}, probeAt + 100ms, 0).wait > Duration::zero());
    qt.settleProbe(probe, QuotaTracker::ProbeAnswer::Accepted, probeAt + 20ms);
    qt.onSuccess(probeAt + 20ms);  // it passed: paced sending resumes
    // Paced: of 100 requests ready at once only the small burst goes now.
    sent = 0;
    for (int i = 0; i < 100; ++i)
      if (qt.check({1, 0}, t, 0).wait == Duration::zero()) qt.onSend({1, 0}, t), ++sent;
    QVERIFY2(sent <= 6, qPrintable(QString::number(sent)));
    // Over the next second sends are spread at the (growing) rate: 50/s doubling to 100/s in half a second,
    // then ~100/s, sends ~86 in that second (50 / (2 ln 2) + 50), never the backlog at once.
    sent = 0;
    for (int ms = 1; ms <= 1000; ++ms) {
      const TimePoint at = t + std::chrono::milliseconds(ms);
      while (qt.check({1, 0}, at, 0).wait == Duration::zero() && sent < 1000) qt.onSend({1, 0}, at), ++sent;
    }
    QVERIFY2(sent >= 75 && sent <= 100, qPrintable(QString::number(sent)));
    // Now the limiter lets 50/s through while we send more: the next refusal measures it.
    t += 1s;
    for (int i = 0; i < 50; ++i) qt.onSuccess(t += 20ms);
    qt.onRefusal(t, none, 1, 10, t, 0);
    QCOMPARE(l.ceiling(), 50.0);
    QVERIFY(std::abs(l.rate(t) - 42.5) < 1e-6);
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    // The episode that ended cost one refusal: at 50/s a cycle of 2 s keeps that to 1% (the probing budget),
    // so the rate holds at the ceiling until 2 s, then climbs past it.
    const double plateau = 1 / (RateLearner::kProbeShare * 50) - k;
    QVERIFY2(std::abs(l.plateauS() - plateau) < 1e-6, qPrintable(QString::number(l.plateauS())));
    QVERIFY(std::abs(l.rate(t + fromSeconds(k)) - 50.0) < 1e-6);  // back at the ceiling, flat there
    QVERIFY(std::abs(l.rate(t + fromSeconds(k + plateau)) - 50.0) < 1e-6);
    QVERIFY(l.rate(t + fromSeconds(k + plateau + 0.5)) < 51);
    QVERIFY(l.rate(t + fromSeconds(k + plateau + 3)) > 100);  // then fast: a limit that doubled is found in seconds
    // The climb after the hold is steeper: twice the ceiling comes half the hold later than without one.
    QVERIFY(std::abs(l.rate(t + fromSeconds(k + std::cbrt(1 / RateLearner::kCubic) + plateau / 2)) - 100.0) < 1e-6);
  }

  // A limit that halves behind a backlog (a GCRA keeps it in units) refuses everything for over a second.
  // Episodes with nothing accepted in between measure the last second, which holds mostly our own holds (at
  // 500/s it read 294, 155, then 16/s, and the cubic took 5 s to climb back): no lower than half the ceiling
  // measured before the lock-out, until a second after the first acceptance that follows. A window locked
  // until it turns still counts its limit in that second.
  void aLockOutIsNoMeasureOfTheRate() {
    RateLearner l;
    TimePoint t = t0;
    for (int i = 0; i < 500; ++i) l.onSuccess(t += 2ms);
    QVERIFY(l.onRefusal(t, t));  // slow start
    for (int i = 0; i < 500; ++i) l.onSuccess(t += 2ms);
    QVERIFY(l.onRefusal(t, t));
    QCOMPARE(l.ceiling(), 500.0);
    // 0.4 s later, nothing accepted since: the last second counts 300.
    t += 400ms;
    QVERIFY(l.onRefusal(t, t));
    QVERIFY2(std::abs(l.ceiling() - 300) < 2, qPrintable(QString::number(l.ceiling())));
    QCOMPARE(l.refusedEpisodes(), 2);
    // 0.8 s on, nothing: the count (0) is not the rate; half of 500 is the floor.
    t += 800ms;
    QVERIFY(l.onRefusal(t, t));
    QCOMPARE(l.ceiling(), 250.0);
    QCOMPARE(l.refusedEpisodes(), 3);
    // A lone probe gets through, then a refusal: the last second still holds the lock-out (1 accepted).
    t += 300ms;
    l.onSuccess(t);
    t += 300ms;
    QVERIFY(l.onRefusal(t, t));
    QCOMPARE(l.ceiling(), 250.0);
    // A second after things got through again, the count is the measure, whatever it says.
    t += 500ms;
    for (int i = 0; i < 100; ++i) l.onSuccess(t += 10ms);
    QVERIFY(l.onRefusal(t, t));
    QCOMPARE(l.ceiling(), 100.0);

    // Slow start ends in the lock-out (a GCRA halved behind its backlog): what got through before the first
    // refusal is the floor's measure, not the count the lock-out is emptying.
    RateLearner g;
    t = t0;
    for (int i = 0; i < 50; ++i) g.onSuccess(t += 20ms);
    QVERIFY(g.onRefusal(t, t));  // slow start, through at 50/s
    t += 300ms;
    QVERIFY(g.onRefusal(t, t));  // nothing since: the last second counts 35
    QCOMPARE(g.ceiling(), 35.0);
    t += 300ms;
    QVERIFY(g.onRefusal(t, t));  // 20 counted, 25 the floor
    QCOMPARE(g.ceiling(), 25.0);
    QCOMPARE(g.refusedEpisodes(), 3);
    // A guessed ceiling has no probe to budget (one refusal at 25/s would buy a hold of 1.5 s): the climb past
    // it begins once it is regained.
    QCOMPARE(g.plateauS(), 0.0);
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    QVERIFY2(std::abs(g.rate(t + fromSeconds(k + 0.5)) - 25 * (1 + RateLearner::kCubic * 0.125)) < 1e-6,
             qPrintable(QString::number(g.rate(t + fromSeconds(k + 0.5)))));

    // A fall measured mid-way down (60 of a steady 100), then a lock-out: within a second of the fall the floor is
    // half the ceiling it fell from (a halved 50/s GCRA measured 37, and half of that held 17-20/s of its 25);
    // past that second, half the fall's measure.
    for (const auto after : {300ms, 1200ms}) {
      RateLearner f;
      t = t0;
      for (int i = 0; i < 100; ++i) f.onSuccess(t += 10ms);
      QVERIFY(f.onRefusal(t, t));  // slow start
      for (int episode = 0; episode < 2; ++episode) {  // a ceiling of 100, confirmed: steady
        t += 2s;
        for (int i = 0; i < 100; ++i) f.onSuccess(t - 1s + std::chrono::milliseconds(10 * (i + 1)));
        QVERIFY(f.onRefusal(t, t));
      }
      t += 2s;
      for (int i = 0; i < 60; ++i) f.onSuccess(t - 1s + std::chrono::microseconds(250000 * (i + 1) / 60));
      QVERIFY(f.onRefusal(t, t));
      QCOMPARE(f.ceiling(), 60.0);  // the fall from a steady ceiling stands
      t += after;
      QVERIFY(f.onRefusal(t, t));  // nothing accepted since: a lock-out
      QCOMPARE(f.ceiling(), after < 1s ? 50.0 : 30.0);
    }
  }

  // A leaky bucket (nginx limit_req) or GCRA in x-ratelimit headers: reset "1" in whole seconds (it empties
  // within the second), remaining never above the burst. A whole-second reset of 1 leaves no span before the
  // window could turn, so a rise is proved a refill by its size instead: after a turn remaining is the limit
  // less what the new window counted (at most the requests in flight then and sent since). A fixed window's
  // turn is never that small. Without the proof a halved leaky bucket (25/s, burst 5) was held to its reset
  // and ran at 5-6/s.
  void aRiseTooSmallForATurnIsARefill() {
    auto reading = [](double remaining) {
      QuotaReading r;
      r.scopes.push_back(scope(Dimension::Requests, 25, remaining, 1.0));
      return r;
    };
    QuotaReading refused = reading(0);
    refused.retryAfterS = 1.0;
    // A fixed window of 25 that turned: remaining 5 after 20 sent since. Twice: no proof.
    QuotaTracker fixed(1.0, {0, 0}, t0);
    TimePoint t = t0;
    for (int round = 0; round < 2; ++round) {
      fixed.onSend({1, 0}, t);
      fixed.onResponse(reading(0), 0, t + 20ms, 0, t);
      for (int i = 0; i < 20; ++i) fixed.onSend({1, 0}, t + 30ms);
      fixed.onResponse(reading(5), 19, t + 50ms, 0, t + 30ms);
      t += 100ms;
    }
    QVERIFY(!fixed.onQuotaRefusal(refused, {1, 0}, t));
    // A leaky bucket: 0, then 2 with one sent since, then 3: refilling.
    QuotaTracker leaky(1.0, {0, 0}, t0);
    t = t0;
    leaky.onSend({1, 0}, t);
    leaky.onResponse(reading(0), 0, t + 20ms, 0, t);
    leaky.onSend({1, 0}, t + 100ms);
    leaky.onResponse(reading(2), 0, t + 120ms, 0, t + 100ms);
    QVERIFY(!leaky.onQuotaRefusal(refused, {1, 0}, t + 130ms));  // one proof is not enough
    leaky.onSend({1, 0}, t + 200ms);
    leaky.onResponse(reading(3), 0, t + 220ms, 0, t + 200ms);
    // Gradual, nothing learnt yet: nothing left with answers still due waits for them (it once sent the whole
    // concurrency), and with none due one request goes to ask.
    leaky.onResponse(reading(0), 5, t + 300ms, 0, t + 280ms);
    const QuotaWait w = leaky.check({1, 0}, t + 310ms, 0);
    QVERIFY2(w.wait > Duration::zero(), w.reason.c_str());
    QVERIFY(leaky.onQuotaRefusal(refused, {1, 0}, t + 230ms));  // gradual: Retry-After is a floor, not a hold
    QuotaTracker quiet(1.0, {0, 0}, t0);
    t = t0;
    for (double left : {0.0, 2.0, 3.0, 0.0}) {
      quiet.onSend({1, 0}, t);
      quiet.onResponse(reading(left), 0, t + 20ms, 0, t);
      t += 100ms;
    }
    QCOMPARE(quiet.check({1, 0}, t, 0).wait, Duration::zero());
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
    QVERIFY2(w.reason.find("exhausted") != std::string::npos && w.backIn >= 450ms, w.reason.c_str());
    QVERIFY(!qt.gradual(Dimension::Requests));
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
    // The probe: one request after its own share of a steady refill (2 s / 60); refused, as a fixed window
    // refuses it, then the reset is waited for.
    QCOMPARE(qt.check({1, 0}, t0 + 500ms, 0).wait, Duration::zero());
    const QuotaTracker::SendId probe = qt.onSend({1, 0}, t0 + 500ms);
    qt.settleProbe(probe, QuotaTracker::ProbeAnswer::Refused, t0 + 520ms);
    QuotaWait w = qt.check({1, 0}, t0 + 600ms, 0);
    QVERIFY2(w.wait >= 1300ms && w.wait <= 1400ms, w.reason.c_str());
    QVERIFY(!qt.gradual(Dimension::Requests));
  }

  // Issue 14's token case: OpenAI headers, a bucket of 60,000 tokens a minute emptied by the first burst. No
  // response can show the refill while nothing is sent; the 429's Retry-After (1 s) well short of the reset
  // (59 s, "until full") says capacity comes back gradually, so the next request waits for its own cost.
  void exhaustedTokenBucketWaitsForItsOwnCostNotTheReset() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Tokens, 60000, 100, 59.0));
    r.scopes.back().dialect = "openai";
    r.retryAfterS = 1.0;
    qt.onResponse(r, 0, t0, 0);
    QVERIFY(!qt.onQuotaRefusal(r, {1, 315}, t0));  // time-to-full: a refill rate, no learning needed
    QVERIFY(qt.gradual(Dimension::Tokens));
    const QuotaWait w = qt.check({0, 315}, t0, 0);
    const double expected = (315.0 - 100) / ((60000.0 - 100) / 59);  // ~0.21 s
    QVERIFY2(std::abs(toSeconds(w.wait) - expected) <= 0.1 * expected, w.reason.c_str());
    // The same headers on a 429 whose Retry-After matches the reset: a window, held to its reset.
    QuotaTracker fixed(1.0, {0, 0}, t0);
    r.retryAfterS = 59.0;
    fixed.onResponse(r, 0, t0, 0);
    QVERIFY(!fixed.onQuotaRefusal(r, {1, 315}, t0));
    QVERIFY(!fixed.gradual(Dimension::Tokens));
    QVERIFY2(fixed.check({0, 315}, t0, 0).backIn >= 58s, fixed.check({0, 315}, t0, 0).reason.c_str());
  }

  // A sliding window speaking x-ratelimit: reset = time to drain (up to two windows), Retry-After = when one
  // request passes. Waiting for the reset halves the goodput; the refusal is learnt from instead.
  // No refusal needed: an exhausted sliding window lets the probe through before its reset, which makes it
  // gradual; from then on it is not held to its resets.
  void acceptedProbeMakesTheDimensionGradual() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 50, 0, 2.0));
    qt.onResponse(r, 0, t0, 0);
    QuotaWait w = qt.check({1, 0}, t0, 0);
    QVERIFY2(w.wait > 400ms && w.wait <= 500ms, w.reason.c_str());
    QCOMPARE(qt.check({1, 0}, t0 + 500ms, 0).wait, Duration::zero());
    const QuotaTracker::SendId probe = qt.onSend({1, 0}, t0 + 500ms);
    // Answered after the soonest the window could have turned (1 s): proves nothing.
    QuotaTracker late = qt;
    late.settleProbe(probe, QuotaTracker::ProbeAnswer::Accepted, t0 + 1100ms);
    QVERIFY(!late.gradual(Dimension::Requests));
    qt.settleProbe(probe, QuotaTracker::ProbeAnswer::Accepted, t0 + 520ms);
    QVERIFY(qt.gradual(Dimension::Requests));
    r.scopes.back().resetInS = 1.5;
    qt.onResponse(r, 0, t0 + 1020ms, 0, t0 + 1s);
    QCOMPARE(qt.check({1, 0}, t0 + 1030ms, 0).wait, Duration::zero());
  }

  // A probe proves a refill only when it left after the upstream said the quota was spent: its own answer, read
  // first, says a bucket spent again (remaining 0) and must not undo that. One sent when only our estimate was
  // spent (told 3 with 3 more in flight) may find what a fixed window had left; its acceptance proves nothing (the
  // demo's batch window, taken for a refill, then held each refusal 0.25 s instead of until the turn).
  void aProbeProvesARefillOnlyAfterTheUpstreamSaidSpent() {
    const auto reading = requestsOf50;
    QuotaTracker bucket(1.0, {0, 0}, t0);
    bucket.onResponse(reading(0, 2.0), 0, t0, 0);  // the upstream's own word: nothing left
    QCOMPARE(bucket.check({1, 0}, t0 + 500ms, 0).wait, Duration::zero());  // the probe, halfway to the reset
    const QuotaTracker::SendId probe = bucket.onSend({1, 0}, t0 + 500ms);
    bucket.onResponse(reading(0, 1.5), 0, t0 + 520ms, 0, t0 + 500ms);  // accepted, and spent again
    bucket.settleProbe(probe, QuotaTracker::ProbeAnswer::Accepted, t0 + 520ms);
    QVERIFY(bucket.gradual(Dimension::Requests));

    QuotaTracker window(1.0, {0, 0}, t0);
    window.onResponse(reading(3, 2.0), 3, t0, 0);  // 3 left, 3 others in flight: told 0
    QCOMPARE(window.check({1, 0}, t0 + 500ms, 0).wait, Duration::zero());
    const QuotaTracker::SendId windowProbe = window.onSend({1, 0}, t0 + 500ms);
    window.onResponse(reading(0, 1.5), 0, t0 + 520ms, 0, t0 + 500ms);  // it took what the others left
    window.settleProbe(windowProbe, QuotaTracker::ProbeAnswer::Accepted, t0 + 520ms);
    QVERIFY(!window.gradual(Dimension::Requests));
  }

  // A probe is settled by its own answer. One dispatch pass gives every send the same time: the request that took
  // the last of the window and the probe after it left together, and the first one's acceptance proved a refill
  // that never was (matched by send time). A refusal says nothing of a dimension its answer shows still had the
  // probe's cost while another one was short of it: the tokens refused, and the requests may still prove a refill.
  void aProbeIsSettledByItsOwnAnswerAndRefutedOnlyWhereItCouldHaveBeenRefused() {
    const auto reading = requestsOf50;
    QuotaTracker qt(1.0, {0, 0}, t0);
    qt.onResponse(reading(1, 2.0), 0, t0, 0);
    const TimePoint pass = t0 + 500ms;
    QCOMPARE(qt.check({1, 0}, pass, 0).wait, Duration::zero());
    const QuotaTracker::SendId last = qt.onSend({1, 0}, pass);  // the window's last request
    QCOMPARE(qt.check({1, 0}, pass, 0).wait, Duration::zero());
    const QuotaTracker::SendId probe = qt.onSend({1, 0}, pass);  // the probe, in the same pass
    QVERIFY(last != probe);
    qt.settleProbe(last, QuotaTracker::ProbeAnswer::Accepted, pass + 20ms);
    QVERIFY(!qt.gradual(Dimension::Requests));  // not the probe's answer
    QVERIFY(qt.check({1, 0}, pass + 30ms, 0).wait > Duration::zero());  // still one probe at a time
    qt.settleProbe(probe, QuotaTracker::ProbeAnswer::Accepted, pass + 25ms);
    QVERIFY(qt.gradual(Dimension::Requests));

    // A probe of the requests that also costs 500 tokens, refused. Its answer tells `requestsLeft` (of 50) and
    // `tokensLeft` (of 10,000). Then `sends` more requests use what it says is left: the wait of the next one,
    // halfway to the reset (probing again) or the whole way (refuted).
    const auto afterRefusal = [&](double requestsLeft, double tokensLeft, int sends) {
      QuotaTracker q(1.0, {0, 0}, t0);
      q.onResponse(reading(0, 2.0), 0, t0, 0);
      if (q.check({1, 500}, pass, 0).wait != Duration::zero()) return Duration::max();
      const QuotaTracker::SendId id = q.onSend({1, 500}, pass);
      QuotaReading answer = reading(requestsLeft, 1.5);
      answer.scopes.push_back(scope(Dimension::Tokens, 10000, tokensLeft, 1.5));
      q.onResponse(answer, 0, pass + 20ms, 0, pass);
      q.settleProbe(id, QuotaTracker::ProbeAnswer::Refused, pass + 20ms, &answer);
      for (int i = 0; i < sends; ++i) q.onSend({1, 0}, pass + 30ms);
      return q.check({1, 0}, pass + 40ms, 0).wait;
    };
    const auto seconds = [](Duration d) { return qPrintable(QString::number(toSeconds(d))); };
    // 100 tokens of the 500 left, requests to spare: the tokens refused it; the requests' next exhaustion probes
    // at half the span, 0.76 s off, before a reset 1.5 s off.
    const Duration onTokens = afterRefusal(2, 100, 2);
    QVERIFY2(onTokens > 700ms && onTokens < 800ms, seconds(onTokens));
    // Tokens to spare too: nothing else explains it, the requests' window refused it and is waited out.
    const Duration unexplained = afterRefusal(2, 5000, 2);
    QVERIFY2(unexplained > 1400ms && unexplained <= 1500ms, seconds(unexplained));
    // Both short: the requests may have refused it as well.
    const Duration both = afterRefusal(0, 100, 0);
    QVERIFY2(both > 1400ms && both <= 1500ms, seconds(both));
  }

  void slidingWindowRefusalIsPacedNotHeldToTheReset() {
    const TimePoint at = t0 + 1s;
    QuotaTracker qt = learntSlidingWindow(at);
    QVERIFY(qt.gradual(Dimension::Requests));  // the 429's Retry-After (1 s) is well short of its reset (2 s)
    const QuotaWait w = qt.check({1, 0}, at + 100ms, 0);
    QVERIFY2(w.reason.find("exhausted") == std::string::npos && w.wait < 500ms, w.reason.c_str());
    QVERIFY(qt.learner().active());
  }

  void aStatedRemainingUsedUpLowersTheLearntRateWithoutARefusal() {
    const TimePoint at = t0 + 1s;
    QuotaTracker qt = learntSlidingWindow(at);
    const TimePoint later = at + 1500ms;
    answer(qt, 30, 2, later - 20ms, later);  // room left: nothing changes
    const double before = qt.learner().rate(later);
    QVERIFY(before > 0);
    answer(qt, 3, 5, later - 10ms, later);  // the requests in flight use up what is left: a mark
    QVERIFY2(qt.learner().rate(later) < before, std::to_string(qt.learner().rate(later)).c_str());
    QCOMPARE(qt.learner().refusedEpisodes(), 0);  // no refused episode: nothing holds the key
    QCOMPARE(qt.blockedUntil() <= later, true);
    // A mark of a request sent before that decrease belongs to it.
    const double after = qt.learner().rate(later + 5ms);
    answer(qt, 0, 5, later - 5ms, later + 5ms);
    QCOMPARE(qt.learner().rate(later + 5ms), after);
  }

  // A stated request limit that rose is a new quota: the learnt ceiling (and its plateau below the old limit) is
  // forgotten, and slow start climbs from the rate the old one allowed: the new headroom is paced, not sent in
  // one burst. One that fell keeps what was learnt (it never exceeds the stated rate anyway).
  void aStatedLimitThatRoseRestartsTheLearner() {
    const TimePoint at = t0 + 1s;
    QuotaTracker fell = learntSlidingWindow(at);
    QVERIFY(fell.learner().active());
    QuotaReading halved;
    halved.scopes.push_back(scope(Dimension::Requests, 25, 20, 1.0));
    QVERIFY(fell.onResponse(halved, 0, at + 1s, 0));
    QVERIFY(fell.learner().active());
    // An answer to a request sent before that one, telling the old limit, is old news, not a rise.
    QuotaReading before;
    before.scopes.push_back(scope(Dimension::Requests, 50, 10, 1.0));
    QVERIFY(fell.onResponse(before, 0, at + 1s + 5ms, 0, at + 1s - 40ms));
    QVERIFY(fell.learner().active());

    QuotaTracker rose = learntSlidingWindow(at);
    QuotaReading doubled;
    doubled.scopes.push_back(scope(Dimension::Requests, 100, 90, 1.0));
    for (int i = 1; i <= 10; ++i) rose.onSuccess(at + i * 40ms, at + i * 40ms - 20ms);
    rose.onRefusal(at + 480ms, 1.0, 1.0, 30.0, at + 500ms, 0);  // ends slow start: a ceiling is learnt
    const double allowed = rose.learner().rate(at + 1s);
    QVERIFY(allowed > 0 && rose.learner().ceiling() > 0 && !rose.learner().slowStarting());
    QVERIFY(rose.onResponse(doubled, 0, at + 1s, 0));
    QVERIFY(rose.learner().slowStarting());
    QCOMPARE(rose.learner().rate(at + 1s), allowed);
    QCOMPARE(rose.learner().rate(at + 1500ms), 2 * allowed);  // doubling every half second, no plateau
    QCOMPARE(rose.learner().ceiling(), 0.0);
    // A rise within kStatedRiseRestarts is noise, not a new quota.
    QuotaTracker same = learntSlidingWindow(at);
    QuotaReading bit;
    bit.scopes.push_back(scope(Dimension::Requests, 52, 40, 1.0));
    same.onResponse(bit, 0, at + 1s, 0);
    QVERIFY(same.learner().active());
  }

  void slowStartsEndMeasuresTheRateSinceTheFirstRefusal() {
    // A token bucket that started full: 100 got through in the first second (its burst of 50 plus 50/s), then
    // it refused. Slow start overshoots; by the next refusal the bucket has let through its rate alone.
    RateLearner bucket;
    for (int i = 1; i <= 100; ++i) bucket.onSuccess(t0 + std::chrono::milliseconds(10 * i));
    const TimePoint first = t0 + 1005ms;
    QVERIFY(bucket.onRefusal(first - 5ms, first));
    for (int i = 1; i <= 15; ++i) bucket.onSuccess(first + std::chrono::milliseconds(20 * i));
    const TimePoint second = first + 300ms;
    QVERIFY(bucket.onRefusal(second - 10ms, second));
    QVERIFY2(std::abs(bucket.ceiling() - 50) < 1e-6, qPrintable(QString::number(bucket.ceiling())));  // not 100+

    // A fixed window of 50 filled in half a second and stays locked until it turns: nothing got through since
    // the first refusal, so what it let through before is the measure.
    RateLearner window;
    for (int i = 1; i <= 50; ++i) window.onSuccess(t0 + std::chrono::milliseconds(10 * i));
    const TimePoint locked = t0 + 505ms;
    QVERIFY(window.onRefusal(locked - 5ms, locked));
    const TimePoint again = locked + 300ms;
    QVERIFY(window.onRefusal(again - 10ms, again));
    QCOMPARE(window.ceiling(), 50.0);
  }

  // The probing budget: the longer the last episode's refusals are as a share of what a cycle sends at the
  // ceiling, the longer the rate holds there before climbing past it; bounded, and none at a high rate.
  void probingPastTheCeilingIsRarerWhereARefusalCostsMore() {
    auto learnt = [](double rate, int refusals) {
      RateLearner l;
      const auto gap = fromSeconds(1 / rate);
      TimePoint t = t0;
      for (int i = 0; i < rate; ++i) l.onSuccess(t += gap);
      l.onRefusal(t, t);  // slow start begins
      for (int i = 1; i < refusals; ++i) l.onRefusal(t, t + 1ms);  // the same episode
      t += 2s;
      for (int i = 0; i < rate; ++i) l.onSuccess(t += gap);
      l.onRefusal(t, t);  // the cubic's first episode: the ceiling is the rate
      return l;
    };
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    QCOMPARE(learnt(500, 2).plateauS(), 0.0);                       // 2 in 500 a second: climb at once
    QVERIFY(std::abs(learnt(50, 1).plateauS() - (2 - k)) < 1e-6);   // 1 in a 2-s cycle of 50/s
    QCOMPARE(learnt(50, 3).plateauS(), RateLearner::kMaxPlateauS);  // 3 would take 6 s: bounded
    // Marks cost nothing: an episode they began leaves no hold.
    RateLearner marked = learnt(50, 3);
    const TimePoint later = t0 + 10s;
    for (int i = 0; i < 50; ++i) marked.onSuccess(later - 1s + std::chrono::milliseconds(20 * i));
    QVERIFY(marked.onMark(later, later + 1ms));
    QVERIFY(marked.onMark(later + 1s, later + 1s));
    QCOMPARE(marked.plateauS(), 0.0);
  }

  // A refusal in the climb past a plateau that held the ceiling proves the limit is at least that ceiling:
  // the last second's count (holding the last episode's pause and dip) does not lower it, and the decrease
  // only drains the probe's excess (kBetaConfirmed, not kBeta). A refusal while still at the plateau measures
  // the count as before: the limit fell.
  void aCeilingHeldThroughAPlateauIsKept() {
    auto learnt = learntCeilingOf50;
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    TimePoint t = t0;
    RateLearner probe = learnt(t);
    QCOMPARE(probe.ceiling(), 50.0);
    QVERIFY(probe.plateauS() >= RateLearner::kProvenPlateauS);
    const TimePoint climbing = t + fromSeconds(k + probe.plateauS() + 0.3);
    for (int i = 1; i <= 45; ++i) probe.onSuccess(climbing - 1s + std::chrono::milliseconds(22 * i));
    QVERIFY(probe.onRefusal(climbing - 20ms, climbing));
    QCOMPARE(probe.ceiling(), 50.0);  // 45 in the last second, yet the plateau held 50
    QVERIFY2(std::abs(probe.rate(climbing) - RateLearner::kBetaConfirmed * 50) < 1e-6,
             qPrintable(QString::number(probe.rate(climbing))));

    t = t0;
    RateLearner fell = learnt(t);
    const TimePoint atPlateau = t + fromSeconds(k + 0.1);
    for (int i = 1; i <= 40; ++i) fell.onSuccess(atPlateau - 1s + std::chrono::milliseconds(25 * i));
    QVERIFY(fell.onRefusal(atPlateau - 20ms, atPlateau));
    QCOMPARE(fell.ceiling(), 40.0);
    QVERIFY(std::abs(fell.rate(atPlateau) - RateLearner::kBeta * 40) < 1e-6);  // not confirmed: 20% off

    // Refused `pastS` into the climb past the plateau with `count` accepted over the last second: the drop, as a
    // share of that count.
    auto dropAfter = [&](double pastS, int count) {
      TimePoint at = t0;
      RateLearner l = learnt(at);
      at += fromSeconds(k + l.plateauS() + pastS);
      for (int i = 1; i <= count; ++i) l.onSuccess(at - 1s + std::chrono::microseconds(999000 / count * i));
      if (!l.onRefusal(at - 20ms, at) || std::abs(l.ceiling() - count) > 1e-9) return -1.0;
      return l.rate(at) / count;
    };
    // Found above the proven ceiling by the climb past it: the limit rose. The climb passed it by little, so the
    // drop is the confirmed one, not the 15% that dipped a doubled window below 90% of it for a second.
    QCOMPARE(dropAfter(1.5, 80), RateLearner::kBetaConfirmed);
    // 59 of a fixed window of 50: its last-second count straddled the turn while the climb passed the limit. No
    // rise (within kRoseBy): the full drop, to 50, not the confirmed one to 55, which stays above the limit.
    QCOMPARE(dropAfter(1.0, 59), RateLearner::kBeta);
  }

  // An acceptance of a send made well past the ceiling (over kRoseBy above it) in the climb is proof the limit rose:
  // from its answer the rate doubles each kSlowStartDoublingS, as slow start does, up to twice the ceiling, instead
  // of the cubic's slower climb (a doubled window that counts refusals was found 4.6 s after the change: the
  // regain, the hold and the climb). Acceptances of sends nearer the ceiling prove nothing (a fixed window's
  // straddle, a bucket's slack); the next refusal ends the doubling.
  void aClimbAcceptedWellPastTheCeilingDoubles() {
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    TimePoint t = t0;
    RateLearner cubic = learntCeilingOf50(t);
    const TimePoint hold = t + fromSeconds(k + cubic.plateauS());
    cubic.onSuccess(hold, hold - 20ms);  // a round trip of 20 ms (the climb's bound), sent at the ceiling
    // The first moment the climb is over kRoseBy past the ceiling, to a millisecond.
    TimePoint past = hold;
    while (cubic.rate(past) < (1 + RateLearner::kRoseBy) * 50) past += 1ms;
    RateLearner below = cubic;
    below.onSuccess(past, past - 20ms);  // sent at under 1.25x the ceiling: nothing proven
    QVERIFY(std::abs(below.rate(past + 500ms) - cubic.rate(past + 500ms)) < 1e-9);
    RateLearner rose = cubic;
    const TimePoint answered = past + 20ms;
    rose.onSuccess(answered, past);
    const double from = rose.rate(answered);
    QVERIFY(std::abs(from - cubic.rate(answered)) < 1e-9);  // no jump
    const double doubling = rose.rate(answered + 200ms);
    QVERIFY2(std::abs(doubling - from * std::pow(2.0, 0.4)) < 1e-6, qPrintable(QString::number(doubling)));
    QVERIFY(doubling > cubic.rate(answered + 200ms) + 10);
    // Twice the ceiling 0.34 s after the proof, where the cubic takes 0.6 s more; no further until the cubic is.
    QVERIFY(rose.rate(answered + 340ms) >= 99.9);
    QVERIFY(cubic.rate(answered + 600ms) < 100);
    QCOMPARE(rose.rate(answered + 500ms), 100.0);
    const TimePoint later = answered + 1500ms;
    QVERIFY(cubic.rate(later) > 100);
    QCOMPARE(rose.rate(later), cubic.rate(later));
    // The next refusal ends it: the drop and the cubic from the new ceiling.
    const TimePoint refused = answered + 400ms;
    // 99 more answered in its last second (and `answered`): a ceiling of 100.
    for (int i = 1; i <= 99; ++i) rose.onSuccess(refused - 1s + std::chrono::milliseconds(10 * i) - 5ms);
    QVERIFY(rose.onRefusal(refused - 20ms, refused));
    QCOMPARE(rose.ceiling(), 100.0);
    QVERIFY(std::abs(rose.rate(refused) - RateLearner::kBetaConfirmed * 100) < 1e-6);  // a rise, found
    QVERIFY(rose.rate(refused + 1s) <= 100);  // regaining it, not doubling
    // No proof past a ceiling that no plateau held (here 500/s, where a probe costs too little to hold for; so
    // after a lock-out's guess, an echo or a mark): the climb stays the cubic's.
    TimePoint u = t0;
    RateLearner unproven = learntCeilingOf(u, 500);
    QCOMPARE(unproven.plateauS(), 0.0);
    TimePoint over = u;
    while (unproven.rate(over) < (1 + RateLearner::kRoseBy) * 500) over += 1ms;
    const double before = unproven.rate(over + 300ms);
    unproven.onSuccess(over + 20ms, over);
    QCOMPARE(unproven.rate(over + 300ms), before);
    // Past the regain and the hold, the plain cubic from the new ceiling: nothing of the proof is left.
    const double regained = std::cbrt((1 - RateLearner::kBetaConfirmed) / RateLearner::kCubic);
    const TimePoint climbing = refused + fromSeconds(regained + rose.plateauS() + 0.2);
    const double climb = 1 / std::pow(std::cbrt(1 / RateLearner::kCubic) - 0.5 * rose.plateauS(), 3);
    QVERIFY2(std::abs(rose.rate(climbing) - 100 * (1 + climb * 0.008)) < 1e-6,
             qPrintable(QString::number(rose.rate(climbing))));
  }

  // A small rise (within kConfirmedWithin) found by a climb past a proven plateau, whose own hold is then refused,
  // was a straddle: a fixed window's last-second count holds the tail of the window before (52 of 50), and a
  // ceiling set there overfilled one window in two, a refusal each, for seconds. The ceiling goes back to the
  // plateau's, and later small rises leave it there. A limit that rose by more is still found.
  void aSmallRiseWhoseHoldIsRefusedWasAStraddle() {
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    const double kConfirmed = std::cbrt((1 - RateLearner::kBetaConfirmed) / RateLearner::kCubic);
    auto learnt = learntCeilingOf50;
    // `count` accepted evenly over the second before `at`, then a refusal of a send 20 ms before it.
    auto refusedWith = [](RateLearner& l, TimePoint at, int count) {
      for (int i = 1; i <= count; ++i) l.onSuccess(at - 1s + std::chrono::microseconds(990000 / count * i));
      return l.onRefusal(at - 20ms, at);
    };
    // With no small rise before it, a refusal at the hold measures as ever.
    TimePoint t = t0;
    RateLearner held = learnt(t);
    const TimePoint holding = t + fromSeconds(k + 0.2);
    QVERIFY(std::abs(held.rate(holding) - 50) < 0.5);  // at the plateau
    QVERIFY(refusedWith(held, holding, 52));
    QCOMPARE(held.ceiling(), 52.0);

    t = t0;
    RateLearner l = learnt(t);
    TimePoint at = t + fromSeconds(k + l.plateauS() + 1.0);  // the climb past, at 53/s and more
    QVERIFY(l.rate(at) > 52);
    QVERIFY(refusedWith(l, at, 53));
    QCOMPARE(l.ceiling(), 53.0);  // a small rise: taken, as a limit that rose a little would be
    at += fromSeconds(kConfirmed + 0.1);  // holding 53: refused there, the rise was the count's straddle
    QVERIFY(std::abs(l.rate(at) - 53) < 0.5);
    QVERIFY(refusedWith(l, at, 52));
    QCOMPARE(l.ceiling(), 50.0);
    QVERIFY(l.plateauS() >= RateLearner::kProvenPlateauS);
    at += fromSeconds(kConfirmed + l.plateauS() + 1.0);  // the next climb past finds 53 again: the ceiling stays
    QVERIFY(l.rate(at) > 52);
    QVERIFY(refusedWith(l, at, 53));
    QCOMPARE(l.ceiling(), 50.0);
    at += fromSeconds(kConfirmed + l.plateauS() + 1.0);  // a limit that rose over kRoseBy: found as ever
    QVERIFY(refusedWith(l, at, 80));
    QCOMPARE(l.ceiling(), 80.0);
  }

  // After a move (an episode measuring a ceiling well below the one before, or over kRoseBy above it), an
  // episode within a second that measures lower again is its echo: the last second's count holds the dips of the
  // episodes before it (a window that counts refusals refuses for a second after a storm; a sliding window
  // remembers the climb that found a risen limit). Its drop is from that measure, but the moved ceiling stays as
  // what the regain returns to, with no plateau; the next one measures as before.
  void aMovesEchoKeepsTheMovedCeiling() {
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    // A ceiling of 100/s, then, 2 s later, an episode whose last second got `secondCount` through, all in its
    // first quarter (a pause held the rest).
    auto fallen = [](TimePoint& t, int secondCount) {
      RateLearner l;
      for (int i = 0; i < 100; ++i) l.onSuccess(t += 10ms);
      l.onRefusal(t, t);  // slow start
      t += 2s;
      for (int i = 0; i < 100; ++i) l.onSuccess(t - 1s + std::chrono::milliseconds(10 * (i + 1)));
      l.onRefusal(t, t);  // the first ceiling: 100
      t += 2s;
      for (int i = 0; i < secondCount; ++i)
        l.onSuccess(t - 1s + std::chrono::milliseconds(250 * (i + 1) / secondCount));
      l.onRefusal(t, t);
      return l;
    };
    // `n` get through over the next 0.3 s, then a refusal: with the episodes before out of the last second,
    // a count of `n`.
    auto lowMeasure = [](RateLearner& l, TimePoint& t, int n = 15) {
      for (int i = 1; i <= n; ++i) l.onSuccess(t + std::chrono::microseconds(300000 * i / (n + 1)));
      t += 300ms;
      return l.onRefusal(t - 20ms, t);
    };
    TimePoint t = t0;
    for (const int moved : {70, 130}) {  // fell, rose
      t = t0;
      RateLearner l = fallen(t, moved);
      QCOMPARE(l.ceiling(), static_cast<double>(moved));  // clear of a lock-out
      // 0.3 s later, 15 got through since, and the last second's count is only those: an echo.
      QVERIFY(lowMeasure(l, t));
      QCOMPARE(l.ceiling(), static_cast<double>(moved));
      QVERIFY2(std::abs(l.rate(t) - RateLearner::kBeta * 15) < 1e-6, qPrintable(QString::number(l.rate(t))));
      QCOMPARE(l.plateauS(), 0.0);
      // The regain heads for the moved ceiling, not for 15: past 60/s 1.5 s later (a ceiling of 15 would allow
      // 15 at most then).
      QVERIFY2(l.rate(t + 1500ms) > 60, qPrintable(QString::number(l.rate(t + 1500ms))));
      // Not twice in a row: the next low measure is the ceiling.
      for (int i = 1; i <= 10; ++i) l.onSuccess(t + std::chrono::milliseconds(25 * i));
      t += 300ms;
      QVERIFY(l.onRefusal(t - 20ms, t));
      QCOMPARE(l.ceiling(), 25.0);
      QVERIFY(std::abs(l.rate(t) - RateLearner::kBeta * 25) < 1e-6);
    }

    // No move before it (70 and 130 of 100 are; 95 is not): a measure within the second lower by more than
    // kConfirmedWithin but not by kDipFall is the ceiling.
    t = t0;
    RateLearner steady = fallen(t, 95);
    QVERIFY(std::abs(steady.ceiling() - 95) < 1e-9);
    QVERIFY(lowMeasure(steady, t, 80));
    QCOMPARE(steady.ceiling(), 80.0);
    // Lower by more than kDipFall than a steady ceiling (95 confirmed the 100 measured before it): the limit
    // fell, and the measure is the ceiling (a halved 500/s window was first measured at 351).
    t = t0;
    RateLearner fell = fallen(t, 95);
    QVERIFY(lowMeasure(fell, t));
    QCOMPARE(fell.ceiling(), 15.0);
    // A confirmation within a second of a move is not yet steady: past that second, within the regain, a dip
    // keeps the moved ceiling, with no plateau.
    t = t0;
    RateLearner dipped = fallen(t, 70);
    for (int i = 1; i <= 70; ++i) dipped.onSuccess(t + std::chrono::microseconds(500000 * i / 71));
    t += 500ms;
    QVERIFY(dipped.onRefusal(t - 20ms, t));
    QVERIFY(std::abs(dipped.ceiling() - 70) < 1e-9);  // confirmed, the move carried
    t += 1s;
    for (int i = 1; i <= 20; ++i) dipped.onSuccess(t - 300ms + std::chrono::microseconds(250000 * i / 21));
    QVERIFY(dipped.onRefusal(t - 20ms, t));
    QVERIFY2(std::abs(dipped.ceiling() - 70) < 1e-9, qPrintable(QString::number(dipped.ceiling())));
    QCOMPARE(dipped.plateauS(), 0.0);
    // A move confirmed more than a second after it is a steady ceiling (as before a halving): the measure
    // after that, short of a dip, is the ceiling.
    t = t0;
    RateLearner settled = fallen(t, 70);
    t += 2s;
    for (int i = 1; i <= 70; ++i) settled.onSuccess(t - 1s + std::chrono::microseconds(250000 * i / 70));
    QVERIFY(settled.onRefusal(t - 20ms, t));
    QCOMPARE(settled.ceiling(), 70.0);  // confirmed
    QVERIFY(lowMeasure(settled, t, 60));
    QCOMPARE(settled.ceiling(), 60.0);
    // Past the second: a dip within the regain (k = 1.44 s) keeps the ceiling; a measure short of a dip, or
    // one past the regain, stands.
    struct Late {
      double afterS;
      int count;
    };
    for (const Late c : {Late{1.2, 60}, Late{1.2, 40}, Late{k + 0.1, 40}}) {
      t = t0;
      RateLearner late = fallen(t, 70);
      for (int i = 1; i <= c.count; ++i)
        late.onSuccess(t + fromSeconds(c.afterS - 0.5) + std::chrono::microseconds(400000 * i / c.count));
      t += fromSeconds(c.afterS);
      QVERIFY(late.onRefusal(t - 20ms, t));
      const double expected = c.count < 56 && c.afterS < k ? 70.0 : c.count;
      QVERIFY2(std::abs(late.ceiling() - expected) < 1e-9,
               qPrintable(QStringLiteral("%1 s, %2: %3").arg(c.afterS).arg(c.count).arg(late.ceiling())));
    }
    // A lock-out's ceiling is a guess (half the last one measured), not a measure: a measure below it within
    // its regain is the limit, no dip (a halved 500/s counting window: lock-outs at 327 and 322, then 246 of its
    // 250 read as a dip, and the next, 184, held for 4 s).
    t = t0;
    RateLearner guessed = fallen(t, 95);
    t += 500ms;
    QVERIFY(guessed.onRefusal(t - 20ms, t));  // nothing accepted since: a lock-out
    QVERIFY(std::abs(guessed.ceiling() - RateLearner::kLockOutFloor * 95) < 1e-9);
    guessed.onSuccess(t + 100ms);  // the first acceptance after it
    for (int i = 1; i <= 30; ++i) guessed.onSuccess(t + 400ms + std::chrono::microseconds(800000 * i / 31));
    t += 1300ms;  // within the regain, over a second after that first acceptance
    QVERIFY(guessed.onRefusal(t - 20ms, t));
    QCOMPARE(guessed.ceiling(), 30.0);
  }

  // Episodes less than a second apart: the last second's count holds the one before and its pause. What the
  // limiter accepted of the sends since it (from the end of its grace to the send refused) is the measure then,
  // no higher than the ceiling. Without send times there is no such measure, and the count stands.
  void aQuickEpisodeMeasuresTheSendsSince() {
    struct Case {
      double sendRate;
      bool sendTimes;
      double ceiling;
    };
    for (const Case c : {Case{95, true, 95}, Case{95, false, 70}, Case{130, true, 100}, Case{130, false, 91}}) {
      TimePoint t = t0;
      RateLearner l;
      for (int i = 0; i < 100; ++i) l.onSuccess(t += 10ms);
      l.onRefusal(t, t);  // slow start
      for (int episode = 0; episode < 2; ++episode) {  // a ceiling of 100, then confirmed: steady
        t += 2s;
        for (int i = 0; i < 100; ++i) l.onSuccess(t - 1s + std::chrono::milliseconds(10 * (i + 1)));
        QVERIFY(l.onRefusal(t, t));
      }
      QVERIFY(std::abs(l.ceiling() - 100) < 1e-9);
      // Over [t + 0.25 s, t + 0.85 s), sent at `sendRate` and all accepted (answered 20 ms later); the send at
      // t + 0.85 s refused. The last second's count: 13 of the steady second, and these.
      const int n = static_cast<int>(std::lround(c.sendRate * 0.6));
      for (int i = 0; i < n; ++i) {
        const TimePoint sent = t + 250ms + std::chrono::microseconds(static_cast<long>(600000 * (i + 0.5) / n));
        l.onSuccess(sent + 20ms, c.sendTimes ? std::optional<TimePoint>(sent) : std::nullopt);
      }
      QVERIFY(l.onRefusal(t + 850ms, t + 870ms));
      QVERIFY2(std::abs(l.ceiling() - c.ceiling) < 1e-6,
               qPrintable(QStringLiteral("%1/s, send times %2: %3").arg(c.sendRate).arg(c.sendTimes).arg(l.ceiling())));
    }
  }

  // A bucket's saved-up burst inflates the last second's count; between two refused sends of one episode it
  // was empty, so what it accepted of the sends between them is its rate. A full window accepts nothing there
  // and says nothing.
  void theSendsBetweenAnEpisodesRefusalsMeasureTheRate() {
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    auto learnt = [](TimePoint& t) {
      RateLearner l;
      for (int i = 0; i < 50; ++i) l.onSuccess(t += 20ms, t - 300ms);
      l.onRefusal(t - 300ms, t);  // slow start
      t += 2s;
      for (int i = 0; i < 60; ++i) l.onSuccess(t += 1000ms / 60, t - 300ms);
      l.onRefusal(t - 300ms, t);  // 60 in the last second: the bucket's burst went with them
      return l;
    };
    TimePoint t = t0;
    RateLearner bucket = learnt(t);
    QCOMPARE(bucket.ceiling(), 60.0);
    // The requests in flight come back over the next 300 ms, sent 25 ms apart (40/s) into the empty bucket,
    // whose rate is 20/s: every other one refused.
    const TimePoint from = t - 300ms;
    auto answer = [&](RateLearner& l, int i) {
      const TimePoint sent = from + std::chrono::milliseconds(25 * i), now = sent + 300ms;
      if (i % 2) {
        QVERIFY(!l.onRefusal(sent, now));  // the same episode
      } else {
        l.onSuccess(now, sent);
      }
    };
    // Refused at 0, 25, 75, 125, 175 ms: 3 accepted between, too few to say a rate.
    for (int i = 1; i <= 7; ++i) answer(bucket, i);
    QCOMPARE(bucket.ceiling(), 60.0);
    for (int i = 8; i <= 9; ++i) answer(bucket, i);  // refused at 225 ms: 4 over 225 ms
    QVERIFY2(std::abs(bucket.ceiling() - 4 / 0.225) < 1e-6, qPrintable(QString::number(bucket.ceiling())));
    QVERIFY(std::abs(bucket.rate(t) - RateLearner::kBeta * 4 / 0.225) < 1e-6);  // the drop is from it
    QVERIFY(std::abs(bucket.rate(t + fromSeconds(k)) - 4 / 0.225) < 1e-6);
    for (int i = 10; i <= 11; ++i) answer(bucket, i);  // 5 over 275 ms: higher, and a ceiling only comes down
    QVERIFY(std::abs(bucket.ceiling() - 4 / 0.225) < 1e-6);

    // Sends after the episode began went at the lowered rate (a window that counts refusals accepts fewer of
    // them than its rate): they measure nothing.
    t = t0;
    RateLearner later = learnt(t);
    for (int i = 1; i <= 8; ++i) {
      const TimePoint sent = t + std::chrono::milliseconds(25 * i), now = sent + 300ms;
      if (i % 2) {
        later.onRefusal(sent, now);
      } else {
        later.onSuccess(now, sent);
      }
    }
    QCOMPARE(later.ceiling(), 60.0);

    // A window: everything refused until it turns, then accepted. Nothing between the refused sends.
    t = t0;
    RateLearner window = learnt(t);
    for (int i = 1; i <= 8; ++i) window.onRefusal(from + std::chrono::milliseconds(25 * i), t + 25ms * i);
    for (int i = 9; i <= 12; ++i) window.onSuccess(t + 25ms * i, from + std::chrono::milliseconds(25 * i));
    QCOMPARE(window.ceiling(), 60.0);
  }

  void anEpisodeAMarkBeganMeasuresOnlyItsOwnRefusals() {
    // 500/s told in headers: marks (a stated remaining used up), never a refusal, start and carry the learner.
    const auto second = [](RateLearner& l, TimePoint& t) {
      for (int i = 0; i < 500; ++i) l.onSuccess(t += 2ms, t - 20ms);
    };
    TimePoint t = t0;
    RateLearner marked;
    second(marked, t);
    QVERIFY(marked.onMark(t - 20ms, t, 500));  // slow start
    second(marked, t);
    QVERIFY(marked.onMark(t - 20ms, t, 500));  // its end: the ceiling
    const double ceiling = marked.ceiling();
    QVERIFY2(ceiling > 400, qPrintable(QString::number(ceiling)));
    // The limit halved: the requests in flight at the mark are refused. Their sends span 10 ms, too little
    // to say a rate; with the span's first send taken as zero it was 1,000 acceptances over 1,000 s.
    for (int i = 0; i < 6; ++i) QVERIFY(!marked.onRefusal(t - 20ms + 2ms * i, t + 2ms * i));
    QCOMPARE(marked.ceiling(), ceiling);
    QVERIFY(marked.rate(t + 10ms) > RateLearner::kBeta * ceiling - 10);

    // A refusal episode long before the mark: its sends are no part of the span either.
    t = t0;
    RateLearner earlier;
    second(earlier, t);
    earlier.onRefusal(t - 20ms, t);  // slow start
    second(earlier, t);
    earlier.onRefusal(t - 20ms, t);
    for (int i = 0; i < 5; ++i) second(earlier, t);
    QVERIFY(earlier.onMark(t - 20ms, t, 500));
    const double before = earlier.ceiling();
    for (int i = 0; i < 6; ++i) earlier.onRefusal(t - 20ms + 2ms * i, t + 2ms * i);
    QCOMPARE(earlier.ceiling(), before);

    // A request in flight for 5 s (a long completion) refused with the episode: the acceptances kept reach
    // back 2 s, too short to count over its span.
    t = t0;
    RateLearner longCall;
    second(longCall, t);
    longCall.onRefusal(t - 20ms, t);
    for (int i = 0; i < 5; ++i) second(longCall, t);
    QVERIFY(longCall.onRefusal(t - 20ms, t));
    const double measured = longCall.ceiling();
    longCall.onRefusal(t - 5s, t + 1ms);
    QCOMPARE(longCall.ceiling(), measured);
  }

  void theClimbPastTheCeilingGrowsPerRoundTrip() {
    // The same episodes answered 200 ms and 20 ms after sending: a ceiling of 40/s.
    auto learnt = [](TimePoint& t, Duration rtt) {
      RateLearner l;
      for (int i = 0; i < 50; ++i) {
        t += 20ms;
        l.onSuccess(t, t - rtt);
      }
      l.onRefusal(t - rtt, t);  // slow start
      t += 5s;  // past the episode's grace at the longest round trip (1.5 x 2 s)
      for (int i = 0; i < 40; ++i) {
        t += 25ms;
        l.onSuccess(t, t - rtt);
      }
      l.onRefusal(t - rtt, t);
      return l;
    };
    TimePoint slowAt = t0, fastAt = t0;
    RateLearner slow = learnt(slowAt, 200ms), fast = learnt(fastAt, 20ms);
    QCOMPARE(slow.ceiling(), 40.0);
    QCOMPARE(fast.ceiling(), 40.0);
    QCOMPARE(slow.plateauS(), fast.plateauS());
    const double k = std::cbrt((1 - RateLearner::kBeta) / RateLearner::kCubic);
    const auto climbStart = [&](TimePoint at, double pastS) { return at + fromSeconds(k + slow.plateauS() + pastS); };
    // The regain and the plateau do not depend on the round trip.
    QCOMPARE(slow.rate(climbStart(slowAt, -0.5)), fast.rate(climbStart(fastAt, -0.5)));
    QVERIFY(std::abs(slow.rate(climbStart(slowAt, 0)) - 40) < 1e-6);
    // 2 s past the plateau: at 200 ms, 0.1 more in flight per round trip is 2.5/s per second, +5/s.
    const double bounded = slow.rate(climbStart(slowAt, 2));
    QVERIFY2(std::abs(bounded - (40 + RateLearner::kGrowthPerRtt / (0.2 * 0.2) * 2)) < 1e-6,
             qPrintable(QString::number(bounded)));
    // At 20 ms the bound is 250/s per second: the cubic's climb, well past that, is left alone.
    const double cubic = fast.rate(climbStart(fastAt, 2));
    QVERIFY2(cubic > 60 && cubic < 40 + RateLearner::kGrowthPerRtt / (0.02 * 0.02) * 2, qPrintable(QString::number(cubic)));
    // At 2 s a round trip, 0.1 more in flight per round trip is 0.025/s per second: the climb still doubles the
    // ceiling within kSlowestDoublingS.
    TimePoint longAt = t0;
    RateLearner llm = learnt(longAt, 2s);
    QCOMPARE(llm.ceiling(), 40.0);
    const double slowest = llm.rate(longAt + fromSeconds(k + llm.plateauS() + 2));
    QVERIFY2(std::abs(slowest - 40 * (1 + 2 / RateLearner::kSlowestDoublingS)) < 1e-6, qPrintable(QString::number(slowest)));
    // No round trip known (answers without their send times): no bound.
    TimePoint t = t0;
    RateLearner unknown;
    for (int i = 0; i < 50; ++i) unknown.onSuccess(t += 20ms);
    unknown.onRefusal(t - 200ms, t);
    t += 2s;
    for (int i = 0; i < 40; ++i) unknown.onSuccess(t += 25ms);
    unknown.onRefusal(t - 200ms, t);
    QCOMPARE(unknown.rate(t + fromSeconds(k + unknown.plateauS() + 2)), cubic);
  }

  void aMarkStartsTheLearntRateWhereNoRefusalDid() {
    RateLearner l;
    for (int i = 0; i < 40; ++i) l.onSuccess(t0 + std::chrono::milliseconds(25 * i));
    const TimePoint now = t0 + 1s;
    QVERIFY(l.onMark(now - 20ms, now, 50));
    QVERIFY(l.active());
    QCOMPARE(l.refusedEpisodes(), 0);
    QVERIFY(l.rate(now) >= RateLearner::kBeta * 50 - 1e-9);  // slow start, no lower than the headers suggest
  }

  // Within a second of slow start's beginning a mark tells nothing of the rate: what got through since is what
  // the stated remaining let out while answers were awaited, and the last second's count holds the time before.
  // Slow start goes on (the remaining still binds the sends); a mark a second or more later ends it.
  void aMarkSoonAfterSlowStartBeganEndsNothing() {
    RateLearner l;
    for (int i = 0; i < 50; ++i) l.onSuccess(t0 + std::chrono::milliseconds(20 * i));
    const TimePoint began = t0 + 1s;
    QVERIFY(l.onMark(began - 20ms, began, 25));  // the limit halved: slow start
    const double start = l.rate(began);
    for (int i = 1; i <= 5; ++i) l.onSuccess(began + i * 70ms, began + i * 70ms - 20ms);  // 14/s, of 25
    QVERIFY(!l.onMark(began + 340ms, began + 360ms, 25));
    QVERIFY(l.slowStarting());
    QCOMPARE(l.rate(began + 500ms), 2 * start);
    for (int i = 0; i < 25; ++i) l.onSuccess(began + 400ms + i * 25ms, began + 380ms + i * 25ms);
    QVERIFY(l.onMark(began + 1s, began + 1020ms, 25));
    QVERIFY(!l.slowStarting());
  }

  void gradualRemainingUsedUpWaitsForTheAnswersInFlight() {
    const TimePoint at = t0 + 1s;
    QuotaTracker qt = learntSlidingWindow(at);
    const TimePoint now = at + 1500ms;
    answer(qt, 3, 3, now - 20ms, now);  // the three in flight take what is left
    const QuotaWait held = qt.check({1, 0}, now, 0);
    QVERIFY2(held.wait > Duration::zero() && held.reason.find("waiting for answers") != std::string::npos,
             held.reason.c_str());
    answer(qt, 2, 0, now - 10ms, now + 10ms);  // all answered, two left
    QCOMPARE(qt.check({1, 0}, now + 10ms, 0).wait, Duration::zero());
    qt.onSend({1, 0}, now + 10ms);
    qt.onSend({1, 0}, now + 10ms);
    QVERIFY(qt.check({1, 0}, now + 11ms, 0).wait > Duration::zero());
    // Nothing left and nothing in flight: one learnt interval after the last answer, not a hold to the reset.
    answer(qt, 0, 0, now + 10ms, now + 30ms);
    answer(qt, 0, 0, now + 10ms, now + 30ms);
    const QuotaWait next = qt.check({1, 0}, now + 30ms, 0);
    QVERIFY2(next.wait > Duration::zero() && next.wait < 1s, next.reason.c_str());
    QCOMPARE(qt.check({1, 0}, now + 30ms + next.wait, 0).wait, Duration::zero());
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

  void wholeSecondResetsOfOneWindowPinItsTurn() {
    // A 1-s fixed window told in whole seconds says "1" all through it. The window's first reading (sent at
    // t0, answered 20 ms later) bounds the turn by t0 + 1.02 s; the exhausting one at t0 + 600 ms only by
    // t0 + 1.6 s. The key is held to the first bound, where one request checks the turn.
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading first;
    first.scopes.push_back(scope(Dimension::Requests, 10, 9, 1.0));
    qt.onResponse(first, 0, t0 + 20ms, 0, t0);
    QuotaReading last;
    last.scopes.push_back(scope(Dimension::Requests, 10, 0, 1.0));
    qt.onResponse(last, 0, t0 + 600ms, 0, t0 + 580ms);
    const QuotaWait held = qt.check({1, 0}, t0 + 700ms, 0);
    QVERIFY2(held.wait > 300ms && held.wait <= 320ms, held.reason.c_str());
    QVERIFY(held.backIn > 800ms);  // the latest reading's reset is still what everyone is told
    QCOMPARE(qt.check({1, 0}, t0 + 1020ms, 0).wait, Duration::zero());
    qt.onSend({1, 0}, t0 + 1020ms);
    QVERIFY(qt.check({1, 0}, t0 + 1030ms, 0).wait > Duration::zero());  // one check at a time
    QuotaReading turned;
    turned.scopes.push_back(scope(Dimension::Requests, 10, 9, 1.0));
    qt.onResponse(turned, 0, t0 + 1040ms, 0, t0 + 1020ms);
    QCOMPARE(qt.check({1, 0}, t0 + 1040ms, 0).wait, Duration::zero());
  }

  // A window of 10 that turns in 4 s, spent (remaining 0) from t0. check() lets one request go halfway (the
  // probe), answered `probe`. At 4 s its next window is read: 9 left (sent at 4.0 s), 0 left (sent at
  // 4.012 s), then 5 left, in a reading sent at 4.010 s that came back last. What remaining is then.
  static double remainingAfterAnOvertakenReading(QuotaTracker::ProbeAnswer probe) {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 10, 0, 4.0));
    qt.onResponse(r, 0, t0, 0);
    if (qt.check({1, 0}, t0 + 1500ms, 0).wait != Duration::zero()) return -1;  // no probe
    const QuotaTracker::SendId sent = qt.onSend({1, 0}, t0 + 1500ms);
    qt.settleProbe(sent, probe, t0 + 1520ms);
    if (qt.check({1, 0}, t0 + 4s, 0).wait != Duration::zero()) return -1;  // the window turned
    for (const auto& [remaining, sentMs, answeredMs] : {std::array{9, 4000, 4020}, {0, 4012, 4034}, {5, 4010, 4035}}) {
      r.scopes[0].remaining = remaining;
      qt.onResponse(r, 0, t0 + std::chrono::milliseconds(answeredMs), 0, t0 + std::chrono::milliseconds(sentMs));
    }
    return qt.state(Dimension::Requests, t0 + 4040ms).remaining;
  }

  void anOvertakenReadingRaisesNothingWithoutARefill() {
    // Sent before the reading that told 0, the 5 was most likely counted first: older news. With no refill
    // proven (a probe refused, or none answered), remaining stays at 0.
    QCOMPARE(remainingAfterAnOvertakenReading(QuotaTracker::ProbeAnswer::Refused), 0.0);
    QCOMPARE(remainingAfterAnOvertakenReading(QuotaTracker::ProbeAnswer::Neither), 0.0);
    // Proven gradual (the probe got through before the reset), the rise may be its refill: taken as told.
    QCOMPARE(remainingAfterAnOvertakenReading(QuotaTracker::ProbeAnswer::Accepted), 5.0);
  }

  // A limit of 100 per second, its reset told in whole seconds: a first reading telling `first` left, then 35
  // left with 14 in flight (sent at 380 ms, answered at 400), then 39 left with 13 in flight in a reading sent
  // at 385 ms, before the 35 came back, answered at `answeredMs`: a rise of 4, fewer than were in flight. What
  // remaining is then.
  static double remainingAfterARiseInTheSameBurst(double first, int answeredMs = 402) {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 100, first, 1.0));
    qt.onResponse(r, 0, t0 + 20ms, 0, t0);
    r.scopes[0].remaining = 35;
    qt.onResponse(r, 14, t0 + 400ms, 0, t0 + 380ms);
    r.scopes[0].remaining = 39;
    qt.onResponse(r, 13, t0 + std::chrono::milliseconds(answeredMs), 0, t0 + 385ms);
    return qt.state(Dimension::Requests, t0 + std::chrono::milliseconds(answeredMs)).remaining;
  }

  void aRiseInTheSameBurstIsBoundedByTheRefillInADeepWindow() {
    // The first reading told 99 of 100 left: a window (or a bucket as deep as its limit). The 39 may have
    // been counted before the 35, and one request too many there costs a whole-second Retry-After: remaining
    // is what the 35 told less those in flight (21), plus what the stated rate (100/s) refills in the 2 ms since.
    const double soon = remainingAfterARiseInTheSameBurst(99);
    QVERIFY2(soon > 21 && soon < 21.5, std::to_string(soon).c_str());
    // Answered 30 ms after the 35, a bucket may have refilled 3: 24, not the 26 it tells.
    QVERIFY(std::abs(remainingAfterARiseInTheSameBurst(99, 430) - 24) < 1e-6);
    // No reading told more than half the limit (20, 35, 39): a shallow bucket (nginx's burst is a fifth of its
    // rate here), whose small rises are its refill (held, its cold start stalled). Taken as told: 39 - 13.
    QCOMPARE(remainingAfterARiseInTheSameBurst(20), 26.0);
  }

  // A window of 100 told in whole seconds: its first reading (sent at t0, answered 20 ms later), two more
  // {remaining, sent ms, answered ms} with `inFlight` others in flight, then one telling it spent at 600 ms.
  // How long check() holds the key at 700 ms.
  static QuotaWait heldAfter(int inFlight, std::array<std::array<int, 3>, 2> readings) {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 100, 99, 1.0));
    qt.onResponse(r, inFlight, t0 + 20ms, 0, t0);  // the window's first reading: its turn by t0 + 1.02 s
    for (const auto& [remaining, sentMs, answeredMs] : readings) {
      r.scopes[0].remaining = remaining;
      qt.onResponse(r, inFlight, t0 + std::chrono::milliseconds(answeredMs), 0,
                    t0 + std::chrono::milliseconds(sentMs));
    }
    r.scopes[0].remaining = 0;
    qt.onResponse(r, 0, t0 + 600ms, 0, t0 + 580ms);
    return qt.check({1, 0}, t0 + 700ms, 0);
  }

  void anOvertakenAnswerKeepsTheWindowsPin() {
    // Answers overtake each other: one counted before the last reading can come back after it and tell a
    // little more remaining. With requests still in flight that is the same window, and the pin the window's
    // first reading gave on its turn must hold (read as a new window, it moved the turn to its own reset).
    const QuotaWait held = heldAfter(8, {{{40, 380, 400}, {43, 370, 402}}});  // the 43: counted first
    QVERIFY2(held.wait > 300ms && held.wait <= 320ms, held.reason.c_str());
    // A rise in a reading sent after the last one is a new window: its own reset bounds its turn.
    const QuotaWait w = heldAfter(2, {{{10, 380, 400}, {90, 430, 450}}});
    QVERIFY2(w.wait > 740ms && w.wait <= 750ms, w.reason.c_str());  // the 450 ms reading's turn: 1.45 s
    // Sent just after the lowest reading's request, before its answer came back, and rising by no more than
    // the requests in flight: maybe counted first, the same window. The pin holds.
    const QuotaWait pinned = heldAfter(8, {{{40, 380, 400}, {45, 385, 405}}});
    QVERIFY2(pinned.wait > 300ms && pinned.wait <= 320ms, pinned.reason.c_str());
    // The same rise with fewer in flight than it: not a reorder, a new window.
    const QuotaWait moved = heldAfter(2, {{{40, 380, 400}, {45, 385, 405}}});
    QVERIFY2(moved.wait > 700ms && moved.wait <= 710ms, moved.reason.c_str());  // the 405 ms reading's: 1.405 s
  }

  void aSmallWindowsTurnIsNoReorder() {
    // A window of 10 with 16 in flight: a rise from 0 to 8 in a reading sent before the lowest one came back
    // is more than a reorder can tell (counted first, it would have told 8 with 15 still to count of 10): the
    // window turned, and its own reset bounds the next turn, not the old pin.
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 10, 9, 1.0));
    qt.onResponse(r, 15, t0 + 20ms, 0, t0);  // the old window's pin: 1.02 s
    r.scopes[0].remaining = 0;
    qt.onResponse(r, 15, t0 + 990ms, 0, t0 + 970ms);
    r.scopes[0].remaining = 8;
    qt.onResponse(r, 15, t0 + 1010ms, 0, t0 + 980ms);
    const QuotaWait w = qt.check({1, 0}, t0 + 1015ms, 0);
    QVERIFY2(w.wait > 900ms, w.reason.c_str());  // the new window's turn (2.01 s), not the old pin's 5 ms
  }

  void readingsOfDifferentWindowsDoNotPinATurn() {
    QuotaTracker qt(1.0, {0, 0}, t0);
    QuotaReading r;
    r.scopes.push_back(scope(Dimension::Requests, 10, 2, 1.0));
    qt.onResponse(r, 0, t0 + 20ms, 0, t0);
    r.scopes[0].remaining = 5;  // remaining rose: a new window, whose turn the first reading does not bound
    qt.onResponse(r, 0, t0 + 500ms, 0, t0 + 480ms);
    r.scopes[0].remaining = 0;
    qt.onResponse(r, 0, t0 + 600ms, 0, t0 + 580ms);
    const QuotaWait w = qt.check({1, 0}, t0 + 700ms, 0);
    QVERIFY2(w.wait > 790ms && w.wait <= 800ms, w.reason.c_str());
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

QTEST_APPLESS_MAIN(TestQuotaTracker)
#include "test_quota_tracker.moc"
