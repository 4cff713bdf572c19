// The report of a run: per-group totals from the engine's counters plus latency and wait percentiles
// from the results. observe() is thread-safe (called on the engine thread).
#pragma once

#include "request.h"
#include "snapshot.h"

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tg {

class RunReport {
 public:
  void observe(const Result& r);
  // elapsedS: wall time of the run. The snapshot gives the counters.
  nlohmann::json toJson(const EngineSnapshot& finalSnapshot, double elapsedS) const;

 private:
  struct PerGroup {
    std::vector<double> latencyMs, waitMs;
    std::int64_t results = 0, ok = 0, failed = 0;
    std::map<std::string, std::int64_t> errors;
  };
  mutable std::mutex mutex_;
  std::map<std::string, PerGroup> groups_;
};


}  // namespace tg
