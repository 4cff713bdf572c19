// A unit of work submitted to the engine, and what became of it.
#pragma once

#include "types.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tg {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Names one submitted request for Engine::cancel and Engine::resumeTransfer; never 0.
using RequestHandle = std::uint64_t;

enum class SinkVerdict : std::uint8_t { Accept, Pause, Abort };

// Receives a response while it arrives, for callers that relay it (the gateway). Every call is on the engine
// thread: copy and return, never block.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // The head of a 2xx final response. From here the transfer is committed: it is never retried, and its body
  // goes to onChunk instead of Result::body. Return false to abort it (the request ends Cancelled).
  // Non-2xx responses never reach the sink: they stay buffered so the engine may retry them, and the final
  // one arrives whole in the Result (status, headers, body).
  virtual bool onHead(int status, const HeaderList& headers) = 0;
  // A piece of a committed body, in order. Pause: the transfer stops and this same piece is offered again
  // after Engine::resumeTransfer. Abort: the transfer ends (the request ends Cancelled).
  virtual SinkVerdict onChunk(std::string_view data) = 0;
};

struct Request {
  std::string id;           // caller's id; echoed in the result
  std::string group;        // quota pool; must exist in the engine config
  Tier tier = Tier::P1;
  std::string method = "POST";
  std::string url;          // absolute, or a path joined to the group's upstream base URL
  HeaderList headers;       // extra headers; the engine adds the key's auth header itself
  // Pass-through (the gateway's `auth: pass_through` routes): the caller's own credential, whose header is
  // already in `headers`. The engine then adds no key of the group's; the quota picture is kept for this
  // credential apart (one per key fingerprint). Held in memory only: never logged or stored.
  std::string ownKey;
  std::string client;       // who asked, for history (a gateway client's name); empty for Tollgate's own work
  std::string body;
  int maxTokens = 0;        // LLM max_tokens; with the prompt size, the token reservation
  double deadlineS = 0;     // max time from submit to first send, 0 = tier default
  std::shared_ptr<ResponseSink> sink;  // empty: the whole body arrives in Result::body
};

struct Result {
  std::string id;
  std::string group;
  Tier tier = Tier::P1;
  int status = 0;              // last HTTP status, 0 if none
  int attempts = 0;
  double latencyMs = 0;        // last attempt's transfer time
  double waitMs = 0;           // total time spent queued or waiting to retry
  double totalMs = 0;          // submit to completion
  ErrorKind error = ErrorKind::None;
  std::string errorMessage;    // never contains secrets
  std::string body;            // response body (successful or final failed response)
  std::int64_t tokensUsed = 0; // from the response's usage, else the estimate
  HeaderList headers;          // of the final response (empty when none arrived)
  bool committed = false;      // the body went to Request::sink (Result::body then holds only what usage
                               // counting needed: the last SSE event carrying "usage", else the first 1 MiB)
  ShedReason shed = ShedReason::None;
  // When trying again could succeed, from the quota picture (Retry-After, reset, refill, breaker cool-down);
  // NaN when unknown (an operator's pause). retryUseless: trying again will not help soon (exhausted quota,
  // a permanent error), so a client should not retry on its own.
  double retryAfterS = std::numeric_limits<double>::quiet_NaN();
  bool retryUseless = false;
  bool ok() const { return error == ErrorKind::None; }
};

using ResultCallback = std::function<void(const Result&)>;

// One finished HTTP attempt: the raw material of the per-minute request table (history).
struct AttemptRecord {
  EpochMs tsMs = 0;
  std::string group;
  std::string keyFingerprint;  // never the key itself
  std::string endpoint;        // URL path without query
  std::string client;          // Request::client
  Tier tier = Tier::P1;
  int status = 0;              // 0 = network error/timeout
  bool rateLimited = false;    // the engine's verdict (a 429, GitHub's 403 at remaining 0, a 503 with
                               // Retry-After): every count of 429s in the program counts this, not status
  double latencyMs = 0;
  bool retry = false;
};

}  // namespace tg
