#include "circuit_breaker.h"

namespace tg {

std::int64_t CircuitBreaker::slotEpoch(TimePoint now) const {
  const double slotS = s_.windowS / kSlots;
  return static_cast<std::int64_t>(toSeconds(now.time_since_epoch()) / slotS);
}

void CircuitBreaker::totals(TimePoint now, int* calls, int* failures) const {
  const std::int64_t cur = slotEpoch(now);
  *calls = 0;
  *failures = 0;
  for (const auto& s : slots_) {
    // A slot counts if it lies within the window; slots "from the future" (time went backwards) too.
    if (s.epoch < 0 || s.epoch <= cur - kSlots) continue;
    *calls += s.calls;
    *failures += s.failures;
  }
}

double CircuitBreaker::failureShare(TimePoint now) const {
  int c, f;
  totals(now, &c, &f);
  return c ? static_cast<double>(f) / c : 0.0;
}

int CircuitBreaker::calls(TimePoint now) const {
  int c, f;
  totals(now, &c, &f);
  return c;
}

bool CircuitBreaker::allow(TimePoint now, std::optional<BreakerTransition>* transition) {
  if (state_ == BreakerState::Open) {
    if (now < openUntil_) return false;
    state_ = BreakerState::HalfOpen;
    probesInFlight_ = 0;
    probeSuccesses_ = 0;
    if (transition) *transition = BreakerTransition{BreakerState::Open, BreakerState::HalfOpen, 0, 0};
  }
  if (state_ == BreakerState::HalfOpen) return probesInFlight_ < s_.halfOpenProbes;
  return true;
}

void CircuitBreaker::onSend() {
  if (state_ == BreakerState::HalfOpen) ++probesInFlight_;
}

void CircuitBreaker::onAbandoned() {
  if (state_ == BreakerState::HalfOpen && probesInFlight_ > 0) --probesInFlight_;
}

std::optional<BreakerTransition> CircuitBreaker::record(bool failure, TimePoint now) {
  if (state_ == BreakerState::HalfOpen) {
    if (probesInFlight_ > 0) --probesInFlight_;
    if (failure) {
      state_ = BreakerState::Open;
      openUntil_ = now + fromSeconds(s_.openS);
      return BreakerTransition{BreakerState::HalfOpen, BreakerState::Open, 1.0, 1};
    }
    if (++probeSuccesses_ >= s_.halfOpenProbes) {
      state_ = BreakerState::Closed;
      clearWindow();
      return BreakerTransition{BreakerState::HalfOpen, BreakerState::Closed, 0.0, probeSuccesses_};
    }
    return std::nullopt;
  }
  if (state_ == BreakerState::Open) return std::nullopt;  // late responses of requests sent before the trip

  const std::int64_t cur = slotEpoch(now);
  Slot& slot = slots_[static_cast<std::size_t>(((cur % kSlots) + kSlots) % kSlots)];
  if (slot.epoch != cur) slot = Slot{cur, 0, 0};
  ++slot.calls;
  if (failure) ++slot.failures;

  int c, f;
  totals(now, &c, &f);
  const double share = c ? static_cast<double>(f) / c : 0.0;
  if (c >= s_.minCalls && share >= s_.failureShare) {
    state_ = BreakerState::Open;
    openUntil_ = now + fromSeconds(s_.openS);
    clearWindow();
    return BreakerTransition{BreakerState::Closed, BreakerState::Open, share, c};
  }
  return std::nullopt;
}

}  // namespace tg
