// Tier queues: bounded per tier, with deadlines, time driven by hand.
#include "tier_queues.h"

#include <QtTest>

using namespace tg;
using namespace std::chrono_literals;

namespace {
const TimePoint t0 = TimePoint{} + 1000s;
}  // namespace

class TestTierQueues : public QObject {
  Q_OBJECT
 private slots:
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

  // A cancel takes out exactly the matching entries, from any tier; the rest keep their order.
  void removeIfTakesOnlyMatches() {
    TierQueues<int> q;
    for (int v : {1, 2, 3, 4}) q.push(Tier::P1, std::move(v), t0 + 1s);
    q.pushFront(Tier::P0, 20);
    std::vector<int> removed;
    QCOMPARE(q.removeIf([](int v) { return v % 2 == 0; }, [&](int v) { removed.push_back(v); }), 3);
    QCOMPARE(removed, (std::vector<int>{20, 2, 4}));
    QCOMPARE(q.removeIf([](int v) { return v == 99; }, [&](int v) { removed.push_back(v); }), 0);
    QVERIFY(q.empty(Tier::P0));
    QCOMPARE(q.popFront(Tier::P1), 1);
    QCOMPARE(q.popFront(Tier::P1), 3);
    QVERIFY(q.empty(Tier::P1));
  }
};

QTEST_APPLESS_MAIN(TestTierQueues)
#include "test_tier_queues.moc"
