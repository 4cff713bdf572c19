// scheduler_microbench: the engine's pure scheduling logic in operations per second (Google Benchmark).
// Time is synthetic (a TimePoint advanced by 1 us per operation), so no clock reads are measured.
//
//   scheduler_microbench [--benchmark_format=json --benchmark_out=FILE ...]
#include "circuit_breaker.h"
#include "quota_tracker.h"
#include "tier_queues.h"
#include "token_bucket.h"

#include <benchmark/benchmark.h>

#include <string>

using namespace tg;

namespace {

constexpr auto kStep = std::chrono::microseconds(1);
TimePoint t0() { return TimePoint{} + std::chrono::hours(1); }

// A steady queue of `depth` requests: one push and one pop (highest tier first) per iteration.
void BM_TierQueuesPushPop(benchmark::State& state) {
  TierQueues<std::string> q;
  const auto depth = static_cast<int>(state.range(0));
  for (int i = 0; i < depth; ++i) q.push(static_cast<Tier>(i % kTierCount), "request-id-000000", TimePoint::max());
  int i = 0;
  for (auto _ : state) {
    q.push(static_cast<Tier>(i++ % kTierCount), "request-id-000000", TimePoint::max());
    for (Tier t : {Tier::P0, Tier::P1, Tier::P2})
      if (!q.empty(t)) {
        benchmark::DoNotOptimize(q.popFront(t));
        break;
      }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TierQueuesPushPop)->Arg(100)->Arg(100000);

// What the loop does per send: check both dimensions, then account for the send.
void BM_QuotaTrackerCheckOnSend(benchmark::State& state) {
  TimePoint now = t0();
  QuotaTracker q(0.95, {6'000'000, 0}, now);  // 100k/min: never the limiting factor at 1 us steps
  EpochMs epoch = 1'800'000'000'000;
  for (auto _ : state) {
    now += kStep;
    auto w = q.check({1, 16}, now, epoch);
    benchmark::DoNotOptimize(w);
    q.onSend({1, 16}, now);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuotaTrackerCheckOnSend);

void BM_TokenBucketTryAcquire(benchmark::State& state) {
  TimePoint now = t0();
  TokenBucket b(500'000, 1000, now);  // half the offered rate: both outcomes occur
  for (auto _ : state) {
    now += kStep;
    benchmark::DoNotOptimize(b.tryAcquire(1, now));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TokenBucketTryAcquire);

void BM_TokenBucketTimeUntil(benchmark::State& state) {
  TimePoint now = t0();
  TokenBucket b(1000, 10, now);
  for (auto _ : state) {
    now += kStep;
    benchmark::DoNotOptimize(b.timeUntil(5, now));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TokenBucketTimeUntil);

// allow() + onSend() + record(): one request's trip through the breaker; 1 in 10 fails (stays closed).
void BM_CircuitBreakerRecord(benchmark::State& state) {
  TimePoint now = t0();
  CircuitBreaker cb;
  int i = 0;
  for (auto _ : state) {
    now += kStep;
    benchmark::DoNotOptimize(cb.allow(now));
    cb.onSend();
    benchmark::DoNotOptimize(cb.record(++i % 10 == 0, now));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CircuitBreakerRecord);

}  // namespace

BENCHMARK_MAIN();
