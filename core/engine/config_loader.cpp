#include "config_loader.h"

#include "json_text.h"
#include "request_safety.h"
#include "secret.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace tg {
namespace {

constexpr const char* kSimUrl = "sim";
constexpr double kBig = 1e12;
constexpr int kMinResponseBytes = 1024;

BreakerConfig readBreakerFields(JsonObjectReader& r) {
  BreakerConfig b;
  b.windowS = r.number("window_s", b.windowS, 0.1, 3600);
  b.minCalls = r.integer("min_calls", b.minCalls, 1, 1000000);
  b.failureShare = r.number("failure_share", b.failureShare, 0.01, 1.0);
  b.openS = r.number("open_s", b.openS, 0.01, 3600);
  b.halfOpenProbes = r.integer("half_open_probes", b.halfOpenProbes, 1, 1000);
  r.finish();
  return b;
}

// "rate_ceiling": {"requests_per_s": 10, "tokens_per_min": 90000}, either part optional (0 = none).
RateCeilingConfig readRateCeiling(const nlohmann::json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  RateCeilingConfig c;
  c.requestsPerS = r.number("requests_per_s", 0, 0, kBig);
  c.tokensPerMin = r.number("tokens_per_min", 0, 0, kBig);
  r.finish();
  return c;
}

KeyConfig readKey(JsonObjectReader& r, bool simulated) {
  KeyConfig k;
  k.name = r.requiredString("name");
  if (hasControlBytes(k.name)) r.fail("name", "expected a key name without control characters (tab, CR, LF, ESC, ...)");
  k.env = r.string("env", "");
  k.header = r.string("header", k.header);
  k.prefix = r.string("prefix", k.prefix);
  r.finish();
  if (!k.env.empty()) {
    const char* v = std::getenv(k.env.c_str());
    if (v && *v && hasControlBytes(v))  // the value is a secret: never quoted
      r.fail("env", envVariableShown(k.env) + " holds a control character (a CR or LF, as a file saved with "
                    "Windows line ends leaves): a key is sent as one header line");
    if (v && *v) k.secret = v;
    else if (simulated) k.secret = "sim-" + k.name;
    else r.fail("env", envVariableShown(k.env) + " is not set (it holds this key's secret)");
  } else if (simulated) {
    k.secret = "sim-" + k.name;
  }
  return k;
}

GroupConfig readGroup(JsonObjectReader& r) {
  GroupConfig g;
  g.name = r.requiredString("name");
  if (g.name.empty()) r.fail("name", "expected a non-empty group name");
  if (hasControlBytes(g.name))
    r.fail("name", "expected a group name without control characters (tab, CR, LF, ESC, ...)");
  g.baseUrl = r.requiredString("base_url");
  if (g.baseUrl != kSimUrl && g.baseUrl.rfind("http://", 0) != 0 && g.baseUrl.rfind("https://", 0) != 0)
    r.fail("base_url", "expected an http:// or https:// URL, or \"sim\" for the embedded simulator");
  if (std::string why; g.baseUrl != kSimUrl && originOf(g.baseUrl, &why).empty())
    r.fail("base_url", "expected an http:// or https:// URL with a host: " + why);
  while (g.baseUrl.size() > 1 && g.baseUrl.back() == '/') g.baseUrl.pop_back();
  g.concurrency = r.integer("concurrency", g.concurrency, 1, 100000);
  g.minConcurrency = r.integer("min_concurrency", g.minConcurrency, 1, 100000);
  g.adaptive = r.boolean("adaptive", g.adaptive);
  g.requestsPerMinute = r.number("requests_per_minute", 0, 0, kBig);
  g.tokensPerMinute = r.number("tokens_per_minute", 0, 0, kBig);
  if (const auto* rc = r.child("rate_ceiling")) g.rateCeiling = readRateCeiling(*rc, r.file(), r.pathOf("rate_ceiling"));
  g.bucketFraction = r.number("bucket_fraction", g.bucketFraction, 0.05, 1.0);
  g.quotaWindowS = r.number("quota_window_s", 0, 0, 86400 * 31);
  if (const auto* b = r.child("breaker")) {
    g.breaker = ConfigLoader::readBreaker(*b, r.file(), r.pathOf("breaker"));
  }
  if (const auto* a = r.child("allowed_hosts")) {
    if (!a->is_array()) r.fail("allowed_hosts", "expected an array of origins such as \"https://api.example.com\"");
    for (std::size_t i = 0; i < a->size(); ++i) {
      const auto& h = (*a)[i];
      if (!h.is_string() || (h.get<std::string>().rfind("http://", 0) != 0 && h.get<std::string>().rfind("https://", 0) != 0))
        throw ConfigError(r.file(), r.pathOf("allowed_hosts") + "/" + std::to_string(i),
                          "expected an http:// or https:// origin (scheme, host and optional port)");
      g.allowedHosts.push_back(h.get<std::string>());
    }
  }
  if (const auto* h = r.child("headers")) {
    if (!h->is_object()) r.fail("headers", "expected an object of header names to string values");
    for (auto it = h->begin(); it != h->end(); ++it) {
      if (!it->is_string()) throw ConfigError(r.file(), r.pathOf("headers") + "/" + it.key(), "expected a string");
      g.headers.emplace_back(it.key(), it->get<std::string>());
      // A credential written inline (an Azure api-key, a bearer token) is scrubbed as a key is: an upstream that
      // echoes request headers would otherwise hand it to results files and gateway clients.
      for (const std::string& secret : headerCredentials(it.key(), g.headers.back().second))
        SecretRegistry::add(secret);
    }
  }
  const auto* keys = r.child("keys");
  if (keys) {
    if (!keys->is_array()) r.fail("keys", "expected an array of keys");
    for (std::size_t i = 0; i < keys->size(); ++i) {
      JsonObjectReader kr((*keys)[i], r.file(), r.pathOf("keys") + "/" + std::to_string(i));
      g.keys.push_back(readKey(kr, g.baseUrl == kSimUrl));
    }
  }
  r.finish();
  return g;
}

std::string envValue(JsonObjectReader& r, const char* field, const std::string& name, const char* holds) {
  if (name.empty()) return {};
  const char* v = std::getenv(name.c_str());
  if (!v || !*v) r.fail(field, envVariableShown(name) + " is not set (it holds " + holds + ")");
  return v;
}

SharedQuotaConfig readSharedQuota(JsonObjectReader& r, const EngineConfig& e) {
  SharedQuotaConfig s;
  s.enabled = r.boolean("enabled", true);
  const std::string address = r.string("redis", s.host + ":" + std::to_string(s.port));
  // Not a URL: "redis://user:password@host" split at its last colon made all of it the host, and the password went
  // into every "Redis unreachable" line, event and /healthz. The address is not quoted.
  if (address.find_first_of("@/?#") != std::string::npos)
    r.fail("redis", "expected host:port, e.g. \"127.0.0.1:6379\", not a URL: a password goes in password_env and a "
                    "user in user_env (the value is not shown)");
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    r.fail("redis", "expected host:port, e.g. \"127.0.0.1:6379\"");
  s.host = address.substr(0, colon);
  // "[::1]:6379", as URLs and the gateway's listen write an IPv6 address (hiredis wants it bare).
  if (s.host.front() == '[' || s.host.back() == ']') {
    if (s.host.size() < 3 || s.host.front() != '[' || s.host.back() != ']' ||
        s.host.find_first_of("[]", 1) != s.host.size() - 1)
      r.fail("redis", "expected [IPv6 address]:port, e.g. \"[::1]:6379\"");
    s.host = s.host.substr(1, s.host.size() - 2);
  }
  const bool hostOk = std::all_of(s.host.begin(), s.host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_' || c == ':' || c == '%';
  });
  if (!hostOk) r.fail("redis", "expected a host name or IP address before the port (letters, digits, '.', '-', ':')");
  char* end = nullptr;
  const long port = std::strtol(address.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) r.fail("redis", "expected a port from 1 to 65535 after the colon");
  s.port = static_cast<int>(port);
  s.database = r.integer("database", 0, 0, 15);
  s.userEnv = r.string("user_env", "");
  s.passwordEnv = r.string("password_env", "");
  s.ns = r.string("namespace", s.ns);
  if (s.ns.empty() || s.ns.find_first_of(" \r\n\t") != std::string::npos)
    r.fail("namespace", "expected a non-empty name without spaces");
  s.instance = r.string("instance", "");
  s.timeoutS = r.number("timeout_ms", s.timeoutS * 1000, 1, 10000) / 1000;
  s.heartbeatS = r.number("heartbeat_ms", s.heartbeatS * 1000, 50, 60000) / 1000;
  s.leaseS = r.number("lease_ms", s.leaseS * 1000, 1, 10000) / 1000;
  s.burstS = r.number("burst_ms", s.burstS * 1000, 1, 60000) / 1000;
  s.p0Reserve = r.number("p0_reserve", s.p0Reserve, 0, 0.9);
  s.fleetActions = r.boolean("fleet_actions", s.fleetActions);
  if (const auto* g = r.child("groups")) {
    if (!g->is_array()) r.fail("groups", "expected an array of group names");
    for (std::size_t i = 0; i < g->size(); ++i) {
      const auto& n = (*g)[i];
      if (!n.is_string() || !e.findGroup(n.get<std::string>()))
        throw ConfigError(r.file(), r.pathOf("groups") + "/" + std::to_string(i),
                          "expected the name of a group defined in /groups");
      s.groups.push_back(n.get<std::string>());
    }
  }
  r.finish();
  s.user = envValue(r, "user_env", s.userEnv, "the Redis ACL user");
  s.password = envValue(r, "password_env", s.passwordEnv, "the Redis password");
  return s;
}

}  // namespace

