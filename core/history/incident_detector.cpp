#include "incident_detector.h"

#include <algorithm>
#include <map>
#include <set>

namespace tg {
namespace {

struct Hit {
  EpochMs startMs, endMs;
  const std::string* group;
  const char* reason;
};

int queueTotal(const Sample& s) { return s.queueDepth[0] + s.queueDepth[1] + s.queueDepth[2]; }

}  // namespace

std::vector<Incident> IncidentDetector::detect(std::vector<Sample> samples, const std::vector<Event>& events) const {
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
    return a.group != b.group ? a.group < b.group : a.tsMs < b.tsMs;
  });

  std::vector<Hit> hits;
  for (std::size_t begin = 0; begin < samples.size();) {
    std::size_t end = begin;
    while (end < samples.size() && samples[end].group == samples[begin].group) ++end;
    // Sliding share windows (ts - shareWindowMs, ts] over this group's samples: of 429s, and of 5xx (an upstream
    // failing: 10 s of 30% 503s, 93 of them reaching clients, was no incident).
    struct Share {
      int Sample::*count;
      double share;
      int minInWindow;
      const char* reason;
      std::int64_t inWindow = 0;
      std::size_t marked = 0;
    };
    Share shares[] = {{&Sample::r429, opts_.share429, opts_.min429InWindow, "429_share"},
                      {&Sample::r5xx, opts_.share5xx, opts_.min5xxInWindow, "5xx_share"}};
    for (Share& sh : shares) sh.marked = begin;
    std::size_t lo = begin;
    std::int64_t sends = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const Sample& s = samples[i];
      sends += s.sends;
      for (Share& sh : shares) sh.inWindow += s.*sh.count;
      while (lo < i && samples[lo].tsMs <= s.tsMs - opts_.shareWindowMs) {
        sends -= samples[lo].sends;
        for (Share& sh : shares) sh.inWindow -= samples[lo].*sh.count;
        ++lo;
      }
      const EpochMs from = s.tsMs - static_cast<EpochMs>(std::max(s.intervalS, 0.001) * 1000);
      auto hit = [&](const char* reason) { hits.push_back({from, s.tsMs, &s.group, reason}); };
      for (Share& sh : shares) {
        if (sh.inWindow < sh.minInWindow ||
            static_cast<double>(sh.inWindow) < sh.share * static_cast<double>(std::max<std::int64_t>(sends, 1)))
          continue;
        // The stretch is the samples that had them, not the whole trailing window: it starts at the first in the
        // window and ends with the last one.
        for (std::size_t j = std::max(lo, sh.marked); j <= i; ++j) {
          const Sample& w = samples[j];
          if (w.*sh.count == 0) continue;
          const EpochMs wFrom = w.tsMs - static_cast<EpochMs>(std::max(w.intervalS, 0.001) * 1000);
          hits.push_back({wFrom, w.tsMs, &w.group, sh.reason});
        }
        sh.marked = i + 1;
      }
      if (opts_.breakerOpen && s.breaker != BreakerState::Closed) hit("breaker_open");
      if (opts_.shedPerSample > 0 && s.shed >= opts_.shedPerSample) hit("shed");
      if (opts_.queueGrowth > 0) {
        int minQueue = queueTotal(s);
        for (std::size_t j = i; j > begin && samples[j - 1].tsMs > s.tsMs - opts_.queueGrowthWindowMs; --j)
          minQueue = std::min(minQueue, queueTotal(samples[j - 1]));
        if (queueTotal(s) - minQueue >= opts_.queueGrowth) hit("queue_growth");
      }
    }
    begin = end;
  }
  if (hits.empty()) return {};
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.startMs < b.startMs; });

  std::vector<Incident> out;
  std::vector<std::set<std::string>> groupSets, reasonSets;
  for (const Hit& h : hits) {
    if (out.empty() || h.startMs - out.back().endMs >= opts_.mergeGapMs) {
      out.push_back(Incident{});
      out.back().startMs = h.startMs;
      out.back().endMs = h.endMs;
      groupSets.emplace_back();
      reasonSets.emplace_back();
    }
    out.back().endMs = std::max(out.back().endMs, h.endMs);
    groupSets.back().insert(*h.group);
    reasonSets.back().insert(h.reason);
  }

  // Summaries. A sample at ts covers (ts - interval, ts], so it belongs to an incident when start < ts <= end.
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.tsMs < b.tsMs; });
  for (std::size_t k = 0; k < out.size(); ++k) {
    Incident& inc = out[k];
    inc.groups.assign(groupSets[k].begin(), groupSets[k].end());
    inc.reasons.assign(reasonSets[k].begin(), reasonSets[k].end());
    auto it = std::upper_bound(samples.begin(), samples.end(), inc.startMs,
                               [](EpochMs t, const Sample& s) { return t < s.tsMs; });
    std::map<EpochMs, double> perTs;
    for (; it != samples.end() && it->tsMs <= inc.endMs; ++it) {
      inc.total429 += it->r429;
      inc.shed += it->shed;
      perTs[it->tsMs] += it->r429 / std::max(it->intervalS, 0.001);
    }
    for (const auto& [ts, rate] : perTs) inc.peak429PerS = std::max(inc.peak429PerS, rate);
    for (const Event& e : events)
      if (e.kind == EventKind::OperatorAction && e.tsMs >= inc.startMs && e.tsMs <= inc.endMs)
        inc.operatorActions.push_back(e);
    std::sort(inc.operatorActions.begin(), inc.operatorActions.end(),
              [](const Event& a, const Event& b) { return a.tsMs < b.tsMs; });
  }
  return out;
}

}  // namespace tg
