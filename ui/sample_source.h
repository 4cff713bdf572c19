// Where the dashboard's charts read from: live (ring buffer fed by engine snapshots) or history (SQLite
// range queries, replay). The same widgets serve both. Every method runs on the UI thread.
#pragma once

#include "meta_types.h"
#include "sample.h"

#include <QObject>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tg::ui {

class SampleSource : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  ~SampleSource() override;

  // Group names in display order.
  virtual std::vector<std::string> groups() const = 0;
  // Calls `fn` for each sample of `group` with fromMs <= tsMs <= toMs, oldest first.
  virtual void forEachSample(const std::string& group, EpochMs fromMs, EpochMs toMs,
                             const std::function<void(const Sample&)>& fn) const = 0;
  // Events with fromMs <= tsMs <= toMs, oldest first.
  virtual std::vector<Event> events(EpochMs fromMs, EpochMs toMs) const = 0;
  // Newest time covered by the source (live: the last snapshot); 0 when empty.
  virtual EpochMs endMs() const = 0;
  // Oldest time with data, where the charts' axis starts until their window is full; 0 = not known (the
  // axis then spans the whole window).
  virtual EpochMs startMs() const { return 0; }
  // The newest full snapshot for group cards and controls; null for sources without one (history).
  virtual SnapshotPtr latestSnapshot() const = 0;
  // Changes whenever samples or events are added, so views can skip rebuilding unchanged data.
  virtual std::uint64_t revision() const = 0;

  std::vector<Sample> samples(const std::string& group, EpochMs fromMs, EpochMs toMs) const;

 signals:
  void eventAdded(const tg::Event& event);  // live sources only: one signal per new event
  void reset();                             // everything changed (e.g. replay jumped)
};

}  // namespace tg::ui
