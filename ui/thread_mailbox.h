// Hands work from other threads to the thread a QObject lives in (the UI thread).
//
// Why not a queued signal or QMetaObject::invokeMethod with a lambda: those hand their arguments over inside
// Qt, under Qt's own locks. ThreadSanitizer cannot see that synchronisation unless Qt itself is built with
// -fsanitize=thread (Debian's is not), so every value carried that way is reported as a data race by
// `scripts/check tsan`, and a real race hidden among them would go unnoticed. Here the work crosses under a
// std::mutex that TSan sees; Qt carries only an argument-less wakeup.
#pragma once

#include <QObject>

#include <functional>
#include <mutex>
#include <vector>

namespace tg::ui {

class ThreadMailbox : public QObject {
  Q_OBJECT
 public:
  explicit ThreadMailbox(QObject* parent = nullptr);

  // Thread-safe, never blocks on the receiving thread. `fn` runs later on this object's thread, in posting
  // order; work still pending when the mailbox is destroyed is dropped without running.
  void post(std::function<void()> fn);

 private slots:
  void drain();

 private:
  std::mutex mutex_;
  std::vector<std::function<void()>> pending_;  // guarded by mutex_
};

}  // namespace tg::ui
