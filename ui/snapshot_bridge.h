// Hands engine snapshots and events to the UI thread. publish*() are called on the engine thread and only
// queue a signal; the slots connected to snapshotReady/eventReady run on the receiver's (UI) thread.
#pragma once

#include "meta_types.h"

#include <QObject>

#include <atomic>

namespace tg::ui {

class SnapshotBridge : public QObject {
  Q_OBJECT
 public:
  explicit SnapshotBridge(QObject* parent = nullptr);

  // Thread-safe. Cheap: a pointer copy and a queued signal.
  void publishSnapshot(SnapshotPtr snapshot);
  // Thread-safe. Copies the event into the queued signal.
  void publishEvent(const Event& event);

  // Connects both signals to `source` (addSnapshot/addEvent) with Qt::QueuedConnection.
  void connectTo(class LiveSampleSource* source);

  std::uint64_t snapshotsPublished() const { return published_.load(std::memory_order_relaxed); }

 signals:
  void snapshotReady(const tg::SnapshotPtr& snapshot);
  void eventReady(const tg::Event& event);

 private:
  std::atomic<std::uint64_t> published_{0};
};

}  // namespace tg::ui
