#include "snapshot_bridge.h"

#include "live_sample_source.h"

namespace tg::ui {

void registerMetaTypes() {
  qRegisterMetaType<tg::SnapshotPtr>("tg::SnapshotPtr");
  qRegisterMetaType<tg::Event>("tg::Event");
}

SnapshotBridge::SnapshotBridge(QObject* parent) : QObject(parent), mailbox_(new ThreadMailbox(this)) {
  registerMetaTypes();
}

void SnapshotBridge::publishSnapshot(SnapshotPtr snapshot) {
  published_.fetch_add(1, std::memory_order_relaxed);
  mailbox_->post([this, s = std::move(snapshot)] { emit snapshotReady(s); });
}

void SnapshotBridge::publishEvent(const Event& event) {
  mailbox_->post([this, e = event] { emit eventReady(e); });
}

void SnapshotBridge::connectTo(LiveSampleSource* source) {
  connect(this, &SnapshotBridge::snapshotReady, source, &LiveSampleSource::addSnapshot);
  connect(this, &SnapshotBridge::eventReady, source, &LiveSampleSource::addEvent);
}

}  // namespace tg::ui
