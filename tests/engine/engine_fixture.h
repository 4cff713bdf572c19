// Shared set-up for engine tests: an in-process tollgate-sim on a loopback port, an engine pointed at it,
// and thread-safe collection of events and results.
#pragma once

#include "config_loader.h"
#include "engine.h"
#include "sim_server.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace tgtest {

struct Collected {
  std::mutex mutex;
  std::vector<tg::Event> events;
  std::vector<tg::Result> results;
  std::atomic<int> done{0};
  std::atomic<int> ok{0};

  int countEvents(tg::EventKind k, const std::string& needle = {}) {
    std::lock_guard lock(mutex);
    int n = 0;
    for (const auto& e : events)
      if (e.kind == k && (needle.empty() || e.message.find(needle) != std::string::npos)) ++n;
    return n;
  }
};

// simJson: a tollgate-sim config; engineJson: a Tollgate config whose groups use base_url "sim".
class EngineUnderTest {
 public:
  EngineUnderTest(const nlohmann::json& simJson, nlohmann::json engineJson)
      : sim_(std::make_unique<tg::SimServer>(tg::SimConfig::fromJson(simJson, "(test sim)"))) {
    port_ = sim_->start("127.0.0.1", 0);
    engineJson["simulator"] = simJson;
    tg::TollgateConfig c = tg::ConfigLoader::fromJson(engineJson, "(test config)");
    tg::ConfigLoader::bindSimulator(c, url());
    engine_ = std::make_unique<tg::Engine>(c.engine);
    engine_->onEvent([this](const tg::Event& e) {
      std::lock_guard lock(collected.mutex);
      collected.events.push_back(e);
    });
    engine_->start();
  }
  ~EngineUnderTest() {
    engine_->stop();
    sim_->stop();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  tg::Engine& engine() { return *engine_; }
  tg::SimServer& sim() { return *sim_; }

  void submit(const std::string& group, tg::Tier tier, int n, const std::string& idPrefix = "r") {
    for (int i = 0; i < n; ++i) {
      tg::Request r;
      r.id = idPrefix + std::to_string(i);
      r.group = group;
      r.tier = tier;
      r.url = "/v1/chat/completions";
      r.body = R"({"max_tokens":16})";
      r.maxTokens = 16;
      engine_->submit(std::move(r), [this](const tg::Result& res) {
        {
          std::lock_guard lock(collected.mutex);
          collected.results.push_back(res);
        }
        if (res.ok()) ++collected.ok;
        ++collected.done;
      });
    }
  }

  const tg::GroupSnapshot* group(const std::string& name) {
    snap_ = engine_->latestSnapshot();
    return snap_ ? snap_->find(name) : nullptr;
  }

  Collected collected;

 private:
  std::unique_ptr<tg::SimServer> sim_;
  int port_ = 0;
  std::unique_ptr<tg::Engine> engine_;
  tg::SnapshotPtr snap_;
};

}  // namespace tgtest
