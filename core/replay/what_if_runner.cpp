#include "what_if_runner.h"

#include "engine.h"
#include "json_text.h"
#include "sim_server.h"
#include "stats.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace tg {

namespace {

constexpr const char* kPath = "/v1/chat/completions";

struct Arrival {
  double atS;  // wall seconds from the run's start
  std::size_t group;
  Tier tier;
};

}  // namespace

EngineConfig WhatIfRunner::baseConfig(const ReplayScenario& sc, double speed) {
  speed = std::max(1.0, speed);
  EngineConfig c;
  c.name = "what-if";
  c.snapshotIntervalS = std::max(0.02, 0.25 / speed);
  c.timeScale = speed;
  c.requestTimeoutS = std::max(1.0, 60 / speed);
  c.retry.baseBackoffS /= speed;
  c.retry.maxBackoffS /= speed;
  c.retry.maxServerWaitS /= speed;
  c.retry.default429WaitS /= speed;
  // The recorded engine's settings where the recording has them (EngineStart's "config"), on the compressed clock.
  const nlohmann::json& rec = sc.engineConfig;
  auto num = [](const nlohmann::json& j, const char* k, double fallback) {
    return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<double>() : fallback;
  };
  if (rec.is_object()) {
    if (rec.contains("tiers") && rec["tiers"].is_array())
      for (std::size_t t = 0; t < c.tiers.size() && t < rec["tiers"].size(); ++t) {
        c.tiers[t].capacity = std::max(1, static_cast<int>(num(rec["tiers"][t], "capacity", c.tiers[t].capacity)));
        c.tiers[t].maxWaitS = num(rec["tiers"][t], "max_wait_s", c.tiers[t].maxWaitS);
      }
    c.requestTimeoutS = num(rec, "request_timeout_s", c.requestTimeoutS * speed) / speed;
    const nlohmann::json& r = rec.contains("retry") ? rec["retry"] : nlohmann::json();
    c.retry.maxAttempts = std::max(1, static_cast<int>(num(r, "max_attempts", c.retry.maxAttempts)));
    c.retry.budgetRatio = num(r, "budget_ratio", c.retry.budgetRatio);
    c.retry.budgetMinRetries = static_cast<int>(num(r, "budget_min_retries", c.retry.budgetMinRetries));
    c.retry.baseBackoffS = num(r, "base_backoff_s", c.retry.baseBackoffS * speed) / speed;
    c.retry.maxBackoffS = num(r, "max_backoff_s", c.retry.maxBackoffS * speed) / speed;
    c.retry.maxServerWaitS = num(r, "max_server_wait_s", c.retry.maxServerWaitS * speed) / speed;
    c.retry.default429WaitS = num(r, "default_429_wait_s", c.retry.default429WaitS * speed) / speed;
  }
  // Rates on the compressed clock go `speed` times faster.
  auto ceilingOf = [&](const nlohmann::json& j) {
    const nlohmann::json& rc = j.is_object() && j.contains("rate_ceiling") ? j["rate_ceiling"] : nlohmann::json();
    return RateCeilingConfig{num(rc, "requests_per_s", 0) * speed, num(rc, "tokens_per_min", 0) * speed};
  };
  c.rateCeiling = ceilingOf(rec);
  for (auto& t : c.tiers) t.maxWaitS /= speed;
  int total = 0;
  for (const auto& g : sc.groups) {
    GroupConfig gc;
    gc.name = g.name;
    gc.keys.push_back(KeyConfig{"k1", "", "what-if-key", "Authorization", "Bearer "});
    gc.concurrency = std::max(1, g.concurrency);
    if (rec.is_object() && rec.contains("groups") && rec["groups"].is_object() && rec["groups"].contains(g.name)) {
      const nlohmann::json& rg = rec["groups"][g.name];
      if (rg.is_object() && rg.contains("adaptive") && rg["adaptive"].is_boolean()) gc.adaptive = rg["adaptive"].get<bool>();
      // The operator's ceiling, where the samples (the limit in force each second) show none above it.
      gc.concurrency = std::max(gc.concurrency, static_cast<int>(num(rg, "concurrency", gc.concurrency)));
      gc.rateCeiling = ceilingOf(rg);
    }
    gc.quotaWindowS = g.windowS / speed;  // the compressed simulator's window: its headers do not say
    gc.breaker.windowS /= speed;
    gc.breaker.openS /= speed;
    total += gc.concurrency;
    c.groups.push_back(std::move(gc));
  }
  c.globalConcurrency = rec.is_object() && rec.contains("global_concurrency")
                            ? std::max(1, static_cast<int>(num(rec, "global_concurrency", 64)))
                            : std::max(64, total);
  return c;
}

