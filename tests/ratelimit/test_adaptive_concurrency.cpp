// Adaptive concurrency: shrinks on 429 and latency growth, grows back under the operator ceiling.
#include "adaptive_concurrency.h"
#include "rate_learner.h"

#include <QtTest>

using namespace tg;
using namespace std::chrono_literals;

namespace {
const TimePoint t0 = TimePoint{} + 1000s;

// An upstream that accepts 8 in flight: 8 acceptances sent with 0..7 in flight, then a refusal sent with 8
// (at `t`, which moves on) sets the in-flight cap at 8.
AdaptiveConcurrency cappedAtEight(TimePoint& t, double latencyS) {
  AdaptiveConcurrency a(64, 1, true, t0);
  for (int i = 0; i < 8; ++i) a.onSuccess(latencyS, t += 1ms, i);
  if (!a.onRateLimited(t += 1ms, 8) || a.inFlightCap() != 8) qFatal("the cap of 8 was not read");
  return a;
}
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

  // A replay at 10x runs the constants on a clock ten times as fast: 429 bursts 0.2 s apart are two seconds
  // apart on the recording's axis and count twice; the learnt rate moves ten times as fast too, and reads
  // ten times as high.
  void timeScaleCompressesTheConstants() {
    AdaptiveConcurrency a(20, 1, true, t0);
    a.setTimeScale(10);
    a.onRateLimited(t0 + 2s);
    a.onRateLimited(t0 + 2050ms);  // 0.5 s on the dilated clock: the same burst
    QCOMPARE(a.limit(), 14);
    a.onRateLimited(t0 + 2200ms);  // 2 s on the dilated clock: a second burst
    QCOMPARE(a.limit(), 9);

    RateLearner real, fast;
    fast.setTimeScale(10);
    TimePoint t = t0;
    for (int i = 0; i < 20; ++i) real.onSuccess(t += 50ms);  // 20/s for a second
    t = t0;
    for (int i = 0; i < 20; ++i) fast.onSuccess(t += 5ms);   // the same at 10x
    QVERIFY(real.onRefusal(t0 + 1s, t0 + 1s));
    QVERIFY(fast.onRefusal(t0 + 100ms, t0 + 100ms));
    QCOMPARE(fast.rate(t0 + 100ms), 10 * real.rate(t0 + 1s));
    QCOMPARE(fast.rate(t0 + 150ms), 10 * real.rate(t0 + 1500ms));  // one doubling each
    QVERIFY(fast.rate(t0 + 150ms) > 1.9 * fast.rate(t0 + 100ms));
  }

  void adaptiveBacksOffOnLatencyGrowth() {
    AdaptiveConcurrency a(32, 1, true, t0);
    TimePoint t = t0;
    for (int i = 0; i < 500; ++i) a.onSuccess(0.02, t += 10ms);
    QCOMPARE(a.limit(), 32);
    for (int i = 0; i < 100; ++i) a.onSuccess(0.5, t += 10ms);  // upstream queueing
    QVERIFY2(a.limit() < 32, qPrintable(QString::number(a.limit())));
  }

  // A concurrency-only limit of 8: requests sent with 0..7 others in flight are accepted, the 9th and later are
  // refused. The refusal is read as an in-flight limit: the limit drops to 8 at once and stays there while
  // successes come (no additive growth into the refusals), and the caller is told not to cut the rate.
  void refusalsAboveEveryAcceptanceAreAnInFlightLimit() {
    TimePoint t = t0 + 1s;
    AdaptiveConcurrency a = cappedAtEight(t, 0.16);
    QCOMPARE(a.limit(), 8);
    for (int i = 0; i < 200; ++i) a.onSuccess(0.16, t += 10ms, i % 8);  // 2 s of successes at the cap
    QCOMPARE(a.limit(), 8);
    // A refusal at 9 (one answer still on its way back) does not raise it.
    QVERIFY(a.onRateLimited(t += 1ms, 9));
    QCOMPARE(a.limit(), 8);
    // Refusals of requests sent with 20 in flight before the limit took hold, while acceptances of that time
    // were read with 20 in flight too (their slots had freed upstream first): explained by the limit, still.
    for (int i = 0; i < 8; ++i) a.onSuccess(0.016, t += 1ms, 20);
    QVERIFY(a.onRateLimited(t += 1ms, 20));
    QCOMPARE(a.limit(), 8);
    // After kCapProbeS without such a refusal one more is tried: a limit that rose is found.
    for (int i = 0; i < 600; ++i) a.onSuccess(0.16, t += 10ms, i % 8);
    QCOMPARE(a.limit(), 9);
    // Refused at 8 with acceptances below it: 9 was one too many, back to 8.
    QVERIFY(a.onRateLimited(t += 1ms, 8));
    QCOMPARE(a.limit(), 8);
  }

