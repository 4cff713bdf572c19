#include "snapshot_bridge.h"

#include "live_sample_source.h"

namespace tg::ui {

void registerMetaTypes() {
  qRegisterMetaType<tg::SnapshotPtr>("tg::SnapshotPtr");
  qRegisterMetaType<tg::Event>("tg::Event");
}

SnapshotBridge::SnapshotBridge(QObject* parent) : QObject(parent) { registerMetaTypes(); }

void SnapshotBridge::publishSnapshot(SnapshotPtr snapshot) {
  published_.fetch_add(1, std::memory_order_relaxed);
  emit snapshotReady(snapshot);
}

void SnapshotBridge::publishEvent(const Event& event) { emit eventReady(event); }

void SnapshotBridge::connectTo(LiveSampleSource* source) {
  connect(this, &SnapshotBridge::snapshotReady, source, &LiveSampleSource::addSnapshot,
          Qt::QueuedConnection);
  connect(this, &SnapshotBridge::eventReady, source, &LiveSampleSource::addEvent, Qt::QueuedConnection);
}

}  // namespace tg::ui
