#include "request_safety.h"

#include "json_text.h"
#include "secret.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>

namespace tg {
namespace {

constexpr std::size_t kMaxShown = 200;

struct CurlUrlFree {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using CurlUrlPtr = std::unique_ptr<CURLU, CurlUrlFree>;

bool isTchar(unsigned char c) {
  return c != '\0' && (std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

}  // namespace

std::string originOf(const std::string& url, std::string* why) {
  CurlUrlPtr u(curl_url());
  if (!u) {
    *why = "out of memory parsing the URL";
    return {};
  }
  if (CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0); rc != CURLUE_OK) {
    *why = std::string("malformed URL: ") + curl_url_strerror(rc);
    return {};
  }
  std::string parts[3];
  const CURLUPart which[3] = {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT};
  for (int i = 0; i < 3; ++i) {
    char* text = nullptr;
    if (CURLUcode rc = curl_url_get(u.get(), which[i], &text, CURLU_DEFAULT_PORT); rc != CURLUE_OK) {
      *why = std::string("malformed URL: ") + curl_url_strerror(rc);
      return {};
    }
    parts[i] = text;
    curl_free(text);
    for (char& c : parts[i]) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (parts[0] != "http" && parts[0] != "https") {
    *why = "scheme \"" + parts[0] + "\" is not http or https";
    return {};
  }
  return parts[0] + "://" + parts[1] + ":" + parts[2];
}

std::optional<UrlParts> urlParts(const std::string& url) {
  std::string why;
  UrlParts out;
  out.origin = originOf(url, &why);
  CurlUrlPtr u(curl_url());
  if (out.origin.empty() || !u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    return std::nullopt;
  const std::pair<CURLUPart, const char*> pieces[] = {{CURLUPART_PATH, ""}, {CURLUPART_QUERY, "?"},
                                                      {CURLUPART_FRAGMENT, "#"}};
  for (const auto& [part, lead] : pieces) {
    char* text = nullptr;
    if (curl_url_get(u.get(), part, &text, 0) == CURLUE_OK)
      (part == CURLUPART_PATH ? out.path : out.tail) += lead + std::string(text);
    curl_free(text);
  }
  return out;
}

bool isHttpToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return isTchar(static_cast<unsigned char>(c)); });
}

bool isFieldValue(std::string_view s) { return !hasControlBytes(s, true); }

std::string printable(std::string_view s) {
  // Redact the whole text before cutting it: a secret across the cut would otherwise leave its first half.
  const std::string redacted = SecretRegistry::redact(std::string(s));
  const std::string_view r = redacted;
  std::string out = escapeControlBytes(r.substr(0, kMaxShown));
  if (r.size() > kMaxShown) out += "...";
  return out;
}

std::string targetProblem(std::string_view target) {
  for (std::size_t i = 0; i < target.size(); ++i) {
    const auto c = static_cast<unsigned char>(target[i]);
    if (c < 0x21 || c >= 0x7f) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "the path has byte 0x%02x at offset %zu: a request target is URL-encoded "
                    "ASCII, without spaces or control bytes", c, i);
      return buf;
    }
  }
  const std::string_view path = target.substr(0, target.find('?'));
  // Segments as a server that decodes before it normalises sees them.
  std::string segment;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    const bool end = i == path.size();
    // "%2e" is a dot to such a server, "%2f" and "%5c" are slashes.
    const int encoded = !end && path[i] == '%' ? hexValue(path, i + 1, 2) : -1;
    const char c = end ? '/' : encoded >= 0 ? static_cast<char>(encoded) : path[i];
    if (c == '/' || c == '\\') {
      if (segment == "." || segment == "..")
        return "the path has a \"" + segment + "\" segment (or its URL-encoded form): it would leave the base_url's "
               "path";
      segment.clear();
    } else {
      segment += c;
    }
    if (encoded >= 0) i += 2;
  }
  return {};
}

namespace {
std::string_view trimmed(std::string_view v, std::string_view chars = " \t") {
  const auto from = v.find_first_not_of(chars);
  if (from == std::string_view::npos) return {};
  return v.substr(from, v.find_last_not_of(chars) - from + 1);
}
}  // namespace

