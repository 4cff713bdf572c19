// The quota picture of one API key: what the upstream last said per dimension (limit, remaining,
// reset), what we predict from it (remaining minus what we sent since, replenished at the reset),
// a local token bucket at a fraction of the known rate (plus, on a continuous refill, what is left spread over a few
// seconds), and any server-directed block (Retry-After).
// Answers "can `cost` go now, and if not, when and why". Time is an argument; not thread-safe.
#pragma once

#include "quota_reading.h"
#include "rate_learner.h"
#include "snapshot.h"
#include "token_bucket.h"

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace tg {

struct QuotaWait {
  Duration wait = Duration::zero();  // zero = may send now
  WaitReason why;                    // why, as a code and its numbers
  std::string reason;                // waitText(why): "Retry-After until 12:03:41", "tokens: 3.2 s"
  bool exhausted = false;            // blocked beyond the cap (daily quota): surfaced, not retried early
  // When the quota is back for every request: >= wait, longer when one request (a probe) may go before the
  // reset. What a shed request is told.
  Duration backIn = Duration::zero();
};

struct QuotaChange {
  Dimension dimension;
  double before, after;
};

class QuotaTracker {
 public:
  // configuredPerMinute: per-dimension quota known from config (0 = learn from headers). windowHintS: the
  // upstream's window length when its headers do not report one (0 = infer from the resets seen).
  QuotaTracker(double bucketFraction, std::array<double, kDimensionCount> configuredPerMinute, TimePoint now,
               double windowHintS = 0);

  // reserve: tokens of the local request bucket that this request must leave behind. Lower tiers pass a
  // small reserve so a P2 flood never takes the token a P0 request arrives for.
  // fleetPaced: a fleet sharing this key paces it through one bucket at the stated rate (core/shared), which
  // keeps any span of a window within the limit; a dimension with a stated rate is then not held on this
  // instance's estimate of remaining (the fleet's sends make it wrong), only on server-directed waits.
  QuotaWait check(std::array<double, kDimensionCount> cost, TimePoint now, EpochMs nowEpoch, double reserve = 0,
                  bool fleetPaced = false);
  double reserveTokens() const;  // ~50 ms of the request rate (at least one token); 0 when no rate is known
  // Which send an answer belongs to (settleProbe): one dispatch pass gives all its sends the same time.
  using SendId = std::uint64_t;
  SendId onSend(std::array<double, kDimensionCount> cost, TimePoint now);

  // Applies what a response said. `inFlightOthers`: requests on this key still in flight, which the
  // server may not have counted yet. `sentAt`: when the request left (the server's figures were taken
  // somewhere between sentAt and now); defaults to now. Returns a limit change worth an event, if any.
  // `inFlightOtherTokens`: the tokens those requests reserved, likewise not yet in the server's count.
  std::optional<QuotaChange> onResponse(const QuotaReading& r, int inFlightOthers, TimePoint now,
                                        EpochMs nowEpoch, std::optional<TimePoint> sentAt = std::nullopt,
                                        double inFlightOtherTokens = 0);
  // Server-directed wait (Retry-After or an exhausted window). exhausted: beyond the cap.
  void blockUntil(TimePoint until, EpochMs untilEpoch, WaitReason why, bool exhausted);
  // A refusal that says nothing of the quota: a bare 429, or a Retry-After (`retryAfterS`, NaN when none)
  // without quota headers. The request rate is learnt from such refusals (RateLearner) and paced by the
  // request bucket; the key is not held, since other requests may go at the learnt rate. Only when nothing
  // got through between episodes (a hard refusal, not a rate) is the key held: max(Retry-After,
  // min(cap, base * 2^(n-2))) for the n-th such episode in a row. Refusals of requests sent before the last
  // decrease (`sentAt`) belong to the same episode. Returns how long the key is held (zero when it is not).
  Duration onRefusal(TimePoint sentAt, double retryAfterS, double baseS, double capS, TimePoint now, EpochMs nowEpoch);
  // A 429 whose headers state the quota. When its Retry-After is well short of the exhausted dimension's
  // reset, the upstream itself says capacity returns before the reset: a sliding window, a token bucket or
  // GCRA reporting "until full", not a fixed window. Such a dimension is marked gradual: a time-to-full dialect
  // (OpenAI, Anthropic) then refills continuously at (limit - remaining) / reset at once, without waiting for
  // responses that prove it (none come while exhausted); any other is paced by the learnt rate instead of
  // being held to its reset, and Retry-After is this request's floor. Returns true when the refusal is of
  // such a dimension (the caller then treats it like a refusal that says nothing of the window: onRefusal).
  // `cost`: the refused request's, to tell which dimension refused it.
  bool onQuotaRefusal(const QuotaReading& r, std::array<double, kDimensionCount> cost, TimePoint now);
  // A whole-second Retry-After (the plain header, >= 1 s) over a shorter reset of the dimension that refused
  // (`cost`: the refused request's): the upstream rounds its wait up to the second, and the stated reset is
  // the finer figure of the same wait (a leaky bucket or GCRA that frees a slot in 40 ms says "1" and resets
  // in 0.24 s). A dimension that refills continuously (a time-to-full reset that onQuotaRefusal found gradual)
  // has the request's cost back sooner than its reset: in (cost - remaining) at the stated refill rate, (limit -
  // remaining) / reset. Returns that time (the latest when several dimensions refused), or nothing when
  // Retry-After is the finer one or no dimension refused. A finer figure refuted (a request sent, at `sentAt`,
  // after such a hold ended was refused too, nothing sent since it began accepted) doubles the hold from then
  // on, up to the Retry-After: a sliding window's counter told a time to full that it does not refill by (the
  // demo's 300 per 60 s refuses until its first window turns), and each 0.27-s hold ended in another refusal,
  // 72 of them by the turn.
  std::optional<double> resetUnderRetryAfter(const QuotaReading& r, std::array<double, kDimensionCount> cost,
                                             TimePoint sentAt, TimePoint now);
  // Whether a dimension the reading states has less left than `cost` (the refused request's): the stated quota
  // explains a refusal, though its remaining is not zero (a request of 500 tokens against 300 left).
  static bool statedShortOf(const QuotaReading& r, std::array<double, kDimensionCount> cost);
  // A refused probe of dimension `dim` that cost `cost`: whether `told` (its answer) shows another one refused.
  static bool refusedByAnother(const QuotaReading* told, int dim, std::array<double, kDimensionCount> cost);
  bool gradual(Dimension d) const { return dims_[static_cast<int>(d)].gradual; }
  // The answer to send `id` (onSend's), after onResponse took its headers (`told`). When it was a probe (see
  // check), an accepted one proves the dimension gradual and a refused one that it waits for its reset (no more
  // probes of it), unless `told` shows that dimension still had the probe's cost and another one short of it
  // (tokens refused); any other answer (an error, a lost connection, a cancel) proves nothing and the next
  // exhaustion may probe again. Any answer to a send that checked a window's turn (check) ends that check.
  enum class ProbeAnswer { Accepted, Refused, Neither };
  void settleProbe(SendId id, ProbeAnswer answer, TimePoint now, const QuotaReading* told = nullptr);
  const RateLearner& learner() const { return learner_; }
  void setTimeScale(double scale) {  // see RateLearner::setTimeScale
    learner_.setTimeScale(scale);
    scale_ = scale > 0 ? scale : 1;
  }
  // What the upstream stated (limit / window) or the config said of dimension d, for a fleet sharing this
  // key: the rate per second at the bucket fraction, and the burst the rest of the limit leaves room for
  // (the same fraction of it), so rate x window + burst never passes the limit. rate 0 when neither is known
  // (a learnt rate is not a statement).
  struct StatedLimit {
    double rate = 0, burst = 0;
  };
  StatedLimit stated(Dimension d) const;
  // An accepted request (sent at `sentAt`), after onResponse took its headers. When those said a gradual
  // dimension's quota is spent (remaining used up by the requests still in flight) while the learnt rate paces
  // it, the learnt rate goes down before the upstream refuses anything (RateLearner::onMark).
  void onSuccess(TimePoint now, std::optional<TimePoint> sentAt = std::nullopt);
  void refund(Dimension d, double amount, TimePoint now);

  DimensionState state(Dimension d, TimePoint now);
  // Capacity left for ordering keys: the smaller of the request-dimension estimates (or bucket).
  double headroom(TimePoint now);
  TimePoint blockedUntil() const { return blockedUntil_; }
  bool exhausted(TimePoint now) const { return exhausted_ && now < blockedUntil_; }

 private:
  struct Dim {
    double limit = kUnknown;
    double remaining = kUnknown;  // estimate: reported minus what we sent since
    bool hasReset = false;
    TimePoint resetAt{};  // latest the reset can be: receipt + reset (what waits honour)
    EpochMs resetAtEpochMs = 0;
    double windowS = 0;       // 0 = unknown
    double maxResetInS = 0;   // longest reset seen: an estimate of the window when none is reported
    bool windowReported = false;
    double configuredPerMinute = 0;
    // Providers whose reset means "until fully replenished" (OpenAI, Anthropic) refill continuously:
    // remaining grows at refillRate between responses instead of jumping at the reset.
    double refillRate = 0;  // units per second, 0 = window semantics (wait for the reset)
    // The header dialect alone does not say how capacity returns: a fixed window speaking OpenAI headers
    // refills at once at the reset. Continuous refill is assumed only after responses showed remaining
    // growing back before the reset, beyond what requests in flight explain.
    int refillEvidence = 0;
    bool timeToFull = false;  // the last reading's reset meant "until full" (its dialect says so)
    double impliedRate = 0;   // time-to-full readings: (limit - remaining) / reset of the last one
    bool gradual = false;     // capacity comes back before the reset (see onQuotaRefusal)
    // Exhausted with the reset far off, one request (the probe) goes before it: a fixed window refuses it
    // (probeRefuted: wait for resets from then on), anything that refills before the reset lets it through.
    bool probeRefuted = false;
    TimePoint earliestResetAt{};    // the soonest the window can turn: sent + reset (- 1 s if told whole)
    TimePoint probeDeadline{};      // the probe proves a refill only when answered before this
    double probeLimit = kUnknown;   // ... and at the limit it was sent under (a raised limit is no refill)
    bool probeDue = false;          // check() let the next request go as the probe
    bool probePending = false;      // sent, not answered yet
    SendId probeId = 0;             // its onSend id
    std::array<double, kDimensionCount> probeCost{};  // what it took of each dimension
    // The last reading's own remaining (not less the requests in flight), and whether the probe left when that
    // less what we sent since was short of its cost: the upstream had said it was spent, so a fixed window refuses
    // it. One sent on our estimate alone (told less in flight, less sent since) may find what was left, and its
    // acceptance proves nothing. Decided as it leaves: its own answer tells a bucket spent again.
    double lastRawRemaining = kUnknown;
    bool probeAfterSpent = false;
    // A window's reset, told in whole seconds, may be up to a second late: "1" all through a 1-s window's last
    // second. Every reading of one window bounds the same turn: after sent + reset - rounding, by received +
    // reset. resetBy is the tightest such bound (the first reading of a window, answered just after it turned,
    // pins the next turn), resetAt only the latest reading's. At resetBy one request checks whether the window
    // turned (its answer tells remaining), instead of holding the key until resetAt.
    TimePoint resetLo{}, resetBy{};
    double lastReported = kUnknown;  // the least remaining this window's readings told (a rise: a new window,
                                     // unless an overtaken reading's, see onResponse)
    TimePoint lastReadingSentAt{};     // when the latest-sent request whose answer told a reset left
    TimePoint lowestAnsweredAt{};      // when the answer that told lastReported came back
    double deepestShare = 0;           // the most remaining any reading told, as a share of its limit
    double lowestTold = kUnknown;      // (requests) what that answer told less the requests then in flight
    double sentAtLowest = 0;           // `sent` when it came back
    bool turnCheckDue = false, turnCheckPending = false;
    SendId turnCheckId = 0;
    // Recent responses, oldest first, for that judgement (a few dozen; older ones age out).
    struct Seen {
      TimePoint sentAt, receivedAt, earliestReset;  // earliestReset: send + the reset it told
      double remaining, limit;
      Duration rounding;  // a reset told in whole seconds may be up to a second late
      double sentBefore;  // `sent` when it was received
      double unseen;      // requests in flight then, which it could not count
    };
    std::deque<Seen> seen;
    TimePoint refilledAt{};
    // Requests the last reading could not count yet, and sent since: answers still to come.
    double unseenAtReading = 0;
    double sentSinceReading = 0;
    double sent = 0;  // units sent since the start (requests: a count of sends)
    TokenBucket bucket;
  };
  void refill(Dim& d, TimePoint now);
  void retuneBucket(Dim& d, TimePoint now);
  double windowOf(const Dim& d) const;  // the window the limit is per: reported, configured or inferred
  static const QuotaScope* pick(const QuotaReading& r, Dimension d);

  double fraction_;
  double windowHintS_ = 0;
  std::array<Dim, kDimensionCount> dims_;
  TimePoint blockedUntil_{};
  EpochMs blockedUntilEpoch_ = 0;
  WaitReason blockReason_;
  bool exhausted_ = false;
  // Upstreams that say nothing of their quota: the rate learnt from their refusals.
  RateLearner learner_;
  // The pause after a refusal (onRefusal): its level doubles per refusal of a request sent after it began.
  int pauseLevel_ = 0;
  double scale_ = 1;  // a replay's time compression (the holds and pauses below are on the recording's clock)
  TimePoint pauseSetAt_{};
  // After a refusal's pause one request goes alone (a probe) until it is answered: a success ends the pause,
  // a refusal doubles it. Without this, every pause ended in a paced burst of rate x latency requests, all
  // refused while the window stayed full (8 a probe at 500/s and 20 ms).
  bool pauseProbeOut_ = false;
  TimePoint pauseProbeSentAt_{};
  SendId pauseProbeId_ = 0;
  SendId sends_ = 0;  // onSend's ids so far
  static constexpr double kPauseProbeLostS = 2.0;  // a probe unanswered this long no longer holds the others
  static constexpr double kPauseCapS = 0.25;       // the longest pause after a refusal (doubling up to it)
  static constexpr double kProbePauseS = 0.05;     // after a probe's refusal: a full 1-s window's last few %
  static constexpr double kMinHoldS = 0.1;            // the shortest hold when nothing gets through
  static constexpr double kStatedRiseRestarts = 1.1;  // a stated request limit this much higher: learn anew
  static constexpr double kDeepShare = 0.5;  // a reading told more of the limit left: a deep window or bucket
  static constexpr double kSurplusSpreadS = 5;  // a continuous refill's stated remaining is spent over this, paced
  static constexpr double kSurplusKeptS = 0.1;  // of the refill (at least the fraction's margin): not spent so (P0's)
  TimePoint refusingSince_{};                      // the first refusal since something last got through
  // resetUnderRetryAfter's holds since a request sent during one was accepted: the last one's span, and how many
  // times a request sent after one ended was refused too.
  struct FinerHold {
    TimePoint startedAt{}, endsAt{};
    int doublings = 0;
  };
  std::optional<FinerHold> finerHold_;
  bool spentAtLastReading_ = false;  // the last reading's remaining of a gradual dimension was used up
  void applyLearnedRate(TimePoint now);
  double rateHint() const;  // limit / window of the request dimension, 0 when no limit is known
  bool unpacedGradual(const Dim& d) const;  // gradual, no window known: the learnt rate alone paces it
};

// "12:03:41" in UTC, for wait reasons.
std::string formatClock(EpochMs ms);

}  // namespace tg
