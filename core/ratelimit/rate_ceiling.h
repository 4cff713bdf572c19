// The operator's rate ceiling: requests per second and tokens per minute, each a token bucket that paces
// sends (a burst of a tenth of a second's requests and one second's tokens), beneath whatever the quota
// picture allows. Not thread-safe: owned by the engine loop.
#pragma once

#include "token_bucket.h"
#include "types.h"

namespace tg {

class RateCeiling {
 public:
  RateCeiling() = default;
  RateCeiling(const RateCeilingConfig& c, TimePoint now) { set(c, now); }

  // A zero rate lifts that part of the ceiling. A new ceiling starts with its full (small) burst.
  void set(const RateCeilingConfig& c, TimePoint now);
  const RateCeilingConfig& config() const { return cfg_; }

  // How long a send of `tokens` must wait for the ceiling; zero when it may go now (or there is none).
  // `binding` (optional) is set to the part that holds it longest.
  Duration timeUntil(double tokens, TimePoint now, Dimension* binding = nullptr);
  // Charges a send that started (its estimated tokens).
  void onSend(double tokens, TimePoint now);
  // Charges a send that is going out whatever the ceiling says (libcurl resending on a connection that died):
  // borrowed, so the sends after it wait the longer and the rate over time stays at the ceiling.
  void onResend(double tokens, TimePoint now);
  // Gives back what the estimate overstated once the response says what was used, so the tokens part
  // counts the tokens really spent.
  void refundTokens(double tokens, TimePoint now) { tokens_.refund(tokens, now); }
  // Charges what the estimate understated (borrowed: the sends after it wait the longer).
  void chargeTokens(double tokens, TimePoint now) { tokens_.charge(tokens, now); }

 private:
  RateCeilingConfig cfg_;
  TokenBucket requests_;
  TokenBucket tokens_;
};

}  // namespace tg
