// Finds incidents in recorded history: stretches where a group's 429 share over a short window, an open
// breaker, queue growth or shed requests cross thresholds. Stretches closer than mergeGapMs (across
// groups) merge into one incident. Pure logic over the rows it is given: no clock, no database.
#pragma once

#include "history_types.h"

#include <vector>

namespace tg {

class IncidentDetector {
 public:
  explicit IncidentDetector(IncidentOptions opts = {}) : opts_(opts) {}

  // `samples` and `events` in any order, any groups. Returns incidents in start order, ids 0.
  // Thread-safe (const, no state).
  std::vector<Incident> detect(std::vector<Sample> samples, const std::vector<Event>& events) const;

  const IncidentOptions& options() const { return opts_; }

 private:
  IncidentOptions opts_;
};

}  // namespace tg
