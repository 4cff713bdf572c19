// The gateway's answers that are not an upstream's 2xx: an engine Result that failed (shed, breaker, network),
// a final upstream error relayed, or the gateway's own refusal (400/401/404/413). Every answer tells the truth
// about when trying again can help: Retry-After (whole seconds, rounded up) and retry-after-ms (exact) from the
// quota picture, and `x-should-retry: false` where retrying soon would not help (an operator's pause, exhausted quota, a
// wait the SDKs would not honour or longer than the client's own timeout) (the official OpenAI and
// Anthropic SDKs obey it before their own backoff). Bodies take the route dialect's error shape. Pure.
#pragma once

#include "gateway_config.h"
#include "request.h"

#include <string>

namespace tg::gateway {

struct Answer {
  int status = 500;
  HeaderList headers;
  std::string body;
};

// The gateway's own error (type e.g. "tollgate_bad_request"), in the dialect's JSON shape.
Answer errorAnswer(int status, const std::string& type, const std::string& message, Dialect dialect);

// A finished request that did not end in a relayed 2xx. `clientBudgetS` is what remains of the client's own
// timeout (NaN when unknown): a wait longer than that is useless to it.
Answer answerFor(const Result& r, Dialect dialect, double clientBudgetS);

// The status a failed Result maps to (429 quota sheds, 503 breaker/pause/drain, 502 network, 504 timeout...).
int statusFor(const Result& r);

}  // namespace tg::gateway