bool TollgateConfig::usesEmbeddedSimulator() const {
  for (const auto& g : engine.groups)
    if (g.baseUrl == kSimUrl) return true;
  return false;
}

TollgateConfig ConfigLoader::fromFile(const std::string& path) { return fromJson(readJsonFile(path), path); }

TollgateConfig ConfigLoader::fromJson(const nlohmann::json& j, const std::string& file) {
  TollgateConfig c;
  c.file = file;
  JsonObjectReader r(j, file, "");
  EngineConfig& e = c.engine;
  e.name = r.string("name", e.name);
  e.globalConcurrency = r.integer("global_concurrency", e.globalConcurrency, 1, 100000);
  if (const auto* rc = r.child("rate_ceiling")) e.rateCeiling = readRateCeiling(*rc, file, "/rate_ceiling");
  e.requestTimeoutS = r.number("request_timeout_s", e.requestTimeoutS, 0.01, 3600);
  e.connectTimeoutS = r.number("connect_timeout_s", e.connectTimeoutS, 0.01, 600);
  e.snapshotIntervalS = r.number("snapshot_interval_s", e.snapshotIntervalS, 0.05, 10);
  e.maxResponseBytes = r.integer("max_response_bytes", static_cast<int>(e.maxResponseBytes), kMinResponseBytes,
                                 std::numeric_limits<int>::max());
  e.tierHeader = r.string("tier_header", e.tierHeader);
  e.groupHeader = r.string("group_header", e.groupHeader);
  if (const auto* t = r.child("tiers")) {
    JsonObjectReader tr(*t, file, "/tiers");
    for (int i = 0; i < kTierCount; ++i) {
      const std::string name(tierName(static_cast<Tier>(i)));
      if (const auto* one = tr.child(name)) {
        JsonObjectReader o(*one, file, "/tiers/" + name);
        e.tiers[i].capacity = o.integer("capacity", e.tiers[i].capacity, 1, 100000000);
        e.tiers[i].maxWaitS = o.number("max_wait_s", e.tiers[i].maxWaitS, 0.01, 7 * 86400.0);
        o.finish();
      }
    }
    tr.finish();
  }
  if (const auto* rt = r.child("retry")) {
    JsonObjectReader rr(*rt, file, "/retry");
    RetryConfig& rc = e.retry;
    rc.maxAttempts = rr.integer("max_attempts", rc.maxAttempts, 1, 100);
    rc.budgetRatio = rr.number("budget_ratio", rc.budgetRatio, 0, 1);
    rc.budgetMinRetries = rr.integer("budget_min_retries", rc.budgetMinRetries, 0, 1000000);
    rc.baseBackoffS = rr.number("base_backoff_s", rc.baseBackoffS, 0.001, 600);
    rc.maxBackoffS = rr.number("max_backoff_s", rc.maxBackoffS, 0.001, 3600);
    rc.maxServerWaitS = rr.number("max_server_wait_s", rc.maxServerWaitS, 0, 7 * 86400.0);
    rc.default429WaitS = rr.number("default_429_wait_s", rc.default429WaitS, 0.001, 600);
    rc.resendBrokenAnswers = rr.boolean("resend_broken_answers", rc.resendBrokenAnswers);
    rr.finish();
  }
  const auto* groups = r.child("groups");
  if (!groups || !groups->is_array() || groups->empty())
    throw ConfigError(file, "/groups", "expected a non-empty array of groups");
  for (std::size_t i = 0; i < groups->size(); ++i) {
    JsonObjectReader gr((*groups)[i], file, "/groups/" + std::to_string(i));
    GroupConfig g = readGroup(gr);
    if (e.findGroup(g.name)) gr.fail("name", "expected a unique group name (\"" + g.name + "\" appears twice)");
    e.groups.push_back(std::move(g));
  }
  if (const auto* sq = r.child("shared_quota")) {
    JsonObjectReader sr(*sq, file, "/shared_quota");
    e.sharedQuota = readSharedQuota(sr, e);
  }
  if (const auto* s = r.child("simulator")) c.simulator = *s;
  if (const auto* w = r.child("workload")) c.workload = *w;
  if (const auto* gw = r.child("gateway")) c.gateway = *gw;
  if (const auto* h = r.child("history")) {
    JsonObjectReader hr(*h, file, "/history");
    c.historyPath = hr.string("path", "");
    hr.finish();
  }
  r.finish();
  // What the engine checks before it sends anything for a group (key and group headers on one line, hosts),
  // at load: a problem found only there failed every request of a job as "config", with no file or path, and
  // the job's resume then skipped them all once the config was fixed.
  for (std::size_t i = 0; i < e.groups.size(); ++i) {
    GroupConfig g = e.groups[i];
    if (g.baseUrl == kSimUrl) g.baseUrl = "http://127.0.0.1";  // bound to the simulator's port at start
    if (std::string p = groupConfigProblem(g, e, nullptr); !p.empty())
      throw ConfigError(file, "/groups/" + std::to_string(i), p);
  }
  if (c.usesEmbeddedSimulator() && !c.simulator)
    throw ConfigError(file, "/simulator", "expected a simulator section, since a group's base_url is \"sim\"");
  return c;
}

