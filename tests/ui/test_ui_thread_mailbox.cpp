// ThreadMailbox: work posted from other threads runs on the mailbox's thread, once, in posting order, and
// work still pending when the mailbox goes is dropped, never run on a dead receiver.
#include "thread_mailbox.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using tg::ui::ThreadMailbox;

class TestUiThreadMailbox : public QObject {
  Q_OBJECT
 private slots:
  void runsOnTheReceiverThreadInOrder() {
    ThreadMailbox box;
    std::vector<int> seen;  // touched only on this (the receiver's) thread
    bool wrongThread = false;
    QThread* const receiver = QThread::currentThread();
    constexpr int kPerThread = 2000;
    std::vector<std::thread> senders;
    for (int t = 0; t < 2; ++t)
      senders.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i)
          box.post([&, v = t * kPerThread + i] {
            if (QThread::currentThread() != receiver) wrongThread = true;
            seen.push_back(v);
          });
      });
    for (auto& s : senders) s.join();
    QVERIFY(seen.empty());  // nothing runs until the receiver's event loop does
    QTRY_COMPARE_WITH_TIMEOUT(seen.size(), std::size_t(2 * kPerThread), 10000);
    QVERIFY(!wrongThread);
    // Each sender's items keep their order; every item ran exactly once.
    std::vector<int> last(2, -1);
    std::vector<bool> ran(2 * kPerThread, false);
    for (int v : seen) {
      QVERIFY2(!ran[v], "an item ran twice");
      ran[v] = true;
      QVERIFY2(v > last[v / kPerThread], "a sender's items ran out of order");
      last[v / kPerThread] = v;
    }
  }

  void pendingWorkIsDroppedWithTheMailbox() {
    auto ran = std::make_shared<std::atomic<int>>(0);
    {
      ThreadMailbox box;
      std::thread([&] { box.post([ran] { ++*ran; }); }).join();
    }  // destroyed before the event loop ran: the wakeup is discarded with the object
    QCoreApplication::processEvents();
    QCOMPARE(ran->load(), 0);
    QCOMPARE(ran.use_count(), 1L);  // the dropped work was destroyed, not leaked
  }
};

QTEST_GUILESS_MAIN(TestUiThreadMailbox)
#include "test_ui_thread_mailbox.moc"
