// One running Tollgate: the embedded simulator (when the config asks for one), the engine, and the
// workload feeding it. Shared by the headless runner and the GUI; app/ only wires parts together.
#pragma once

#include "config_loader.h"
#include "engine.h"
#include "gateway_config.h"
#include "gateway_metrics.h"
#include "gateway_server.h"
#include "history_store.h"
#include "jsonl_job.h"
#include "run_report.h"
#include "sample.h"
#include "sim_server.h"
#include "synthetic_workload.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tg {

class Session {
 public:
  // Validates the simulator and workload sections too (throws ConfigError).
  explicit Session(TollgateConfig config);
  ~Session();

  // Extra listeners, set before start() (e.g. history, the UI bridge). Called on the engine thread.
  void addEventListener(std::function<void(const Event&)> fn) { eventListeners_.push_back(std::move(fn)); }
  void addSnapshotListener(std::function<void(SnapshotPtr)> fn) { snapshotListeners_.push_back(std::move(fn)); }
  void addAttemptListener(std::function<void(const AttemptRecord&)> fn) { attemptListeners_.push_back(std::move(fn)); }

  // History: opened by start() when a path is set (config "history.path", or setHistoryPath). A file that
  // is refused (corrupt, foreign, newer schema) is left untouched and the session runs without history;
  // historyError() says why.
  void setHistoryPath(std::string path) { historyPath_ = std::move(path); }
  // How long start() waits for a history file another process is upgrading (-1: HistoryOptions' 60 s).
  void setHistoryUpgradeWaitMs(int ms) { historyUpgradeWaitMs_ = ms; }
  const std::string& historyPath() const { return historyPath_; }
  HistoryStore* history() { return history_.get(); }
  const std::string& historyError() const { return historyError_; }
  static std::string defaultHistoryPath();  // $XDG_DATA_HOME/tollgate/history.db (or ~/.local/share/...)

  // `gatewayRequired` (serve): a gateway that cannot listen is an error thrown, not a session run without it.
  void start(bool startSyntheticWorkload = true, bool gatewayRequired = false);
  // `gatewayDrainS`: how long a gateway's requests in flight may take to be answered (serve's orderly stop).
  void stop(double gatewayDrainS = 0);

  // A JSONL job instead of (or beside) the synthetic workload.
  JsonlJob& startJob(JsonlJob::Options opts);
  JsonlJob* job() { return job_.get(); }
  // The job's progress as stop() left it, after the engine's last callbacks wrote their rows (a write failure
  // then included); nullopt when no job ran.
  const std::optional<JobProgress>& finalJobProgress() const { return finalJob_; }
  SyntheticWorkload* synthetic() { return synthetic_.get(); }
  bool hasSyntheticProfile() const { return profile_.has_value(); }
  void startSynthetic();
  void restartSynthetic();  // stops a running one and starts the profile again

  // The local gateway, when the config has a "gateway" section: started by start() after the engine. When
  // it cannot listen (port taken), the session runs without it and gatewayError() says why.
  gateway::GatewayServer* gateway() { return gateway_.get(); }
  const std::string& gatewayError() const { return gatewayError_; }
  bool hasGatewayConfig() const { return gatewayConfig_.enabled; }
  const gateway::GatewayConfig& gatewayConfig() const { return gatewayConfig_; }

  Engine& engine() { return *engine_; }
  SimServer* simulator() { return sim_.get(); }
  std::string simulatorUrl() const { return simUrl_; }
  const TollgateConfig& config() const { return config_; }
  RunReport& report() { return report_; }
  double elapsedS() const;

 private:
  TollgateConfig config_;
  std::optional<WorkloadProfile> profile_;
  std::string historyPath_;
  std::string historyError_;
  int historyUpgradeWaitMs_ = -1;
  std::unique_ptr<HistoryStore> history_;
  SampleBuilder sampleBuilder_;  // engine thread only
  EpochMs lastSampleMs_ = 0;     // engine thread only
  std::unique_ptr<SimServer> sim_;
  std::string simUrl_;
  std::unique_ptr<Engine> engine_;
  gateway::GatewayConfig gatewayConfig_;
  gateway::GatewayMetrics gatewayMetrics_;
  std::unique_ptr<gateway::GatewayServer> gateway_;
  std::string gatewayError_;
  std::unique_ptr<SyntheticWorkload> synthetic_;
  std::unique_ptr<JsonlJob> job_;
  std::optional<JobProgress> finalJob_;
  RunReport report_;
  std::vector<std::function<void(const Event&)>> eventListeners_;
  std::vector<std::function<void(SnapshotPtr)>> snapshotListeners_;
  std::vector<std::function<void(const AttemptRecord&)>> attemptListeners_;
  std::chrono::steady_clock::time_point started_{};
  bool running_ = false;
};

}  // namespace tg