  // Probing above an in-flight limit is paid for by the acceptances that pressed it: after kCapProbeAccepted of
  // them sent with cap - 1 or more in flight, one more; after each further clean run the step doubles, so a
  // limit that doubled is found in a few runs (a rate limit behind a fixed latency reads as an in-flight limit
  // of rate x latency). A refusal starts the steps again at one. Acceptances that did not press it (a quiet
  // spell) raise nothing before kCapProbeS.
  void probingAboveAnInFlightLimitDoublesWhilePressedAndClean() {
    TimePoint t = t0 + 1s;
    AdaptiveConcurrency a = cappedAtEight(t, 0.02);
    auto press = [&](int n, int inFlight) {
      for (int i = 0; i < n; ++i) a.onSuccess(0.02, t += 1ms, inFlight);
    };
    press(AdaptiveConcurrency::kCapProbeAccepted - 1, 3);  // not pressing: nothing
    QCOMPARE(a.inFlightCap(), 8);
    press(AdaptiveConcurrency::kCapProbeAccepted - 1, 7);
    QCOMPARE(a.inFlightCap(), 8);
    press(1, 7);
    QCOMPARE(a.inFlightCap(), 9);
    press(AdaptiveConcurrency::kCapProbeAccepted, 8);
    QCOMPARE(a.inFlightCap(), 11);
    press(AdaptiveConcurrency::kCapProbeAccepted, 10);
    QCOMPARE(a.inFlightCap(), 15);
    press(60, 3);  // the limit follows in a few dozen answers
    QCOMPARE(a.limit(), 15);
    QCOMPARE(a.inFlightCap(), 15);
    QVERIFY(a.onRateLimited(t += 1ms, 12));  // refused with 12 in flight, acceptances at 10
    QCOMPARE(a.inFlightCap(), 12);
    press(AdaptiveConcurrency::kCapProbeAccepted, 11);
    QCOMPARE(a.inFlightCap(), 13);

    // Answers read in a batch, their slots refilled in one round that the limit ended: each of the round's
    // sends pressed it, though only the last left with cap - 1 in flight. Once the limit has reached the cap.
    t = t0 + 1s;
    AdaptiveConcurrency batched = cappedAtEight(t, 0.02);
    for (int i = 0; i < 30; ++i) batched.onSuccess(0.02, t += 1ms, 3);  // the limit climbs back to the cap
    QCOMPARE(batched.limit(), 8);
    for (int i = 0; i < AdaptiveConcurrency::kCapProbeAccepted - 1; ++i) batched.onSuccess(0.02, t += 1ms, 4, true);
    QCOMPARE(batched.inFlightCap(), 8);
    batched.onSuccess(0.02, t += 1ms, 5, true);
    QCOMPARE(batched.inFlightCap(), 9);
  }

