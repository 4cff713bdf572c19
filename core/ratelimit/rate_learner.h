// A request rate learnt from refusals alone, for upstreams that say nothing of their quota (bare 429s, or a
// Retry-After without quota headers: nginx limit_req, Envoy, API gateways), found the way TCP finds a path's
// capacity:
// - slow start: after the first refusal the rate starts at half what was accepted (the last second's count,
//   or twice the last half second's when less: a limiter's initial burst inflates the first), at least 1/s
//   (or beta x a rate the headers suggest), and doubles every half second up to what was getting through
//   (TCP's ssthresh), then grows along the cubic below from there, until the next refusal;
// - then each refusal episode sets the ceiling to what was being accepted over the last second (the
//   limiter's real rate while we sent above it), drops to beta x that, and grows back along a cubic in time
//   (CUBIC, as AWS's adaptive retry mode uses it): flat near the ceiling, where most of the time is spent,
//   then faster beyond it, so a limit that rose is found again in a few seconds. An episode that measures the
//   ceiling again (within kConfirmedWithin) drops only to kBetaConfirmed of it: the limit is known, the drop
//   drains the probe's excess. So does one the climb past a proven plateau found over kRoseBy higher (a limit that
//   rose, passed by as little: 15% below a doubled window was a second under 90% of it). A refusal in the
//   climb past a plateau that held the ceiling kProvenPlateauS or longer keeps that ceiling: the last second's
//   count holds the previous episode's pause and dip, and on a window that counts refusals, them too (a
//   ceiling of 25/s drifted to 22-24 by it).
// - a straddle: a fixed window's last-second count holds the tail of the window before when that one was not full
//   (52-54 of 50), so a climb past the ceiling measures a small rise (within kConfirmedWithin of it), and the hold
//   there overfills a window every other second, a refusal each (at 50/s: 2.0-2.1% of 429s in 3 of 12 runs). A
//   small rise whose own hold is then refused (over a second later, at a rate within kHeldWithin below the ceiling
//   or a quarter of that above it) was such a straddle: the ceiling goes back to the one before it, and from then on
//   a small rise found past a proven plateau keeps the ceiling, until the limit moves. A limit that rose a little
//   holds its raised ceiling and keeps it.
// - a probing budget: each climb past the ceiling costs the refusals an episode takes (1-2 on a window that
//   stays full until it turns). At a low rate that is a large share of what is sent (2 of 50 a second is 4%),
//   so the cubic holds at the ceiling before it climbs past it for as long as keeps the last episode's refusals
//   within kProbeShare of what the ceiling sends in a cycle, at most kMaxPlateauS; the climb after the hold is
//   steeper, so twice the ceiling comes only half the hold later than without one (a limit that doubled is
//   found in 3.5 s from the ceiling after the longest hold). Steeper still costs refusals where the answer
//   comes late: an episode's refusals grow with the rate's excess times the latency.
//   At 500/s and above there is no hold: a probe costs a share too small to save.
// - the saturated span: the last second's count overstates a bucket's rate by the slack it saved (the climb
//   spends it before the first refusal: 46/s measured of 40 at 200 ms of latency), and the
//   drop below an inflated ceiling stays above the limit. Between two sends an episode saw refused, a bucket,
//   GCRA or leaky bucket was empty at both ends, so what it accepted of the sends between them is its rate
//   times the span. The sends counted are those already in flight when the episode began (sent at the old
//   rate, above the limit); a window that counts refusals accepts fewer than its rate of the later, slower
//   ones. Once that span holds kSpanMinAccepted acceptances over 100 ms, the ceiling comes down to it, never
//   up. A window that is full refuses every send until it turns, so between its refusals nothing is
//   accepted and the measure stays silent; so does a latency too short for 100 ms of sends in flight.
// - a climb bounded per round trip: requests sent past a limit are answered a round trip later, so an
//   episode's refusals are the rate's excess over the limit times the round trip. A bucket hides its limit
//   until the slack it saved while we sent under it (S requests: the dip, a ceiling measured a little low) is
//   spent; a climb of slope g then meets it with an excess of sqrt(2 g S) per second, answered a round trip
//   later. Letting what is in flight grow by at most kGrowthPerRtt requests a round trip (g = kGrowthPerRtt /
//   rtt^2; TCP grows its window by one segment a round trip) makes that about sqrt(2 kGrowthPerRtt S)
//   refusals, whatever the round trip. The cost is time:
//   twice a ceiling C is found no sooner than C rtt^2 / kGrowthPerRtt past the plateau (0.2 s for 50/s at
//   20 ms, where the cubic binds; 16 s for 40/s at 200 ms: a slack of 8-10 requests met at 200 ms cost 4-11
//   refusals an episode at 55-103/s), at most kSlowestDoublingS. The round trip is the smoothed one of
//   accepted requests (TCP's SRTT).
// - a rise proven: an acceptance of a send that the climb past a proven plateau (kProvenPlateauS; a lock-out's
//   guess, an echo's kept ceiling and a mark leave none) made over kRoseBy above the ceiling says the limit rose.
//   From that answer the rate doubles every kSlowStartDoublingS, as slow start does, up to twice the ceiling, the
//   cubic's own goal, which the cubic then passes; still no steeper than the round-trip bound below, so at 30 ms
//   and more at 50/s (10 ms at 500/s) the bound, not the doubling, sets the climb. The next refusal ends it.
//   Traced on a doubled window that counts refusals (50/s, C=16): found 4.6 s after the change with the cubic
//   alone (the regain, the 1.5-s hold and the climb), its doublings settled in 6 s in 3 of 4 runs. Doubling on
//   with no bound overshot: a sliding window fills a second after the climb passes its limit, by then at 107/s
//   of 50, and 8 refusals counted against the key dipped the next second to 42 (settled in 7 s). Not a proof
//   everywhere: a fixed window that just turned accepts any rate until its count fills (a climb past 50 was
//   refused at 59-66/s), so the rule can fire there with the limit unchanged; the doubling then meets the full
//   window sooner, at most twice the ceiling, and its episode measures the count as any other (the fixed
//   window's steady rows kept 1.6% and 0.8-1.0% of 429s).
// The first refusal of all ends an unpaced start (QuotaTracker pauses a cap then, not an interval).
// A lock-out is a poor measure of the rate: in an episode with nothing accepted since the last one, the last
// second's count holds our own holds. A window locked until it turns still counts its limit there, but a
// limit that halved behind a backlog (a GCRA keeps it in units) refuses everything for over a second, and the
// count fell 294, 155, 16/s at 500/s, where the cubic then took 5 s to climb back. Such episodes, and those
// within a second of the first acceptance after them (a lone probe got through: 4/s measured), keep the
// ceiling at kLockOutFloor of the last one measured clear of a lock-out at least (TCP's ssthresh after a
// timeout). That ceiling is a guess, with no probe of it to budget: no plateau, the climb past it begins once
// it is regained (a plateau there held a halved window at 18-21/s of 25 for 4 s).
// A move's echo: after an episode that measured a ceiling fallen from the one before (clear of a lock-out) or risen
// over kRoseBy above it (or one that confirmed such a ceiling within a second), one within a second that measures lower
// again by over kConfirmedWithin counts a last second that still holds the dips of the episodes before it: a window
// that counts refusals refuses for a second after a storm, and a sliding window remembers the climb that found a risen
// limit. Measured alone, a halved 500/s window that counts refusals found 254/s, then 0.29 s later 199 (a ceiling of
// 199 and its plateau: 185-202/s for 4 s); a doubled 50/s sliding window found 52 and 51, then 0.66 s later 43 (43-44/s
// for 3 s). The drop is from the measure, as ever, but the moved ceiling stays as what the regain returns to, with no
// plateau; not twice in a row (a lower limit is measured by the episode after). The first fall from a steady ceiling is
// measured as ever: a limit that halved is found by it.
// An episode's dip: after any episode clear of a lock-out, one within its regain (or within a second) that measures
// over kDipFall below the ceiling counts the dip that episode's drop and pause left in the last second, and is read as
// an echo. A halved 50/s window that counts refusals fell to 44, a lock-out guessed 28, 27 was confirmed, and 1.02 s
// later the count still holding those refusals gave 20: a ceiling of 20 and its plateau held 19-20/s of 25 for 4 s
// (settled in 6-9 s; 2-4 s with this rule; a leaky bucket with a delay queue, 5 s to 1 s).
// A lock-out's ceiling is a guess, not a measure to dip from: after lock-outs at 327 and 322, a halved 500/s counting
// window's 246 (its limit, 250) read as a dip, and the next measure, 184, held for 4 s.
// Nor is a steady ceiling (one confirmed by a measure, not a lock-out's guess, and no move's within a second): the next
// measure far below it is the limit falling. A halved 500/s sliding window first measured 351 of a steady 500, read
// as a dip: the old ceiling held a second longer.
// Episodes less than a second apart (a limit moving, its echoes): the last second's count holds the drops and pauses
// of the ones before. A halved 500/s sliding window measured 397, 311, 323, 260, then 197: a ceiling of 197 and its
// plateau held 195-202/s of 250 for 4 s. What the limiter accepted of the sends since the last episode (from the end
// of its grace to the send refused) is free of them; the larger of the two measures, that one no higher than the
// ceiling (a climb past it spends a bucket's saved slack above the bucket's rate).
// Within a second of a fall, a lock-out is floored at half the ceiling it fell from, not half the fall's measure
// (a halved 50/s GCRA measured 37 mid-way down, then two lock-outs floored at 18.5 held 17-20/s of 25 for 3 s).
// Time is an argument; not thread-safe.
#pragma once