BreakerConfig ConfigLoader::readBreaker(const nlohmann::json& j, const std::string& file, const std::string& path) {
  JsonObjectReader r(j, file, path);
  return readBreakerFields(r);
}

namespace {
// The document without what a reload applies live, to see what else changed; groups keyed by name, so that
// reordering them is no change and a change reads /groups/<name>/... (the array is compared element by element).
nlohmann::json withoutLiveControls(nlohmann::json j) {
  if (!j.is_object()) return j;
  j.erase("global_concurrency");
  j.erase("rate_ceiling");
  auto g = j.find("groups");
  if (g == j.end() || !g->is_array()) return j;
  for (auto& one : *g)
    if (one.is_object()) {
      one.erase("concurrency");
      one.erase("rate_ceiling");
    }
  nlohmann::json byName = nlohmann::json::object();
  for (const auto& one : *g) {
    const auto name = one.is_object() ? one.find("name") : one.end();
    if (!one.is_object() || name == one.end() || !name->is_string() || byName.contains(name->get<std::string>()))
      return j;  // not keyed by a unique name (the loader refuses such a file): compared as an array
    byName[name->get<std::string>()] = one;
  }
  *g = std::move(byName);
  return j;
}
}  // namespace

ConfigReload ConfigLoader::planReload(const nlohmann::json& startedRaw, const EngineConfig& applied,
                                      const nlohmann::json& freshRaw, const EngineConfig& fresh) {
  ConfigReload r;
  if (fresh.globalConcurrency != applied.globalConcurrency) r.globalConcurrency = fresh.globalConcurrency;
  if (!(fresh.rateCeiling == applied.rateCeiling)) r.rateCeiling = fresh.rateCeiling;
  for (const auto& g : fresh.groups) {
    const GroupConfig* before = applied.findGroup(g.name);
    if (!before) continue;  // a new group: a restart's
    if (g.concurrency != before->concurrency) r.groupConcurrency.emplace_back(g.name, g.concurrency);
    if (!(g.rateCeiling == before->rateCeiling)) r.groupRateCeiling.emplace_back(g.name, g.rateCeiling);
  }
  for (const auto& op : nlohmann::json::diff(withoutLiveControls(startedRaw), withoutLiveControls(freshRaw))) {
    std::string path = op.value("path", std::string());
    if (path.empty()) path = "/";  // the whole document (an array or a scalar where an object was)
    if (std::find(r.restartOnly.begin(), r.restartOnly.end(), path) == r.restartOnly.end())
      r.restartOnly.push_back(std::move(path));
  }
  return r;
}

void ConfigLoader::bindSimulator(TollgateConfig& c, const std::string& url) {
  for (auto& g : c.engine.groups)
    if (g.baseUrl == kSimUrl) g.baseUrl = url;
}

}  // namespace tg
