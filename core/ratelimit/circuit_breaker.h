// Per-group circuit breaker: closed / open / half-open, tripped by the share of failures (429, 5xx,
// network) over a sliding time window with a minimum call count. Time is an argument; not thread-safe.
#pragma once

#include "engine_config.h"
#include "types.h"

#include <array>
#include <cstdint>
#include <optional>

namespace tg {

struct BreakerTransition {
  BreakerState from, to;
  double failureShare;
  int calls;
};

class CircuitBreaker {
 public:
  explicit CircuitBreaker(BreakerConfig s = {}) : s_(s) {}
  void setSettings(BreakerConfig s) { s_ = s; }

  // May a request be sent now? Moves open -> half-open when the open time has passed (reported
  // through the returned transition). In half-open only `halfOpenProbes` requests go out at once.
  bool allow(TimePoint now, std::optional<BreakerTransition>* transition = nullptr);
  void onSend();  // a request allowed by allow() was sent (counts half-open probes in flight)
  // A sent request whose outcome will never be recorded (its caller cancelled it): frees its probe slot,
  // so a cancelled probe cannot hold the breaker half-open for good.
  void onAbandoned();
  // Records an outcome; returns a transition if the state changed.
  std::optional<BreakerTransition> record(bool failure, TimePoint now);

  BreakerState state() const { return state_; }
  TimePoint openUntil() const { return openUntil_; }
  double failureShare(TimePoint now) const;
  int calls(TimePoint now) const;

 private:
  static constexpr int kSlots = 20;
  struct Slot {
    std::int64_t epoch = -1;
    int calls = 0;
    int failures = 0;
  };
  std::int64_t slotEpoch(TimePoint now) const;
  void totals(TimePoint now, int* calls, int* failures) const;
  void clearWindow() { slots_.fill(Slot{}); }

  BreakerConfig s_;
  BreakerState state_ = BreakerState::Closed;
  std::array<Slot, kSlots> slots_{};
  TimePoint openUntil_{};
  int probesInFlight_ = 0;
  int probeSuccesses_ = 0;
};

}  // namespace tg
