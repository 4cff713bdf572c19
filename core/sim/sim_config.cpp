#include "sim_config.h"

#include "json_text.h"
#include "config_error.h"

#include <arpa/inet.h>

#include <algorithm>

namespace tg {
namespace {

constexpr double kMaxLimit = 1e12;
constexpr double kMaxWindowS = 366.0 * 24 * 3600;
constexpr int kMaxConnections = 1000000;
constexpr double kMaxTimeoutS = 24.0 * 3600;
constexpr double kMaxStreamDelayMs = 600000;  // as latency_ms: ten minutes between events is already absurd
constexpr int kMaxStreamChunks = 10000;       // events are built when the request is answered

LimitAlgorithm parseAlgorithm(const std::string& s) {
  if (s == "sliding-window") return LimitAlgorithm::SlidingWindow;
  if (s == "token-bucket") return LimitAlgorithm::TokenBucket;
  if (s == "gcra") return LimitAlgorithm::Gcra;
  if (s == "leaky-bucket") return LimitAlgorithm::LeakyBucket;
  return LimitAlgorithm::FixedWindow;
}

SimDialect parseDialect(const std::string& s) {
  if (s == "openai") return SimDialect::OpenAi;
  if (s == "anthropic") return SimDialect::Anthropic;
  if (s == "github") return SimDialect::GitHub;
  if (s == "ietf") return SimDialect::Ietf;
  if (s == "ietf-structured") return SimDialect::IetfStructured;
  if (s == "none") return SimDialect::None;
  if (s == "retry-after") return SimDialect::RetryAfter;
  return SimDialect::XRateLimit;
}

std::vector<std::string> stringArray(const nlohmann::json* j, const std::string& file, const std::string& path) {
  std::vector<std::string> out;
  if (!j) return out;
  if (!j->is_array()) throw ConfigError(file, path, "expected an array of strings, got " + std::string(j->type_name()));
  for (std::size_t i = 0; i < j->size(); ++i) {
    const auto& e = (*j)[i];
    if (!e.is_string() || e.get<std::string>().empty())
      throw ConfigError(file, path + "/" + std::to_string(i), "expected a non-empty string, got " + dumpJson(e));
    out.push_back(e.get<std::string>());
  }
  return out;
}

SimGroupConfig parseGroup(const std::string& name, const nlohmann::json& j, const std::string& file,
                          const std::string& path) {
  JsonObjectReader r(j, file, path);
  SimGroupConfig g;
  g.algorithm = parseAlgorithm(
      r.string("algorithm", "fixed-window", {"fixed-window", "sliding-window", "token-bucket", "gcra", "leaky-bucket"}));
  g.limit = r.number("limit", 0, 0, kMaxLimit);
  g.windowS = r.number("window_s", 1, 0.001, kMaxWindowS);
  g.burst = r.number("burst", 0, 0, kMaxLimit);
  g.tokensPerWindow = r.number("tokens_per_window", 0, 0, kMaxLimit);
  g.tokensStartSpent = r.boolean("tokens_start_spent", false);
  g.perKey = r.boolean("per_key", true);
  g.nodelay = r.boolean("nodelay", false);
  g.countRejected = r.boolean("count_rejected", false);
  const double maxConcurrent = r.number("max_concurrent", 0, 0, 1e6);
  g.maxConcurrent = static_cast<int>(maxConcurrent);
  g.paths = stringArray(r.child("paths"), file, r.pathOf("paths"));
  g.userAgent = r.string("user_agent", name);
  if (g.userAgent.empty()) r.fail("user_agent", "expected a non-empty string");
  // Under one request a window no request is ever whole: every one would be refused as too large.
  if (g.limit > 0 && g.limit < 1)
    r.fail("limit", "expected 0 (no limit) or at least 1 request per window; for a slower rate, a longer window_s");
  if (g.burst > 0 && g.burst < 1) r.fail("burst", "expected 0 (the limit) or at least 1 request");
  if (g.tokensPerWindow > 0 && g.tokensPerWindow < 1) r.fail("tokens_per_window", "expected 0 (none) or at least 1");
  if (g.burst > 0 && g.limit == 0) r.fail("burst", "burst needs a limit > 0");
  // A group with no request limit is not limited at all: its tokens would never be counted.
  if (g.tokensPerWindow > 0 && g.limit == 0) r.fail("tokens_per_window", "tokens_per_window needs a limit > 0");
  if (g.tokensStartSpent && g.tokensPerWindow == 0)
    r.fail("tokens_start_spent", "tokens_start_spent needs tokens_per_window > 0");
  if (g.maxConcurrent != maxConcurrent)
    r.fail("max_concurrent", "expected a whole number of requests");
  if (j.contains("nodelay") && g.algorithm != LimitAlgorithm::LeakyBucket)
    r.fail("nodelay", "only the leaky-bucket algorithm delays (nginx limit_req's nodelay)");
  if (g.countRejected && g.algorithm != LimitAlgorithm::FixedWindow && g.algorithm != LimitAlgorithm::SlidingWindow)
    r.fail("count_rejected", "only the window algorithms (fixed-window, sliding-window) count refused requests");
  if (g.countRejected && g.limit == 0) r.fail("count_rejected", "count_rejected needs a limit > 0");
  r.finish();
  return g;
}

}  // namespace

bool isLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  return inet_pton(AF_INET6, host.c_str(), &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

std::string_view simDialectName(SimDialect d) {
  switch (d) {
    case SimDialect::XRateLimit: return "x-ratelimit";
    case SimDialect::OpenAi: return "openai";
    case SimDialect::Anthropic: return "anthropic";
    case SimDialect::GitHub: return "github";
    case SimDialect::Ietf: return "ietf";
    case SimDialect::IetfStructured: return "ietf-structured";
    case SimDialect::None: return "none";
    case SimDialect::RetryAfter: return "retry-after";
  }
  return "?";
}

SimAction SimAction::fromJson(const nlohmann::json& j, const std::string& file, const std::string& path,
                              bool withTime) {
  JsonObjectReader r(j, file, path);
  SimAction a;
  if (withTime) a.atS = r.requiredNumber("at_s", 0, kMaxWindowS);
  const std::string kind =
      r.requiredString("action", {"scale_quota", "set_limit", "errors", "reset_connections", "outage"});
  if (kind == "scale_quota") {
    a.kind = Kind::ScaleQuota;
    a.group = r.string("group", "*");
    a.factor = r.requiredNumber("factor", 0.001, 1000);
  } else if (kind == "set_limit") {
    a.kind = Kind::SetLimit;
    a.group = r.requiredString("group");
    a.limit = r.requiredNumber("limit", 1, kMaxLimit);
  } else if (kind == "errors") {
    a.kind = Kind::Errors;
    a.group = r.string("group", "*");
    a.status = r.integer("status", 503, 400, 599);
    a.share = r.number("share", 1, 0, 1);
    a.durationS = r.requiredNumber("duration_s", 0.001, kMaxWindowS);
  } else if (kind == "reset_connections") {
    a.kind = Kind::ResetConnections;
    a.share = r.number("share", 1, 0, 1);
    a.durationS = r.requiredNumber("duration_s", 0.001, kMaxWindowS);
  } else {
    a.kind = Kind::Outage;
    a.durationS = r.requiredNumber("duration_s", 0.001, kMaxWindowS);
  }
  if (a.group.empty()) r.fail("group", "expected a group name or \"*\"");
  r.finish();
  return a;
}

SimConfig SimConfig::fromJson(const nlohmann::json& j, const std::string& file, const std::string& at) {
  JsonObjectReader r(j, file, at);
  SimConfig c;
  if (const auto* listen = r.child("listen")) {
    JsonObjectReader l(*listen, file, at + "/listen");
    c.host = l.string("host", c.host);
    if (!isLoopbackHost(c.host)) l.fail("host", "expected a loopback host (127.0.0.1, ::1, localhost), got \"" + c.host + "\"");
    c.port = l.integer("port", c.port, 0, 65535);
    l.finish();
  }
  if (const auto* conn = r.child("connections")) {
    JsonObjectReader l(*conn, file, at + "/connections");
    c.connections.maxConnections = l.integer("max", c.connections.maxConnections, 1, kMaxConnections);
    c.connections.requestTimeoutS = l.number("request_timeout_s", c.connections.requestTimeoutS, 0.01, kMaxTimeoutS);
    c.connections.idleTimeoutS = l.number("idle_timeout_s", c.connections.idleTimeoutS, 0.01, kMaxTimeoutS);
    c.connections.writeTimeoutS = l.number("write_timeout_s", c.connections.writeTimeoutS, 0.01, kMaxTimeoutS);
    l.finish();
  }
  c.dialect = parseDialect(r.string(
      "dialect", "x-ratelimit", {"x-ratelimit", "openai", "anthropic", "github", "ietf", "ietf-structured", "none", "retry-after"}));
  c.retryAfter = r.boolean("retry_after", true);
  if (c.dialect == SimDialect::RetryAfter && !c.retryAfter)
    r.fail("retry_after", "dialect \"retry-after\" sends Retry-After and nothing else; for bare 429s use dialect \"none\"");
  const auto fmt = r.string("retry_after_format", "seconds", {"seconds", "http-date", "ms"});
  c.retryAfterFormat = fmt == "ms" ? RetryAfterFormat::Ms
                       : fmt == "http-date" ? RetryAfterFormat::HttpDate
                                            : RetryAfterFormat::Seconds;
  const auto by = r.string("group_by", "header", {"header", "path", "user-agent"});
  c.groupBy = by == "path" ? GroupBy::Path : by == "user-agent" ? GroupBy::UserAgent : GroupBy::Header;
  c.groupHeader = r.string("group_header", c.groupHeader);
  if (c.groupHeader.empty()) r.fail("group_header", "expected a header name");
  c.defaultGroup = r.string("default_group", c.defaultGroup);
  if (c.defaultGroup.empty()) r.fail("default_group", "expected a group name");
  c.earlyGraceMs = r.number("early_grace_ms", c.earlyGraceMs, 0, 10000);
  c.refuseAtOnce = r.boolean("refuse_at_once", c.refuseAtOnce);
  c.seed = static_cast<std::uint64_t>(r.number("seed", 1, 0, 9007199254740992.0));

  if (const auto* groups = r.child("groups")) {
    if (!groups->is_object())
      throw ConfigError(file, at + "/groups", "expected an object of groups, got " + std::string(groups->type_name()));
    for (auto it = groups->begin(); it != groups->end(); ++it) {
      if (it.key().empty() || it.key() == "*")
        throw ConfigError(file, at + "/groups/" + it.key(), "expected a group name (not empty, not \"*\")");
      c.groups[it.key()] = parseGroup(it.key(), it.value(), file, at + "/groups/" + it.key());
    }
  }
  if (const auto* lat = r.child("latency_ms")) {
    JsonObjectReader l(*lat, file, at + "/latency_ms");
    const auto d = l.string("distribution", "fixed", {"fixed", "uniform", "lognormal"});
    c.latency.distribution = d == "uniform"     ? LatencyDistribution::Uniform
                             : d == "lognormal" ? LatencyDistribution::Lognormal
                                                : LatencyDistribution::Fixed;
    c.latency.meanMs = l.number("mean", 0, 0, 600000);
    c.latency.p95Ms = l.number("p95", c.latency.meanMs, 0, 600000);
    if (c.latency.p95Ms < c.latency.meanMs) l.fail("p95", "expected p95 >= mean");
    l.finish();
  }
  c.stream.ttftMs = r.number("stream_ttft_ms", c.stream.ttftMs, 0, kMaxStreamDelayMs);
  c.stream.chunkIntervalMs = r.number("stream_chunk_interval_ms", c.stream.chunkIntervalMs, 0, kMaxStreamDelayMs);
  c.stream.chunks = r.integer("stream_chunks", c.stream.chunks, 0, kMaxStreamChunks);
  if (const auto* sched = r.child("schedule")) {
    if (!sched->is_array())
      throw ConfigError(file, at + "/schedule", "expected an array of actions, got " + std::string(sched->type_name()));
    for (std::size_t i = 0; i < sched->size(); ++i) {
      const std::string path = at + "/schedule/" + std::to_string(i);
      SimAction a = SimAction::fromJson((*sched)[i], file, path, true);
      if (a.group != "*" && a.kind != SimAction::Kind::ResetConnections && a.kind != SimAction::Kind::Outage &&
          !c.groups.count(a.group) && a.group != c.defaultGroup)
        throw ConfigError(file, path + "/group", "expected \"*\" or a group defined in /groups, got \"" + a.group + "\"");
      c.schedule.push_back(a);
    }
    std::stable_sort(c.schedule.begin(), c.schedule.end(),
                     [](const SimAction& a, const SimAction& b) { return a.atS < b.atS; });
  }
  r.finish();
  return c;
}

SimConfig SimConfig::fromFile(const std::string& path) { return fromJson(readJsonFile(path), path); }

SimConfig SimConfig::builtinDefault() {
  SimConfig c;
  c.defaultGroup = "interactive";
  SimGroupConfig interactive;
  interactive.algorithm = LimitAlgorithm::TokenBucket;
  interactive.limit = 20;
  interactive.windowS = 1;
  interactive.paths = {"/v1/chat"};
  interactive.userAgent = "interactive";
  SimGroupConfig batch;
  batch.algorithm = LimitAlgorithm::FixedWindow;
  batch.limit = 100;
  batch.windowS = 10;
  batch.paths = {"/v1/batch"};
  batch.userAgent = "batch";
  c.groups["interactive"] = interactive;
  c.groups["batch"] = batch;
  c.latency = {LatencyDistribution::Uniform, 20, 40};
  return c;
}

}  // namespace tg