#include "types.h"

#include <deque>
#include <optional>

namespace tg {

class RateLearner {
 public:
  static constexpr double kBeta = 0.85;   // the rate after a refusal, as a share of the accepted rate
  // After a probe past a ceiling that the episode measured again (within kConfirmedWithin): the limit is
  // known, and the decrease only drains the probe's excess.
  static constexpr double kBetaConfirmed = 0.93;
  static constexpr double kConfirmedWithin = 0.1;
  // Within an episode's regain, a measure this far below the ceiling is that episode's dip, not the limit: a
  // halved limit is first measured 10-15% low (44 of 49, 430 of 500) and must stand.
  static constexpr double kDipFall = 0.2;
  // A limit that rose: measured past a proven ceiling by more than this share of it. Not less: a fixed window's
  // last-second count straddles its turn while the climb passes the limit (59/s of 50), and a drop of only
  // kBetaConfirmed from that stays above the limit.
  static constexpr double kRoseBy = 0.25;
  // Refused at a rate this little below the ceiling, or a quarter of it above: the hold (or the regain's end, or the
  // climb's first 0.3 s past it), not the climb past.
  static constexpr double kHeldWithin = 0.02;
  static constexpr double kCubic = 0.05;  // growth: rate = ceiling x (1 + kCubic (t - K)^3), t in seconds:
                                          // back at the ceiling after K = 1.44 s, twice it 2.7 s later
  static constexpr double kFloor = 0.2;   // requests per second, never less
  static constexpr double kSlowStartFrom = 1.0;     // requests per second at least, when slow start begins
  static constexpr double kSlowStartShare = 0.5;    // of what was accepted before the first refusal
  static constexpr double kSlowStartDoublingS = 0.5;
  static constexpr double kEpisodeGraceS = 0.25;
  static constexpr double kProbeShare = 0.01;  // of the requests a cycle sends at the ceiling, its refusals
  static constexpr double kMaxPlateauS = 1.5;     // the longest hold at the ceiling before the cubic climbs past it
  static constexpr double kProvenPlateauS = 0.5;  // a plateau at least this long proves its ceiling
  static constexpr double kLockOutFloor = 0.5;  // of the last ceiling measured with acceptances: a lock-out's floor
  // The saturated-span measure (see the header): at least this many acceptances between an episode's refused
  // sends, over at least kMinSpan, before they say the limiter's rate.
  static constexpr int kSpanMinAccepted = 4;
  // The climb past the ceiling: at most this many requests more in flight each round trip (TCP's window grows
  // by one segment): a slope of kGrowthPerRtt / rtt^2 requests per second per second.
  static constexpr double kGrowthPerRtt = 0.1;
  // Yet a doubled limit is found within this many seconds past the plateau, however long the round trip (at
  // 2 s, 0.1 more in flight per round trip would take 400 s to double 10/s; TCP, with one more, 40 s).
  static constexpr double kSlowestDoublingS = 20;
  static constexpr double kRttGain = 0.125;  // of a new round trip in the smoothed one (TCP's alpha, RFC 6298)

