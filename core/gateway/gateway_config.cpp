#include "gateway_config.h"

#include "json_text.h"
#include "secret.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace tg::gateway {
namespace {

constexpr std::int64_t kMaxBodyLimit = 4LL * 1024 * 1024 * 1024;  // 4 GiB: a larger limit is a typo

// "host:port", "[v6]:port"; port 0..65535.
void parseListen(JsonObjectReader& r, GatewayConfig& c) {
  const std::string listen = r.string("listen", c.listenHost + ":" + std::to_string(c.port));
  std::string host, port;
  if (!listen.empty() && listen.front() == '[') {
    const auto close = listen.find(']');
    if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
      r.fail("listen", "expected \"host:port\" or \"[ipv6]:port\", e.g. \"127.0.0.1:8088\"");
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
  } else {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos || listen.find(':') != colon)
      r.fail("listen", "expected \"host:port\" or \"[ipv6]:port\", e.g. \"127.0.0.1:8088\"");
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  if (host.empty()) r.fail("listen", "expected a host before the port, e.g. \"127.0.0.1:8088\"");
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) ||
      std::stoi(port) > 65535)
    r.fail("listen", "expected a port from 0 to 65535 after the last ':'");
  c.listenHost = host;
  c.port = std::stoi(port);
}

bool validPrefix(const std::string& p) {
  if (p.size() < 2 || p.front() != '/' || p.back() == '/') return false;
  for (unsigned char ch : p)
    if (ch <= 0x20 || ch >= 0x7f || ch == '?' || ch == '#' || ch == '%') return false;
  return p.find("//") == std::string::npos;
}

}  // namespace

std::string_view dialectName(Dialect d) {
  switch (d) {
    case Dialect::OpenAI: return "openai";
    case Dialect::Anthropic: return "anthropic";
    case Dialect::Generic: return "generic";
  }
  return "?";
}

bool isLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

