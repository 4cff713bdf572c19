#include "request_policy.h"

#include "json_text.h"
#include "request_safety.h"
#include "secret.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace tg::gateway {
namespace {

constexpr std::string_view kHopByHop[] = {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                                          "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"};

bool startsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && equalsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

// Whether the comma-separated Connection header names `name` (those headers are hop-by-hop too).
bool namedByConnection(std::string_view name, const HeaderList& all) {
  for (const auto& [k, v] : all) {
    if (!equalsIgnoreCase(k, "connection")) continue;
    std::string_view rest = v;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view token = rest.substr(0, comma);
      while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
      while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
      if (equalsIgnoreCase(token, name)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return false;
}

// Seconds from a header value: a finite positive decimal, else nullopt.
std::optional<double> seconds(const std::string* v) {
  if (!v || v->empty() || v->size() > 32) return std::nullopt;
  char* end = nullptr;
  const double s = std::strtod(v->c_str(), &end);
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (!end || *end != '\0' || !std::isfinite(s) || s <= 0) return std::nullopt;
  return s;
}

bool constantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of the longer is visited; the length difference is folded in, so timing says nothing of where
  // the strings differ (only, at most, the length of the candidate the client itself sent).
  const std::size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

const std::string* findHeader(const HeaderList& h, std::string_view name) {
  for (const auto& [k, v] : h)
    if (equalsIgnoreCase(k, name)) return &v;
  return nullptr;
}

bool isDroppedRequestHeader(std::string_view name, const HeaderList& all) {
  for (auto h : kHopByHop)
    if (equalsIgnoreCase(name, h)) return true;
  if (equalsIgnoreCase(name, "host") || equalsIgnoreCase(name, "content-length") ||
      equalsIgnoreCase(name, "accept-encoding") || equalsIgnoreCase(name, "expect"))
    return true;
  if (startsWithIgnoreCase(name, "x-tollgate-") || equalsIgnoreCase(name, "x-ratelimit-group")) return true;
  return namedByConnection(name, all);
}

bool isDroppedResponseHeader(std::string_view name) {
  for (auto h : kHopByHop)
    if (equalsIgnoreCase(name, h)) return true;
  // Content-Encoding: the engine hands on the body decoded.
  return equalsIgnoreCase(name, "content-length") || equalsIgnoreCase(name, "date") ||
         equalsIgnoreCase(name, "content-encoding");
}

void relayResponseHeader(HeaderList& out, const std::string& name, const std::string& value) {
  if (!isDroppedResponseHeader(name) && !namesASecret(name)) out.emplace_back(name, SecretRegistry::redact(value));
}

bool namesASecret(std::string_view name) {
  const std::string n(name);
  return SecretRegistry::redact(n) != n;
}

std::string gatewayLocation(const std::string& location, const std::string& baseUrl, const std::string& prefix) {
  const auto base = urlParts(baseUrl);
  if (!base) return location;
  std::string basePath = base->path;
  while (!basePath.empty() && basePath.back() == '/') basePath.pop_back();
  // An absolute path is on the upstream's host; through curl like an absolute URL, so "/v1/../x" is "/x".
  const bool absolutePath = !location.empty() && location[0] == '/' && (location.size() == 1 || location[1] != '/');
  const auto to = urlParts(absolutePath ? base->origin + location : location);
  if (!to || to->origin != base->origin) return location;  // another host (or no URL at all): not ours to rewrite
  // Under base_url's path, on a segment boundary.
  if (to->path.compare(0, basePath.size(), basePath) != 0 ||
      (to->path.size() > basePath.size() && to->path[basePath.size()] != '/'))
    return location;
  std::string shown = prefix;
  while (!shown.empty() && shown.back() == '/') shown.pop_back();
  shown += to->path.substr(basePath.size());
  return (shown.empty() ? "/" : shown) + to->tail;
}

std::string_view shownCredential(const HeaderList& headers) {
  std::string_view shown;
  if (const auto* a = findHeader(headers, "authorization")) {
    std::string_view v = *a;
    if (startsWithIgnoreCase(v, "bearer ")) {
      v.remove_prefix(7);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      shown = v;
    }
  }
  if (shown.empty())
    if (const auto* k = findHeader(headers, "x-api-key")) shown = *k;
  return shown;
}

bool metricsScrapeAllowed(const std::string& token, const HeaderList& headers) {
  if (token.empty()) return true;
  const auto* a = findHeader(headers, "authorization");
  std::string_view v = a ? std::string_view(*a) : std::string_view();
  if (!startsWithIgnoreCase(v, "bearer ")) return false;
  v.remove_prefix(7);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return constantTimeEquals(v, token);
}

const ClientConfig* authenticate(const std::vector<ClientConfig>& clients, const HeaderList& headers,
                                 bool passThrough) {
  std::string_view shown;
  if (!passThrough) shown = shownCredential(headers);
  else if (const auto* t = findHeader(headers, "x-tollgate-token")) shown = *t;
  const ClientConfig* found = nullptr;
  for (const auto& c : clients)  // no early exit: every token is compared
    if (constantTimeEquals(shown, c.token) && !shown.empty()) found = &c;
  return found;
}

Admission admit(const RouteConfig& route, ClientRequest in, const std::array<double, kTierCount>& maxWaitS,
                bool consumeAuth) {
  Admission a;
  a.group = route.group;
  a.tier = route.defaultTier;
  a.tierSource = "route";

  if (const auto* g = findHeader(in.headers, "x-ratelimit-group")) {
    if (std::find(route.groups.begin(), route.groups.end(), *g) == route.groups.end()) {
      a.status = 400;
      std::string allowed;
      for (const auto& n : route.groups) allowed += (allowed.empty() ? "" : ", ") + n;
      a.error = "X-RateLimit-Group names a group this route does not serve; route " + route.prefix +
                " allows: " + allowed;
      return a;
    }
    a.group = *g;
  }

  // The body: JSON bodies may name a tier ("priority") and ask for a stream.
  bool rewrite = false;
  std::optional<Tier> bodyTier;
  nlohmann::json json;
  const auto* contentType = findHeader(in.headers, "content-type");
  const bool looksJson = !in.body.empty() && (in.body.front() == '{' || (contentType && contentType->find("json") != std::string::npos));
  if (looksJson && route.dialect != Dialect::Generic) {
    auto parsed = parseJsonText(in.body);
    if (parsed.ok() && parsed.value.is_object()) {
      json = std::move(parsed.value);
      if (auto p = json.find("priority"); p != json.end() && p->is_string()) {
        if (auto t = parseTier(p->get<std::string>()); t && p->get<std::string>().size() == 2) {
          bodyTier = t;
          json.erase(p);  // a tier name is Tollgate's, not the provider's parameter
          rewrite = true;
        }
      }
      if (auto s = json.find("stream"); s != json.end() && s->is_boolean() && s->get<bool>()) {
        a.stream = true;
        if (route.dialect == Dialect::OpenAI) {
          auto& opts = json["stream_options"];
          if (opts.is_null()) opts = nlohmann::json::object();
          if (opts.is_object() && !(opts.contains("include_usage") && opts["include_usage"].is_boolean() &&
                                    opts["include_usage"].get<bool>())) {
            opts["include_usage"] = true;  // tokens are counted from the usage the stream reports
            a.dropUsageChunk = true;
            rewrite = true;
          }
        }
      }
    }
    // Not JSON (or not an object): forwarded unchanged; the upstream judges it.
  }

  if (const auto* t = findHeader(in.headers, "x-tollgate-tier")) {
    auto tier = parseTier(*t);
    if (!tier) {
      a.status = 400;
      a.error = "X-Tollgate-Tier must be P0, P1 or P2";
      return a;
    }
    a.tier = *tier;
    a.tierSource = "header";
  } else if (bodyTier) {
    a.tier = *bodyTier;
    a.tierSource = "body";
  }

  // Deadline: the client's own, never past the tier's max wait. The SDK's timeout covers the whole call, so
  // a second of it is left for the upstream's answer, or half of it when it is short. The SDK writes the whole
  // seconds of its timeout (1.5 s is "1"): less a second, 1.0-1.99 s timeouts were left 50 ms of queueing and shed
  // with most of their time unspent.
  double deadline = 0;
  if (const auto* d = findHeader(in.headers, "x-tollgate-deadline")) {
    auto s = seconds(d);
    if (!s) {
      a.status = 400;
      a.error = "X-Tollgate-Deadline must be a positive number of seconds";
      return a;
    }
    deadline = *s;
  } else if (auto s = seconds(findHeader(in.headers, "x-stainless-timeout"))) {
    deadline = *s - std::min(1.0, *s / 2);
  }
  const double cap = maxWaitS[static_cast<int>(a.tier)];
  if (deadline > 0 && cap > 0) deadline = std::min(deadline, cap);
  a.deadlineS = deadline;

  for (auto& [k, v] : in.headers) {
    if (isDroppedRequestHeader(k, in.headers)) continue;
    if (consumeAuth && (equalsIgnoreCase(k, "authorization") || equalsIgnoreCase(k, "x-api-key"))) continue;
    a.forward.emplace_back(std::move(k), std::move(v));
  }
  a.body = rewrite ? dumpJson(json) : std::move(in.body);
  return a;
}

}  // namespace tg::gateway
