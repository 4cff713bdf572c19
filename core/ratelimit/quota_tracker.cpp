#include "quota_tracker.h"

#include "time_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tg {
namespace {

// A window length from the longest reset seen: round up to a length providers actually use.
double niceWindow(double s) {
  static constexpr double kWindows[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 86400};
  for (double w : kWindows)
    if (s <= w * 1.02) return w;
  return s;
}

}  // namespace

std::string formatClock(EpochMs ms) { return formatUtc(ms, UtcStyle::Clock); }

QuotaTracker::QuotaTracker(double bucketFraction, std::array<double, kDimensionCount> configuredPerMinute,
                           TimePoint now, double windowHintS)
    : fraction_(bucketFraction), windowHintS_(windowHintS) {
  for (int i = 0; i < kDimensionCount; ++i) {
    dims_[i].configuredPerMinute = configuredPerMinute[i];
    if (configuredPerMinute[i] > 0) {
      dims_[i].limit = configuredPerMinute[i];
      dims_[i].windowS = 60;
      retuneBucket(dims_[i], now);
    }
  }
}

double QuotaTracker::windowOf(const Dim& d) const {
  if (d.windowS > 0) return d.windowS;
  // No window reported: the configured one, else the longest reset seen rounded up to a provider's window
  // (a time-compressed what-if simulator has sub-second windows: it configures them).
  return windowHintS_ > 0 ? windowHintS_ : niceWindow(std::max(1.0, d.maxResetInS));
}

void QuotaTracker::retuneBucket(Dim& d, TimePoint now) {
  if (!known(d.limit) || d.limit <= 0) return;
  // A gradual dimension with no stated window: its resets tell the time to drain, not the window, so a rate
  // from them would be a guess. The learnt rate paces it (applyLearnedRate).
  if (&d == &dims_[static_cast<int>(Dimension::Requests)] && unpacedGradual(d)) return;
  const double window = windowOf(d);
  double rate = fraction_ * d.limit / window;
  // A continuous refill of requests inferred from a time-to-full reset, (limit - remaining) / reset, is the
  // upstream's word for a bucket's. Where it says less than comes back, remaining grows while the pacing holds the
  // queue: a sliding window's counter that says when it will have drained (the demo's embeddings group) gave back
  // its 5/s while told 2.5/s, then 1.4/s, with 210 of 300 left and 900 queued. What is left beyond a tenth of a
  // second of the refill (kSurplusKeptS; at least the bucket fraction's margin) is spent over kSurplusSpreadS on
  // top of the refill, so remaining, not the guessed rate, settles the pace (retuned at each reading; a learnt
  // rate, once active, still bounds it: applyLearnedRate). What is kept is P0's: a true bucket paced at the
  // fraction fills slowly, and spending it down to the margin (one request at 50/s) made P0 wait for the refill
  // behind a P2 flood (goodput_bench: p95 36 ms, 21 without the flood; 21 and 21 with this kept).
  if (&d == &dims_[static_cast<int>(Dimension::Requests)] && d.refillRate > 0 && known(d.remaining)) {
    const double kept = std::max((1 - fraction_) * d.limit, kSurplusKeptS * d.refillRate);
    rate += std::max(0.0, d.remaining - kept) / kSurplusSpreadS;
  }
  const double burst = std::max(1.0, fraction_ * d.limit);
  if (std::abs(rate - d.bucket.rate()) > 1e-9 || std::abs(burst - d.bucket.burst()) > 1e-9)
    d.bucket.configure(rate, burst, now);
}

void QuotaTracker::refill(Dim& d, TimePoint now) {
  if (d.refillRate <= 0 || !known(d.remaining) || !known(d.limit)) return;
  if (now > d.refilledAt) {
    d.remaining = std::min(d.limit, d.remaining + d.refillRate * toSeconds(now - d.refilledAt));
    d.refilledAt = now;
  }
}

double QuotaTracker::reserveTokens() const {
  const TokenBucket& b = dims_[static_cast<int>(Dimension::Requests)].bucket;
  if (!b.configured()) return 0;
  return std::max(1.0, b.rate() * 0.05);
}

