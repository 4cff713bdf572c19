// A unit of work submitted to the engine, and what became of it.
#pragma once

#include "types.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tg {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string id;           // caller's id; echoed in the result
  std::string group;        // quota pool; must exist in the engine config
  Tier tier = Tier::P1;
  std::string method = "POST";
  std::string url;          // absolute, or a path joined to the group's upstream base URL
  HeaderList headers;       // extra headers; the engine adds the key's auth header itself
  std::string body;
  int maxTokens = 0;        // LLM max_tokens; with the prompt size, the token reservation
  double deadlineS = 0;     // max time from submit to first send, 0 = tier default
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
  bool ok() const { return error == ErrorKind::None; }
};

using ResultCallback = std::function<void(const Result&)>;

// One finished HTTP attempt: the raw material of the per-minute request table (history).
struct AttemptRecord {
  EpochMs tsMs = 0;
  std::string group;
  std::string keyFingerprint;  // never the key itself
  std::string endpoint;        // URL path without query
  Tier tier = Tier::P1;
  int status = 0;              // 0 = network error/timeout
  bool rateLimited = false;    // the engine's verdict (a 429, GitHub's 403 at remaining 0, a 503 with
                               // Retry-After): every count of 429s in the program counts this, not status
  double latencyMs = 0;
  bool retry = false;
};

}  // namespace tg
