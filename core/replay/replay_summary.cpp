#include "replay_summary.h"

#include "stats.h"

#include <algorithm>
#include <cmath>

namespace tg {

namespace {

struct Acc {
  Headline h;
  EpochMs lastArrivalMs = 0;
  bool p0 = false;
  std::vector<double> p50, p95;
  std::vector<const Sample*> rows;
};

}  // namespace

nlohmann::json Headline::toJson() const {
  return {{"arrivals", arrivals}, {"sends", sends}, {"ok", ok}, {"r429", r429}, {"shed", shed},
          {"unfinished", unfinished()},
          {"completion_s", numberOrNull(completionS)}, {"p0_latency_p50_ms", numberOrNull(p0P50Ms)},
          {"p0_latency_p95_ms", numberOrNull(p0P95Ms)}};
}

nlohmann::json ReplaySummary::toJson() const {
  nlohmann::json g = nlohmann::json::object();
  for (const auto& [name, h] : groups) g[name] = h.toJson();
  return {{"total", total.toJson()}, {"groups", g}};
}

ReplaySummary ReplaySummary::fromSamples(const std::vector<Sample>& samples, EpochMs fromMs) {
  std::map<std::string, Acc> acc;
  for (const auto& s : samples) {
    Acc& a = acc[s.group];
    a.rows.push_back(&s);
    int arrivals = 0;
    for (int v : s.arrivals) arrivals += v;
    a.h.arrivals += arrivals;
    a.h.sends += s.sends;
    a.h.ok += s.ok;
    a.h.r429 += s.r429;
    a.h.shed += s.shed;
    if (arrivals > 0) a.lastArrivalMs = std::max(a.lastArrivalMs, s.tsMs);
    if (s.arrivals[int(Tier::P0)] > 0) a.p0 = true;
    if (s.ok > 0 && known(s.p50Ms)) a.p50.push_back(s.p50Ms);
    if (s.ok > 0 && known(s.p95Ms)) a.p95.push_back(s.p95Ms);
  }
  ReplaySummary out;
  std::vector<double> allP50, allP95;
  bool allDone = !acc.empty();
  double latest = 0;
  for (auto& [name, a] : acc) {
    std::sort(a.rows.begin(), a.rows.end(), [](const Sample* x, const Sample* y) { return x->tsMs < y->tsMs; });
    for (const Sample* s : a.rows) {
      if (s->tsMs < a.lastArrivalMs) continue;
      int q = s->inFlight;
      for (int v : s->queueDepth) q += v;
      if (q == 0) {
        a.h.completionS = double(s->tsMs - fromMs) / 1000.0;
        break;
      }
    }
    if (a.h.arrivals == 0 ||
        static_cast<double>(a.h.unfinished()) > Headline::kUnfinishedShare * static_cast<double>(a.h.arrivals))
      a.h.completionS = kUnknown;
    if (a.p0) {
      a.h.p0P50Ms = percentile(a.p50, 0.5);
      a.h.p0P95Ms = percentile(a.p95, 0.95);
      allP50.insert(allP50.end(), a.p50.begin(), a.p50.end());
      allP95.insert(allP95.end(), a.p95.begin(), a.p95.end());
    }
    Headline& t = out.total;
    t.arrivals += a.h.arrivals;
    t.sends += a.h.sends;
    t.ok += a.h.ok;
    t.r429 += a.h.r429;
    t.shed += a.h.shed;
    if (a.h.arrivals > 0) {
      if (known(a.h.completionS)) latest = std::max(latest, a.h.completionS);
      else allDone = false;
    }
    out.groups[name] = a.h;
  }
  out.total.completionS = allDone ? latest : kUnknown;
  out.total.p0P50Ms = percentile(allP50, 0.5);
  out.total.p0P95Ms = percentile(allP95, 0.95);
  return out;
}

}  // namespace tg