  // Time compression of a replay: rates and times below are on a clock `scale` times faster than the one
  // passed in (the constants keep their meaning on the recording's time axis). 1 = real time.
  void setTimeScale(double scale) { scale_ = scale > 0 ? scale : 1; }
  RateLearner() = default;
  explicit RateLearner(double scale) { setTimeScale(scale); }

  bool active() const { return active_; }
  // Forget what was learnt of the old limit (a stated limit rose): the ceiling, the plateau and the episodes;
  // the acceptances of the last seconds and the round trip are facts and stay. When it was learning, slow start
  // begins again at once from the rate it allowed at `now` (at least kSlowStartFrom), doubling until the next
  // refusal or mark: an inactive learner paces nothing, and the headroom of the new limit went out in one
  // burst whose echo a sliding window then refused for a second (a doubled 500/s window measured at 239/s).
  // Inactive stays inactive; the time scale is kept.
  void restart(TimePoint now);
  // Still doubling towards the first ceiling (no episode has measured one yet).
  bool slowStarting() const { return active_ && slowStart_; }
  // Requests per second allowed at `now`; 0 while no refusal has been seen (nothing to pace by).
  double rate(TimePoint now) const;
  // The accepted rate the last episode measured (0 before the second one): what the limit seems to be.
  double ceiling() const { return ceiling_; }
  // An accepted request, answered at `now`; `sentAt` when known (the saturated-span measure below needs it).
  void onSuccess(TimePoint now, std::optional<TimePoint> sentAt = std::nullopt);
  // A refusal of a request sent at `sentAt`. True when it began a new episode (the rate went down).
  // rateHint: a rate the upstream's headers suggest (limit / window), 0 when none; slow start begins no
  // lower than kBeta times it.
  bool onRefusal(TimePoint sentAt, TimePoint now, double rateHint = 0);
  // An accepted request whose answer says the quota is spent (a stated remaining that the requests in flight
  // use up): the limit is reached without a refusal, as an ECN mark tells TCP of congestion before a loss. The
  // rate goes down (or slow start begins) as at a refusal, but it is no refused episode. Marks of requests
  // sent before the last decrease belong to it. True when the rate went down.
  bool onMark(TimePoint sentAt, TimePoint now, double rateHint = 0);
  // Episodes in a row with no success between them: 1 for an ordinary refusal, more when nothing gets
  // through at all (a hard refusal, not a rate).
  int refusedEpisodes() const { return refusedEpisodes_; }
  // How long the rate holds at the ceiling before it climbs past it (see the probing budget above), in seconds.
  double plateauS() const { return plateau_ / scale_; }

