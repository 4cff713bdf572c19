#include "error_answer.h"

#include "json_text.h"
#include "request_policy.h"
#include "secret.h"

#include <cmath>

namespace tg::gateway {
namespace {

// The SDKs ignore a server wait of 60 s or more and fall back to their own short backoff, which only
// knocks again too early; then we tell them not to retry at all.
constexpr double kSdkMaxHonouredWaitS = 60;

std::string anthropicType(int status) {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";  // Anthropic's errors page; callers switch on the type
    case 429: return "rate_limit_error";
    case 504: return "timeout_error";
    case 503: case 529: return "overloaded_error";
    default: return "api_error";
  }
}

std::string typeFor(const Result& r) {
  if (r.shed != ShedReason::None) return "tollgate_shed_" + std::string(shedReasonName(r.shed));
  // The groups were checked at load: what the engine refuses as "config" here is the client's request (a header
  // name that is not a token), which read as the gateway's own misconfiguration.
  if (r.error == ErrorKind::Config) return "tollgate_bad_request";
  return "tollgate_" + std::string(errorKindName(r.error));
}

}  // namespace

Answer errorAnswer(int status, const std::string& type, const std::string& message, Dialect dialect) {
  Answer a;
  a.status = status;
  nlohmann::json body;
  if (dialect == Dialect::Anthropic) {
    body = {{"type", "error"}, {"error", {{"type", anthropicType(status)}, {"message", message}}}};
  } else {
    body = {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", type}}}};
  }
  a.body = dumpJson(body);
  a.headers.emplace_back("Content-Type", "application/json");
  return a;
}

int statusFor(const Result& r) {
  switch (r.shed) {
    case ShedReason::Deadline:
    case ShedReason::QueueFull:
    case ShedReason::QuotaExhausted: return 429;
    case ShedReason::BreakerOpen:
    case ShedReason::TierPaused:
    case ShedReason::Draining: return 503;
    case ShedReason::None: break;
  }
  switch (r.error) {
    case ErrorKind::None: return r.status > 0 ? r.status : 200;
    case ErrorKind::Network: return 502;
    case ErrorKind::Timeout: return 504;
    case ErrorKind::Http:
    case ErrorKind::RateLimited: return r.status > 0 ? r.status : 502;
    case ErrorKind::QuotaExhausted: return r.status > 0 ? r.status : 429;
    case ErrorKind::CircuitOpen: return 503;
    case ErrorKind::Shed: return 429;
    case ErrorKind::Cancelled: return 503;
    case ErrorKind::Config: return 400;
  }
  return 500;
}

Answer answerFor(const Result& r, Dialect dialect, double clientBudgetS) {
  Answer a;
  const int status = statusFor(r);
  const bool upstreamAnswer = r.status > 0 && r.shed == ShedReason::None &&
                              (r.error == ErrorKind::Http || r.error == ErrorKind::RateLimited ||
                               r.error == ErrorKind::QuotaExhausted || r.error == ErrorKind::None);
  if (upstreamAnswer) {
    // The upstream's own final answer, relayed as it came (its Retry-After is its word), less any key it
    // echoes (an error quoting the request's Authorization).
    a.status = r.status;
    for (const auto& [k, v] : r.headers) relayResponseHeader(a.headers, k, v);
    a.body = SecretRegistry::redact(r.body);
  } else {
    std::string message;
    switch (r.error) {
      case ErrorKind::Network: message = "upstream unreachable: " + r.errorMessage; break;
      case ErrorKind::Timeout: message = "upstream timed out: " + r.errorMessage; break;
      default: message = r.errorMessage.empty() ? std::string(errorKindName(r.error)) : r.errorMessage;
    }
    a = errorAnswer(status, typeFor(r), "tollgate: " + message, dialect);
  }
  if (status == 429 || status == 503) {
    const bool knownWait = std::isfinite(r.retryAfterS) && r.retryAfterS >= 0;
    const bool relayedHasRetryAfter = upstreamAnswer && findHeader(a.headers, "retry-after");
    if (knownWait && !relayedHasRetryAfter) {
      a.headers.emplace_back("Retry-After", std::to_string(static_cast<long long>(std::ceil(r.retryAfterS))));
      a.headers.emplace_back("retry-after-ms", std::to_string(static_cast<long long>(std::llround(r.retryAfterS * 1000))));
    }
    // Unknown wait (only concurrency held it back): no header, the client's own backoff decides.
    const bool useless = r.retryUseless || (knownWait && (r.retryAfterS >= kSdkMaxHonouredWaitS ||
                                                          (std::isfinite(clientBudgetS) && r.retryAfterS > clientBudgetS)));
    if (!findHeader(a.headers, "x-should-retry") && (useless || knownWait))
      a.headers.emplace_back("x-should-retry", useless ? "false" : "true");
  }
  return a;
}

}  // namespace tg::gateway
