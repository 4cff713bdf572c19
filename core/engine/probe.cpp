#include "probe.h"

#include "curl_options.h"
#include "json_text.h"
#include "quota_verdict.h"
#include "rate_limit_header_parser.h"
#include "request_safety.h"
#include "stats.h"
#include "types.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_set>
#include <vector>

namespace tg {
namespace {

constexpr int kPollMs = 50;
// After any 429 the next step waits at least this long, so a limiter without headers drains between steps.
constexpr double kCoolDownS = 1.0;
// The span between the first and last refusal-then-acceptance must be this long, with this many accepted in
// it, to count as a sustained rate.
constexpr double kMinSustainedSpanS = 0.5;
constexpr long kMinSustainedAccepted = 10;
// A bisection ceiling above the sustained rate an overloaded step measured: room for that measure's noise.
constexpr double kSustainedHeadroom = 1.1;
// A sustained rate below this share of a rate that ran clean is a lockout's trickle, not a limit.
constexpr double kLockoutShare = 0.5;
// In-flight limit: refusals at fewer accepted in flight than N may be this rare, acceptances above N this rare,
// and accepted latency under overload at most this many times the clean steps' (more is a queue: a delayed
// leaky bucket, whose in-flight count is the symptom of its rate).
constexpr double kInFlightRefusalQuantile = 0.05;
constexpr double kInFlightAcceptAboveShare = 0.02;
constexpr double kInFlightLatencyGrowth = 1.5;
constexpr std::size_t kInFlightMinRefusals = 5;
// An in-flight limit of 1 cannot be told from a rate whose accepted requests seldom overlap (one accepted
// per interval, answered within it, refuses exactly what a limit of one would): at least 2.
constexpr int kInFlightMin = 2;
// N in flight at the latency seen must explain the sustained rate measured, within this share. (Open loop
// fills a freed slot up to one send interval late, so the measured rate is a little below N / latency.)
constexpr double kInFlightRateAgreement = 0.2;

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

// One request in flight: its handle and the head of its answer, read for the upstream's wait.
struct Transfer {
  CURL* easy = nullptr;
  HeaderList headers;
  std::size_t index = 0;  // in the step's outcomes
  char error[CURL_ERROR_SIZE] = {0};  // libcurl's own words (the host that did not resolve, the certificate)
};

size_t collectHeader(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(p, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.rfind("HTTP/", 0) == 0) t->headers.clear();  // a new head (after 100 Continue)
  if (const auto colon = line.find(':'); colon != std::string_view::npos && t->headers.size() < 256) {
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    t->headers.emplace_back(std::string(line.substr(0, colon)), std::string(v));
  }
  return size * n;
}

double epochNowS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct EasyFree {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
using EasyPtr = std::unique_ptr<CURL, EasyFree>;
struct MultiFree {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
using MultiPtr = std::unique_ptr<CURLM, MultiFree>;
struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistFree>;

void append(SlistPtr& list, const std::string& line) {
  curl_slist* grown = curl_slist_append(list.get(), line.c_str());
  if (!grown) throw std::runtime_error("probe: out of memory building the request headers");
  list.release();
  list.reset(grown);
}

// One transfer of the probe, or an exception naming the option libcurl refused.
EasyPtr makeEasy(const ProbeOptions& o, const std::string& url, curl_slist* headers, Transfer* t) {
  EasyPtr e(curl_easy_init());
  if (!e) throw std::runtime_error("probe: curl_easy_init failed");
  auto set = [&](CURLoption option, const char* name, auto value) {
    if (CURLcode rc = curl_easy_setopt(e.get(), option, value); rc != CURLE_OK)
      throw std::runtime_error(std::string("probe: ") + name + ": " + curl_easy_strerror(rc));
  };
  set(CURLOPT_URL, "CURLOPT_URL", url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "CURLOPT_PROTOCOLS_STR", kAllowedProtocols);
  if (const char* refused = setNetworkOptions(e.get()))
    throw std::runtime_error(std::string("probe: ") + refused + ": refused by libcurl");
  if (o.method == "GET") {
    set(CURLOPT_HTTPGET, "CURLOPT_HTTPGET", 1L);
  } else if (o.method == "HEAD") {
    set(CURLOPT_NOBODY, "CURLOPT_NOBODY", 1L);
  } else {
    set(CURLOPT_POSTFIELDS, "CURLOPT_POSTFIELDS", o.body.data());  // o outlives every transfer
    set(CURLOPT_POSTFIELDSIZE_LARGE, "CURLOPT_POSTFIELDSIZE_LARGE", static_cast<curl_off_t>(o.body.size()));
    if (o.method != "POST") set(CURLOPT_CUSTOMREQUEST, "CURLOPT_CUSTOMREQUEST", o.method.c_str());
  }
  set(CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER", headers);
  set(CURLOPT_WRITEFUNCTION, "CURLOPT_WRITEFUNCTION", discard);
  set(CURLOPT_HEADERFUNCTION, "CURLOPT_HEADERFUNCTION", collectHeader);
  set(CURLOPT_HEADERDATA, "CURLOPT_HEADERDATA", static_cast<void*>(t));
  set(CURLOPT_PRIVATE, "CURLOPT_PRIVATE", static_cast<void*>(t));
  set(CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL", 1L);
  set(CURLOPT_ERRORBUFFER, "CURLOPT_ERRORBUFFER", t->error);
  // The config's timeouts, as the engine's transfers have them.
  set(CURLOPT_TIMEOUT_MS, "CURLOPT_TIMEOUT_MS", static_cast<long>(o.requestTimeoutS * 1000));
  set(CURLOPT_CONNECTTIMEOUT_MS, "CURLOPT_CONNECTTIMEOUT_MS", static_cast<long>(o.connectTimeoutS * 1000));
  return e;
}

void addHandle(CURLM* multi, EasyPtr e) {
  if (CURLMcode rc = curl_multi_add_handle(multi, e.get()); rc != CURLM_OK)
    throw std::runtime_error(std::string("probe: curl_multi_add_handle: ") + curl_multi_strerror(rc));
  (void)e.release();  // the multi handle's now; cleaned up when its transfer is done
}

}  // namespace

std::string probeBodyProblem(const std::string& method, const std::string& body) {
  if (method == "GET" || method == "HEAD") return body.empty() ? "" : "a " + method + " request sends no body";
  if (!isValidUtf8(body)) return "the body is not UTF-8 text";
  if (const JsonParse j = parseJsonText(body); !body.empty() && !j.ok())
    return "the body is sent as application/json but is not JSON: " + j.error;
  return {};
}

std::string probeProblem(const ProbeOptions& o) {
  if (!(o.stepS >= kMinProbeStepS && o.stepS <= kMaxProbeStepS))
    return "step_s " + std::to_string(o.stepS) + " is not in [0.1, " +
           std::to_string(static_cast<int>(kMaxProbeStepS)) + "]";
  if (o.rates.empty()) return "no rates to step through";
  for (std::size_t i = 0; i < o.rates.size(); ++i) {
    if (!(o.rates[i] > 0 && o.rates[i] <= kMaxProbeRate))
      return "rate " + std::to_string(o.rates[i]) + " is not in (0, " + std::to_string(static_cast<int>(kMaxProbeRate)) + "]";
    if (o.rates[i] * o.stepS < 1)
      return "rate " + std::to_string(o.rates[i]) + "/s offers no request in a step of " + std::to_string(o.stepS) +
             " s";
    if (i > 0 && !(o.rates[i] > o.rates[i - 1])) return "rates must rise, one step after another";
  }
  if (o.maxPerStep < 1) return "max_per_step must be at least 1";
  if (!(o.stop429 > 0 && o.stop429 <= 1)) return "stop_429 must be a share in (0, 1]";
  if (o.method.empty() || o.method.size() > 16 ||
      !std::all_of(o.method.begin(), o.method.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
    return "method \"" + printable(o.method) + "\" is not an HTTP method (A-Z, at most 16 letters)";
  if (o.path.empty() || o.path.front() != '/')
    return "path \"" + printable(o.path) + "\" does not start with /: it would change the host the key goes to";
  // GET and HEAD send none of the default body: only a body that would be sent is checked.
  if (o.method != "GET" && o.method != "HEAD")
    if (std::string p = probeBodyProblem(o.method, o.body); !p.empty()) return p;
  std::string why;
  const std::string base = originOf(o.baseUrl, &why);
  if (base.empty()) return "base_url \"" + printable(o.baseUrl) + "\": " + why;
  const std::string joined = originOf(o.baseUrl + o.path, &why);
  if (joined.empty()) return "path \"" + printable(o.path) + "\": " + why;
  if (joined != base) return "path \"" + printable(o.path) + "\" moves the request from " + base + " to " + joined;
  if (!o.key.secret.empty())  // names the header, never the secret
    if (std::string p = headerProblem(o.key.header, o.key.prefix + o.key.secret, "key \"" + o.key.name + "\"");
        !p.empty())
      return p;
  if (!o.groupHeader.empty())
    if (std::string p = headerProblem(o.groupHeader, o.group, "group_header"); !p.empty()) return p;
  return {};
}

namespace {

// Runs the probe's steps on one multi handle.
class Prober {
 public:
  explicit Prober(const ProbeOptions& o) : o_(o), url_(o.baseUrl + o.path), multi_(curl_multi_init()) {
    if (!multi_) throw std::runtime_error("probe: curl_multi_init failed");
    if (!o.body.empty() && o.method != "GET" && o.method != "HEAD") append(headers_, "Content-Type: application/json");
    append(headers_, "Expect:");
    if (!o.key.secret.empty()) append(headers_, o.key.header + ": " + o.key.prefix + o.key.secret);
    if (!o.groupHeader.empty()) append(headers_, o.groupHeader + ": " + o.group);
    append(headers_, "X-Tollgate-Tier: probe");
  }
  ~Prober() {  // after an exception: transfers still in flight
    for (Transfer* t : live_) {
      curl_multi_remove_handle(multi_.get(), t->easy);
      curl_easy_cleanup(t->easy);
      delete t;
    }
  }
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  // Offers `rate` requests/s open loop for stepS or maxPerStep requests, then waits for the answers.
  ProbeStep step(double rate, bool refine) {
    const double waitedS = waitForUpstream();
    waitUntilEpochS_ = 0;
    saw429_ = false;
    outcomes_.clear();
    long skipped = 0;
    const auto start = Clock::now();
    stepStart_ = start;
    const auto sendEnd = addSaturating(start, fromSeconds(o_.stepS));
    long offered = 0;
    auto dueAt = [&](long i) { return addSaturating(start, fromSeconds(static_cast<double>(i) / rate)); };
    for (;;) {
      const auto now = Clock::now();
      while (offered < o_.maxPerStep && dueAt(offered) <= now && dueAt(offered) < sendEnd) {
        if (active_ < o_.maxInFlight) send(toSeconds(now - start));
        else ++skipped;
        ++offered;
      }
      const bool sending = offered < o_.maxPerStep && dueAt(offered) < sendEnd;
      if (!sending && active_ == 0) break;
      perform();
      if (!sending && active_ == 0) break;
      long waitMs = kPollMs;
      if (sending)
        waitMs = std::clamp<long>(static_cast<long>(toSeconds(dueAt(offered) - Clock::now()) * 1000), 0, kPollMs);
      if (waitMs > 0)
        if (CURLMcode rc = curl_multi_poll(multi_.get(), nullptr, 0, static_cast<int>(waitMs), nullptr); rc != CURLM_OK)
          throw std::runtime_error(std::string("probe: curl_multi_poll: ") + curl_multi_strerror(rc));
    }
    // The span the schedule offered them over.
    ProbeStep s = summarizeProbeStep(rate, static_cast<double>(offered) / rate, outcomes_);
    s.refine = refine;
    s.waitedS = waitedS;
    s.skipped = skipped;
    return s;
  }

 private:
  void send(double sentS) {
    auto t = std::make_unique<Transfer>();
    t->index = outcomes_.size();
    outcomes_.push_back({sentS, sentS, 0, {}});
    EasyPtr e = makeEasy(o_, url_, headers_.get(), t.get());
    t->easy = e.get();
    addHandle(multi_.get(), std::move(e));
    live_.insert(t.release());  // owned through CURLOPT_PRIVATE (and live_) until its answer is read
    ++active_;
  }

  void perform() {
    int running = 0;
    if (CURLMcode rc = curl_multi_perform(multi_.get(), &running); rc != CURLM_OK)
      throw std::runtime_error(std::string("probe: curl_multi_perform: ") + curl_multi_strerror(rc));
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_.get(), &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      CURL* e = m->easy_handle;
      void* priv = nullptr;
      curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
      std::unique_ptr<Transfer> t(static_cast<Transfer*>(priv));
      live_.erase(t.get());
      long status = 0;
      if (m->data.result != CURLE_OK || curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK) status = 0;
      if (t && t->index < outcomes_.size()) {
        ProbeOutcome& out = outcomes_[t->index];
        out.status = static_cast<int>(status);
        if (status == 0) out.error = t->error[0] ? t->error : curl_easy_strerror(m->data.result);
        curl_off_t totalUs = 0;  // libcurl's own send-to-answer time: not delayed by this loop's polling
        out.doneS = curl_easy_getinfo(e, CURLINFO_TOTAL_TIME_T, &totalUs) == CURLE_OK
                        ? out.sentS + static_cast<double>(totalUs) / 1e6
                        : toSeconds(Clock::now() - stepStart_);
      }
      if (status == 429) saw429_ = true;
      if (status != 0 && t) {  // the upstream's word on when to come back
        const double nowS = epochNowS();
        const QuotaVerdict v = decideVerdict(RateLimitHeaderParser::parse(t->headers, nowS), static_cast<int>(status),
                                             nowS, o_.maxWaitS);
        if (v.kind == QuotaVerdict::Kind::Throttled || v.kind == QuotaVerdict::Kind::Exhausted)
          waitUntilEpochS_ = std::max(waitUntilEpochS_, std::min(v.untilEpochS, nowS + o_.maxWaitS));
      }
      curl_multi_remove_handle(multi_.get(), e);
      curl_easy_cleanup(e);
      --active_;
    }
  }

  // Before a step: what the last one's answers asked for (at most maxWaitS), at least kCoolDownS after a 429.
  double waitForUpstream() {
    double waitS = std::isfinite(waitUntilEpochS_) ? waitUntilEpochS_ - epochNowS() : 0;
    if (saw429_) waitS = std::max(waitS, kCoolDownS);
    waitS = std::clamp(waitS, 0.0, o_.maxWaitS);
    if (waitS > 0) std::this_thread::sleep_for(std::chrono::duration<double>(waitS));
    return waitS;
  }

  const ProbeOptions& o_;
  const std::string url_;
  MultiPtr multi_;
  SlistPtr headers_;
  std::unordered_set<Transfer*> live_;
  std::vector<ProbeOutcome> outcomes_;  // of the current step, in send order
  TimePoint stepStart_{};
  int active_ = 0;
  double waitUntilEpochS_ = 0;
  bool saw429_ = false;
};

bool isOk(int status) { return status >= 200 && status < 300; }

}  // namespace

ProbeStep summarizeProbeStep(double rate, double seconds, const std::vector<ProbeOutcome>& outcomes) {
  ProbeStep s;
  s.rate = rate;
  s.seconds = seconds;
  std::vector<ProbeOutcome> o(outcomes);
  std::stable_sort(o.begin(), o.end(), [](const ProbeOutcome& a, const ProbeOutcome& b) { return a.sentS < b.sentS; });
  std::vector<double> latencies;
  std::vector<std::size_t> recoveries;  // indices of acceptances that follow a refusal (other answers skipped)
  int previous = 0;
  for (std::size_t i = 0; i < o.size(); ++i) {
    const int status = o[i].status;
    const bool ok = isOk(status), refused = status == http::kTooManyRequests;
    ++s.sent;
    s.ok += ok;
    s.r429 += refused;
    s.other += !ok && !refused;
    if (!ok && !refused) {
      ++s.otherByStatus[status];
      if (status == 0 && s.noAnswerError.empty()) s.noAnswerError = o[i].error;
    }
    if (o[i].sentS >= seconds / 2) {
      ++s.tailSent;
      s.tailOk += ok;
      s.tail429 += refused;
    }
    if (ok) latencies.push_back(o[i].doneS - o[i].sentS);
    if (ok && previous == http::kTooManyRequests) recoveries.push_back(i);
    if (ok || refused) previous = status;
  }
  s.latencyS = latencies.empty() ? 0 : percentile(latencies, 0.5);
  if (recoveries.size() >= 2) {
    const std::size_t first = recoveries.front(), last = recoveries.back();
    const double span = o[last].sentS - o[first].sentS;
    long accepted = 0;
    for (std::size_t i = first; i < last; ++i) accepted += isOk(o[i].status);
    if (span >= kMinSustainedSpanS && accepted >= kMinSustainedAccepted)
      s.sustainedPerS = static_cast<double>(accepted) / span;
  }
  if (s.r429 > 0) {
    // Client-side counts: an answer still travelling counts as in flight, so acceptances may see one more.
    // Accepted in flight at t = accepted sent before t - accepted answered by t (answers come after sends);
    // two sorted lists keep a long step at n log n.
    std::vector<double> sent, done;
    for (const ProbeOutcome& y : o)
      if (isOk(y.status)) {
        sent.push_back(y.sentS);
        done.push_back(std::max(y.doneS, y.sentS));
      }
    std::sort(done.begin(), done.end());  // `sent` is in send order already
    for (const ProbeOutcome& x : o) {
      const bool ok = isOk(x.status);
      if (!ok && x.status != http::kTooManyRequests) continue;
      const auto before = std::lower_bound(sent.begin(), sent.end(), x.sentS) - sent.begin();
      const auto answered = std::upper_bound(done.begin(), done.end(), x.sentS) - done.begin();
      (ok ? s.inFlightAtAccept : s.inFlightAtRefusal).push_back(static_cast<int>(std::max<std::ptrdiff_t>(0, before - answered)));
    }
  }
  return s;
}

namespace {
struct Overload {
  double sustainedPerS = 0;  // the highest any step measured
  double rate = 0;           // offered in that step
  double latencyS = 0;       // median of the medians of steps with refusals
};
// What a clean step's steady half got through.
double steadyRate(const ProbeStep& s) {
  return s.tailSent ? s.rate * static_cast<double>(s.tailOk) / static_cast<double>(s.tailSent) : 0;
}

Overload overloadOf(const std::vector<ProbeStep>& steps) {
  Overload o;
  double clean = 0;
  for (const ProbeStep& s : steps)
    if (s.clean()) clean = std::max(clean, steadyRate(s));
  std::vector<double> latencies;
  for (const ProbeStep& s : steps) {
    if (s.r429 > 0 && s.latencyS > 0) latencies.push_back(s.latencyS);
    // Far below a rate that ran clean, a "sustained" rate is a lockout's trickle (a window that counts refused
    // requests lets one through now and then), not the limit: a burst's credit cannot make a step clean at
    // twice the rate the limiter sustains.
    if (s.sustainedPerS > o.sustainedPerS && s.sustainedPerS >= kLockoutShare * clean) {
      o.sustainedPerS = s.sustainedPerS;
      o.rate = s.rate;
    }
  }
  o.latencyS = latencies.empty() ? 0 : percentile(latencies, 0.5);
  return o;
}
}  // namespace

int inFlightLimitOf(const std::vector<ProbeStep>& steps) {
  std::vector<double> refusals, cleanLatency;
  std::vector<int> accepts;
  for (const ProbeStep& s : steps) {
    refusals.insert(refusals.end(), s.inFlightAtRefusal.begin(), s.inFlightAtRefusal.end());
    accepts.insert(accepts.end(), s.inFlightAtAccept.begin(), s.inFlightAtAccept.end());
    if (s.latencyS > 0 && s.r429 == 0) cleanLatency.push_back(s.latencyS);
  }
  if (refusals.size() < kInFlightMinRefusals || accepts.empty() || cleanLatency.empty()) return 0;
  const int n = static_cast<int>(std::floor(percentile(refusals, kInFlightRefusalQuantile)));
  if (n < kInFlightMin) return 0;
  const auto above = std::count_if(accepts.begin(), accepts.end(), [n](int c) { return c > n; });
  if (static_cast<double>(above) > kInFlightAcceptAboveShare * static_cast<double>(accepts.size())) return 0;
  const Overload o = overloadOf(steps);
  if (o.latencyS <= 0 || o.latencyS > kInFlightLatencyGrowth * percentile(cleanLatency, 0.5)) return 0;
  const double allowed = n / o.latencyS;
  if (o.sustainedPerS > 0 && std::abs(o.sustainedPerS - allowed) > kInFlightRateAgreement * allowed) return 0;
  return n;
}

double probeCeiling(const std::vector<ProbeStep>& steps) {
  const Overload o = overloadOf(steps);
  if (const int n = inFlightLimitOf(steps); n > 0) return std::max(o.sustainedPerS, n / o.latencyS);
  return o.sustainedPerS;
}

long ProbeReport::sent() const {
  long n = 0;
  for (const auto& s : steps) n += s.sent;
  return n;
}

void concludeProbe(ProbeReport& r) {
  const Overload over = overloadOf(r.steps);
  r.inFlightLimit = inFlightLimitOf(r.steps);
  r.latencyS = r.inFlightLimit > 0 ? over.latencyS : 0;
  r.hardLimit = probeCeiling(r.steps);
  r.hardRate = over.rate;
  r.softLimit = r.softRate = r.openLoopClean = 0;
  for (const ProbeStep& s : r.steps) {
    if (!s.clean()) continue;
    r.openLoopClean = std::max(r.openLoopClean, steadyRate(s));
    double steady = steadyRate(s);
    if (r.hardLimit > 0) steady = std::min(steady, r.hardLimit);  // clean above it only on burst credit
    if (steady > r.softLimit) {
      r.softLimit = steady;
      r.softRate = s.rate;
    }
  }
  if (r.inFlightLimit > 0) {
    // A client that keeps at most N in flight is never refused, up to N / latency: that is the soft limit.
    // Open loop is refused below it as soon as its send times jitter by more than the slack left.
    r.softLimit = r.inFlightLimit / r.latencyS;
    r.softRate = 0;
  }
  if (r.softLimit > r.hardLimit) {
    r.hardLimit = r.softLimit;
    r.hardRate = r.softRate;
  }
  if (r.hardLimit <= 0)  // nothing clean, nothing sustained: the most any step's steady part got through
    for (const ProbeStep& s : r.steps)
      if (s.tailOkPerS() > r.hardLimit) {
        r.hardLimit = s.tailOkPerS();
        r.hardRate = s.rate;
      }
  char buf[400];
  if (r.inFlightLimit > 0)
    std::snprintf(buf, sizeof buf,
                  "requests in flight: refusals began at %d accepted at once; at %.0f ms per request that allows "
                  "%.1f req/s to a client keeping at most %d in flight (soft and hard); open loop ran clean up to "
                  "%.1f req/s",
                  r.inFlightLimit, 1000 * r.latencyS, r.inFlightLimit / r.latencyS, r.inFlightLimit, r.openLoopClean);
  else
    std::snprintf(buf, sizeof buf, "request rate: refusals follow the rate offered, not the requests in flight");
  r.measured = buf;
}

ProbeReport runProbe(const ProbeOptions& o) {
  if (std::string p = probeProblem(o); !p.empty()) throw std::invalid_argument(p);
  static std::once_flag init;
  static CURLcode initRc = CURLE_OK;
  std::call_once(init, [] { initRc = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (initRc != CURLE_OK) throw std::runtime_error(std::string("probe: curl_global_init: ") + curl_easy_strerror(initRc));
  logNetworkEnvironmentOnce();

  const auto began = Clock::now();
  Prober prober(o);
  ProbeReport report;
  auto finish = [&] {
    concludeProbe(report);
    report.seconds = toSeconds(Clock::now() - began);
    return report;
  };
  double lastClean = 0, refused = 0;
  char why[600];
  for (double rate : o.rates) {
    const ProbeStep s = prober.step(rate, false);
    report.steps.push_back(s);
    if (s.share429() > o.stop429) {
      refused = rate;
      // Above what it sustained under overload (or N in flight allow) the limit cannot be: bisect below that,
      // with room for noise.
      if (const double ceiling = probeCeiling(report.steps); ceiling > lastClean)
        refused = std::min(refused, kSustainedHeadroom * ceiling);
      std::snprintf(why, sizeof why, "%.1f%% 429s at %.1f req/s passed --stop-429 %.1f%%", 100 * s.share429(), rate,
                    100 * o.stop429);
      report.stopped = why;
      break;
    }
    if (s.sent > 0 && s.other * 2 > s.sent) {  // a refusal that is not a rate limit: nothing to learn here
      // What they were: a wrong method (405), a server failing (500) and nothing listening read the same.
      std::string what;
      for (const auto& [status, n] : s.otherByStatus) {
        if (!what.empty()) what += ", ";
        what += std::to_string(n) + " x " +
                (status ? "HTTP " + std::to_string(status)
                        : "no answer" + (s.noAnswerError.empty() ? "" : " (" + s.noAnswerError + ")"));
      }
      const bool wrongAsk = s.otherByStatus.count(400) || s.otherByStatus.count(404) || s.otherByStatus.count(405) ||
                            s.otherByStatus.count(415) || s.otherByStatus.count(422);
      std::snprintf(why, sizeof why, "%ld of %ld answers were neither 2xx nor 429: %s%s", s.other, s.sent,
                    what.c_str(), wrongAsk ? " (a wrong --method, --path or --body?)" : "");
      report.stopped = why;
      // After a clean step this is the upstream failing under the load (503s above 8/s): the rise ends there and
      // what was measured below it stands. With none, nothing was measured.
      if (lastClean > 0) {
        refused = rate;
        break;
      }
      report.failed = true;
      return finish();
    }
    if (s.clean()) lastClean = rate;
  }
  if (report.stopped.empty()) {
    // Refusals under a --stop-429 set high are no clean pass: "the limit is above the last one" would be false.
    const auto most = std::max_element(report.steps.begin(), report.steps.end(),
                                       [](const ProbeStep& a, const ProbeStep& b) { return a.share429() < b.share429(); });
    if (most != report.steps.end() && most->r429 > 0) {
      std::snprintf(why, sizeof why, "no step's 429 share passed --stop-429 %.1f%% (at most %.1f%%, at %.1f req/s)",
                    100 * o.stop429, 100 * most->share429(), most->rate);
      report.stopped = why;
    } else {
      report.stopped = "every rate passed (the limit is above the last one)";
    }
  }
  // Bisect between the last clean rate and the refused one: the soft limit lies between them.
  for (int i = 0; i < o.refineSteps && lastClean > 0 && refused > lastClean * 1.05; ++i) {
    const double mid = (lastClean + refused) / 2;
    const ProbeStep s = prober.step(mid, true);
    report.steps.push_back(s);
    if (s.clean()) lastClean = mid;
    else refused = mid;
  }
  return finish();
}

std::string formatProbeTable(const ProbeReport& r) {
  std::string out =
      "  rate/s  step    waited_s  seconds     sent    ok/s  429_share  other  skipped  steady_429  sustained/s\n";
  char buf[240];
  for (const auto& s : r.steps) {
    std::snprintf(buf, sizeof buf, "%8.1f  %-6s  %8.1f  %7.1f  %7ld  %6.1f  %8.1f%%  %5ld  %7ld  %9.1f%%  %11s\n", s.rate,
                  s.refine ? "refine" : "rise", s.waitedS, s.seconds, s.sent, s.okPerS(), 100 * s.share429(), s.other,
                  s.skipped, 100 * s.tailShare429(),
                  s.sustainedPerS > 0 ? std::to_string(static_cast<int>(std::lround(s.sustainedPerS))).c_str() : "-");
    out += buf;
  }
  out += "stopped: " + r.stopped + "\n";
  if (r.inFlightLimit > 0)  // both derived from N / latency: no step offered them
    std::snprintf(buf, sizeof buf,
                  "soft limit (%d in flight at %.0f ms, never refused):                   %.1f req/s\n"
                  "hard limit (the same, or the highest rate sustained under overload):   %.1f req/s\n",
                  r.inFlightLimit, 1000 * r.latencyS, r.softLimit, r.hardLimit);
  else
    std::snprintf(buf, sizeof buf,
                  "soft limit (highest rate clean in its steady half, at most the sustained): %.1f req/s (offered %.1f/s)\n"
                  "hard limit (highest rate sustained under overload, burst spent):          %.1f req/s (offered %.1f/s)\n",
                  r.softLimit, r.softRate, r.hardLimit, r.hardRate);
  out += buf;
  // Nothing measured (the command exits 1): no verdict on what binds either.
  if (!r.failed) out += "what binds: " + r.measured + "\n";
  std::snprintf(buf, sizeof buf, "cost: %ld requests in %.1f s\n", r.sent(), r.seconds);
  out += buf;
  return out;
}

}  // namespace tg