QuotaWait QuotaTracker::check(std::array<double, kDimensionCount> cost, TimePoint now, EpochMs nowEpoch,
                              double reserve, bool fleetPaced) {
  QuotaWait w;
  if (now < blockedUntil_) {
    w.wait = blockedUntil_ - now;
    w.backIn = w.wait;
    w.why = blockReason_;
    w.reason = waitText(w.why);
    w.exhausted = exhausted_;
    return w;
  }
  exhausted_ = false;
  if (pauseLevel_ > 0 && pauseProbeOut_ && now < pauseProbeSentAt_ + fromSeconds(kPauseProbeLostS)) {
    w.wait = pauseProbeSentAt_ + fromSeconds(kPauseProbeLostS) - now;  // or sooner: its answer re-dispatches
    w.backIn = w.wait;
    w.why = WaitReason{.code = WaitCode::ProbeAlone};
    w.reason = waitText(w.why);
    return w;
  }
  applyLearnedRate(now);  // the learnt rate grows with time
  for (int i = 0; i < kDimensionCount; ++i) {
    Dim& d = dims_[i];
    const double c = cost[i];
    if (c <= 0) continue;
    const auto dim = static_cast<Dimension>(i);
    refill(d, now);
    if (d.hasReset && now >= d.resetAt) {
      d.hasReset = false;  // the window turned over: the server's limit is available again
      d.turnCheckPending = false;
      if (known(d.limit)) d.remaining = d.limit;
    }
    if (fleetPaced && stated(dim).rate > 0) continue;
    const double need = std::min(c, known(d.limit) ? d.limit : c);
    if (known(d.remaining) && d.refillRate > 0 && d.remaining + 1e-9 < need) {
      // Continuous refill: wait for the shortfall, not for the whole bucket.
      const Duration until = fromSeconds((need - d.remaining) / d.refillRate);
      if (until > w.wait) {
        w.wait = until;
        w.why = WaitReason{.code = WaitCode::Refill, .dimension = dim, .seconds = toSeconds(until)};
      }
      continue;
    }
    // A gradual dimension is not held to its reset: capacity comes back before it. Until a refusal starts the
    // learnt rate, remaining from the responses is all there is; after it, the learnt rate paces.
    if (known(d.remaining) && d.hasReset && d.remaining + 1e-9 < need && !(d.gradual && !d.timeToFull)) {
      const Duration reset = d.resetAt - now;
      Duration until = reset;
      if (!d.gradual && !d.probeRefuted && !d.probePending && known(d.limit) && d.resetAt > d.refilledAt) {
        // Probe before the reset: after the request's own share of a steady refill when the reset means
        // "until full", else halfway to the reset (a sliding window reporting its drain time frees half by
        // then). One 429 at most, once, when it is a fixed window after all.
        // The probe proves a refill only when it is answered before the window could have turned: before the
        // reset counted from when the request that told it was sent (the server counted it later), less a
        // second when the reset was told in whole seconds (maybe rounded up). So it goes early in that span.
        const double spanS = toSeconds(d.earliestResetAt - d.refilledAt);
        const double shareS = d.timeToFull ? spanS * std::min(1.0, (need - d.remaining) / std::max(1e-9, d.limit - d.remaining))
                                           : spanS / 2;
        const TimePoint probeAt = d.refilledAt + fromSeconds(shareS);
        if (spanS > 0 && probeAt < d.earliestResetAt) {
          if (now >= probeAt) {
            d.probeDue = true;
            w.backIn = std::max(w.backIn, reset);
            continue;
          }
          until = probeAt - now;
        }
      }
      if (d.resetBy < d.resetAt && !d.turnCheckPending) {
        // Earlier readings of this window pin its turn before the latest one's (rounded) reset.
        if (now >= d.resetBy) {
          d.turnCheckDue = true;
          w.backIn = std::max(w.backIn, reset);
          continue;
        }
        until = std::min(until, d.resetBy - now);
      }
      w.backIn = std::max(w.backIn, reset);
      if (until > w.wait) {
        w.wait = until;
        w.why = WaitReason{.code = WaitCode::ResetIn, .dimension = dim, .seconds = toSeconds(reset)};
        if (until < reset) w.why.probeS = toSeconds(until);
      }
      continue;
    }
    // Gradual: the stated remaining still binds. Used up by requests in flight, their answers tell what came
    // back (a window that counts refusals locks out whoever sends on nothing left); with none in flight, one
    // learnt interval after the last answer, or at once before anything is learnt (that one request's answer
    // tells: a mark starts the learnt rate). Before, with nothing learnt yet, a leaky bucket proved gradual
    // in its first second was sent the whole concurrency on nothing left: 25-34 refusals at C=64.
    if (d.gradual && !d.timeToFull && known(d.remaining) && d.remaining + 1e-9 < need &&
        (learner_.active() || d.unseenAtReading + d.sentSinceReading > 0)) {
      const bool answersDue = d.unseenAtReading + d.sentSinceReading > 0;
      const TimePoint until =
          d.refilledAt + (answersDue ? Duration(std::chrono::seconds(1))
                                     : fromSeconds(1.0 / std::max(RateLearner::kFloor, learner_.rate(now))));
      if (now < until) {
        if (until - now > w.wait) {
          w.wait = until - now;
          w.why = answersDue ? WaitReason{.code = WaitCode::NoneLeftAnswers, .dimension = dim}
                             : WaitReason{.code = WaitCode::NoneLeftNext, .dimension = dim, .seconds = toSeconds(w.wait)};
        }
        continue;
      }
    }
    // Gradual with no window known and nothing learnt yet: a bucket from the resets would be a guess (they
    // tell the time to drain, not the window); the first refusal starts the learnt rate.
    if (unpacedGradual(d) && !learner_.active()) continue;
    const Duration b = d.bucket.timeUntil(c + (dim == Dimension::Requests ? reserve : 0.0), now);
    if (b > w.wait) {
      w.wait = b;
      w.why = WaitReason{.code = WaitCode::Pacing, .dimension = dim, .seconds = toSeconds(b)};
    }
  }
  (void)nowEpoch;
  w.reason = waitText(w.why);
  w.backIn = std::max(w.backIn, w.wait);
  return w;
}

