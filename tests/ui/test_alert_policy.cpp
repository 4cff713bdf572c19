// AlertPolicy with hand-set times: the worst state over groups, which events notify, the per-kind switches,
// the once-a-minute limit per kind and group, and an exhausted quota that lapses at the time it named.
#include "alert_policy.h"

#include <QtTest>

using namespace tg;
using namespace tg::ui;

namespace {

constexpr EpochMs kT0 = 1'800'000'000'000;

Event makeEvent(EventKind kind, EpochMs ts, const std::string& group, nlohmann::json detail = nlohmann::json::object()) {
  Event e;
  e.kind = kind;
  e.tsMs = ts;
  e.group = group;
  e.detail = std::move(detail);
  return e;
}

Event breaker(EpochMs ts, const std::string& group, const char* from, const char* to) {
  return makeEvent(EventKind::BreakerTransition, ts, group, {{"from", from}, {"to", to}});
}

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
    QCOMPARE(p.level(kT0 + 61'000), AlertLevel::RateLimited);  // a's burst never ended
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
    QVERIFY(p.onEvent(breaker(kT0 + 2000, "a", "half-open", "open")));
  }

  void aFlappingBurstNotifiesOnceAMinutePerGroup() {
    AlertPolicy p;
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0, "a")));
    p.onEvent(makeEvent(EventKind::Burst429End, kT0 + 5000, "a"));
    QVERIFY(!p.onEvent(makeEvent(EventKind::Burst429Start, kT0 + 10'000, "a")));
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0 + 10'000, "b")));  // another group: its own minute
    p.onEvent(makeEvent(EventKind::Burst429End, kT0 + 20'000, "a"));
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0 + AlertPolicy::kRepeatMs, "a")));
    // Time going backwards (a clock step) never silences alerts for good.
    QVERIFY(p.onEvent(makeEvent(EventKind::Burst429Start, kT0 - 3'600'000, "a")));
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
