// Records an incident on purpose for the replay tests: an engine against an in-process simulator, a steady
// workload, and a quota drop part-way (set_limit in the simulator's schedule); the engine's snapshots and
// events go into a HistoryStore the way app/session.cpp feeds it. Blocks for `seconds` of wall time.
#pragma once

#include "config_loader.h"
#include "engine.h"
#include "history_store.h"
#include "sim_server.h"

#include <QtGlobal>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace tgtest {

// headerless: the upstream answers bare 429s and states no quota (nginx limit_req and the like) and its
// limit (40/s on chat) stays below the workload (60/s): the engine learns the rate from refusals alone, and
// every probe above it costs what was sent before the refusal came back, which the concurrency bounds.
inline nlohmann::json recordingSimConfig(double dropAtS, bool headerless = false) {
  if (headerless)
    return {{"dialect", "none"},
            {"retry_after", false},
            {"group_by", "header"},
            {"default_group", "chat"},
            {"latency_ms", {{"distribution", "fixed"}, {"mean", 500}}},
            {"groups", {{"chat", {{"limit", 40}, {"window_s", 1}}}, {"batch", {{"limit", 30}, {"window_s", 1}}}}}};
  return {{"dialect", "x-ratelimit"},
          {"group_by", "header"},
          {"default_group", "chat"},
          {"retry_after_format", "ms"},
          {"latency_ms", {{"distribution", "fixed"}, {"mean", 500}}},
          {"groups", {{"chat", {{"limit", 100}, {"window_s", 1}}}, {"batch", {{"limit", 30}, {"window_s", 1}}}}},
          // Two drops: whatever is in flight when the limit falls meets a 429, so 429s scale with concurrency.
          {"schedule", nlohmann::json::array({{{"at_s", dropAtS}, {"action", "set_limit"}, {"group", "chat"}, {"limit", 8}},
                                              {{"at_s", dropAtS + 4}, {"action", "set_limit"}, {"group", "chat"}, {"limit", 100}},
                                              {{"at_s", dropAtS + 7}, {"action", "set_limit"}, {"group", "chat"}, {"limit", 8}}})}};
}

// Returns an error text, empty on success.
inline std::string recordIncident(const std::string& dbPath, double seconds = 16, double dropAtS = 5,
                                  bool headerless = false) {
  const nlohmann::json simJson = recordingSimConfig(dropAtS, headerless);
  tg::SimServer sim(tg::SimConfig::fromJson(simJson, "(replay test sim)"));
  const int port = sim.start("127.0.0.1", 0);
  auto group = [](const char* name, int conc) {
    return nlohmann::json{{"name", name}, {"base_url", "sim"}, {"concurrency", conc},
                          {"keys", nlohmann::json::array({{{"name", "k1"}}})}};
  };
  nlohmann::json engineJson = {{"name", "replay-test"},
                               {"groups", nlohmann::json::array({group("chat", 32), group("batch", 8)})},
                               {"retry", {{"max_attempts", 3}}},
                               {"simulator", simJson}};
  tg::TollgateConfig c = tg::ConfigLoader::fromJson(engineJson, "(replay test config)");
  tg::ConfigLoader::bindSimulator(c, "http://127.0.0.1:" + std::to_string(port));
  std::string err;
  auto store = tg::HistoryStore::open(dbPath, tg::HistoryOptions{}, &err);
  if (!store) return err;
  tg::Engine engine(c.engine);
  tg::SampleBuilder builder;  // engine thread only
  tg::EpochMs last = 0;
  engine.onSnapshot([&](tg::SnapshotPtr s) {
    if (s->tsMs - last < 1000) return;
    last = s->tsMs;
    store->append(builder.next(*s));
  });
  engine.onEvent([&](const tg::Event& e) { store->append(e); });
  engine.start();
  std::atomic<int> pending{0};
  const auto t0 = std::chrono::steady_clock::now();
  int n = 0;
  // chat: 20/s P0 + 40/s P1, batch: 10/s P2, submitted every 50 ms.
  for (int tick = 0; std::chrono::steady_clock::now() - t0 < std::chrono::duration<double>(seconds); ++tick) {
    auto submit = [&](const char* g, tg::Tier tier) {
      tg::Request r;
      r.id = "rec" + std::to_string(n++);
      r.group = g;
      r.tier = tier;
      r.url = "/v1/chat/completions";
      r.body = R"({"max_tokens":16})";
      r.maxTokens = 16;
      ++pending;
      engine.submit(std::move(r), [&](const tg::Result&) { --pending; });
    };
    if (tick == int(seconds * 20 * 0.8)) engine.setGroupConcurrency("chat", 24, "test-operator");
    submit("chat", tg::Tier::P0);
    submit("chat", tg::Tier::P1);
    submit("chat", tg::Tier::P1);
    if (tick % 2 == 1) submit("batch", tg::Tier::P2);
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(50 * (tick + 1)));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  engine.stop();
  sim.stop();
  store->flush();
  store->detectIncidents();
  return {};
}

}  // namespace tgtest