QuotaTracker::SendId QuotaTracker::onSend(std::array<double, kDimensionCount> cost, TimePoint now) {
  const SendId id = ++sends_;
  if (pauseLevel_ > 0 && !pauseProbeOut_) {
    pauseProbeOut_ = true;
    pauseProbeSentAt_ = now;
    pauseProbeId_ = id;
  }
  for (int i = 0; i < kDimensionCount; ++i) {
    Dim& d = dims_[i];
    if (cost[i] <= 0) continue;
    if (d.turnCheckDue) {
      d.turnCheckDue = false;
      d.turnCheckPending = true;
      d.turnCheckId = id;
    }
    if (d.probeDue) {
      d.probeDue = false;
      d.probePending = true;
      d.probeAfterSpent = known(d.lastRawRemaining) && d.lastRawRemaining - d.sentSinceReading < cost[i];
      d.probeId = id;
      d.probeCost = cost;
      d.probeDeadline = d.earliestResetAt;
      d.probeLimit = d.limit;
    }
    d.bucket.tryAcquire(cost[i], now);
    d.sentSinceReading += cost[i];
    d.sent += cost[i];
    if (known(d.remaining)) d.remaining = std::max(0.0, d.remaining - cost[i]);
  }
  return id;
}

const QuotaScope* QuotaTracker::pick(const QuotaReading& r, Dimension dim) {
  // Several scopes of one dimension (GitHub resources, IETF policies, Anthropic input/output):
  // the most constrained one binds.
  const QuotaScope* best = nullptr;
  for (const auto& s : r.scopes) {
    if (s.dimension != dim || !known(s.limit) || s.limit <= 0) continue;
    if (dim == Dimension::Tokens && s.name == "output-tokens") continue;  // not known before the call
    if (!best) {
      best = &s;
      continue;
    }
    const double share = known(s.remaining) ? s.remaining / s.limit : 1.0;
    const double bestShare = known(best->remaining) ? best->remaining / best->limit : 1.0;
    if (share < bestShare) best = &s;
  }
  return best;
}