 private:
  double acceptedWithin(TimePoint now, Duration window);
  // The episode's refused sends span [spanFrom_, spanTo_]; what was accepted between them is the limiter's rate.
  void measureSpan();
  // Acceptances of what was sent between the end of the last episode's grace and `sentAt`, per second; 0 when
  // that span is under kMinSpan or no acceptance came with its send time.
  double sinceLastEpisode(TimePoint sentAt) const;
  long acceptedSent(TimePoint from, TimePoint to) const;  // acceptances sent in [from, to): two binary searches
  void setPlateau();
  // On the dilated clock. A request sent before lastDecrease_ + sameEpisodeGrace belongs to the last episode.
  // `mark`: begun by a mark (onMark), not a refusal.
  bool decrease(TimePoint sentAt, TimePoint now, double rateHint, Duration sameEpisodeGrace, bool mark);
  double rateAt(TimePoint now) const;  // on the dilated clock, per dilated second

  std::deque<TimePoint> ok_;  // successes of the last second
  std::deque<TimePoint> okSent_;  // when the accepted requests of the last two seconds were sent, in order
  // The sends the episode under way saw refused, first and last; none yet while from > to (an episode a mark
  // began has refused nothing: left at the last refused one's, or at zero, a refusal of a send then in flight
  // measured 1,000 acceptances over the whole uptime, a ceiling of 0.01/s, and held the key for 15 s).
  TimePoint spanFrom_ = TimePoint::max(), spanTo_ = TimePoint::min();
  bool active_ = false;
  bool slowStart_ = true;
  double start_ = 0;          // slow start: the rate at t0_
  double threshold_ = 0;      // slow start: doubling up to this rate, then cubic growth beyond it
  double ceiling_ = 0;        // cubic: the accepted rate at the last episode
  double beta_ = kBeta;       // cubic: the last decrease, as a share of the ceiling
  TimePoint t0_{};
  TimePoint lastDecrease_{};
  Duration grace_{};          // of the last episode
  long okSinceDecrease_ = 0;
  double lastMeasured_ = 0;  // the ceiling of the last episode measured clear of a lock-out
  bool lockedOut_ = false;   // the last episode came with nothing accepted since the one before
  // The last episode measured, clear of a lock-out, a ceiling fallen from the one before or risen above it by
  // kRoseBy (or, within a second of it, confirmed the one such an episode measured)
  bool lastMoved_ = false;
  bool lastEcho_ = false;    // the last episode was a fall's echo (kept the ceiling)
  bool lastLockOut_ = false;  // the last episode was a lock-out: its ceiling a guess, no measure to dip from
  bool lastSteady_ = false;   // the last episode confirmed a measured ceiling: a fall from it is no dip
  // The ceiling before the last episode's small rise (a measure up to kConfirmedWithin above a proven plateau's
  // ceiling, taken); 0 when the last episode made none.
  double raisedFrom_ = 0;
  // A small rise's own hold was refused: such rises are a straddle, and a proven ceiling stays through them,
  // until the limit moves.
  bool smallRiseIsStraddle_ = false;
  double fellFrom_ = 0;      // the ceiling the last fall (a move down) came from, and when it fell
  TimePoint fellAt_{};
  TimePoint resumedAt_{};    // the first acceptance after the last lock-out
  long refusalsSinceDecrease_ = 0;  // of the episode under way, the one that began it included
  double plateau_ = 0;              // dilated seconds at the ceiling before the cubic's climb past it
  // The climb's proof that the limit rose (see kRoseBy above): when it came and the rate then; none while
  // roseRate_ is 0.
  TimePoint roseAt_{};
  double roseRate_ = 0;
  int refusedEpisodes_ = 0;
  double rttS_ = 0;  // smoothed round trip of accepted requests, dilated seconds; 0 before the first
  double scale_ = 1;
};

}  // namespace tg
