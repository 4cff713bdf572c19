// The `gateway` section of the engine config: where the local gateway listens, who may use it, and which
// URL prefix goes to which group. Parsed and validated by loadGatewayConfig (errors name the JSON path).
#pragma once

#include "config_error.h"
#include "engine_config.h"
#include "types.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tg::gateway {

// A service allowed to call the gateway. Its token comes from an environment variable, is held only in
// memory (registered with the SecretRegistry) and is never written anywhere; metrics and history name the
// client by `name`.
struct ClientConfig {
  std::string name;
  std::string tokenEnv;
  std::string token;
};

enum class RouteAuth : std::uint8_t {
  Tollgate,     // the client shows a gateway token; Tollgate adds the group's own key
  PassThrough,  // the client's Authorization / x-api-key goes upstream; quota is kept per key fingerprint
};

// How a route's upstream speaks: error bodies, streaming usage, the body's priority field.
enum class Dialect : std::uint8_t { OpenAI, Anthropic, Generic };
std::string_view dialectName(Dialect d);

struct RouteConfig {
  std::string prefix;               // "/openai": matches "/openai" and "/openai/...", not "/openaiX"
  std::string group;                // default group; the upstream is the group's base_url
  std::vector<std::string> groups;  // groups X-RateLimit-Group may choose (always includes `group`)
  Tier defaultTier = Tier::P1;
  Dialect dialect = Dialect::OpenAI;
  RouteAuth auth = RouteAuth::Tollgate;
};

struct GatewayConfig {
  bool enabled = false;             // a `gateway` section is present
  std::string listenHost = "127.0.0.1";
  int port = 8088;                  // 0: any free port (tests)
  bool allowNonLoopback = false;    // listening beyond loopback must be asked for explicitly
  std::int64_t maxBodyBytes = 32LL * 1024 * 1024;
  int maxConnections = 4096;
  int idleTimeoutS = 120;           // an idle keep-alive connection is closed after this
  int requestHeadTimeoutS = 30;     // a request head must be whole this long after its request line
  int requestBodyTimeoutS = 120;    // a request body must be whole this long after its head
  std::vector<ClientConfig> clients;  // empty: no token asked (allowed only on loopback)
  // /metrics asks for "Authorization: Bearer <this>" when set (from the environment variable metricsTokenEnv,
  // held only in memory like the clients' tokens); /healthz stays open, for load balancers.
  std::string metricsTokenEnv;
  std::string metricsToken;
  std::vector<RouteConfig> routes;
};

// Reads the section (`j`, at JSON path "/gateway" of `file`) against the engine's groups: every route's
// groups must exist. Tokens are read from their environment variables here; a missing one is an error.
// {"listen": "127.0.0.1:8088", "allow_non_loopback": false, "max_body_bytes": 33554432,
//  "max_connections": 4096, "idle_timeout_s": 120, "request_head_timeout_s": 30, "request_body_timeout_s": 120,
//  "clients": [{"name": "svc-a", "token_env": "TOLLGATE_TOKEN_SVC_A"}], "metrics_token_env": "TOLLGATE_METRICS_TOKEN",
//  "routes": [{"prefix": "/openai", "group": "openai", "groups": ["openai", "openai-batch"],
//              "default_tier": "P1", "dialect": "openai" | "anthropic" | "generic",
//              "auth": "tollgate" | "pass_through"}]}
GatewayConfig loadGatewayConfig(const nlohmann::json& j, const EngineConfig& engine, const std::string& file);

// "127.0.0.1", "::1", "localhost" and anything in 127.0.0.0/8.
bool isLoopbackHost(const std::string& host);

}  // namespace tg::gateway
