// AIMD concurrency limit beneath an operator-set ceiling: grows by one per "window" of successes while
// healthy, shrinks multiplicatively on 429s and on latency growth (queueing upstream), never below the
// minimum nor above the ceiling. Decreases are spaced so one burst of 429s counts once.
//
// An upstream that limits requests in flight rather than a rate (a concurrency-only limit, a bounded queue)
// refuses every request sent while N were in flight and accepts those sent with fewer, whatever the rate.
// Told how many were in flight when each answered request left, this tells such refusals apart: a refusal
// sent with x in flight when the recent acceptances (kEvidenceS) were, all but a few, sent with fewer than x
// is an in-flight limit. The limit is then set to x and held there (no additive growth past it). A step above
// is tried after kCapProbeAccepted acceptances sent while pressing the limit (x - 1 or more in flight, or in a
// round of sends the limit ended with work queued) without such a refusal, or after kCapProbeS of none at all;
// each clean step doubles the next (1, 2, 4, ...), as a rate that doubled needs, and a refusal starts again at 1.
// On a true in-flight limit each probe costs about one refusal, so probing costs about 1 in kCapProbeAccepted
// acceptances. A step that was taken is proven clean by kCapFollowUpAccepted acceptances that pressed it (they
// used the slot it added): the next follows then, not a whole probing spell later. At 25/s a spell is 5 s, and a
// limit that went from 4 in flight back to 8 took three of them, 15 s (the first step is still a spell's wait:
// that is what holding probes to 1 in kCapProbeAccepted costs).
// A limit that falls is not read from a refusal below it: tried (a refusal with fewer in flight than the limit shown,
// half of it or more, lowered it), the fixed window at 500/s, read as a limit of ~10 in flight, had the limit
// pushed down by the refusals of its full window (86% and 64% of goodput, 3-8% 429s). Such refusals are judged by the
// evidence, as any other; at the ceiling the steps stop doubling.
// With a fixed latency a rate limit and an in-flight limit look the same (in flight = rate x
// latency), so a rate limit may be read as one; the doubling steps find a rate that rose as fast as the rate
// learner would. The caller should not read such a refusal as a rate signal: sending slower would not have
// helped.
// Time is an argument; not thread-safe.
#pragma once

#include "types.h"

#include <deque>

namespace tg {

class AdaptiveConcurrency {
 public:
  static constexpr double kEvidenceS = 2.0;        // acceptances this recent are the evidence
  static constexpr int kMinEvidence = 4;           // at least this many of them
  static constexpr double kAtOrAboveShare = 0.05;  // at most this share of them sent with >= x in flight
  static constexpr double kCapProbeS = 5.0;        // a clean spell this long tries one more in flight
  static constexpr int kCapProbeAccepted = 200;    // or this many acceptances pressing the limit: a step more
  static constexpr int kCapFollowUpAccepted = 25;  // a step taken and pressed this often: the next one
  // A limit of one in flight is not told from a rate whose requests seldom overlap (paced below the latency,
  // every acceptance leaves with none in flight): a refusal with fewer in flight is always a rate signal.
  static constexpr int kMinInFlight = 2;

  AdaptiveConcurrency(int ceiling, int minimum, bool adaptive, TimePoint now);

  int limit() const { return adaptive_ ? static_cast<int>(limit_) : ceiling_; }
  int ceiling() const { return ceiling_; }
  // The in-flight limit the upstream showed (0: none seen, or adaptive is off).
  int inFlightCap() const { return adaptive_ ? cap_ : 0; }
  void setCeiling(int ceiling);
  void setAdaptive(bool on) { adaptive_ = on; }
  // Time compression of a replay: the spans above (evidence, probing, spacing of decreases) are on a clock
  // `scale` times faster than the one passed in. 1 = real time.
  void setTimeScale(double scale);

  // inFlightAtSend: requests of the group in flight when this one left, not counting it (-1: unknown).
  // pressing: it left in a round of sends that the limit ended with work still queued. Answers read in a batch
  // free their slots together and the round refills them together, so only the last send of a round leaves
  // with limit - 1 in flight, yet each one pressed the limit (at 500/s only about 1 in 8 counted: a cap of 9
  // read off a rate limit took 4 s to step up).
  void onSuccess(double latencyS, TimePoint now, int inFlightAtSend = -1, bool pressing = false);
  // A 429 the quota picture did not predict. True when it reads as an in-flight limit (see above): the limit
  // is then inFlightAtSend; otherwise the usual multiplicative cut.
  bool onRateLimited(TimePoint now, int inFlightAtSend = -1);
  // Whether a refusal sent with inFlightAtSend others in flight, read now, would be judged on too little: it
  // could be an in-flight limit, but fewer than kMinEvidence acceptances are recent. Answers to requests sent
  // before it may still be on their way (read in a later poll); the caller may wait briefly for them.
  bool wantsEarlierAnswers(int inFlightAtSend, TimePoint now) const;
  void onOverload(TimePoint now);     // 5xx / timeout

 private:
  void decrease(double factor, TimePoint now);
  bool inFlightBound(int inFlightAtSend, TimePoint now);
  // Sent with at least the in-flight limit the upstream already showed: a refusal it explains.
  bool explainedByCap(int inFlightAtSend) const { return cap_ > 0 && inFlightAtSend >= cap_; }
  int ceiling_;
  int minimum_;
  bool adaptive_;
  double limit_;
  double longLatencyS_ = 0;   // slow EWMA: what latency normally is
  double shortLatencyS_ = 0;  // fast EWMA: what it is now
  long samples_ = 0;
  TimePoint lastDecrease_{};
  struct Accepted {
    TimePoint at;
    int inFlight;
  };
  std::deque<Accepted> accepted_;  // of the last kEvidenceS
  int cap_ = 0;                    // in-flight limit the upstream showed; 0 = none
  TimePoint capSetAt_{};
  int pressed_ = 0;   // acceptances sent pressing the cap since it was set or last raised
  int capStep_ = 1;   // the next raise: doubles with each clean one
  bool climbing_ = false;  // a step was taken since the cap was last set by a refusal
  double scale_ = 1;
};

}  // namespace tg
