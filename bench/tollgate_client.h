// Drives Tollgate's Engine with the same arrival schedule as the baseline clients and records the same
// RunLog: attempts from onAttempt, request outcomes from the result callbacks.
#pragma once

#include "bench_support.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tgbench {

class TollgateClient {
 public:
  // engineJson: a Tollgate config whose groups use base_url "sim" (bound to simUrl) and whose group order
  // matches Arrival::group; simJson is only attached as its "simulator" section.
  TollgateClient(nlohmann::json engineJson, const nlohmann::json& simJson, std::string simUrl);

  // Submits each arrival at its time from the calling thread, runs `actions` when due, and stops the engine
  // after durationS (what is still queued is cancelled and stays unfinished in the log).
  RunLog run(const std::vector<Arrival>& arrivals, double durationS, std::vector<TimedAction> actions = {});

 private:
  nlohmann::json engineJson_;
  std::string simUrl_;
};

}  // namespace tgbench
