#include "thread_mailbox.h"

#include <QMetaObject>

namespace tg::ui {

ThreadMailbox::ThreadMailbox(QObject* parent) : QObject(parent) {}

void ThreadMailbox::post(std::function<void()> fn) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    wake = pending_.empty();  // a wakeup is already on its way for a non-empty mailbox
    pending_.push_back(std::move(fn));
  }
  if (wake) QMetaObject::invokeMethod(this, "drain", Qt::QueuedConnection);
}

void ThreadMailbox::drain() {
  std::vector<std::function<void()>> work;
  {
    std::lock_guard lock(mutex_);
    work.swap(pending_);
  }
  for (auto& fn : work) fn();
}

}  // namespace tg::ui
