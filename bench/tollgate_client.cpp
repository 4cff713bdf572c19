#include "tollgate_client.h"

#include "config_loader.h"
#include "engine.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <mutex>
#include <thread>

namespace tgbench {

TollgateClient::TollgateClient(nlohmann::json engineJson, const nlohmann::json& simJson, std::string simUrl)
    : engineJson_(std::move(engineJson)), simUrl_(std::move(simUrl)) {
  engineJson_["simulator"] = simJson;
}

RunLog TollgateClient::run(const std::vector<Arrival>& arrivals, double durationS, std::vector<TimedAction> actions) {
  tg::TollgateConfig c = tg::ConfigLoader::fromJson(engineJson_, "(bench config)");
  tg::ConfigLoader::bindSimulator(c, simUrl_);
  std::vector<std::string> groups;
  for (const auto& g : c.engine.groups) groups.push_back(g.name);

  RunLog log;
  log.strategy = "tollgate";
  log.durationS = durationS;
  log.requests.resize(arrivals.size());
  log.attempts.reserve(arrivals.size() * 2);
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    log.requests[i].group = arrivals[i].group;
    log.requests[i].tier = arrivals[i].tier;
    log.requests[i].arrivalS = arrivals[i].atS;
  }
  std::sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) { return a.atS < b.atS; });

  std::mutex mutex;  // guards log while the engine thread writes and this one reads at the end
  bool recording = true;
  tg::Engine engine(c.engine);
  const auto t0 = std::chrono::steady_clock::now();
  const tg::EpochMs e0 = tg::nowEpochMs();
  auto groupIndex = [&](const std::string& name) {
    return static_cast<int>(std::find(groups.begin(), groups.end(), name) - groups.begin());
  };
  engine.onAttempt([&](const tg::AttemptRecord& a) {
    std::lock_guard lock(mutex);
    if (!recording) return;
    log.attempts.push_back({static_cast<double>(a.tsMs - e0) / 1000.0, groupIndex(a.group), a.tier, a.status, a.retry});
  });
  // TG_BENCH_TRACE=1: each snapshot's concurrency limit, in flight, counters and wait reason on stderr, to
  // see why a run's rate sits where it does.
  const bool trace = std::getenv("TG_BENCH_TRACE") != nullptr;
  engine.onSnapshot([&, trace](tg::SnapshotPtr snap) {
    LimitSample l;
    l.atS = static_cast<double>(snap->tsMs - e0) / 1000.0;
    for (const auto& name : groups) {
      const auto* g = snap->find(name);
      l.limit.push_back(g ? g->concurrencyLimit : 0);
      if (trace && g)
        std::fprintf(stderr, "trace %7.2f %s limit %d in %d ok %llu 429 %llu wait %s\n", l.atS, name.c_str(),
                     g->concurrencyLimit, g->inFlight, static_cast<unsigned long long>(g->counters.ok),
                     static_cast<unsigned long long>(g->counters.r429), g->waitReason.c_str());
    }
    std::lock_guard lock(mutex);
    if (recording) log.limits.push_back(std::move(l));
  });
  engine.start();

  std::size_t nextAction = 0;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const auto due = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(arrivals[i].atS));
    while (nextAction < actions.size() && actions[nextAction].atS <= arrivals[i].atS) {
      std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(actions[nextAction].atS)));
      actions[nextAction++].fn();
    }
    std::this_thread::sleep_until(due);
    tg::Request r;
    r.id = std::to_string(i);
    r.group = groups[static_cast<std::size_t>(arrivals[i].group)];
    r.tier = arrivals[i].tier;
    r.url = "/v1/chat/completions";
    r.body = chatBody(arrivals[i]);
    r.maxTokens = arrivals[i].maxTokens;
    engine.submit(std::move(r), [&, i](const tg::Result& res) {
      if (res.error == tg::ErrorKind::Cancelled) return;
      std::lock_guard lock(mutex);
      if (!recording) return;
      RequestLog& q = log.requests[i];
      q.finished = true;
      q.ok = res.ok();
      q.attempts = res.attempts;
      q.doneS = q.arrivalS + res.totalMs / 1000.0;
      q.waitS = std::max(0.0, (res.totalMs - res.latencyMs) / 1000.0);
    });
  }
  while (nextAction < actions.size()) {
    std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                           std::chrono::duration<double>(actions[nextAction].atS)));
    actions[nextAction++].fn();
  }
  std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                         std::chrono::duration<double>(durationS)));
  {
    std::lock_guard lock(mutex);
    recording = false;
  }
  engine.stop();
  return log;
}

}  // namespace tgbench
