// Hands engine snapshots and events to the UI thread. publish*() are called on the engine thread and only
// post to a ThreadMailbox; snapshotReady/eventReady are emitted on the bridge's (UI) thread.
#pragma once

#include "meta_types.h"
#include "thread_mailbox.h"

#include <QObject>

#include <atomic>

namespace tg::ui {

class SnapshotBridge : public QObject {
  Q_OBJECT
 public:
  explicit SnapshotBridge(QObject* parent = nullptr);

  // Thread-safe. Cheap: a pointer copy posted to the UI thread.
  void publishSnapshot(SnapshotPtr snapshot);
  // Thread-safe. Copies the event and posts it to the UI thread.
  void publishEvent(const Event& event);

  // Connects both signals to `source` (addSnapshot/addEvent); `source` lives on the bridge's thread.
  void connectTo(class LiveSampleSource* source);

  std::uint64_t snapshotsPublished() const { return published_.load(std::memory_order_relaxed); }

 signals:
  void snapshotReady(const tg::SnapshotPtr& snapshot);
  void eventReady(const tg::Event& event);

 private:
  std::atomic<std::uint64_t> published_{0};
  ThreadMailbox* mailbox_;  // child of this
};

}  // namespace tg::ui