WhatIfResult WhatIfRunner::run(const ReplayScenario& sc, const WhatIfOverrides& overrides, WhatIfOptions opts) {
  WhatIfResult res;
  const double speed = std::max(1.0, opts.speed);
  res.speed = speed;
  res.overrides = overrides.toJson();
  res.recordedSettings = sc.engineConfig.is_object();
  res.recorded = ReplaySummary::fromSamples(sc.recorded, sc.fromMs);
  if (sc.groups.empty()) {
    res.error = "nothing recorded in the range";
    return res;
  }
  if (std::string why = replaySpanProblem(sc.fromMs, sc.toMs); !why.empty()) {
    res.error = why;
    return res;
  }
  if (!sc.arrivalsKnown) {
    res.error = "the recording has no arrivals (history schema before v3): nothing to re-drive";
    return res;
  }

  std::vector<Arrival> arrivals;
  for (std::size_t gi = 0; gi < sc.groups.size(); ++gi) {
    const auto& g = sc.groups[gi];
    for (std::size_t sec = 0; sec < g.arrivals.size(); ++sec)
      for (int t = 0; t < kTierCount; ++t) {
        const int n = g.arrivals[sec][t];
        for (int k = 0; k < n; ++k) arrivals.push_back({(double(sec) + (k + 0.5) / n) / speed, gi, Tier(t)});
      }
  }
  std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) { return a.atS < b.atS; });

  EngineConfig cfg = baseConfig(sc, speed);
  try {
    overrides.applyTo(cfg);
  } catch (const std::exception& e) {
    res.error = e.what();
    return res;
  }
  // Breaker timings from the overrides are in original seconds.
  for (const auto& [name, o] : overrides.groups)
    if (o.breaker)
      for (auto& g : cfg.groups)
        if (g.name == name) {
          g.breaker.windowS = o.breaker->windowS / speed;
          g.breaker.openS = o.breaker->openS / speed;
        }

  res.simConfig = sc.simConfigJson(speed);
  std::unique_ptr<SimServer> sim;
  try {
    sim = std::make_unique<SimServer>(SimConfig::fromJson(res.simConfig, "(what-if simulator)"));
  } catch (const std::exception& e) {
    res.error = std::string("simulator config: ") + e.what();
    return res;
  }
  const auto wall0 = std::chrono::steady_clock::now();
  const int port = sim->start("127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  for (auto& g : cfg.groups) g.baseUrl = url;

  const EpochMs epoch0 = nowEpochMs();
  auto toOrig = [&](EpochMs wallMs) { return sc.fromMs + EpochMs(double(wallMs - epoch0) * speed); };
  const EpochMs sampleEveryMs = std::max<EpochMs>(1, EpochMs(1000 / speed));

  std::mutex mutex;  // guards samples, events, latencies, done
  std::condition_variable cv;
  SampleBuilder builder;
  EpochMs lastSampled = 0;
  std::int64_t done = 0;
  std::vector<double> p0Total;
  std::vector<std::array<int, kTierCount>> pendingArrivals(sc.groups.size());

  auto engine = std::make_unique<Engine>(cfg);
  engine->onSnapshot([&](SnapshotPtr s) {
    std::lock_guard lock(mutex);
    if (lastSampled != 0 && s->tsMs - lastSampled < sampleEveryMs) return;
    lastSampled = s->tsMs;
    for (Sample smp : builder.next(*s)) {
      smp.tsMs = toOrig(smp.tsMs);
      if (smp.resetAtMs) smp.resetAtMs = toOrig(smp.resetAtMs);
      smp.intervalS *= speed;
      if (known(smp.p50Ms)) smp.p50Ms *= speed;
      if (known(smp.p95Ms)) smp.p95Ms *= speed;
      res.samples.push_back(std::move(smp));
    }
  });
  engine->onEvent([&](const Event& e) {
    std::lock_guard lock(mutex);
    Event m = e;
    m.tsMs = toOrig(e.tsMs);
    res.events.push_back(std::move(m));
  });
  engine->start();
  for (int t = 0; t < kTierCount; ++t)
    if (overrides.pausedTiers[t]) engine->setTierPaused(Tier(t), true, {}, "what-if");
  for (const auto& [name, o] : overrides.groups)
    for (int t = 0; t < kTierCount; ++t)
      if (o.pausedTiers[t]) engine->setTierPaused(Tier(t), true, name, "what-if");

  // The operator's recorded actions (pausing a tier or group, concurrency, rate ceilings, a drain) at their times,
  // and those between the recording engine's start and the range at once (in force when the range began): the
  // recording with P2 paused at 10 s shed 450, its re-drive without the pause 0. Not where the overrides set the
  // same thing for the whole re-drive (that is the what-if). A field of the wrong type skips the action.
  struct Replayed {
    double atS;
    std::function<void()> apply;
  };
  std::vector<Replayed> actions;
  auto text = [](const nlohmann::json& d, const char* k) { return fieldString(d, k); };
  auto tierOverridden = [&](Tier t, const std::string& group) {
    if (overrides.pausedTiers[static_cast<std::size_t>(t)]) return true;
    for (const auto& [name, o] : overrides.groups)
      if ((group.empty() || name == group) && o.pausedTiers[static_cast<std::size_t>(t)]) return true;
    return false;
  };
  Engine* eng = engine.get();
  auto replay = [&](const Event& e, double atS) {
    const nlohmann::json& d = e.detail;
    if (e.kind != EventKind::OperatorAction || !d.is_object() || !(d.contains("ok") && d["ok"] == true)) return;
    const std::string action = text(d, "action"), target = text(d, "target");
    const nlohmann::json after = d.contains("after") ? d["after"] : nlohmann::json();
    if ((action == "pause_tier" || action == "resume_tier") && after.is_boolean()) {
      const auto slash = target.rfind('/');
      if (slash == std::string::npos) return;
      const std::optional<Tier> tier = parseTier(target.substr(slash + 1));
      if (!tier.has_value()) return;
      const Tier t = tier.value();
      const std::string group = target.rfind("*/", 0) == 0 ? std::string() : target.substr(0, slash);
      if (!tierOverridden(t, group))
        actions.push_back({atS, [eng, t, p = after.get<bool>(), group] {
                             eng->setTierPaused(t, p, group, "replayed");
                           }});
    } else if ((action == "pause_group" || action == "resume_group") && after.is_boolean()) {
      actions.push_back({atS, [eng, p = after.get<bool>(), target] { eng->setGroupPaused(target, p, "replayed"); }});
    } else if (action == "set_concurrency" && after.is_number_integer()) {
      if (target == "*" && !overrides.globalConcurrency)
        actions.push_back({atS, [eng, n = after.get<int>()] { eng->setGlobalConcurrency(n, "replayed"); }});
      else if (target != "*" && overrides.concurrencyScale == 1.0 &&
               !(overrides.groups.count(target) && overrides.groups.at(target).concurrency))
        actions.push_back({atS, [eng, n = after.get<int>(), target] {
                             eng->setGroupConcurrency(target, n, "replayed");
                           }});
    } else if (action == "set_rate_ceiling" && after.is_object()) {
      auto rate = [&](const char* k) {
        return after.contains(k) && after[k].is_number() ? after[k].get<double>() : 0.0;
      };
      const RateCeilingConfig c{rate("requests_per_s") * speed, rate("tokens_per_min") * speed};
      actions.push_back({atS, [eng, c, group = target == "*" ? std::string() : target] {
                           eng->setRateCeiling(group, c, "replayed");
                         }});
    } else if (action == "drain") {
      actions.push_back({atS, [eng, target] { eng->drainGroup(target, "replayed"); }});
    }
  };
  for (const Event& e : sc.actionsBefore) replay(e, 0);
  for (const Event& e : sc.events)
    if (e.tsMs >= sc.fromMs) replay(e, double(e.tsMs - sc.fromMs) / 1000.0 / speed);
  std::stable_sort(actions.begin(), actions.end(), [](const Replayed& a, const Replayed& b) { return a.atS < b.atS; });
  std::size_t nextAction = 0;

  const auto start = std::chrono::steady_clock::now();
  const std::size_t total = arrivals.size();
  std::size_t next = 0;
  auto cancelled = [&] { return opts.cancel && opts.cancel->load(); };
  double lastProgress = -1;
  auto applyDue = [&](std::chrono::steady_clock::time_point now) {
    while (nextAction < actions.size() && start + std::chrono::duration<double>(actions[nextAction].atS) <= now)
      actions[nextAction++].apply();
  };
  while (next < total && !cancelled()) {
    auto due = addSaturating(start, fromSeconds(arrivals[next].atS));
    if (nextAction < actions.size()) due = std::min(due, addSaturating(start, fromSeconds(actions[nextAction].atS)));
    std::this_thread::sleep_until(due);
    const auto now = std::chrono::steady_clock::now();
    applyDue(now);
    while (next < total && start + std::chrono::duration<double>(arrivals[next].atS) <= now) {
      const Arrival& a = arrivals[next];
      Request r;
      r.id = "w" + std::to_string(next);
      r.group = sc.groups[a.group].name;
      r.tier = a.tier;
      r.url = kPath;
      r.body = R"({"max_tokens":16})";
      r.maxTokens = 16;
      engine->submit(std::move(r), [&, tier = a.tier](const Result& result) {
        std::lock_guard lock(mutex);
        if (tier == Tier::P0 && result.ok()) p0Total.push_back(result.totalMs * speed);
        ++done;
        cv.notify_all();
      });
      ++next;
    }
    const double p = 0.9 * double(next) / double(std::max<std::size_t>(1, total));
    if (opts.progress && p - lastProgress >= 0.01) {
      lastProgress = p;
      opts.progress(p);
    }
  }
  // Drain: wait for every submitted request, bounded by the cap (in original seconds).
  {
    std::unique_lock lock(mutex);
    const auto deadline = addSaturating(std::chrono::steady_clock::now(), fromSeconds(opts.drainCapS / speed));
    while (done < std::int64_t(next) && !cancelled()) {
      // Actions after the last arrival (P2 resumed once the workload ended) still come at their times.
      lock.unlock();
      applyDue(std::chrono::steady_clock::now());
      lock.lock();
      if (cv.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(100))) ==
              std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline)
        break;
    }
  }
  // Let the sampler see the empty queues, then stop and pad the run to the end of the range.
  const auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * sampleEveryMs + 50);
  const auto rangeEnd = addSaturating(start, fromSeconds(sc.durationS() / speed));
  std::this_thread::sleep_until(cancelled() ? settle : std::max(settle, rangeEnd));
  engine->stop();
  sim->stop();
  res.cancelled = cancelled();
  res.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  std::sort(res.samples.begin(), res.samples.end(), [](const Sample& a, const Sample& b) {
    return a.group != b.group ? a.group < b.group : a.tsMs < b.tsMs;
  });
  res.redriven = ReplaySummary::fromSamples(res.samples, sc.fromMs);
  res.p0TotalP50Ms = percentile(p0Total, 0.5);
  res.p0TotalP95Ms = percentile(p0Total, 0.95);
  if (opts.progress) opts.progress(1.0);
  res.ok = true;
  return res;
}

