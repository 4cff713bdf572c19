// AlertPolicy with hand-set times: the worst state over groups, which events notify, the per-kind switches,
// one notice per incident (a minute quiet before the same kind and group is news again), notices close together
// folded into the first, and an exhausted quota that lapses at the time it named.
#include "alert_events.h"
#include "alert_policy.h"

#include <QtTest>

using namespace tg;
using namespace tg::ui;

namespace {

constexpr EpochMs kT0 = tgtest::kAlertT0;
using tgtest::makeEvent;
using tgtest::breaker;

}  // namespace

class TestAlertPolicy : public QObject {
  Q_OBJECT
 private slots:
  void fineUntilSomethingHappens() {
    AlertPolicy p;
    QCOMPARE(p.level(kT0), AlertLevel::Fine);
    QVERIFY(!p.onEvent(makeEvent(EventKind::OperatorAction, kT0, "a")));
    QVERIFY(!p.onEvent(makeEvent(EventKind::RequestShed, kT0, "a")));
    std::string group = "x";
    QCOMPARE(p.level(kT0, &group), AlertLevel::Fine);
    QCOMPARE(group, std::string());
  }

  void worstStateWinsAcrossGroups() {
    AlertPolicy p;
    p.onEvent(makeEvent(EventKind::Burst429Start, kT0, "a"));
    std::string group;
    QCOMPARE(p.level(kT0, &group), AlertLevel::RateLimited);
    QCOMPARE(group, std::string("a"));
    p.onEvent(breaker(kT0 + 1000, "b", "closed", "open"));
    QCOMPARE(p.level(kT0 + 1000, &group), AlertLevel::BreakerOpen);
    QCOMPARE(group, std::string("b"));
    p.onEvent(makeEvent(EventKind::QuotaExhausted, kT0 + 2000, "a", {{"until_ms", kT0 + 60'000}}));
    QCOMPARE(p.level(kT0 + 2000, &group), AlertLevel::QuotaExhausted);
    QCOMPARE(group, std::string("a"));
    // The exhaustion lapses at the time it named; the breaker is still open.
    QCOMPARE(p.level(kT0 + 60'000, &group), AlertLevel::BreakerOpen);
    p.onEvent(breaker(kT0 + 61'000, "b", "open", "half-open"));
    QCOMPARE(p.level(kT0 + 61'000), AlertLevel::BreakerOpen);  // probing is not serving (a hung upstream: minutes)
    p.onEvent(breaker(kT0 + 61'500, "b", "half-open", "closed"));
    QCOMPARE(p.level(kT0 + 61'500), AlertLevel::RateLimited);  // a's burst never ended
    p.onEvent(makeEvent(EventKind::Burst429End, kT0 + 62'000, "a"));
    QCOMPARE(p.level(kT0 + 62'000), AlertLevel::Fine);
  }

  void eachKindNotifiesWithItsTime() {
    AlertPolicy p;
    auto n = p.onEvent(makeEvent(EventKind::Burst429Start, kT0, "a"));
    QVERIFY(n);
    QCOMPARE(n->kind, AlertKind::Incident);
    QCOMPARE(n->tsMs, kT0);
    QCOMPARE(n->group, std::string("a"));
    n = p.onEvent(breaker(kT0 + 5, "a", "closed", "open"));
    QVERIFY(n);
    QCOMPARE(n->kind, AlertKind::BreakerOpen);
    QVERIFY(!p.onEvent(breaker(kT0 + 6, "a", "open", "open")));  // no new opening
    n = p.onEvent(makeEvent(EventKind::QuotaExhausted, kT0 + 7, "a", {{"until_ms", kT0 + 3'600'000}}));
    QVERIFY(n);
    QCOMPARE(n->kind, AlertKind::QuotaExhausted);
    QCOMPARE(n->tsMs, kT0 + 7);
    // Another key of the same group exhausted while the first still is: the same incident.
    QVERIFY(!p.onEvent(makeEvent(EventKind::QuotaExhausted, kT0 + 8, "a", {{"until_ms", kT0 + 3'600'000}})));
  }

  void aBreakerClosingIsNoNotice() {
    AlertPolicy p;
    QVERIFY(!p.onEvent(breaker(kT0, "a", "half-open", "closed")));
    QVERIFY(!p.onEvent(breaker(kT0, "a", "open", "half-open")));
  }

  void disabledKindsStaySilentButStillColourTheTray() {
    AlertPolicy p;
    p.setEnabled(AlertKind::BreakerOpen, false);
    QVERIFY(!p.enabled(AlertKind::BreakerOpen));
    QVERIFY(!p.onEvent(breaker(kT0, "a", "closed", "open")));
    QCOMPARE(p.level(kT0), AlertLevel::BreakerOpen);
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0, "a")));
    p.setEnabled(AlertKind::BreakerOpen, true);
    p.onEvent(breaker(kT0 + 1000, "a", "open", "half-open"));
    QVERIFY(!p.onEvent(breaker(kT0 + 2000, "a", "half-open", "open")));  // not closed since: the same outage
  }

  void aBreakerThatOpensAgainSoonIsTheSameOutage() {
    AlertPolicy p;
    QVERIFY(p.onEvent(breaker(kT0, "a", "closed", "open")));
    p.onEvent(breaker(kT0 + 1000, "a", "open", "half-open"));
    QVERIFY(!p.onEvent(breaker(kT0 + 2000, "a", "half-open", "open")));  // its probe failed
    p.onEvent(breaker(kT0 + 3000, "a", "open", "half-open"));
    p.onEvent(breaker(kT0 + 4000, "a", "half-open", "closed"));
    QVERIFY(!p.onEvent(breaker(kT0 + 30'000, "a", "closed", "open")));  // closed under a minute: still it
    p.onEvent(breaker(kT0 + 31'000, "a", "open", "closed"));
    QVERIFY(p.onEvent(breaker(kT0 + 31'000 + AlertPolicy::kRepeatMs, "a", "closed", "open")));
  }

  // Bare 429s keep coming in short bursts for as long as the limit binds: one incident, one notice.
  void aFlappingBurstNotifiesOncePerIncident() {
    AlertPolicy p;
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0, "a")));
    EpochMs t = kT0;
    for (int i = 0; i < 60; ++i) {  // two minutes of bursts, each ending 2 s after its last 429
      p.onEvent(makeEvent(EventKind::Burst429End, t + 1000, "a"));
      t += 2000;
      QVERIFY2(!p.onEvent(makeEvent(EventKind::Burst429Start, t, "a")), std::to_string(i).c_str());
    }
    p.onEvent(makeEvent(EventKind::Burst429End, t + 1000, "a"));
    QVERIFY(!p.onEvent(makeEvent(EventKind::Burst429Start, t + 1000 + AlertPolicy::kRepeatMs - 1, "a")));
    p.onEvent(makeEvent(EventKind::Burst429End, t + 2000 + AlertPolicy::kRepeatMs, "a"));
    // A minute quiet: news again.
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, t + 2000 + 2 * AlertPolicy::kRepeatMs, "a")));
    // Time going backwards (a clock step) never silences alerts for good.
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0 - 3'600'000, "a")));
  }

  // Eight groups refused at once were eight pop-ups in half a second; an exhausted quota was two.
  void noticesCloseTogetherAreFoldedIntoTheFirst() {
    AlertPolicy p;
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0, "g1")));
    for (int g = 2; g <= 8; ++g)
      QVERIFY(!p.onEvent(makeEvent(EventKind::Burst429Start, kT0 + 60 * g, "g" + std::to_string(g))));
    std::string group;
    int groups = 0;
    QCOMPARE(p.level(kT0 + 500, &group, &groups), AlertLevel::RateLimited);
    QCOMPARE(group, std::string("g1"));
    QCOMPARE(groups, 8);
    // Folded is told: g5's incident does not notify later while it lasts.
    QVERIFY(!p.onEvent(makeEvent(EventKind::Burst429Start, kT0 + AlertPolicy::kCoalesceMs + 1, "g5")));
    // A more severe kind is news at once, and so is a lesser one in another group; the same kind is folded.
    QVERIFY(p.onEvent(makeEvent(EventKind::QuotaExhausted, kT0 + 600, "g2", {{"until_ms", kT0 + 30'000}})));
    QVERIFY(p.onEvent(breaker(kT0 + 700, "g3", "closed", "open")));  // folded, g3's outage was never told
    QVERIFY(!p.onEvent(breaker(kT0 + 750, "g7", "closed", "open")));
    QVERIFY(!p.onEvent(makeEvent(EventKind::QuotaExhausted, kT0 + 800, "g4", {{"until_ms", kT0 + 30'000}})));
    QCOMPARE(p.level(kT0 + 900, &group, &groups), AlertLevel::QuotaExhausted);
    QCOMPARE(groups, 2);
    // Past the window, another group's new incident notifies again.
    QVERIFY(p.onEvent(breaker(kT0 + 800 + AlertPolicy::kCoalesceMs, "g6", "closed", "open")));
    // Exhausted, then the 429s that come with it: one notice, the exhaustion.
    AlertPolicy q;
    QVERIFY(q.onEvent(makeEvent(EventKind::QuotaExhausted, kT0, "a", {{"until_ms", kT0 + 5000}})));
    QVERIFY(!q.onEvent(makeEvent(EventKind::Burst429Start, kT0, "a")));
  }

  void anEngineStartForgetsTheOldState() {
    AlertPolicy p;
    p.onEvent(breaker(kT0, "a", "closed", "open"));
    p.onEvent(makeEvent(EventKind::EngineStart, kT0 + 1, ""));
    QCOMPARE(p.level(kT0 + 1), AlertLevel::Fine);
  }

  void exhaustionWithoutATimeHoldsAMinute() {
    AlertPolicy p;
    QVERIFY(p.onEvent(makeEvent(EventKind::QuotaExhausted, kT0, "a")));
    QCOMPARE(p.level(kT0 + 59'000), AlertLevel::QuotaExhausted);
    QCOMPARE(p.level(kT0 + 60'000), AlertLevel::Fine);
  }
};

QTEST_GUILESS_MAIN(TestAlertPolicy)
#include "test_alert_policy.moc"
