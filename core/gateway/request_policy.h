// What the gateway makes of a client's request before the engine sees it: who is asking (token), which tier,
// group and deadline, which headers go upstream, and whether the body needs rewriting (the tier named in the
// body, usage asked for on a stream). Pure and thread-safe.
#pragma once

#include "gateway_config.h"
#include "request.h"

#include <array>
#include <string>
#include <string_view>

namespace tg::gateway {

bool equalsIgnoreCase(std::string_view a, std::string_view b);
const std::string* findHeader(const HeaderList& h, std::string_view name);  // first match, case-insensitive

// Request headers never forwarded upstream: hop-by-hop (RFC 9110 7.6.1, plus those the client's Connection
// header names), Host and Content-Length (curl writes its own), Accept-Encoding (we read the body for usage,
// so the upstream answers uncompressed), and Tollgate's own (X-Tollgate-*, X-RateLimit-Group).
bool isDroppedRequestHeader(std::string_view name, const HeaderList& all);
// Response headers not relayed to the client: hop-by-hop, Content-Length and Transfer-Encoding (the gateway
// frames the body itself), Date (the server writes one) and Content-Encoding (the engine decodes the body).
bool isDroppedResponseHeader(std::string_view name);
// A header whose name holds a secret ("X-Seen-sk-...: 1"): dropped whole, since a name cannot be redacted to a
// fingerprint and stay the same header.
bool namesASecret(std::string_view name);
// Appends an upstream's response header to what the client gets, unless it is dropped (above) or its name holds
// a secret; its value redacted (an upstream may echo the key it was sent).
void relayResponseHeader(HeaderList& out, const std::string& name, const std::string& value);

// A redirect's Location as the gateway's client should follow it: one into the upstream the request went to
// (`baseUrl`, absolute or as an absolute path under base_url's path) becomes the same place under the route's
// `prefix` on the gateway, an absolute path, as nginx's proxy_redirect default does; followed as it came, it led
// the client past the gateway (its quota, and a key the gateway adds). Any other Location is returned unchanged.
std::string gatewayLocation(const std::string& location, const std::string& baseUrl, const std::string& prefix);

// The credential a client showed: "Authorization: Bearer T" (else) "x-api-key: T"; empty when none.
std::string_view shownCredential(const HeaderList& headers);

// The gateway token the client showed against every configured client, in time independent of where the first
// difference is; null when none matches. On `auth: tollgate` routes the token is the shown credential; on
// pass-through routes that is the client's own provider key, so the token goes in X-Tollgate-Token
// (`passThrough`).
// Whether the scraper showed the metrics token ("Authorization: Bearer T", as Prometheus's `authorization`
// sends it), compared in constant time. An empty `token` (none configured) lets every scrape in.
bool metricsScrapeAllowed(const std::string& token, const HeaderList& headers);

const ClientConfig* authenticate(const std::vector<ClientConfig>& clients, const HeaderList& headers,
                                 bool passThrough = false);

struct ClientRequest {
  std::string method;
  std::string path;   // raw, without the query
  std::string query;  // raw, without '?'; may be empty
  HeaderList headers;
  std::string body;
};

struct Admission {
  int status = 0;           // 0: send it; otherwise the status to answer with (400) and `error` says why
  std::string error;
  Tier tier = Tier::P1;
  std::string tierSource;   // "header", "body", "route" (for the log and tests)
  std::string group;
  double deadlineS = 0;     // from submit to first send; 0 = the tier's default
  HeaderList forward;       // headers to send upstream
  std::string body;         // the body to send (rewritten only when needed)
  bool stream = false;      // the client asked for a server-sent event stream
  bool dropUsageChunk = false;  // the gateway asked for usage the client did not: the relay removes that chunk
};

// `maxWaitS` is each tier's max_wait_s: a client's deadline is never longer. `consumeAuth`: the client's
// Authorization / x-api-key was the gateway token (not forwarded).
Admission admit(const RouteConfig& route, ClientRequest in, const std::array<double, kTierCount>& maxWaitS,
                bool consumeAuth);

}  // namespace tg::gateway
