// `tollgate probe`: ramps concurrency in steps against one group/key, with no client-side protection,
// to find where the upstream starts refusing. Each step runs closed-loop workers (each sends its next
// request as soon as the last answer arrives) for stepS seconds, then reports QPS reached and 429 share.
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
  std::vector<int> steps{1, 2, 4, 8, 16, 32};
  double stepS = 5;
  std::string groupHeader = "X-RateLimit-Group";
};

struct ProbeStep {
  int concurrency = 0;
  double seconds = 0;
  long sent = 0, ok = 0, r429 = 0, other = 0;
  double qps() const { return seconds > 0 ? static_cast<double>(sent) / seconds : 0; }
  double okPerS() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0; }
  double share429() const { return sent ? static_cast<double>(r429) / static_cast<double>(sent) : 0; }
};

struct ProbeReport {
  std::vector<ProbeStep> steps;
  double softLimit = 0;  // ok/s
  int softConcurrency = 0;
  double hardLimit = 0;  // ok/s
  int hardConcurrency = 0;
};

// The longest step: an hour.
inline constexpr double kMaxProbeStepS = 3600;

// Why `o` may not be sent, or empty: the same checks as the engine's (request_safety.h). The path must start
// with / and keep base_url's origin (the key goes only there), base_url must be http(s), the key and group
// headers must each make one line, and stepS must be in (0, kMaxProbeStepS]. Never quotes the secret.
std::string probeProblem(const ProbeOptions& o);
// Throws std::invalid_argument with probeProblem(o) before sending anything, std::runtime_error when libcurl
// fails.
ProbeReport runProbe(const ProbeOptions& o);
std::string formatProbeTable(const ProbeReport& r);

}  // namespace tg
