#include "replay_scenario.h"

#include "stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tg {

namespace {

// Windows the simulator knows how to express; a reset further out than a minute is a daily-style quota
// that a short re-drive cannot show anyway.
double snapWindow(double s) {
  static const double kWindows[] = {1, 10, 60};
  for (double w : kWindows)
    if (s <= w * 1.05) return w;
  return 60;
}

}  // namespace

std::string replaySpanProblem(EpochMs fromMs, EpochMs toMs) {
  if (toMs <= fromMs) return "empty time range";
  // fromMs < toMs, so the difference fits in uint64 whatever the two are.
  const std::uint64_t span = static_cast<std::uint64_t>(toMs) - static_cast<std::uint64_t>(fromMs);
  if (span > static_cast<std::uint64_t>(kMaxReplaySpanMs))
    return "time range of " + std::to_string(span / 1000) + " s is longer than the replay limit of 31 days";
  return {};
}

std::int64_t ScenarioGroup::totalArrivals() const {
  std::int64_t n = 0;
  for (const auto& a : arrivals)
    for (int v : a) n += v;
  return n;
}

std::optional<ReplayScenario> ReplayScenario::fromIncident(HistoryReader& reader, std::int64_t id,
                                                           std::int64_t padMs, std::string* error) {
  auto inc = reader.incident(id);
  if (!inc.ok()) {
    if (error) *error = inc.error;
    return std::nullopt;
  }
  if (!inc.value) {
    if (error) *error = "no incident " + std::to_string(id) + " in this history file";
    return std::nullopt;
  }
  // Start, end and pad come from a file and the command line: saturate, and let the span check refuse.
  padMs = std::max<std::int64_t>(0, padMs);
  auto s = fromHistory(reader, subSaturating(inc.value->startMs, padMs), addSaturating(inc.value->endMs, padMs), error);
  if (s) {
    s->incidentId = id;
    s->incident = inc.value;
  }
  return s;
}

