// `tollgate probe`: finds where an upstream starts refusing, without the engine's protection. Each step
// offers one request *rate* open loop (requests leave on a fixed schedule, whatever the answers), for stepS
// seconds or maxPerStep requests, whichever ends first. The probe stops at the first step whose 429 share
// passes stop429, then bisects between the last clean rate and the lower of that one and 1.1x the sustained
// rate it measured. Between steps it waits what the upstream asked (Retry-After, a reset with nothing
// remaining), so one step's refusals do not spill into the next, and at least a second after any 429.
//
// What "the limit" is, measured the same way for every limiter:
// - sustained rate of a step: the requests accepted between the first and the last time a refusal was
//   followed by an acceptance (in send order), over that span. Under overload that is the limiter's own rate
//   in whole refill periods: a bucket's burst is spent before it, a fixed window's boundaries are its ends.
// - soft limit: the highest rate whose steady part (the second half of the step) ran with < 1% 429s, no
//   higher than the sustained rate seen (a step clean only on burst credit does not count above it).
// - hard limit: the highest sustained rate seen (or the soft limit when nothing could be measured, e.g. a
//   window that counts refusals locks an overloading client out), never below the soft limit; with an
//   in-flight limit N, N / latency when higher.
// - with an in-flight limit N, the soft limit is N / latency too: what a client keeping at most N in flight
//   gets without a refusal (open loop is refused a little below it once its send times jitter).
// - in-flight limit: when every refusal came with at least N accepted requests in flight and accepted ones
//   with at most N (latency unchanged), the upstream limits concurrency, not rate; N is reported, and the
//   rates are what N allows at the latency seen.
#pragma once

#include "engine_config.h"

#include <map>
#include <string>
#include <vector>

namespace tg {

struct ProbeOptions {
  std::string baseUrl;
  std::string group;
  KeyConfig key;
  std::string path = "/v1/chat/completions";
  std::string method = "POST";
  std::string body = "{\"max_tokens\":1}";  // sent with every method but GET and HEAD
  std::vector<double> rates{5, 10, 20, 40, 80, 160, 320};  // requests per second, one step each, rising
  double stepS = 5;
  long maxPerStep = 2000;   // a step ends after this many requests even before stepS (caps the cost)
  double stop429 = 0.1;     // the first step whose 429 share passes this ends the rising steps
  int refineSteps = 4;      // bisections between the last clean rate and the first refused one
  int maxInFlight = 512;    // open loop, but never more at once than this (a slow upstream): due ones skip
  double maxWaitS = 120;    // the longest wait between steps the upstream may ask for
  std::string groupHeader = "X-RateLimit-Group";
  double connectTimeoutS = 10;  // the config's connect_timeout_s
  double requestTimeoutS = 30;  // one request's longest wait for its answer: the config's request_timeout_s, at most 30
};

// One request of a step: when it left and came back (seconds from the step's start) and the answer
// (0: no answer).
struct ProbeOutcome {
  double sentS = 0;
  double doneS = 0;
  int status = 0;
  std::string error;  // no answer: libcurl's word for why
};

struct ProbeStep {
  double rate = 0;          // offered requests per second
  bool refine = false;      // a bisection step
  double waitedS = 0;       // waited before this step on the upstream's word
  double seconds = 0;       // the span requests were offered over
  long sent = 0, ok = 0, r429 = 0, other = 0;
  std::map<int, long> otherByStatus;  // the answers neither 2xx nor 429, by status (0: none came)
  std::string noAnswerError;          // the first of those with no answer: why
  long skipped = 0;         // due while maxInFlight were open: not sent
  long tailSent = 0, tailOk = 0, tail429 = 0;  // sent in the step's second half: its steady part
  double sustainedPerS = 0;  // accepted rate between the first and last refusal-then-acceptance; 0: none
  double latencyS = 0;       // median send-to-answer of accepted requests
  // Accepted requests in flight when each refusal / acceptance left (only steps with refusals fill them).
  std::vector<int> inFlightAtRefusal, inFlightAtAccept;
  double qps() const { return seconds > 0 ? static_cast<double>(sent) / seconds : 0; }
  double okPerS() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0; }
  double share429() const { return sent ? static_cast<double>(r429) / static_cast<double>(sent) : 0; }
  double tailShare429() const { return tailSent ? static_cast<double>(tail429) / static_cast<double>(tailSent) : 0; }
  double tailOkPerS() const { return seconds > 0 ? static_cast<double>(tailOk) / (seconds / 2) : 0; }
  bool clean() const { return tailSent > 0 && tailShare429() < 0.01; }
};

// Fills a step's counts and measures from its outcomes (any order); `seconds` is the span offered over.
// Pure: time is in the outcomes.
ProbeStep summarizeProbeStep(double rate, double seconds, const std::vector<ProbeOutcome>& outcomes);

struct ProbeReport {
  std::vector<ProbeStep> steps;
  double softLimit = 0;  // req/s
  double softRate = 0;   // offered rate of that step (0: derived from the in-flight limit)
  double hardLimit = 0;  // req/s
  double hardRate = 0;   // offered rate of the step it was measured in
  double openLoopClean = 0;  // the highest rate a step's steady half ran clean at, before any cap
  int inFlightLimit = 0;     // > 0: what binds is requests in flight, this many
  double latencyS = 0;       // median latency of accepted requests at the in-flight limit
  std::string measured;      // what the limits are, in words
  std::string stopped;       // why the rising steps ended
  bool failed = false;       // ended on answers that say nothing of a limit (errors, no answer): no limits found
  long sent() const;         // requests the probe cost
  double seconds = 0;        // wall time, waits included
};

// Soft, hard and in-flight limits from the steps taken so far (report.steps); pure.
void concludeProbe(ProbeReport& report);
// The accepted-in-flight count N at which the upstream refuses, or 0 when refusals do not separate from
// acceptances by it (a rate limit), N is below 2 (not told apart from a rate whose requests seldom overlap),
// accepted requests took much longer than on clean steps (a queue), or N at the latency seen does not explain
// the sustained rate.
int inFlightLimitOf(const std::vector<ProbeStep>& steps);
// The most the upstream allows: the highest sustained rate, or N / latency when N in flight bind (open loop
// measures a little less: a freed slot waits for the next send); 0 when nothing was overloaded.
double probeCeiling(const std::vector<ProbeStep>& steps);

// The longest step: an hour; the shortest a tenth of a second. Each step offers at least one request.
inline constexpr double kMaxProbeStepS = 3600;
inline constexpr double kMinProbeStepS = 0.1;
inline constexpr double kMaxProbeRate = 100000;

// Why `body` may not be sent with `method`, or empty: it goes as application/json, so it must be JSON (and
// UTF-8); GET and HEAD send none, so any body there is a mistake.
std::string probeBodyProblem(const std::string& method, const std::string& body);

// Why `o` may not be sent, or empty: the same checks as the engine's (request_safety.h). The path must start
// with / and keep base_url's origin (the key goes only there), base_url must be http(s), the key and group
// headers must each make one line, the method must be a token, rates must rise within (0, kMaxProbeRate] and
// offer a request a step, stepS must be in [kMinProbeStepS, kMaxProbeStepS], a body sent must be JSON. Never
// quotes the secret.
std::string probeProblem(const ProbeOptions& o);
// Throws std::invalid_argument with probeProblem(o) before sending anything, std::runtime_error when libcurl
// fails.
ProbeReport runProbe(const ProbeOptions& o);
std::string formatProbeTable(const ProbeReport& r);

}  // namespace tg
