// Synthetic arrivals for demos and drills, from the config's "workload" section:
// {"duration_s": 0 (0 = until stopped), "streams": [
//    {"group": "interactive", "tier": "P0", "rate": 5,           // requests per second
//     "shape": "constant" | "ramp" | "step" | "burst",
//     "to_rate": 20, "ramp_s": 60,                                // ramp: rate -> to_rate over ramp_s
//     "at_s": 30, "step_rate": 40,                                // step: rate, then step_rate from at_s on
//     "burst_at_s": 20, "burst_s": 5, "burst_rate": 200,          // burst: rate + a burst window
//     "path": "/v1/chat/completions", "prompt_bytes": 400, "max_tokens": 128, "deadline_s": 0}]}
#pragma once

#include "config_error.h"
#include "engine.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tg {

struct WorkloadStream {
  std::string group;
  Tier tier = Tier::P1;
  std::string shape = "constant";
  double rate = 1, toRate = 0, rampS = 60, atS = 0, stepRate = 0, burstAtS = 0, burstS = 0, burstRate = 0;
  std::string path = "/v1/chat/completions";
  int promptBytes = 400;
  int maxTokens = 128;
  double deadlineS = 0;

  double rateAt(double t) const;  // requests per second at t seconds after start
};

struct WorkloadProfile {
  double durationS = 0;
  std::vector<WorkloadStream> streams;
  static WorkloadProfile fromJson(const nlohmann::json& j, const std::string& file, const std::string& path);
};

// Drives a profile into an engine from its own thread. Thread-safe.
class SyntheticWorkload {
 public:
  SyntheticWorkload(Engine& engine, WorkloadProfile profile);
  // Stops feeding and returns without waiting for what is queued in the engine: those requests still
  // complete, and their results still reach onResult's function (the state they touch outlives this object).
  ~SyntheticWorkload();
  void start();
  void stop();
  void setPaused(bool paused) { paused_ = paused; }
  bool paused() const { return paused_; }
  bool finished() const { return finished_; }
  std::int64_t submitted() const { return submitted_; }
  std::int64_t completed() const { return s_->completed; }
  std::int64_t succeeded() const { return s_->succeeded; }
  const WorkloadProfile& profile() const { return profile_; }
  // Called for every result (engine thread), also after this object is gone; set before start().
  void onResult(std::function<void(const Result&)> fn) { s_->onResult = std::move(fn); }

 private:
  // What result callbacks touch: owned jointly by the workload and every request still in the engine.
  struct Shared {
    std::atomic<std::int64_t> completed{0}, succeeded{0};
    std::function<void(const Result&)> onResult;  // written before start() only
  };
  void run();
  Engine& engine_;
  WorkloadProfile profile_;
  std::atomic<bool> stop_{false}, paused_{false}, finished_{false};
  std::atomic<std::int64_t> submitted_{0};
  std::shared_ptr<Shared> s_ = std::make_shared<Shared>();
  std::thread thread_;
};

}  // namespace tg