std::optional<ReplayScenario> ReplayScenario::fromHistory(HistoryReader& reader, EpochMs fromMs, EpochMs toMs,
                                                          std::string* error) {
  if (std::string why = replaySpanProblem(fromMs, toMs); !why.empty()) {
    if (error) *error = why;
    return std::nullopt;
  }
  auto rows = reader.rawSamples(fromMs, toMs, {});
  if (!rows.ok()) {
    if (error) *error = rows.error;
    return std::nullopt;
  }
  auto ev = reader.events(fromMs, toMs, {}, {});
  if (!ev.ok()) {
    if (error) *error = ev.error;
    return std::nullopt;
  }
  ReplayScenario sc;
  sc.fromMs = fromMs;
  sc.toMs = toMs;

  sc.recorded = std::move(rows.value);
  sc.events = std::move(ev.value);
  sc.arrivalsKnown = reader.schemaVersion() >= 3;
  // The engine that recorded it: the last start at or before the range's first sample (a run that started inside
  // the range recorded it, not the one before), and the operator's actions between that start and the range, which
  // were in force when it began.
  if (!sc.recorded.empty()) {
    EpochMs first = sc.recorded.front().tsMs;
    for (const auto& smp : sc.recorded) first = std::min(first, smp.tsMs);
    if (auto start = reader.lastEvent(EventKind::EngineStart, first); start.ok() && start.value) {
      const nlohmann::json& d = start.value->detail;
      if (d.is_object() && d.contains("config") && d["config"].is_object()) sc.engineConfig = d["config"];
      if (start.value->tsMs < fromMs)
        if (auto before = reader.events(start.value->tsMs, fromMs, {}, {EventKind::OperatorAction}); before.ok())
          sc.actionsBefore = std::move(before.value);
    }
  }
  const std::size_t seconds = std::size_t((toMs - fromMs + 999) / 1000);

  std::map<std::string, std::vector<const Sample*>> byGroup;
  for (const auto& s : sc.recorded) byGroup[s.group].push_back(&s);
  for (const auto& [name, rows] : byGroup) {
    ScenarioGroup g;
    g.name = name;
    g.arrivals.assign(seconds, {});
    std::vector<double> latencies, windows, acceptedWhileRefused;
    double lastLimit = kUnknown;
    int maxConc = 0;
    for (const Sample* s : rows) {
      // A sample covers (tsMs - interval, tsMs]; its arrivals go to the second it ends in.
      const std::int64_t idx = std::clamp<std::int64_t>((s->tsMs - 1 - fromMs) / 1000, 0, std::int64_t(seconds) - 1);
      for (int t = 0; t < kTierCount; ++t) g.arrivals[std::size_t(idx)][t] += s->arrivals[t];
      maxConc = std::max(maxConc, s->concurrencyLimit);
      if (known(s->p50Ms) && s->p50Ms > 0) latencies.push_back(s->p50Ms);
      if (s->resetAtMs > s->tsMs) windows.push_back(double(s->resetAtMs - s->tsMs) / 1000.0);
      if (s->r429 > 0 && s->intervalS > 0) acceptedWhileRefused.push_back(double(s->ok) / s->intervalS);
      if (known(s->tokLimit) && s->tokLimit > 0 && g.tokenLimit == 0) g.tokenLimit = s->tokLimit;
      if (known(s->reqLimit) && s->reqLimit > 0) {
        if (!known(lastLimit)) {
          g.initialLimit = s->reqLimit;
        } else if (std::abs(s->reqLimit - lastLimit) > 0.01 * lastLimit) {
          g.limitChanges.emplace_back(std::max(0.0, double(s->tsMs - 1000 - fromMs) / 1000.0), s->reqLimit);
        }
        lastLimit = s->reqLimit;
      }
    }
    if (maxConc > 0) g.concurrency = maxConc;
    const double lat = percentile(latencies, 0.5);
    if (known(lat)) g.latencyMs = std::clamp(lat, 1.0, 5000.0);
    if (!windows.empty()) g.windowS = snapWindow(*std::max_element(windows.begin(), windows.end()));
    if (!known(lastLimit) && !acceptedWhileRefused.empty()) {
      // The upper quartile: in the seconds of a cold start or of backing off, less got through than the limit.
      const double accepted = percentile(acceptedWhileRefused, 0.75);
      if (known(accepted) && accepted > 0) {
        g.headerless = true;
        g.initialLimit = std::max(1.0, std::round(accepted * g.windowS));
      }
    }
    sc.groups.push_back(std::move(g));
  }

  // QuotaChange events are more precise in time than the per-second samples: they replace the sample-derived
  // change nearest to them. An event is stamped when the engine heard of the change, in the first response to
  // a request the server took after it: the change itself came about one response latency earlier.
  for (const auto& e : sc.events) {
    if (e.kind == EventKind::Burst429Start && e.detail.contains("retry_after_s") && e.detail["retry_after_s"].is_number())
      sc.retryAfterSeenS.push_back(e.detail["retry_after_s"].get<double>());
    if (e.kind != EventKind::QuotaChange || e.detail.value("dimension", std::string()) != "requests") continue;
    if (!e.detail.contains("after") || !e.detail["after"].is_number()) continue;
    for (auto& g : sc.groups) {
      if (g.name != e.group) continue;
      const double at = std::max(0.0, double(e.tsMs - fromMs) / 1000.0 - g.latencyMs / 1000.0);
      const double after = e.detail["after"].get<double>();
      if (e.tsMs < fromMs || after <= 0) continue;
      auto near = std::find_if(g.limitChanges.begin(), g.limitChanges.end(), [&](const auto& c) {
        return std::abs(c.first - at) <= 3 && std::abs(c.second - after) <= 0.05 * after;
      });
      if (near != g.limitChanges.end()) near->first = at;
      else g.limitChanges.emplace_back(at, after);
    }
  }
  for (auto& g : sc.groups) std::sort(g.limitChanges.begin(), g.limitChanges.end());
  return sc;
}

nlohmann::json ReplayScenario::simConfigJson(double speed) const {
  using nlohmann::json;
  speed = std::max(1.0, speed);
  json groupsJ = json::object();
  json schedule = json::array();
  double latency = 0;
  bool stated = false, headerless = false;
  for (const auto& g : groups) {
    stated = stated || (!g.headerless && g.initialLimit > 0);
    headerless = headerless || g.headerless;
    json gj = {{"algorithm", "fixed-window"},
               {"limit", g.initialLimit},
               {"window_s", g.windowS / speed},
               {"per_key", false}};
    groupsJ[g.name] = gj;
    for (const auto& [at, limit] : g.limitChanges)
      schedule.push_back({{"at_s", at / speed}, {"action", "set_limit"}, {"group", g.name}, {"limit", limit}});
    latency = std::max(latency, g.latencyMs);
  }
  std::stable_sort(schedule.begin(), schedule.end(),
                   [](const json& a, const json& b) { return a["at_s"].get<double>() < b["at_s"].get<double>(); });
  const bool bare = headerless && !stated;
  return {{"dialect", !bare ? "openai" : retryAfterSeenS.empty() ? "none" : "retry-after"},
          {"retry_after", !bare || !retryAfterSeenS.empty()},
          {"retry_after_format", "ms"},
          {"group_by", "header"},
          {"default_group", groups.empty() ? std::string("default") : groups.front().name},
          {"latency_ms", {{"distribution", "fixed"}, {"mean", std::max(0.1, (latency > 0 ? latency : 50) / speed)}}},
          {"groups", groupsJ},
          {"schedule", schedule}};
}

}  // namespace tg
