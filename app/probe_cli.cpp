// tollgate probe: steps a request rate up against a group's upstream, without the engine's protection,
// and prints where the soft and hard limits showed.
#include "cli.h"

#include "command_line.h"
#include "probe.h"
#include "request_safety.h"
#include "session.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace tg::cli {
namespace {

constexpr const char* kProbeSynopsis =
    "usage: tollgate probe [--config FILE] --group G [--key NAME] [--rates 5,10,20,40,80,160,320] [--step-s 5]\n"
    "                      [--max-per-step 2000] [--stop-429 0.1] [--method POST] [--body JSON] [--path /v1/x]\n"
    "Offers each rate open loop (requests leave on schedule, whatever the answers) for --step-s seconds or\n"
    "--max-per-step requests, stops at the first rate whose 429 share passes --stop-429, then bisects between\n"
    "the last clean rate and the lower of that one and 1.1x the rate sustained there. Between steps it waits\n"
    "what the upstream asked (Retry-After, a reset). Soft limit: the highest rate clean in a step's second half\n"
    "(at most the sustained rate: a burst's credit is not a limit); hard limit: the highest rate sustained under\n"
    "overload. When refusals follow the requests in flight instead of the rate, it says how many bind.\n";

// "5,10,20": rates in (0, kMaxProbeRate], each a whole number word read as every number on the command line is
// (no "4abc", " 5" or "0x10").
std::optional<std::vector<double>> parseRates(const std::string& text, std::string* bad) {
  std::vector<double> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const double v = CommandLine::parseNumber(item).value_or(0);
    if (v <= 0 || v > kMaxProbeRate) {
      *bad = item;
      return std::nullopt;
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int usageError(const std::string& what) {
  std::fprintf(stderr, "tollgate probe: %s\n", what.c_str());
  return kExitUsage;
}

}  // namespace

int probeCommand(const std::vector<std::string>& argv) {
  CommandLine a(kProbeSynopsis,
                {{"--config", "FILE", "upstream config (default: the embedded simulator demo)"},
                 {"--group", "G", "the group to probe (required)"},
                 {"--key", "NAME", "the group's key to use (default: its first)"},
                 {"--rates", "5,10,20", "requests per second of each step, rising"},
                 {"--step-s", "S", "seconds per step, 0.1 to 3600 (default: 5)"},
                 {"--max-per-step", "N", "at most this many requests per step (default: 2000)"},
                 {"--stop-429", "SHARE", "stop rising once a step's 429 share passes this, in (0, 1] (default: 0.1)"},
                 {"--method", "M", "HTTP method (default: POST)"},
                 {"--body", "TEXT", "request body, sent as application/json unless --method is GET or HEAD "
                                    "(default: {\"max_tokens\":1})"},
                 {"--path", "/v1/x", "path requested below the group's base_url (default: /v1/chat/completions)"}});
  if (auto answered = a.parseOrAnswer(argv, "tollgate probe", std::cout, std::cerr)) return *answered;
  std::string err;
  ProbeOptions o;
  if (auto s = a.number("--step-s", &err)) o.stepS = *s;
  if (!err.empty() || o.stepS < kMinProbeStepS || o.stepS > kMaxProbeStepS)
    return usageError(err.empty() ? "--step-s: expected seconds from 0.1 to 3600" : err);
  if (auto n = a.value("--max-per-step")) {
    const auto v = parsePositiveInt(*n, 10'000'000);
    if (!v) return usageError("--max-per-step: expected a whole number from 1 to 10000000, got \"" + printable(*n) + "\"");
    o.maxPerStep = *v;
  }
  if (auto s = a.number("--stop-429", &err)) o.stop429 = *s;
  if (!err.empty() || o.stop429 <= 0 || o.stop429 > 1)
    return usageError(err.empty() ? "--stop-429: expected a share above 0 and at most 1" : err);
  if (auto r = a.value("--rates")) {
    std::string bad;
    auto rates = parseRates(*r, &bad);
    if (!rates)
      return usageError("--rates: expected requests per second above 0 and at most 100000, separated by commas, got \"" +
                        printable(bad) + "\"");
    o.rates = std::move(*rates);
    if (!std::is_sorted(o.rates.begin(), o.rates.end()) ||
        std::adjacent_find(o.rates.begin(), o.rates.end()) != o.rates.end())
      return usageError("--rates: each rate must be higher than the one before");
  }
  if (o.rates.front() * o.stepS < 1) {
    char why[160];
    std::snprintf(why, sizeof why, "--rates: %g/s offers no request in a step of %g s (--step-s)", o.rates.front(),
                  o.stepS);
    return usageError(why);
  }
  if (auto m = a.value("--method")) {
    if (m->empty() || m->size() > 16 || !std::all_of(m->begin(), m->end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
      return usageError("--method: expected an HTTP method in capitals (GET, POST, ...), got \"" + printable(*m) + "\"");
    o.method = *m;
    if (o.method == "GET" || o.method == "HEAD") o.body.clear();
  }
  if (auto b = a.value("--body")) {
    if (std::string p = probeBodyProblem(o.method, *b); !p.empty()) return usageError("--body: " + p);
    o.body = *b;
  }
  if (auto p = a.value("--path")) {
    // Joined after base_url: anything but a path ("@evil.com/x", ".evil.com/x") would change the host the key goes to.
    if (p->empty() || p->front() != '/')
      return usageError("--path: expected a path starting with /, got \"" + printable(*p) + "\"");
    o.path = *p;
  }
  std::unique_ptr<Session> session;
  try {
    TollgateConfig cfg = loadConfig(a.value("--config"));
    cfg.workload.reset();
    // Nor a gateway: the probe stops the engine before it sends, and a port open meanwhile (the demo's 8088)
    // would take services' calls into a stopped engine, or make the probe log that the port is taken.
    cfg.gateway.reset();
    session = std::make_unique<Session>(std::move(cfg));
    session->setHistoryPath({});
    session->start(false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return kExitUsage;
  }
  const auto group = a.value("--group");
  const GroupConfig* g = group ? session->engine().config().findGroup(*group) : nullptr;
  if (!g) {
    std::fprintf(stderr, "tollgate probe: --group: expected one of the configured groups\n");
    return kExitUsage;
  }
  // The same check the engine makes before it sends anything for the group (base_url, key and group headers).
  if (std::string p = groupConfigProblem(*g, session->engine().config(), nullptr); !p.empty()) {
    std::fprintf(stderr, "tollgate probe: group \"%s\": %s\n", printable(g->name).c_str(), p.c_str());
    return kExitUsage;
  }
  o.baseUrl = g->baseUrl;
  o.group = g->name;
  o.groupHeader = session->engine().config().groupHeader;
  o.connectTimeoutS = session->engine().config().connectTimeoutS;
  // Every step waits for its last answer: a config's 120 s (or up to an hour) per straggler is no probe's.
  o.requestTimeoutS = std::min(session->engine().config().requestTimeoutS, 30.0);
  if (!g->keys.empty()) {
    const KeyConfig* key = &g->keys.front();
    if (auto k = a.value("--key")) {
      key = nullptr;
      for (const auto& kc : g->keys)
        if (kc.name == *k) key = &kc;
      if (!key) {
        std::fprintf(stderr, "tollgate probe: --key: no key \"%s\" in group %s\n", printable(*k).c_str(),
                     printable(g->name).c_str());
        return kExitUsage;
      }
    }
    o.key = *key;
  }
  session->engine().stop();  // the probe drives the upstream itself, without the engine's protection
  ProbeReport r;
  try {
    r = runProbe(o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return kExitFailed;
  }
  std::fputs(formatProbeTable(r).c_str(), stdout);
  if (r.failed) {  // no limit was measured: a script must not read the table's zeros as one
    std::fprintf(stderr, "tollgate probe: no limit measured: %s\n", r.stopped.c_str());
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace tg::cli