nlohmann::json WhatIfResult::toJson(const ReplayScenario& sc) const {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [name, h] : recorded.groups) groups[name]["recorded"] = h.toJson();
  for (const auto& [name, h] : redriven.groups) groups[name]["redriven"] = h.toJson();
  nlohmann::json j = {
      {"range", {{"from_ms", sc.fromMs}, {"to_ms", sc.toMs}, {"duration_s", sc.durationS()}}},
      {"speed", speed},
      {"wall_s", wallS},
      {"ok", ok},
      {"error", error},
      {"cancelled", cancelled},
      {"overrides", overrides},
      {"recorded_settings", recordedSettings},
      {"simulator", simConfig},
      {"total", {{"recorded", recorded.total.toJson()}, {"redriven", redriven.total.toJson()}}},
      {"groups", groups},
      {"redriven_p0_total_ms", {{"p50", numberOrNull(p0TotalP50Ms)}, {"p95", numberOrNull(p0TotalP95Ms)}}},
  };
  if (sc.incident) {
    const Incident& i = *sc.incident;
    j["incident"] = {{"id", i.id}, {"start_ms", i.startMs}, {"end_ms", i.endMs},
                     {"duration_s", double(i.durationMs()) / 1000.0}, {"groups", i.groups},
                     {"reasons", i.reasons}, {"peak_429_per_s", i.peak429PerS}, {"total_429", i.total429},
                     {"shed", i.shed}, {"operator_actions", i.operatorActions.size()}};
  }
  auto ev = nlohmann::json::array();
  for (const auto& e : sc.events) ev.push_back(tg::toJson(e));
  j["events"] = ev;
  return j;
}

}  // namespace tg
