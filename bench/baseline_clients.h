// The clients Tollgate is compared with: small libcurl-multi loops on one thread, a FIFO queue and a fixed
// concurrency per group, no tiers, no quota model. They differ only in what they do after a 429 (or a
// network error):
//   Naive       retry at once (front of the queue)
//   Backoff     exponential backoff with full jitter, U(0, min(cap, base * 2^(n-1))), headers ignored
//   RetryAfter  wait what the 429's Retry-After says (that request only); retry at once when there is none
// Every strategy gives up after maxAttempts attempts, like Tollgate's retry.max_attempts.
#pragma once

#include "bench_support.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgbench {

enum class BaselineStrategy { Naive, Backoff, RetryAfter };
const char* baselineName(BaselineStrategy s);

struct BaselineOptions {
  BaselineStrategy strategy = BaselineStrategy::Naive;
  std::string baseUrl;                  // http://127.0.0.1:<port>
  std::string path = "/v1/chat/completions";
  std::vector<std::string> groups;      // sent as X-RateLimit-Group; index = Arrival::group
  std::vector<std::string> keys;        // per group, sent as "Authorization: Bearer <key>"
  int concurrencyPerGroup = 16;
  int maxAttempts = 6;
  double baseBackoffS = 0.25;
  double maxBackoffS = 10;
  std::uint64_t seed = 7;
};

class BaselineClient {
 public:
  explicit BaselineClient(BaselineOptions options);

  // Drives `arrivals` for durationS seconds of wall time on the calling thread, running `actions` when due,
  // then abandons whatever is still queued or in flight (those requests stay unfinished in the log).
  RunLog run(const std::vector<Arrival>& arrivals, double durationS, std::vector<TimedAction> actions = {});

 private:
  BaselineOptions o_;
};

}  // namespace tgbench
