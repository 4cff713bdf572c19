#include "sample.h"

namespace tg {

std::vector<Sample> SampleBuilder::next(const EngineSnapshot& snap) {
  std::vector<Sample> out;
  out.reserve(snap.groups.size());
  for (const auto& g : snap.groups) {
    Sample s;
    s.tsMs = snap.tsMs;
    s.group = g.group;
    const auto& req = g.dims[static_cast<int>(Dimension::Requests)];
    const auto& tok = g.dims[static_cast<int>(Dimension::Tokens)];
    s.reqRemaining = req.remaining;
    s.reqLimit = req.limit;
    s.tokRemaining = tok.remaining;
    s.tokLimit = tok.limit;
    s.resetAtMs = req.resetAtMs ? req.resetAtMs : tok.resetAtMs;
    s.inFlight = g.inFlight;
    s.concurrencyLimit = g.concurrencyLimit;
    s.queueDepth = g.queueDepth;
    s.p50Ms = g.latencyP50Ms;
    s.p95Ms = g.latencyP95Ms;
    s.breaker = g.breaker;
    auto it = prev_.find(g.group);
    if (it != prev_.end()) {
      const auto& p = it->second.counters;
      const auto& c = g.counters;
      s.sends = static_cast<int>(c.sends - p.sends);
      s.ok = static_cast<int>(c.ok - p.ok);
      s.r429 = static_cast<int>(c.r429 - p.r429);
      s.r5xx = static_cast<int>(c.r5xx - p.r5xx);
      s.retries = static_cast<int>(c.retries - p.retries);
      s.shed = static_cast<int>(c.shed - p.shed);
      for (int t = 0; t < kTierCount; ++t)
        s.arrivals[static_cast<std::size_t>(t)] =
            static_cast<int>(c.submittedByTier[static_cast<std::size_t>(t)] - p.submittedByTier[static_cast<std::size_t>(t)]);
      s.intervalS = (snap.tsMs - it->second.tsMs) / 1000.0;
      if (s.intervalS <= 0) s.intervalS = 1.0;
    }
    prev_[g.group] = Prev{g.counters, snap.tsMs};
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tg