std::optional<QuotaChange> QuotaTracker::onResponse(const QuotaReading& r, int inFlightOthers, TimePoint now,
                                                    EpochMs nowEpoch, std::optional<TimePoint> sentAt,
                                                    double inFlightOtherTokens) {
  const TimePoint sent = sentAt ? std::min(*sentAt, now) : now;
  std::optional<QuotaChange> change;
  spentAtLastReading_ = false;
  for (int i = 0; i < kDimensionCount; ++i) {
    const auto dim = static_cast<Dimension>(i);
    const QuotaScope* s = pick(r, dim);
    if (!s) continue;
    Dim& d = dims_[i];
    const double limitBefore = d.limit;
    if (known(d.limit) && std::abs(s->limit - d.limit) > 0.02 * d.limit && d.configuredPerMinute <= 0) {
      change = QuotaChange{dim, d.limit, s->limit};
      // A stated request limit that rose is a new quota: what the learner measured under the old one (its
      // ceiling, and the climb past it that a plateau delays) says nothing of it, and the headers now do. A
      // limiter with a burst saves what a slow climb leaves unused and pays it out above the new limit later
      // (a token bucket whose limit doubled ran at 26/s for 2.5 s, then 92/s). The climb from the old rate is
      // slow start's (RateLearner::restart), not none: the new headroom is paced. A limit that fell needs no
      // restart: the learnt rate never exceeds the stated one.
      // An answer to a request sent before the last one read is old news: after a limit fell, answers to
      // requests sent before the change still tell the old one (at 50/s, C=16, each one restarted the
      // learner: a GCRA halved took 8 s to settle, 2 s before the restart).
      if (dim == Dimension::Requests && s->limit > kStatedRiseRestarts * d.limit && sent >= d.lastReadingSentAt)
        learner_.restart(now);
    }
    if (d.configuredPerMinute <= 0 || !known(d.limit)) d.limit = s->limit;
    else d.limit = std::min(d.limit, s->limit);  // the server's word beats our config when lower
    const bool timeToFull = s->dialect == "openai" || s->dialect == "anthropic";
    d.timeToFull = timeToFull;
    // Within one fixed window, remaining never grows. So a response B showing more remaining than an
    // earlier response A, at the same limit, proves a continuous refill when B was certainly counted after A
    // (A came back before B was sent) and before A's window could have turned (B came back before A's send
    // time + the reset A told). Response latency can blur neither condition: a fixed window's turnover, seen
    // late, does not pass for a refill, and a token bucket holding steady under load (remaining flat while
    // we spend) does show one.
    // The rule holds for any dialect: a sliding window that reports the time to drain as its reset shows
    // remaining growing before it too (then the dimension is gradual; continuous refill is for the
    // time-to-full dialects, whose reset gives the rate). A reset in whole seconds may be rounded up by up to
    // one: A's window could have turned up to a second before the reset it told.
    // A reset of "1" in whole seconds (a leaky bucket or GCRA that empties within the second) leaves no such
    // span; a rise too small for a turn proves the refill then. After a turn B tells the limit less what the
    // new window counted, and that is at most what was in flight when A came back and what was sent since
    // (B included): less than the limit by more than that (and a tenth for other clients of the key) is no
    // turn. Requests only: token costs are estimates; and not for "until full" resets, told in ms, where the
    // timing proof works and a cold burst's in-flight count is the rule's weak point.
    if (known(s->remaining) && d.refillEvidence < 3) {
      const bool requests = dim == Dimension::Requests && !timeToFull;
      for (const auto& a : d.seen) {
        if (!(a.receivedAt < sent && a.limit == s->limit && s->remaining > a.remaining)) continue;
        const bool beforeTurn = now + std::chrono::milliseconds(2) + a.rounding < a.earliestReset;
        const bool tooSmallForATurn = requests && s->remaining + (d.sent - a.sentBefore) + a.unseen < 0.9 * s->limit;
        if (beforeTurn || tooSmallForATurn) {
          ++d.refillEvidence;
          d.seen.clear();  // one proof per batch of responses
          break;
        }
      }
      if (s->resetInS && d.refillEvidence < 3) {
        const bool whole = s->resetFromAbsoluteTime || std::floor(*s->resetInS) == *s->resetInS;
        const double unseen = requests ? inFlightOthers : 0;
        d.seen.push_back({sent, now, sent + fromSeconds(std::max(0.0, *s->resetInS)), s->remaining, s->limit,
                          whole ? Duration(std::chrono::seconds(1)) : Duration::zero(), d.sent, unseen});
        while (d.seen.size() > 32 || (!d.seen.empty() && d.seen.front().earliestReset <= now)) d.seen.pop_front();
      }
      if (d.refillEvidence >= 3) d.seen.clear();
      if (d.refillEvidence >= 2 && !timeToFull) d.gradual = true;
    }
    // Counted before the lowest reading of this window, though answered after it: sent before the last
    // reading's request, or (requests) sent before the lowest one came back and rising by no more than the
    // requests then in flight, too little for a turn. Requests sent together reach the server in any order.
    // Read as a turn, such a rise of a few moved the pin on the turn up to a second late (C=16: 0.3-0.6 s of a
    // 500/s window lost). Sent with the lowest one (sameBurst), it still tells remaining: a bucket not yet proven
    // gradual refills by that much too (held to the lowest reading, a leaky bucket's cold start stalled for
    // 1-2 s), within what the stated rate refills where the dimension is deep (below). Sent before the last
    // reading's request, it does not raise remaining.
    const bool sameBurst = dim == Dimension::Requests && sent < d.lowestAnsweredAt &&
                           s->remaining - d.lastReported <= inFlightOthers + 1.0 &&  // no more than in flight
                           s->remaining + inFlightOthers + 1 < 0.9 * s->limit;        // too little for a turn
    const bool overtaken = d.hasReset && now < d.resetBy && known(d.lastReported) && known(s->remaining) &&
                           s->limit == limitBefore && (sent < d.lastReadingSentAt || sameBurst);
    const double unseen = dim == Dimension::Requests ? inFlightOthers : std::max(0.0, inFlightOtherTokens);
    const double told = known(s->remaining) ? std::max(0.0, s->remaining - unseen) : kUnknown;
    if (known(s->remaining)) {
      // Sent before the last reading's request, it was most likely counted first: older news. Where no refill
      // is proven (not gradual) it lowers remaining but never raises it (taken as told, one raised a spent
      // fixed window's 0 to 17: 17 refusals, and their Retry-After cost a window; BENCHMARKS section 12).
      const bool older = overtaken && sent < d.lastReadingSentAt && !d.gradual && known(d.remaining);
      // A rise sent with the lowest one, where a reading told more than half the limit left (a window, or a
      // bucket as deep as its limit): what the lowest reading told, less what was sent since, plus what the
      // stated rate refills since it came back, at most. A window reordered by a few would otherwise send that
      // many too many (21 raised to 26 at 500/s: one refusal, and its whole-second Retry-After held the key a
      // second); a bucket still gets its refill (held to the lowest reading, a token bucket stalled until its
      // reset). A shallow bucket (nginx's burst, a fifth of the rate) has its small rises as told.
      double bound = told;
      if (older) {
        bound = d.remaining;
      } else if (overtaken && d.deepestShare > kDeepShare && !d.gradual && known(d.lowestTold)) {
        const double refilled = d.limit / windowOf(d) * toSeconds(now - d.lowestAnsweredAt);
        bound = std::max(0.0, d.lowestTold - (d.sent - d.sentAtLowest) + refilled);
      }
      d.remaining = std::min(told, bound);
      if (s->limit > 0) d.deepestShare = std::max(d.deepestShare, s->remaining / s->limit);
      d.lastRawRemaining = s->remaining;
      d.refilledAt = now;
      d.unseenAtReading = unseen;
      d.sentSinceReading = 0;
      if (dim == Dimension::Requests)
        spentAtLastReading_ = d.gradual && !d.timeToFull && s->remaining - unseen < 1 && s->limit == limitBefore;
    }
    if (timeToFull && s->resetInS && *s->resetInS > 0.001 && known(s->remaining) && s->remaining < s->limit)
      d.impliedRate = (s->limit - s->remaining) / *s->resetInS;
    const bool continuous = timeToFull && (d.refillEvidence >= 2 || d.gradual);
    if (continuous && s->resetInS && *s->resetInS > 0.001 && known(s->remaining) && s->remaining < s->limit) {
      // reset = time until full: the refill rate is what is missing over that time.
      const double rate = (s->limit - s->remaining) / *s->resetInS;
      d.refillRate = d.refillRate > 0 ? 0.8 * d.refillRate + 0.2 * rate : rate;
      d.windowS = s->limit / d.refillRate;
      d.windowReported = true;
    }
    if (s->windowS && *s->windowS > 0) {
      d.windowS = *s->windowS;
      d.windowReported = true;
    }
    if (s->resetInS) {
      const double in = std::max(0.0, *s->resetInS);
      const double rounding = s->resetFromAbsoluteTime || std::floor(in) == in ? 1.0 : 0.0;
      const TimePoint lo = sent + fromSeconds(std::max(0.0, in - rounding)), hi = now + fromSeconds(in);
      // The same window as the last reading: remaining did not rise (or the rise was an overtaken reading's,
      // above), the limit held, both bound one turn, and that turn is not already past (a reading after it
      // refutes the bound). A refill shows in readings in the order they were sent, and still starts a new bound.
      const bool sameWindow = d.hasReset && now < d.resetBy && known(d.lastReported) && known(s->remaining) &&
                              (s->remaining <= d.lastReported || overtaken) && s->limit == limitBefore &&
                              lo < d.resetBy && hi > d.resetLo;
      d.resetLo = sameWindow ? std::max(d.resetLo, lo) : lo;
      d.resetBy = sameWindow ? std::min(d.resetBy, hi) : hi;
      d.earliestResetAt = lo;
      if (!sameWindow || (known(s->remaining) && s->remaining < d.lastReported)) {
        d.lowestAnsweredAt = now;
        d.lowestTold = dim == Dimension::Requests ? told : kUnknown;
        d.sentAtLowest = d.sent;
      }
      d.lastReported = sameWindow ? std::min(d.lastReported, s->remaining) : s->remaining;
      d.lastReadingSentAt = std::max(d.lastReadingSentAt, sent);
      d.hasReset = true;
      d.resetAt = now + fromSeconds(in);
      d.resetAtEpochMs = nowEpoch + static_cast<EpochMs>(in * 1000);
      if (!d.windowReported && d.configuredPerMinute <= 0) d.maxResetInS = std::max(d.maxResetInS, in);
    }
    retuneBucket(d, now);
  }
  return change;
}