GatewayConfig loadGatewayConfig(const nlohmann::json& j, const EngineConfig& engine, const std::string& file) {
  if (!j.is_object()) throw ConfigError(file, "/gateway", "expected an object");
  JsonObjectReader r(j, file, "/gateway");
  GatewayConfig c;
  c.enabled = true;
  parseListen(r, c);
  c.allowNonLoopback = r.boolean("allow_non_loopback", false);
  if (!c.allowNonLoopback && !isLoopbackHost(c.listenHost))
    r.fail("listen", "expected a loopback address (127.0.0.1, ::1, localhost): listening on " + c.listenHost +
                         " opens the gateway (and the keys behind it) to the network; set \"allow_non_loopback\": "
                         "true to mean it");
  c.maxBodyBytes = static_cast<std::int64_t>(r.number("max_body_bytes", static_cast<double>(c.maxBodyBytes), 1024,
                                                      static_cast<double>(kMaxBodyLimit)));
  c.maxConnections = r.integer("max_connections", c.maxConnections, 1, 100000);
  c.idleTimeoutS = r.integer("idle_timeout_s", c.idleTimeoutS, 1, 86400);
  c.requestHeadTimeoutS = r.integer("request_head_timeout_s", c.requestHeadTimeoutS, 1, 3600);
  c.requestBodyTimeoutS = r.integer("request_body_timeout_s", c.requestBodyTimeoutS, 1, 3600);

  std::set<std::string> names;
  if (const auto* cl = r.child("clients")) {
    if (!cl->is_array()) r.fail("clients", "expected an array of {\"name\", \"token_env\"}");
    for (std::size_t i = 0; i < cl->size(); ++i) {
      const std::string path = r.pathOf("clients") + "/" + std::to_string(i);
      if (!(*cl)[i].is_object()) throw ConfigError(file, path, "expected an object {\"name\", \"token_env\"}");
      JsonObjectReader cr((*cl)[i], file, path);
      ClientConfig client;
      client.name = cr.requiredString("name");
      if (client.name.empty() || client.name.size() > 64 || hasControlBytes(client.name))
        cr.fail("name", "expected a client name of 1 to 64 characters, without control characters");
      if (!names.insert(client.name).second) cr.fail("name", "expected a unique client name (\"" + client.name + "\" repeats)");
      // The metrics' and history's name for a request no client's token matched: a client so named was counted
      // with the refused ones.
      if (client.name == "anonymous") cr.fail("name", "\"anonymous\" is the name of unauthenticated requests; choose another");
      client.tokenEnv = cr.requiredString("token_env");
      cr.finish();
      const char* v = std::getenv(client.tokenEnv.c_str());
      if (!v || !*v)
        cr.fail("token_env", envVariableShown(client.tokenEnv) + " is not set (it holds this client's gateway token)");
      client.token = v;
      if (client.token.size() < 16)
        cr.fail("token_env", "expected a token of at least 16 characters in " + envVariableShown(client.tokenEnv));
      SecretRegistry::add(client.token);
      c.clients.push_back(std::move(client));
    }
  }
  if (const auto* m = r.child("metrics_token_env")) {
    if (!m->is_string() || m->get<std::string>().empty())
      r.fail("metrics_token_env", "expected the name of an environment variable holding the /metrics token");
    c.metricsTokenEnv = m->get<std::string>();
    const char* v = std::getenv(c.metricsTokenEnv.c_str());
    if (!v || !*v)
      r.fail("metrics_token_env",
             envVariableShown(c.metricsTokenEnv) + " is not set (it holds the token /metrics asks for)");
    c.metricsToken = v;
    if (c.metricsToken.size() < 16 || hasControlBytes(c.metricsToken))
      r.fail("metrics_token_env", "expected a token of at least 16 characters, without control characters, in " +
                                      envVariableShown(c.metricsTokenEnv));
    SecretRegistry::add(c.metricsToken);
  }
  if (c.clients.empty() && !isLoopbackHost(c.listenHost))
    r.fail("clients", "expected at least one client with a token: a gateway beyond loopback must not be open to anyone");

  const auto* routes = r.child("routes");
  if (!routes || !routes->is_array() || routes->empty())
    r.fail("routes", "expected a non-empty array of routes {\"prefix\", \"group\"}");
  std::set<std::string> prefixes;
  for (std::size_t i = 0; i < routes->size(); ++i) {
    const std::string path = r.pathOf("routes") + "/" + std::to_string(i);
    if (!(*routes)[i].is_object()) throw ConfigError(file, path, "expected an object {\"prefix\", \"group\"}");
    JsonObjectReader rr((*routes)[i], file, path);
    RouteConfig route;
    route.prefix = rr.requiredString("prefix");
    if (!validPrefix(route.prefix))
      rr.fail("prefix", "expected a path such as \"/openai\": starts with '/', no trailing '/', no '//', spaces, "
                        "'%', '?' or '#'");
    if (route.prefix == "/metrics" || route.prefix == "/healthz")
      rr.fail("prefix", "expected a prefix other than /metrics and /healthz (the gateway's own)");
    if (!prefixes.insert(route.prefix).second) rr.fail("prefix", "expected a unique prefix (\"" + route.prefix + "\" repeats)");
    route.group = rr.requiredString("group");
    auto known = [&](const std::string& g) {
      return std::any_of(engine.groups.begin(), engine.groups.end(), [&](const GroupConfig& gc) { return gc.name == g; });
    };
    if (!known(route.group)) rr.fail("group", "expected the name of a group in /groups (\"" + route.group + "\" is not one)");
    route.groups.push_back(route.group);
    if (const auto* gs = rr.child("groups")) {
      if (!gs->is_array()) rr.fail("groups", "expected an array of group names");
      for (std::size_t k = 0; k < gs->size(); ++k) {
        const auto& g = (*gs)[k];
        if (!g.is_string() || !known(g.get<std::string>()))
          throw ConfigError(file, rr.pathOf("groups") + "/" + std::to_string(k), "expected the name of a group in /groups");
        if (std::find(route.groups.begin(), route.groups.end(), g.get<std::string>()) == route.groups.end())
          route.groups.push_back(g.get<std::string>());
      }
    }
    const std::string tier = rr.string("default_tier", "P1", {"P0", "P1", "P2"});
    route.defaultTier = *parseTier(tier);
    const std::string dialect = rr.string("dialect", "openai", {"openai", "anthropic", "generic"});
    route.dialect = dialect == "openai" ? Dialect::OpenAI : dialect == "anthropic" ? Dialect::Anthropic : Dialect::Generic;
    const std::string auth = rr.string("auth", "tollgate", {"tollgate", "pass_through"});
    route.auth = auth == "tollgate" ? RouteAuth::Tollgate : RouteAuth::PassThrough;
    rr.finish();
    c.routes.push_back(std::move(route));
  }
  r.finish();
  return c;
}

}  // namespace tg::gateway