std::vector<std::string> headerCredentials(std::string_view name, std::string_view value) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto endsWith = [&lower](std::string_view tail) {
    return lower.size() >= tail.size() && lower.compare(lower.size() - tail.size(), tail.size(), tail) == 0;
  };
  bool named = false;  // a header that carries a credential by its name alone
  for (const char* exact : {"cookie", "api-key", "x-api-key", "apikey", "private-token", "authentication"})
    named = named || lower == exact;
  // Authorization and its kin (Proxy-, X-, Helicone-Auth, Cloudflare's cf-aig-authorization), *-api-key, ...
  for (const char* tail : {"authorization", "-auth", "-api-key", "-apikey", "-subscription-key", "-access-key",
                           "-secret-key", "-private-key", "-token", "-secret", "-password", "-signature"})
    named = named || endsWith(tail);
  // A credential's look: no space, 16 or more characters with letters and digits ("true", "openai", a cache name,
  // a version are not; replaced everywhere they appear, such words broke JSON output and relayed answers).
  const auto shaped = [](std::string_view v) {
    return v.size() >= 16 && v.find_first_of(" \t;,") == std::string_view::npos &&
           std::any_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           std::any_of(v.begin(), v.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
  };
  const auto hasAlnum = [](std::string_view v) {
    return std::any_of(v.begin(), v.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
  };
  const std::string_view whole = trimmed(value);
  // The credential after a scheme ("Bearer ", "Basic ", "Token ": one word of at most 10 characters, then a space).
  std::string_view afterScheme;
  if (const auto space = whole.find(' '); space != std::string_view::npos && space <= 10)
    afterScheme = trimmed(whole.substr(space));
  std::vector<std::string> out;
  if (lower == "cookie") {  // each cookie's value, when it looks like a credential (a session id; not a time zone)
    for (std::string_view rest = whole; !rest.empty();) {
      const auto semi = rest.find(';');
      const std::string_view pair = rest.substr(0, semi);
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      if (const auto eq = pair.find('='); eq != std::string_view::npos)
        if (const std::string_view v = trimmed(pair.substr(eq + 1), " \t\""); shaped(v)) out.emplace_back(v);
    }
    if (whole.size() >= 8 && hasAlnum(whole)) out.emplace_back(whole);
    return out;
  }
  if (named) {
    if (whole.size() >= 8 && hasAlnum(whole)) out.emplace_back(whole);
    if (afterScheme.size() >= 8 && hasAlnum(afterScheme)) out.emplace_back(afterScheme);
    return out;
  }
  // Any other name that speaks of one (x-session-id, a gateway's x-portkey-...): only a credential's look.
  for (const char* word : {"auth", "key", "token", "secret", "passw", "session", "signature", "credential"})
    if (lower.find(word) != std::string::npos) {
      if (shaped(whole)) out.emplace_back(whole);
      if (shaped(afterScheme)) out.emplace_back(afterScheme);
      break;
    }
  return out;
}

std::string urlShown(std::string_view url) {
  // user:password@ left out. The authority starts after "://" (or "//", or at once when there is no scheme and no
  // leading '/') and ends at the first '/', '?' or '#'; the last '@' in it ends the userinfo. A password holding
  // one of those three (curl refuses such a URL as a bad port, and the message quotes it) leaves a ':' followed
  // by no port in what looks like the authority: then everything up to the URL's last '@' is left out.
  const auto scheme = url.find("://");
  std::size_t from = url.size();
  if (scheme != std::string_view::npos) from = scheme + 3;
  else if (url.substr(0, 2) == "//") from = 2;
  else if (!url.empty() && url[0] != '/') from = 0;
  std::string shown(url);
  if (from < url.size()) {
    const auto end = std::min(url.find_first_of("/?#", from), url.size());
    const std::string_view authority = url.substr(from, end - from);
    auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
      at += from;
    } else if (const auto colon = authority.rfind(':');
               colon != std::string_view::npos &&
               (authority.rfind(']') == std::string_view::npos || colon > authority.rfind(']')) &&
               authority.find_first_not_of("0123456789", colon + 1) != std::string_view::npos) {
      at = url.rfind('@');
      if (at == std::string_view::npos || at < end) at = url.size();  // no '@' at all: all of it may be a password
    }
    if (at != std::string_view::npos) shown = std::string(url.substr(0, from)) + "..." + std::string(url.substr(at));
  }
  if (const auto cut = shown.find_first_of("?#"); cut != std::string::npos) shown = shown.substr(0, cut) + "?...";
  return printable(shown);
}

std::string headerProblem(const std::string& name, const std::string& value, const std::string& where) {
  if (!isHttpToken(name)) {
    // Quoted up to the first byte that breaks it: "Authorization: Bearer sk-..." written as a name is a key.
    std::size_t n = 0;
    while (n < name.size() && isHttpToken(std::string_view(name).substr(n, 1))) ++n;
    if (n == name.size()) return where + " header name is empty";
    return where + " header name \"" + printable(name.substr(0, n)) + "\" is followed by a character an HTTP token " +
           "cannot hold (byte " + std::to_string(n + 1) + "; the rest is not shown)";
  }
  if (!isFieldValue(value))
    return where + " header \"" + name + "\" has a control character (CR, LF, NUL) in its value";
  return {};
}

std::string groupConfigProblem(const GroupConfig& g, const EngineConfig& cfg, std::vector<std::string>* origins) {
  std::string why;
  const std::string base = originOf(g.baseUrl, &why);
  if (base.empty()) return "base_url \"" + urlShown(g.baseUrl) + "\": " + why;
  if (origins) origins->push_back(base);
  for (const auto& h : g.allowedHosts) {
    const std::string o = originOf(h, &why);
    if (o.empty()) return "allowed_hosts entry \"" + urlShown(h) + "\": " + why;
    if (origins) origins->push_back(o);
  }
  for (const auto& [name, value] : g.headers)
    if (std::string p = headerProblem(name, value, "group"); !p.empty()) return p;
  for (const auto& k : g.keys)  // names the header, never the secret; a key without a secret sends no header
    if (std::string p = headerProblem(k.header, k.prefix + k.secret, "key \"" + k.name + "\"");
        !k.secret.empty() && !p.empty())
      return p;
  if (!cfg.groupHeader.empty())
    if (std::string p = headerProblem(cfg.groupHeader, g.name, "group_header"); !p.empty()) return p;
  if (!cfg.tierHeader.empty() && !isHttpToken(cfg.tierHeader))
    return "tier_header \"" + printable(cfg.tierHeader) + "\" is not an HTTP token";
  return {};
}

}  // namespace tg
