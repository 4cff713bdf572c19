// The quota picture of one API key: what the upstream last said per dimension (limit, remaining,
// reset), what we predict from it (remaining minus what we sent since, replenished at the reset),
// a local token bucket at a fraction of the known rate, and any server-directed block (Retry-After).
// Answers "can `cost` go now, and if not, when and why". Time is an argument; not thread-safe.
#pragma once

#include "quota_reading.h"
#include "rate_learner.h"
#include "snapshot.h"
#include "token_bucket.h"

#include <array>
#include <deque>
#include <optional>
#include <string>

namespace tg {

struct QuotaWait {
  Duration wait = Duration::zero();  // zero = may send now
  std::string reason;                // "Retry-After until 12:03:41", "tokens: 3.2 s", "requests: reset in 0.4 s"
  bool exhausted = false;            // blocked beyond the cap (daily quota): surfaced, not retried early
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
  QuotaWait check(std::array<double, kDimensionCount> cost, TimePoint now, EpochMs nowEpoch, double reserve = 0);
  double reserveTokens() const;  // ~50 ms of the request rate (at least one token); 0 when no rate is known
  void onSend(std::array<double, kDimensionCount> cost, TimePoint now);

  // Applies what a response said. `inFlightOthers`: requests on this key still in flight, which the
  // server may not have counted yet. `sentAt`: when the request left (the server's figures were taken
  // somewhere between sentAt and now); defaults to now. Returns a limit change worth an event, if any.
  std::optional<QuotaChange> onResponse(const QuotaReading& r, int inFlightOthers, TimePoint now,
                                        EpochMs nowEpoch, std::optional<TimePoint> sentAt = std::nullopt);
  // Server-directed wait (Retry-After or an exhausted window). exhausted: beyond the cap.
  void blockUntil(TimePoint until, EpochMs untilEpoch, std::string why, bool exhausted);
  // A refusal that says nothing of the quota: a bare 429, or a Retry-After (`retryAfterS`, NaN when none)
  // without quota headers. The request rate is learnt from such refusals (RateLearner) and paced by the
  // request bucket; the key is not held, since other requests may go at the learnt rate. Only when nothing
  // got through between episodes (a hard refusal, not a rate) is the key held: max(Retry-After,
  // min(cap, base * 2^(n-2))) for the n-th such episode in a row. Refusals of requests sent before the last
  // decrease (`sentAt`) belong to the same episode. Returns how long the key is held (zero when it is not).
  Duration onRefusal(TimePoint sentAt, double retryAfterS, double baseS, double capS, TimePoint now, EpochMs nowEpoch);
  const RateLearner& learner() const { return learner_; }
  void onSuccess(TimePoint now);
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
    // Recent responses, oldest first, for that judgement (a few dozen; older ones age out).
    struct Seen {
      TimePoint sentAt, receivedAt, earliestReset;  // earliestReset: send + the reset it told
      double remaining, limit;
    };
    std::deque<Seen> seen;
    TimePoint refilledAt{};
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
  std::string blockReason_;
  bool exhausted_ = false;
  // Upstreams that say nothing of their quota: the rate learnt from their refusals.
  RateLearner learner_;
  void applyLearnedRate(TimePoint now);
};

// "12:03:41" in UTC, for wait reasons.
std::string formatClock(EpochMs ms);

}  // namespace tg
