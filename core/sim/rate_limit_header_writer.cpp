#include "rate_limit_header_writer.h"

#include "time_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tg {
namespace {

std::string whole(double v) { return std::to_string(static_cast<long long>(std::floor(std::max(0.0, v)))); }
double ceilS(double s) { return std::ceil(std::max(0.0, s) - 1e-9); }
double ceilMs(double s) { return std::ceil(std::max(0.0, s) * 1000 - 1e-6) / 1000; }

// Absolute reset as the next whole wall-clock second at or after now + s; returns {epoch second, wait told}.
std::pair<std::time_t, double> absoluteReset(double wallNowS, double s) {
  const double at = std::ceil(wallNowS + std::max(0.0, s) - 1e-9);
  return {static_cast<std::time_t>(at), at - wallNowS};
}

std::string httpDate(std::time_t t) { return formatUtc(EpochMs(t) * 1000, UtcStyle::HttpDate); }
std::string rfc3339(std::time_t t) { return formatUtc(EpochMs(t) * 1000, UtcStyle::Iso); }

}  // namespace

RateLimitHeaderWriter::RateLimitHeaderWriter(SimDialect dialect, bool retryAfter, RetryAfterFormat format)
    : dialect_(dialect), retryAfter_(retryAfter && dialect != SimDialect::None), format_(format) {}

std::string RateLimitHeaderWriter::goDuration(double seconds) {
  long long ms = static_cast<long long>(std::ceil(std::max(0.0, seconds) * 1000 - 1e-6));
  if (ms == 0) return "0s";
  if (ms < 1000) return std::to_string(ms) + "ms";
  const long long h = ms / 3600000, m = (ms / 60000) % 60, secMs = ms % 60000;
  std::string s = std::to_string(secMs / 1000);
  if (secMs % 1000) {
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03lld", secMs % 1000);
    std::string f = frac;
    while (f.back() == '0') f.pop_back();
    s += f;
  }
  std::string out;
  if (h) out += std::to_string(h) + "h";
  if (h || m) out += std::to_string(m) + "m";
  return out + s + "s";
}

double RateLimitHeaderWriter::write(const RateLimitHeaderInput& in, HeaderList& out) const {
  using namespace simheader;
  const LimitDecision& r = in.requests;
  const std::optional<LimitDecision>& t = in.tokens;
  // Wait told by the reset of each dimension (after this dialect's rounding).
  double resetToldRequests = 0, resetToldTokens = 0;
  const long long windowWhole = std::max(1LL, std::llround(in.windowS));

  switch (dialect_) {
    case SimDialect::XRateLimit:
      resetToldRequests = ceilS(r.resetInS);
      out.emplace_back(kXLimit, whole(r.limit));
      out.emplace_back(kXRemaining, whole(r.remaining));
      out.emplace_back(kXReset, whole(resetToldRequests));
      break;
    case SimDialect::OpenAi:
      resetToldRequests = ceilMs(r.resetInS);
      out.emplace_back(kOpenAiLimitRequests, whole(r.limit));
      out.emplace_back(kOpenAiRemainingRequests, whole(r.remaining));
      out.emplace_back(kOpenAiResetRequests, goDuration(r.resetInS));
      if (t) {
        resetToldTokens = ceilMs(t->resetInS);
        out.emplace_back(kOpenAiLimitTokens, whole(t->limit));
        out.emplace_back(kOpenAiRemainingTokens, whole(t->remaining));
        out.emplace_back(kOpenAiResetTokens, goDuration(t->resetInS));
      }
      break;
    case SimDialect::Anthropic: {
      const auto [at, told] = absoluteReset(in.wallNowS, r.resetInS);
      resetToldRequests = told;
      out.emplace_back(kAnthropicRequestsLimit, whole(r.limit));
      out.emplace_back(kAnthropicRequestsRemaining, whole(r.remaining));
      out.emplace_back(kAnthropicRequestsReset, rfc3339(at));
      if (t) {
        const auto [tat, ttold] = absoluteReset(in.wallNowS, t->resetInS);
        resetToldTokens = ttold;
        out.emplace_back(kAnthropicTokensLimit, whole(t->limit));
        out.emplace_back(kAnthropicTokensRemaining, whole(t->remaining));
        out.emplace_back(kAnthropicTokensReset, rfc3339(tat));
      }
      break;
    }
    case SimDialect::GitHub: {
      const auto [at, told] = absoluteReset(in.wallNowS, r.resetInS);
      resetToldRequests = told;
      out.emplace_back(kXLimit, whole(r.limit));
      out.emplace_back(kXRemaining, whole(r.remaining));
      out.emplace_back(kGitHubUsed, whole(std::floor(r.limit) - std::floor(r.remaining)));
      out.emplace_back(kXReset, std::to_string(static_cast<long long>(at)));
      out.emplace_back(kGitHubResource, in.group);
      break;
    }
    case SimDialect::Ietf:
      resetToldRequests = ceilS(r.resetInS);
      out.emplace_back(kIetfLimit, whole(r.limit));
      out.emplace_back(kIetfRemaining, whole(r.remaining));
      out.emplace_back(kIetfReset, whole(resetToldRequests));
      out.emplace_back(kIetfPolicy, whole(r.limit) + ";w=" + std::to_string(windowWhole));
      break;
    case SimDialect::IetfStructured:
      resetToldRequests = ceilS(r.resetInS);
      out.emplace_back(kIetfPolicy, "\"" + in.group + "\";q=" + whole(r.limit) + ";w=" + std::to_string(windowWhole));
      out.emplace_back(kIetfRateLimit,
                       "\"" + in.group + "\";r=" + whole(r.remaining) + ";t=" + whole(resetToldRequests));
      break;
    case SimDialect::None:
    case SimDialect::RetryAfter:
      break;
  }
  if (!in.limited) return 0;

  if (retryAfter_) {
    switch (format_) {
      case RetryAfterFormat::Seconds: {
        const double s = std::max(1.0, ceilS(in.retryAfterS));
        out.emplace_back(kRetryAfter, whole(s));
        return s;
      }
      case RetryAfterFormat::HttpDate: {
        const auto [at, told] = absoluteReset(in.wallNowS, std::max(in.retryAfterS, 1.0));
        out.emplace_back(kRetryAfter, httpDate(at));
        return told;
      }
      case RetryAfterFormat::Ms: {
        const double s = std::max(0.001, ceilMs(in.retryAfterS));
        out.emplace_back(kRetryAfterMs, std::to_string(std::llround(s * 1000)));
        out.emplace_back(kRetryAfter, whole(std::max(1.0, ceilS(in.retryAfterS))));
        return s;
      }
    }
  }
  if (dialect_ == SimDialect::None || dialect_ == SimDialect::RetryAfter) return 0;
  double told = 0;
  if (in.requestsBlocked) told = std::max(told, resetToldRequests);
  if (in.tokensBlocked) told = std::max(told, t ? resetToldTokens : 0.0);
  return told;
}

}  // namespace tg