void QuotaTracker::blockUntil(TimePoint until, EpochMs untilEpoch, WaitReason why, bool exhausted) {
  if (until <= blockedUntil_ && !exhausted) return;
  blockedUntil_ = until;
  blockedUntilEpoch_ = untilEpoch;
  blockReason_ = std::move(why);
  exhausted_ = exhausted;
}

void QuotaTracker::applyLearnedRate(TimePoint now) {
  if (!learner_.active()) return;
  Dim& req = dims_[static_cast<int>(Dimension::Requests)];
  double rate = learner_.rate(now);
  // A configured or reported rate still bounds it: the learnt one only ever lowers what is sent.
  if (known(req.limit) && req.limit > 0 && !unpacedGradual(req)) {
    rate = std::min(rate, fraction_ * req.limit / windowOf(req));
  }
  // A small burst: releases are paced at the rate, never the whole concurrency at once.
  const double burst = std::max(1.0, rate * 0.1);
  if (std::abs(rate - req.bucket.rate()) > 1e-9 * std::max(1.0, rate) || std::abs(burst - req.bucket.burst()) > 1e-9) {
    // A full bucket stays full as the rate (and with it the burst) grows: it is not emptier for growing.
    const double oldBurst = req.bucket.burst();
    const bool full = req.bucket.configured() && req.bucket.level(now) >= oldBurst - 1e-9;
    req.bucket.configure(rate, burst, now);
    if (full && burst > oldBurst) req.bucket.refund(burst - oldBurst, now);
  }
}

