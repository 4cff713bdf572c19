#include "rate_learner.h"

#include <algorithm>
#include <cmath>

namespace tg {
namespace {
constexpr double kMaxRate = 1e6;
constexpr auto kWindow = std::chrono::seconds(1);
constexpr auto kMinSpan = std::chrono::milliseconds(100);  // a shorter count says little of a rate
// The cubic's K: seconds from a decrease to `beta` x the ceiling back to the ceiling.
double regainS(double beta) { return std::cbrt((1 - beta) / RateLearner::kCubic); }
}  // namespace

double RateLearner::rate(TimePoint now) const { return rateAt(dilated(now, scale_)) * scale_; }

double RateLearner::rateAt(TimePoint now) const {
  if (!active_) return 0;
  const double t = std::max(0.0, toSeconds(now - t0_));
  const double k = regainS(beta_);
  double r = 0;
  if (slowStart_) {
    // Doubling up to the threshold (what got through before the first refusal), then the cubic from there as
    // if an episode had set the ceiling at it: flat first, so the doubling that would overshoot it is not made.
    const double toThreshold =
        threshold_ > start_ ? kSlowStartDoublingS * std::log2(threshold_ / start_) : 0.0;
    if (threshold_ > 0 && t >= toThreshold)
      r = threshold_ * (1 + kCubic * std::pow(std::min(t - toThreshold, 60.0), 3));
    else
      r = start_ * std::pow(2.0, std::min(t / kSlowStartDoublingS, 40.0));
  } else {
    // Concave up to the ceiling, flat there for the plateau, then the convex climb past it, steeper after a
    // plateau so that twice the ceiling comes half the plateau later than without one. Making up all of it
    // (1.58x the ceiling a second past the longest plateau, not 1.13x) met a token bucket's saved-up slack
    // at 200 ms of latency with 12 refusals an episode (headerless_bench).
    if (t <= k) {
      r = ceiling_ * (1 + kCubic * std::pow(t - k, 3));
    } else {
      const double toDouble = std::cbrt(1 / kCubic);  // 2.7 s past the ceiling
      const double climb = 1 / std::pow(std::max(toDouble - 0.5 * plateau_, 1.0), 3);
      const double past = std::clamp(t - k - plateau_, 0.0, 60.0);
      r = ceiling_ * (1 + climb * std::pow(past, 3));
      // Proof that the limit rose: doubling from it up to twice the ceiling, the cubic's own goal (see kRoseBy).
      if (roseRate_ > 0 && now > roseAt_) {
        const double doublings = std::min(toSeconds(now - roseAt_) / kSlowStartDoublingS, 40.0);
        r = std::max(r, std::min(2 * ceiling_, roseRate_ * std::pow(2.0, doublings)));
      }
      // No steeper than kGrowthPerRtt more in flight per round trip (see the header), nor slower than doubling
      // in kSlowestDoublingS.
      if (rttS_ > 0) {
        const double slope = std::max(kGrowthPerRtt / (rttS_ * rttS_), ceiling_ / kSlowestDoublingS);
        r = std::min(r, ceiling_ + slope * past);
      }
    }
  }
  return std::clamp(r, kFloor, kMaxRate);
}

void RateLearner::restart(TimePoint now) {
  const double from = rate(now);
  RateLearner fresh(scale_);
  fresh.ok_ = std::move(ok_);
  fresh.okSent_ = std::move(okSent_);
  fresh.rttS_ = rttS_;
  const bool wasActive = active_;
  *this = std::move(fresh);
  if (!wasActive) return;
  active_ = true;
  slowStart_ = true;
  start_ = std::max(kSlowStartFrom, from / scale_);
  threshold_ = 0;  // doubling until the next refusal or mark
  t0_ = lastDecrease_ = dilated(now, scale_);
}

double RateLearner::acceptedWithin(TimePoint now, Duration window) {
  while (!ok_.empty() && (ok_.front() + kWindow <= now || ok_.front() > now)) ok_.pop_front();
  if (window >= kWindow) return static_cast<double>(ok_.size());
  return static_cast<double>(std::count_if(ok_.begin(), ok_.end(), [&](TimePoint t) { return t + window > now; }));
}

void RateLearner::onSuccess(TimePoint now, std::optional<TimePoint> sentAt) {
  if (sentAt) {
    // Kept in order of sending (answers come back a little out of it, so the insert is near the end): the
    // span's count is then two binary searches, not a scan of every acceptance on each refusal of a storm.
    const TimePoint sent = dilated(std::min(*sentAt, now), scale_);
    okSent_.insert(std::upper_bound(okSent_.begin(), okSent_.end(), sent), sent);
    while (okSent_.front() + 2 * kWindow <= okSent_.back() || okSent_.size() > 200000) okSent_.pop_front();
    // An acceptance of a send the climb past a proven plateau made well above the ceiling: the limit rose (see
    // the header). A lock-out's guess, an echo's kept ceiling and a mark leave no plateau.
    const TimePoint at = dilated(now, scale_);
    const bool rose = active_ && !slowStart_ && roseRate_ == 0 && ceiling_ > 0 && plateau_ >= kProvenPlateauS &&
                      sent >= t0_ && rateAt(sent) >= (1 + kRoseBy) * ceiling_;
    // The round trip the climb's steepness is bounded by, smoothed as TCP's SRTT.
    const double rtt = toSeconds(at - sent);
    rttS_ = rttS_ > 0 ? (1 - kRttGain) * rttS_ + kRttGain * rtt : rtt;
    if (rose) {
      roseRate_ = rateAt(at);
      roseAt_ = at;
    }
  }
  ok_.push_back(dilated(now, scale_));
  if (ok_.size() > 200000) ok_.pop_front();  // bounded, whatever the rate
  if (okSinceDecrease_++ == 0 && lockedOut_) {
    resumedAt_ = ok_.back();
    lockedOut_ = false;
  }
}

bool RateLearner::onRefusal(TimePoint sentAt, TimePoint now, double rateHint) {
  const bool wasActive = active_;
  const long okBefore = okSinceDecrease_;
  const TimePoint sent = dilated(std::min(sentAt, now), scale_);
  if (!decrease(sent, dilated(now, scale_), rateHint / scale_, grace_, false)) {
    ++refusalsSinceDecrease_;
    // Only sends already in flight when the episode began: they went at the old rate, into the empty bucket.
    // Later ones go at the lowered rate, and a window that counts refusals accepts fewer of them than its
    // rate (the refused ones count): measured there, a 500/s window ratcheted down to 73%.
    if (sent < lastDecrease_) {
      spanFrom_ = std::min(spanFrom_, sent);
      spanTo_ = std::max(spanTo_, sent);
      measureSpan();
    }
    return false;
  }
  refusedEpisodes_ = wasActive && okBefore == 0 ? refusedEpisodes_ + 1 : 1;
  refusalsSinceDecrease_ = 1;
  spanFrom_ = spanTo_ = sent;
  return true;
}

void RateLearner::setPlateau() {
  // The probing budget: the episode cost refusalsSinceDecrease_ refusals; the next climb past the ceiling waits
  // until a cycle at the ceiling sends enough for that to be kProbeShare of it.
  const double cycleS = static_cast<double>(refusalsSinceDecrease_) / (kProbeShare * ceiling_);
  plateau_ = std::clamp(cycleS - regainS(beta_), 0.0, kMaxPlateauS);
}

void RateLearner::measureSpan() {
  const Duration span = spanTo_ - spanFrom_;
  if (span < kMinSpan) return;
  // Only as far back as the acceptances kept reach: a refusal of a request long in flight (a long completion)
  // would count the last two seconds' acceptances over all its time.
  if (okSent_.empty() || spanFrom_ + 2 * kWindow <= okSent_.back()) return;
  const long accepted = acceptedSent(spanFrom_, spanTo_);  // the refused sends at the ends are not in okSent_
  if (accepted < kSpanMinAccepted) return;  // nothing (a full window) or too few to say a rate
  const double measured = static_cast<double>(accepted) / toSeconds(span);
  if (!slowStart_ && measured < ceiling_) {
    ceiling_ = measured;
    roseRate_ = 0;  // a lower ceiling: no rise
    if (!lockedOut_) lastMeasured_ = measured;
  }
}

double RateLearner::sinceLastEpisode(TimePoint sentAt) const {
  // From the end of the last episode's grace (its pause and refusals are over) to the send now refused.
  const TimePoint from = lastDecrease_ + grace_;
  if (sentAt - from < kMinSpan || okSent_.empty()) return 0;  // okSent_ keeps two seconds: all of a shorter span
  return static_cast<double>(acceptedSent(from, sentAt)) / toSeconds(sentAt - from);
}

long RateLearner::acceptedSent(TimePoint from, TimePoint to) const {
  const auto first = std::lower_bound(okSent_.begin(), okSent_.end(), from);
  return std::lower_bound(first, okSent_.end(), to) - first;
}

bool RateLearner::onMark(TimePoint sentAt, TimePoint now, double rateHint) {
  // Once per round trip, as TCP answers ECN: a mark of a request sent after the last decrease says that rate
  // is still too high. (A refusal's grace is for limiters that refuse in bursts; a mark is no burst.)
  if (!decrease(dilated(sentAt, scale_), dilated(now, scale_), rateHint / scale_, Duration::zero(), true))
    return false;
  refusedEpisodes_ = 0;
  okSinceDecrease_ = 1;  // the marked request itself got through
  refusalsSinceDecrease_ = 0;
  spanFrom_ = TimePoint::max();
  spanTo_ = TimePoint::min();
  return true;
}

bool RateLearner::decrease(TimePoint sentAt, TimePoint now, double rateHint, Duration sameEpisodeGrace,
                           bool mark) {
  if (active_ && sentAt < lastDecrease_ + sameEpisodeGrace) return false;  // the same episode
  // A mark within a second of slow start's beginning ends nothing: what was accepted since is what the stated
  // remaining let out while each answer was awaited (5 in 0.36 s, 14/s, of a leaky bucket's 25), and the last
  // second's count still holds the time before. The remaining keeps binding meanwhile, so the doubling that
  // goes on costs no refusal.
  if (mark && active_ && slowStart_ && now - lastDecrease_ < kWindow) return false;
  const double accepted = acceptedWithin(now, kWindow);
  if (!active_) {
    // What got through before the first refusal may be a burst the limiter allowed: start below it, and
    // double until the next refusal shows the real rate.
    active_ = true;
    slowStart_ = true;
    // Half of it: a token bucket's burst makes the first measure up to twice the rate, and one doubling
    // (half a second) gets back what halving gives away. A rate the headers suggest is a floor: after a
    // quiet wait nothing was accepted lately, and doubling up from 1/s would take seconds.
    const double recent = 2 * acceptedWithin(now, std::chrono::milliseconds(500));
    start_ = std::max({kSlowStartFrom, kSlowStartShare * std::min(accepted, recent), kBeta * rateHint});
    // Slow start's threshold (TCP's ssthresh): the rate that was getting through. Past it the growth turns
    // cubic, so the doubling that would overshoot a limit met there is never made. The larger of the two
    // measures: the smaller undersells a surge that began less than a second ago (a leaky bucket's burst ran
    // out at 20 of 50/s and took seconds of cubic growth to leave), and a burst that inflated the larger
    // costs one refused episode, which then measures the rate.
    // Nothing (or less than the start) got through: no threshold, doubling until the next refusal.
    threshold_ = std::max(accepted, recent);
    if (threshold_ <= start_) threshold_ = 0;
  } else {
    // While we sent above the limit, what it accepted over the last second is its rate. At the end of slow
    // start, the rate since the first refusal when anything got through in between: what got through before it
    // may be a burst the limiter allowed once (a token bucket that starts full), and counting it would set the
    // ceiling at burst plus rate, met by a second storm of refusals. When nothing got through since (a window
    // locked until it turns), what it let through before is the best measure there is.
    double measured = accepted;
    if (const Duration span = now - lastDecrease_; slowStart_ && span < kWindow && span >= kMinSpan) {
      if (const double since = acceptedWithin(now, span); since > 0) measured = since / toSeconds(span);
    }
    // Locked out since the last episode, or within a second of the first acceptance after a lock-out (the
    // last second's count still holds it): no lower than half the ceiling measured before (see the header).
    const bool lockOut = okSinceDecrease_ == 0 || (resumedAt_ > TimePoint{} && now - resumedAt_ < kWindow);
    // Within a second of a fall, the floor is half the ceiling it fell from: the fall's measure is the count
    // mid-way down (a halved 50/s GCRA measured 37, then two lock-outs floored at 18.5 held 17-20/s of 25 for 3 s).
    const bool afterFall = fellFrom_ > 0 && now - fellAt_ < kWindow;
    const double lockOutBase = afterFall ? std::max(lastMeasured_, fellFrom_) : lastMeasured_;
    if (!slowStart_ && lockOut) measured = std::max(measured, kLockOutFloor * lockOutBase);
    // Episodes less than a second apart (a limit moving, its echoes): the last second's count holds the drops and
    // pauses of the ones before. What the limiter accepted of the sends since the last episode, up to the one
    // refused, is a measure free of them; no higher than the ceiling (see sinceLastEpisode).
    if (!slowStart_ && !lockOut && now - lastDecrease_ < kWindow)
      measured = std::max(measured, std::min(sinceLastEpisode(sentAt), ceiling_));
    // Refused in the climb past a plateau that held the ceiling without a refusal for kProvenPlateauS or more:
    // the limit is at least that ceiling, whatever the last second's count (which holds the last episode's
    // pause and dip, and on a window that counts refusals, them too: measured alone, a ceiling of 25/s
    // settled at 22-24).
    const bool pastProvenPlateau = !slowStart_ && !lockOut && plateau_ >= kProvenPlateauS &&
                                   toSeconds(now - t0_) > regainS(beta_) + plateau_;
    if (pastProvenPlateau) measured = std::max(measured, ceiling_);
    const double was = rateAt(now);
    // A straddle (see the header): a small rise (within kConfirmedWithin of the ceiling before it) whose own hold
    // is refused (at about the ceiling: within kHeldWithin below it, or a quarter of that above, the climb's first
    // 0.3 s past the plateau; over a second after it, so not the quick episode measured below) goes back to the
    // ceiling before it; from then on a small rise found past a proven plateau keeps the ceiling.
    const bool heldRefused = !slowStart_ && !lockOut && ceiling_ > 0 && now - lastDecrease_ >= kWindow &&
                             std::abs(was - ceiling_) <= kHeldWithin * ceiling_ &&
                             was <= (1 + kHeldWithin / 4) * ceiling_;  // the climb's first 0.3 s past the plateau
    if (heldRefused && raisedFrom_ > 0) {
      smallRiseIsStraddle_ = true;
      measured = std::min(measured, raisedFrom_);
    }
    raisedFrom_ = 0;
    const bool smallRise = !slowStart_ && !lockOut && measured > ceiling_ &&
                           measured <= (1 + kConfirmedWithin) * ceiling_;
    if (smallRise && smallRiseIsStraddle_ && pastProvenPlateau) measured = ceiling_;
    else if (smallRise) raisedFrom_ = ceiling_;
    const bool confirmed = !slowStart_ && !lockOut && ceiling_ > 0 && measured > 0 &&
                           std::abs(measured - ceiling_) <= kConfirmedWithin * ceiling_;
    // Found above a proven ceiling by the climb past its plateau: a limit that rose. The climb passed it by
    // little, as a probe of a known ceiling does, so the drop only drains that excess.
    const bool rose = pastProvenPlateau && measured > (1 + kRoseBy) * ceiling_;
    // The echo of a move (see the header): within a second of an episode that measured a ceiling fallen from
    // the one before or risen above it (or confirmed such a one within a second), clear of a lock-out, a
    // measure lower again by more than kConfirmedWithin. The dip of any episode: within its regain (or a
    // second), a measure lower by more than kDipFall. The drop is from the measure; the ceiling stays for the
    // regain to return to, with no plateau. Not twice in a row.
    const Duration since = now - lastDecrease_;
    const bool inRegain = since < kWindow || toSeconds(since) < regainS(beta_);
    const bool echo = !slowStart_ && !lockOut && !mark && !lastEcho_ && measured > 0 &&
                      ((lastMoved_ && since < kWindow && measured < (1 - kConfirmedWithin) * ceiling_) ||
                       (inRegain && !lastLockOut_ && !lastSteady_ && measured < (1 - kDipFall) * ceiling_));
    const double before = ceiling_;
    slowStart_ = false;
    lastEcho_ = echo;
    const bool guessConfirmed = lastLockOut_;
    lastLockOut_ = lockOut;
    if (echo) {
      beta_ = kBeta * measured / ceiling_;
      lastMoved_ = false;
    } else {
      // Nothing accepted in the last second, yet no lock-out (the last acceptance is older): half the rate, no
      // higher than the ceiling: after a long quiet spell the climb's rate is no rate anything was sent at.
      ceiling_ = measured > 0 ? measured
                              : std::max(kFloor, ceiling_ > 0 ? std::min(ceiling_, 0.5 * was) : 0.5 * was);
      beta_ = confirmed || rose ? kBetaConfirmed : kBeta;
      const bool moved = !lockOut && !mark && before > 0 &&
                         (ceiling_ < (1 - kConfirmedWithin) * before || ceiling_ > (1 + kRoseBy) * before);
      // A confirmation carries the move over only within a second of it (confirmed since, a ceiling is steady).
      lastMoved_ = moved || (confirmed && lastMoved_ && now - lastDecrease_ < kWindow);
      if (moved) smallRiseIsStraddle_ = false;  // a limit that moved: what its windows did says nothing now
      if (moved && ceiling_ < before) {
        fellFrom_ = fellFrom_ > 0 && now - fellAt_ < kWindow ? std::max(fellFrom_, before) : before;
        fellAt_ = now;
      }
    }
    // A confirmation of a measured ceiling (not of a lock-out's guess, nor within a second of a move) makes it
    // steady: a measure far below it next is the limit falling (a halved 500/s window first measured 351), no dip.
    lastSteady_ = confirmed && !guessConfirmed && !lastMoved_;
    // Slow start ended in a lock-out: the last rate measured clear of one is what got through before the
    // first refusal (a GCRA halved behind its backlog locked the key for a second: measured 36, 22, 9/s of
    // its 49 as the count emptied, a floor of 18/s for its 25, 6 s to settle).
    if (!lockOut) lastMeasured_ = ceiling_;
    else if (lastMeasured_ <= 0) lastMeasured_ = std::max(ceiling_, threshold_);
    setPlateau();
    // A guessed ceiling: no probe of it to budget, climb past it at once. Nor after a mark: its probe was
    // answered by the stated remaining, not by refusals (the budget of the last refused episode held a leaky
    // bucket's 25/s at 19-22/s for 1.5 s more after a halving).
    if (lockOut || mark || echo) plateau_ = 0;
  }
  if (active_ && okSinceDecrease_ == 0) lockedOut_ = true;
  t0_ = now;
  lastDecrease_ = now;
  roseRate_ = 0;
  grace_ = std::max(fromSeconds(kEpisodeGraceS), (now - std::min(sentAt, now)) * 3 / 2);
  okSinceDecrease_ = 0;
  return true;
}

}  // namespace tg