  // An in-flight limit of 4 that rose to 8 (25/s at 160 ms). The first step waits a spell (kCapProbeS: at 25/s
  // fewer than kCapProbeAccepted acceptances press it); then each step pressed kCapFollowUpAccepted times without a
  // refusal doubles the next: 4 to 8 within 4 s of the spell (each new slot filled as the limit grows into it).
  // A refusal ends the climb: the next step waits a spell again. At the ceiling the steps stop.
  void aLimitThatRoseIsClimbedBackToInAFewSteps() {
    AdaptiveConcurrency a(16, 1, true, t0);
    TimePoint t = t0 + 1s;
    for (int i = 0; i < 8; ++i) a.onSuccess(0.16, t += 10ms, i % 4);
    QVERIFY(a.onRateLimited(t += 1ms, 4));
    QCOMPARE(a.inFlightCap(), 4);
    const TimePoint set = t;
    // Sent with as many in flight as the group's limit allows (the scheduler's send), at 25/s.
    auto answer = [&](int n) {
      for (int i = 0; i < n; ++i) a.onSuccess(0.16, t += 40ms, a.limit() - 1);
    };
    answer(AdaptiveConcurrency::kCapFollowUpAccepted);
    QCOMPARE(a.inFlightCap(), 4);  // no follow-up before a first step
    while (a.inFlightCap() == 4 && t < set + 10s) answer(1);
    QVERIFY2(t - set <= fromSeconds(AdaptiveConcurrency::kCapProbeS) + 40ms,
             qPrintable(QString::number(toSeconds(t - set))));
    QCOMPARE(a.inFlightCap(), 5);
    const TimePoint stepped = t;
    while (a.inFlightCap() < 8 && t < stepped + 10s) answer(1);
    QVERIFY2(t - stepped <= 4s, qPrintable(QString::number(toSeconds(t - stepped))));
    QCOMPARE(a.inFlightCap(), 8);  // 5, 6, 8
    QVERIFY(a.onRateLimited(t += 1ms, 8));  // one too many would have come next: back at 8, the climb over
    answer(2 * AdaptiveConcurrency::kCapFollowUpAccepted);
    QCOMPARE(a.inFlightCap(), 8);
    // Pressed at the ceiling, the step stops doubling (it overflowed an int after 31 doublings).
    AdaptiveConcurrency top(4, 1, true, t0);
    t = t0 + 1s;
    for (int i = 0; i < 8; ++i) top.onSuccess(0.02, t += 1ms, i % 2);
    QVERIFY(top.onRateLimited(t += 1ms, 2));
    for (int i = 0; i < 5000; ++i) top.onSuccess(0.02, t += 1ms, top.limit() - 1);
    QCOMPARE(top.inFlightCap(), 4);
    QCOMPARE(top.limit(), 4);
  }

  // A rate limit: refusals come with as many in flight as acceptances had. That is a rate signal (the usual
  // cut), not an in-flight limit, and no cap is kept.
  void refusalsAmongAcceptancesAreARateSignal() {
    AdaptiveConcurrency a(16, 1, true, t0);
    TimePoint t = t0 + 1s;
    for (int i = 0; i < 100; ++i) a.onSuccess(0.02, t += 10ms, i % 4);
    QVERIFY(!a.onRateLimited(t += 1ms, 2));
    QCOMPARE(a.limit(), 11);  // 16 x 0.7
    QCOMPARE(a.inFlightCap(), 0);
    // Without evidence (no recent acceptances, or in-flight counts unknown) it is a rate signal too.
    AdaptiveConcurrency cold(16, 1, true, t0);
    QVERIFY(!cold.onRateLimited(t0 + 1s, 8));
    for (int i = 0; i < 10; ++i) cold.onSuccess(0.02, t0 + 2s + i * 1ms);
    QVERIFY(!cold.onRateLimited(t0 + 2100ms, 8));
    // Acceptances older than kEvidenceS are no evidence.
    AdaptiveConcurrency stale(16, 1, true, t0);
    for (int i = 0; i < 8; ++i) stale.onSuccess(0.16, t0 + 1s, i);
    QVERIFY(!stale.onRateLimited(t0 + 4s, 8));
    // One in flight is too few to tell: requests paced slower than their latency leave with none in flight.
    AdaptiveConcurrency paced(16, 1, true, t0);
    for (int i = 0; i < 50; ++i) paced.onSuccess(0.02, t0 + 1s + i * 25ms, 0);
    QVERIFY(!paced.onRateLimited(t0 + 2300ms, 1));
    // Time that goes backwards drops the evidence rather than trusting it.
    AdaptiveConcurrency back(16, 1, true, t0);
    for (int i = 0; i < 8; ++i) back.onSuccess(0.16, t0 + 5s, i);
    QVERIFY(!back.onRateLimited(t0 + 4s, 8));
  }

  void adaptiveOffMeansOperatorCeiling() {
    AdaptiveConcurrency a(8, 1, false, t0);
    a.onRateLimited(t0 + 5s);
    QCOMPARE(a.limit(), 8);
    for (int i = 0; i < 8; ++i) a.onSuccess(0.16, t0 + 6s, i);
    QVERIFY(!a.onRateLimited(t0 + 6s, 4));  // an operator's fixed ceiling is kept, in-flight limit or not
    QCOMPARE(a.limit(), 8);
  }
};

QTEST_APPLESS_MAIN(TestAdaptiveConcurrency)
#include "test_adaptive_concurrency.moc"