Duration QuotaTracker::onRefusal(TimePoint sentAt, double retryAfterS, double baseS, double capS, TimePoint now,
                                 EpochMs nowEpoch) {
  const bool wasLearning = learner_.active();
  const bool fresh = learner_.onRefusal(std::min(sentAt, now), now, rateHint());
  applyLearnedRate(now);
  const int n = learner_.refusedEpisodes();
  if (fresh && n == 1) refusingSince_ = now;
  if (fresh && n >= 2) {  // nothing got through since the last episode: hold the key, doubling
    // No longer than the refusals have lasted so far (at least kMinHoldS): a window locked for half a second
    // costs about that, not a whole base wait. And the first two holds no longer than a pause's cap, doubling
    // from the third: a window that counts refusals opens soon after it turns (0.15 s at 50/s after a cold
    // start's refusals), and a hold of all it lasted would waste most of that second. A quota locked for good
    // still reaches the cap by doubling, a probe or two later.
    const double lastedS = std::max(kMinHoldS, toSeconds(now - refusingSince_));
    const double climbS = kPauseCapS / scale_ * std::pow(2.0, std::clamp(n - 3, 0, 20));
    double s = std::min({capS, baseS * std::pow(2.0, std::min(n - 2, 20)), lastedS, climbS});
    // A whole-second Retry-After may be a shorter wait rounded up (a window that turns in 0.2 s says "1"): the
    // key is held for what it surely says, a second less; the refused request itself waits all of it.
    if (std::isfinite(retryAfterS))
      s = std::max(s, retryAfterS == std::floor(retryAfterS) ? retryAfterS - 1 : retryAfterS);
    blockUntil(now + fromSeconds(s), nowEpoch + static_cast<EpochMs>(s * 1000),
               WaitReason{.code = std::isfinite(retryAfterS) ? WaitCode::RefusedHolding : WaitCode::RefusedBackingOff,
                          .seconds = s},
               false);
  } else if (const double r = learner_.rate(now); r > 0) {
    // A refusal says "over the limit now": pause one interval of the learnt rate before the next request. One
    // sent after that pause and refused again doubles it (a fixed window stays full until it turns; a window
    // that counts refusals locks out whoever keeps asking); refusals of requests already in flight do not,
    // and a success ends it. Bounded by kPauseCapS (or one interval when longer): a window locked until it turns is then found open at most
    // that late, for a refused probe or so a second while it stays locked (episodes that get nothing through
    // at all are held longer, above).
    if (sentAt >= pauseSetAt_) {
      if (!wasLearning) {
        // The very first refusal ends an unpaced start: the limiter let a burst through and the requests still
        // in flight will spend any interval's refill, so the first probe waits a pause's cap.
        pauseLevel_ = std::max(1, static_cast<int>(std::ceil(kPauseCapS / scale_ * r)));
      } else if (pauseLevel_ == 0) {
        // Past slow start a refusal is the cubic's gentle climb past a known ceiling: the limiter is over by
        // about one request, and a window that counts refusals counts this one too. Two intervals let both
        // drain, where one would meet a refusal more. A window that is full stays full for the share of it
        // that the probe overshot (a few %: 40 ms of a 1-s window at 4%), so at least kProbePauseS, up to a
        // third interval: at 50/s two intervals met a second refusal in most episodes (2.1% 429s on a fixed
        // window), and at 25/s a third interval is a dip of 12% in that second.
        pauseLevel_ = learner_.slowStarting()
                          ? 1
                          : std::clamp(static_cast<int>(std::ceil(kProbePauseS / scale_ * r - 1e-9)), 2, 3);
      } else {
        pauseLevel_ = std::min(pauseLevel_ * 2, 1 << 20);
      }
      pauseSetAt_ = now;
    }
    const double s = std::min(std::max(kPauseCapS, 1 / r), std::max(1, pauseLevel_) / r);
    if (sentAt >= pauseProbeSentAt_) pauseProbeOut_ = false;  // the probe's answer, or one sent after it
    blockUntil(now + fromSeconds(s), nowEpoch + static_cast<EpochMs>(s * 1000),
               WaitReason{.code = WaitCode::RefusedPausing, .seconds = s}, false);
  }
  return now < blockedUntil_ ? blockedUntil_ - now : Duration::zero();
}

