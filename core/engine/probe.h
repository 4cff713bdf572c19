// `tollgate probe`: finds where an upstream starts refusing, without the engine's protection. Each step
// offers one request *rate* open loop (requests leave on a fixed schedule, whatever the answers), for stepS
// seconds or maxPerStep requests, whichever ends first. The probe stops at the first step whose 429 share
// passes stop429, then bisects between the last clean rate and that one. Between steps it waits what the
// upstream asked (Retry-After, a reset with nothing remaining), so one step's refusals do not spill into the
// next, and at least a second after any 429.
// soft limit: the highest ok/s of a step with < 1% 429s; hard limit: the highest ok/s reached at all.
#pragma once

#include "engine_config.h"

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
};

struct ProbeStep {
  double rate = 0;          // offered requests per second
  bool refine = false;      // a bisection step
  double waitedS = 0;       // waited before this step on the upstream's word
  double seconds = 0;       // the span requests were offered over
  long sent = 0, ok = 0, r429 = 0, other = 0;
  long skipped = 0;         // due while maxInFlight were open: not sent
  double qps() const { return seconds > 0 ? static_cast<double>(sent) / seconds : 0; }
  double okPerS() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0; }
  double share429() const { return sent ? static_cast<double>(r429) / static_cast<double>(sent) : 0; }
  bool clean() const { return sent > 0 && share429() < 0.01; }
};

struct ProbeReport {
  std::vector<ProbeStep> steps;
  double softLimit = 0;  // ok/s
  double softRate = 0;   // offered rate of that step
  double hardLimit = 0;  // ok/s
  double hardRate = 0;
  std::string stopped;   // why the rising steps ended
};

// The longest step: an hour.
inline constexpr double kMaxProbeStepS = 3600;
inline constexpr double kMaxProbeRate = 100000;

// Why `o` may not be sent, or empty: the same checks as the engine's (request_safety.h). The path must start
// with / and keep base_url's origin (the key goes only there), base_url must be http(s), the key and group
// headers must each make one line, the method must be a token, rates must rise within (0, kMaxProbeRate],
// stepS must be in (0, kMaxProbeStepS]. Never quotes the secret.
std::string probeProblem(const ProbeOptions& o);
// Throws std::invalid_argument with probeProblem(o) before sending anything, std::runtime_error when libcurl
// fails.
ProbeReport runProbe(const ProbeOptions& o);
std::string formatProbeTable(const ProbeReport& r);

}  // namespace tg
