// Who hears from the engine: snapshot, event and attempt listeners, added through methods.
#pragma once

#include "event.h"
#include "request.h"
#include "snapshot.h"

#include <functional>
#include <utility>
#include <vector>

namespace tg {

// add*() before the engine starts (not thread-safe); the calls run on the engine thread.
class EngineListeners {
 public:
  void addSnapshot(std::function<void(SnapshotPtr)> fn) { snapshot_.push_back(std::move(fn)); }
  void addEvent(std::function<void(const Event&)> fn) { event_.push_back(std::move(fn)); }
  void addAttempt(std::function<void(const AttemptRecord&)> fn) { attempt_.push_back(std::move(fn)); }

  void snapshot(const SnapshotPtr& s) const {
    for (const auto& fn : snapshot_) fn(s);
  }
  void event(const Event& e) const {
    for (const auto& fn : event_) fn(e);
  }
  void attempt(const AttemptRecord& a) const {
    for (const auto& fn : attempt_) fn(a);
  }
  bool wantsAttempts() const { return !attempt_.empty(); }

 private:
  std::vector<std::function<void(SnapshotPtr)>> snapshot_;
  std::vector<std::function<void(const Event&)>> event_;
  std::vector<std::function<void(const AttemptRecord&)>> attempt_;
};

}  // namespace tg