void QuotaTracker::settleProbe(SendId id, ProbeAnswer answer, TimePoint now, const QuotaReading* told) {
  if (pauseProbeOut_ && id >= pauseProbeId_) pauseProbeOut_ = false;  // answered, whatever it said
  for (int i = 0; i < kDimensionCount; ++i) {
    Dim& d = dims_[i];
    if (d.turnCheckPending && id == d.turnCheckId) d.turnCheckPending = false;
    if (!d.probePending || id != d.probeId) continue;
    d.probePending = false;
    // Accepted after the window may have turned proves nothing; refused proves there was no refill. Nor does one
    // sent before the upstream said it was spent: the demo's batch window (900 a minute a key, told as "until
    // full") took such a probe's acceptance for a refill, and each minute paid 60-85 refusals, 4.7% of its sends.
    if (answer == ProbeAnswer::Accepted && d.probeAfterSpent && now < d.probeDeadline && d.limit == d.probeLimit) {
      d.gradual = true;
      if (d.timeToFull && d.impliedRate > 0 && d.refillRate <= 0) {
        // "Until full" then means a steady refill: its rate is what was missing over that time.
        d.refillRate = d.impliedRate;
        d.windowS = d.limit / d.refillRate;
        d.windowReported = true;
        d.refilledAt = now;
      }
    }
    else if (answer == ProbeAnswer::Refused && !refusedByAnother(told, i, d.probeCost)) d.probeRefuted = true;
  }
}

bool QuotaTracker::refusedByAnother(const QuotaReading* told, int dim, std::array<double, kDimensionCount> cost) {
  if (!told) return false;
  // Every scope of `dim` the answer states had the cost (any one short may have refused), and one of another
  // dimension had not. Output tokens are not known before the call: they neither refuse nor clear.
  int roomy = 0;
  bool otherShort = false;
  for (const auto& s : told->scopes) {
    if (!known(s.limit) || s.limit <= 0 || !known(s.remaining)) continue;
    if (s.dimension == Dimension::Tokens && s.name == "output-tokens") continue;
    const int i = static_cast<int>(s.dimension);
    const bool enough = s.remaining >= std::max(1.0, cost[i]);
    if (i == dim) {
      if (!enough) return false;
      ++roomy;
    } else if (!enough) {
      otherShort = true;
    }
  }
  return roomy > 0 && otherShort;
}

double QuotaTracker::rateHint() const {
  const Dim& req = dims_[static_cast<int>(Dimension::Requests)];
  return known(req.limit) && req.limit > 0 ? req.limit / windowOf(req) : 0;
}

bool QuotaTracker::unpacedGradual(const Dim& d) const {
  return d.gradual && !d.timeToFull && !d.windowReported && d.configuredPerMinute <= 0 && windowHintS_ <= 0;
}

bool QuotaTracker::onQuotaRefusal(const QuotaReading& r, std::array<double, kDimensionCount> cost, TimePoint now) {
  if (!r.retryAfterS) return false;
  const double ra = *r.retryAfterS;
  bool any = false;
  for (int i = 0; i < kDimensionCount; ++i) {
    const QuotaScope* s = pick(r, static_cast<Dimension>(i));
    if (!s || !known(s->remaining) || !s->resetInS) continue;
    Dim& d = dims_[i];
    if (s->remaining >= std::max(1.0, cost[i]) && !d.gradual) continue;  // not the dimension that refused
    // Well short: a fixed window states the same time twice (give or take a second of rounding when one is
    // an epoch), so the reset must be a second or more beyond Retry-After, and a quarter again.
    if (!d.gradual && *s->resetInS >= ra + 1.0 - 1e-9 && *s->resetInS > ra * 1.25) {
      d.gradual = true;
      if (d.timeToFull && *s->resetInS > 0.001 && s->remaining < s->limit) {
        d.refillRate = (s->limit - s->remaining) / *s->resetInS;
        d.refilledAt = now;
        d.windowS = s->limit / d.refillRate;
        d.windowReported = true;
      }
    }
    if (d.gradual && !d.timeToFull) any = true;
  }
  return any;
}

