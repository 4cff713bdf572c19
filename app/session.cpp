#include "session.h"

#include "log.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace tg {

std::string Session::defaultHistoryPath() {
  std::filesystem::path base;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) base = x;
  else if (const char* h = std::getenv("HOME"); h && *h) base = std::filesystem::path(h) / ".local/share";
  else base = std::filesystem::temp_directory_path();
  return (base / "tollgate" / "history.db").string();
}

Session::Session(TollgateConfig config) : config_(std::move(config)), historyPath_(config_.historyPath) {
  if (config_.workload) profile_ = WorkloadProfile::fromJson(*config_.workload, config_.file, "/workload");
  if (profile_) {
    for (std::size_t i = 0; i < profile_->streams.size(); ++i)
      if (!config_.engine.findGroup(profile_->streams[i].group))
        throw ConfigError(config_.file, "/workload/streams/" + std::to_string(i) + "/group",
                          "one of the configured groups, got \"" + profile_->streams[i].group + "\"");
  }
  if (config_.gateway) gatewayConfig_ = gateway::loadGatewayConfig(*config_.gateway, config_.engine, config_.file);
  // Checked whenever it is there, so a bad simulator section is reported before anything starts, at its own path
  // (it was checked only when a group used it, and its errors named the engine's /groups).
  if (config_.simulator) {
    SimConfig sc = SimConfig::fromJson(*config_.simulator, config_.file, "/simulator");
    if (config_.usesEmbeddedSimulator()) sim_ = std::make_unique<SimServer>(std::move(sc));
  }
}

Session::~Session() { stop(); }

double Session::elapsedS() const {
  if (started_ == std::chrono::steady_clock::time_point{}) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void Session::start(bool startSyntheticWorkload, bool gatewayRequired) {
  if (running_) return;
  if (sim_) {
    const int port = sim_->start("127.0.0.1", 0);
    simUrl_ = "http://127.0.0.1:" + std::to_string(port);
    ConfigLoader::bindSimulator(config_, simUrl_);
    logInfo("session", "embedded simulator on " + simUrl_);
  }
  if (!historyPath_.empty()) {
    std::error_code ec;
    const auto dir = std::filesystem::path(historyPath_).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    HistoryOptions options;
    if (historyUpgradeWaitMs_ >= 0) options.upgradeWaitMs = historyUpgradeWaitMs_;
    history_ = HistoryStore::open(historyPath_, options, &historyError_);
    if (!history_) logError("history", historyPath_ + ": " + historyError_ + " (running without history)");
    else logInfo("history", "recording to " + historyPath_);
  }
  engine_ = std::make_unique<Engine>(config_.engine);
  engine_->onEvent([this](const Event& e) {
    if (history_) history_->append(e);
    for (auto& fn : eventListeners_) fn(e);
  });
  engine_->onSnapshot([this](SnapshotPtr s) {
    // Snapshots come at 4 Hz; history keeps one sample per group per second. A clock stepped back restarts
    // the count (it stalled for as long as the step: an hour back, an hour without history).
    if (history_ && (s->tsMs - lastSampleMs_ >= 1000 || s->tsMs < lastSampleMs_)) {
      lastSampleMs_ = s->tsMs;
      history_->append(sampleBuilder_.next(*s));
    }
    for (auto& fn : snapshotListeners_) fn(s);
  });
  engine_->onAttempt([this](const AttemptRecord& a) {
    if (history_) history_->append(a);
    for (auto& fn : attemptListeners_) fn(a);
  });
  engine_->start();
  started_ = std::chrono::steady_clock::now();
  running_ = true;
  if (gatewayConfig_.enabled) {
    gateway_ = std::make_unique<gateway::GatewayServer>(*engine_, gatewayConfig_, &gatewayMetrics_);
    try {
      gateway_->start();
    } catch (const std::exception& e) {
      gatewayError_ = e.what();
      gateway_.reset();
      if (gatewayRequired) throw std::runtime_error(gatewayError_);
      logError("gateway", gatewayError_ + " (running without the gateway)");
    }
  }
  if (startSyntheticWorkload && profile_) startSynthetic();
}

void Session::startSynthetic() {
  if (!profile_ || !engine_ || synthetic_) return;
  synthetic_ = std::make_unique<SyntheticWorkload>(*engine_, *profile_);
  synthetic_->onResult([this](const Result& r) { report_.observe(r); });
  synthetic_->start();
}

void Session::restartSynthetic() {
  if (synthetic_) synthetic_->stop();
  synthetic_.reset();
  startSynthetic();
}

JsonlJob& Session::startJob(JsonlJob::Options opts) {
  if (job_) job_->cancel();
  if (!opts.observer) opts.observer = [this](const Result& r) { report_.observe(r); };
  job_ = std::make_unique<JsonlJob>(*engine_, std::move(opts));
  try {
    job_->start();
  } catch (...) {
    job_.reset();  // not left as a job that never started, reported as running for good
    throw;
  }
  return *job_;
}

void Session::stop(double gatewayDrainS) {
  if (!running_) return;
  running_ = false;
  if (synthetic_) synthetic_->stop();
  if (job_) job_->cancel();
  if (gateway_) gateway_->stop(gatewayDrainS);  // parked clients get their answer while the engine still runs
  engine_->stop();  // every outstanding request gets its callback (cancelled) before this returns
  if (job_) finalJob_ = job_->progress();
  job_.reset();
  if (history_) {
    // The last snapshot (the engine's stop) as a sample too: with one a second, the run's last 0.5-0.8 s were
    // missing from the samples (201 429s there, 210 in the report).
    if (SnapshotPtr last = engine_->latestSnapshot(); last && last->tsMs != lastSampleMs_) {
      lastSampleMs_ = last->tsMs;
      history_->append(sampleBuilder_.next(*last));
    }
    history_->flush();
    history_->detectIncidents();
  }
  if (sim_) sim_->stop();
}

}  // namespace tg