std::optional<double> QuotaTracker::resetUnderRetryAfter(const QuotaReading& r,
                                                        std::array<double, kDimensionCount> cost, TimePoint sentAt,
                                                        TimePoint now) {
  if (!r.retryAfterS || r.retryAfterHeader != kRetryAfterHeader || *r.retryAfterS < 1 ||
      std::floor(*r.retryAfterS) != *r.retryAfterS)
    return std::nullopt;
  std::optional<double> reset;
  for (int i = 0; i < kDimensionCount; ++i) {
    const QuotaScope* s = pick(r, static_cast<Dimension>(i));
    const double need = std::max(1.0, cost[i]);
    if (!s || !known(s->remaining) || !s->resetInS || s->remaining >= need) continue;
    double back = *s->resetInS;
    const Dim& d = dims_[i];
    if (d.gradual && d.timeToFull && s->remaining < s->limit && back > 0)
      back = std::min(back, (need - s->remaining) * back / (s->limit - s->remaining));
    reset = std::max(reset.value_or(0.0), back);
  }
  if (!reset || *reset >= *r.retryAfterS) return std::nullopt;
  // Refuted: a request sent after the last such hold ended was refused too. The hold doubles from then on, up to
  // the Retry-After: a slot another client took costs one refusal more, a figure that is no refill at all a few
  // (not one a hold). Refusals of requests sent before it ended hold as long as it did. A record no refusal
  // followed within a Retry-After of its end is forgotten.
  if (finerHold_ && now > finerHold_->endsAt + fromSeconds(*r.retryAfterS + 1)) finerHold_.reset();
  if (!finerHold_) {
    finerHold_ = FinerHold{.startedAt = now};
  } else if (std::min(sentAt, now) >= finerHold_->endsAt) {
    finerHold_->doublings = std::min(finerHold_->doublings + 1, 30);
    finerHold_->startedAt = now;
  }
  // Doubled from kMinHoldS at least: a reset told as 0 (or an epoch already past) would double to nothing.
  const double from = finerHold_->doublings > 0 ? std::max(*reset, kMinHoldS) : *reset;
  const double hold = std::min(*r.retryAfterS, from * std::pow(2.0, finerHold_->doublings));
  finerHold_->endsAt = std::max(finerHold_->endsAt, now + fromSeconds(hold));
  if (hold >= *r.retryAfterS) return std::nullopt;
  return hold;
}

bool QuotaTracker::statedShortOf(const QuotaReading& r, std::array<double, kDimensionCount> cost) {
  for (int i = 0; i < kDimensionCount; ++i) {
    const QuotaScope* s = pick(r, static_cast<Dimension>(i));
    if (s && known(s->remaining) && s->remaining < std::max(1.0, cost[i])) return true;
  }
  return false;
}

void QuotaTracker::onSuccess(TimePoint now, std::optional<TimePoint> sentAt) {
  pauseLevel_ = 0;
  pauseProbeOut_ = false;
  if (finerHold_ && (!sentAt || std::min(*sentAt, now) >= finerHold_->startedAt)) finerHold_.reset();  // came back
  learner_.onSuccess(now, sentAt);
  if (spentAtLastReading_ && sentAt) learner_.onMark(std::min(*sentAt, now), now, rateHint());
  spentAtLastReading_ = false;
  applyLearnedRate(now);
}

void QuotaTracker::refund(Dimension dim, double amount, TimePoint now) {
  Dim& d = dims_[static_cast<int>(dim)];
  d.bucket.refund(amount, now);
  if (known(d.remaining) && known(d.limit)) d.remaining = std::min(d.limit, d.remaining + std::max(0.0, amount));
}

DimensionState QuotaTracker::state(Dimension dim, TimePoint now) {
  Dim& d = dims_[static_cast<int>(dim)];
  DimensionState s;
  s.limit = d.limit;
  s.remaining = d.remaining;
  if (d.hasReset && d.resetAt > now) s.resetAtMs = d.resetAtEpochMs;
  if (d.bucket.configured()) s.localTokens = d.bucket.level(now);
  return s;
}

QuotaTracker::StatedLimit QuotaTracker::stated(Dimension dim) const {
  const Dim& d = dims_[static_cast<int>(dim)];
  double limit = 0, window = 60;
  if (known(d.limit) && d.limit > 0) {
    if (dim == Dimension::Requests && unpacedGradual(d)) return {};
    limit = d.limit;
    window = windowOf(d);
  } else if (d.configuredPerMinute > 0) {
    limit = d.configuredPerMinute;
  } else {
    return {};
  }
  return {fraction_ * limit / window, std::max(1.0, (1 - fraction_) * limit)};
}

double QuotaTracker::headroom(TimePoint now) {
  Dim& d = dims_[static_cast<int>(Dimension::Requests)];
  if (known(d.remaining)) return d.remaining;
  if (d.bucket.configured()) return d.bucket.level(now);
  return 1e12;
}

}  // namespace tg
