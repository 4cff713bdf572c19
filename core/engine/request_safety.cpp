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

std::vector<std::string> headerCredentials(std::string_view name, std::string_view value) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto endsWith = [&lower](std::string_view tail) {
    return lower.size() >= tail.size() && lower.compare(lower.size() - tail.size(), tail.size(), tail) == 0;
  };
  bool named = false;  // a header that carries a credential by its name alone
  for (const char* exact : {"authorization", "proxy-authorization", "cookie", "api-key", "x-api-key", "apikey"})
    named = named || lower == exact;
  for (const char* tail : {"-api-key", "-apikey", "-subscription-key", "-auth-token", "-access-token", "-secret",
                           "-password", "-session-token", "-signature"})
    named = named || endsWith(tail);
  // A credential's look: no space, 16 or more characters with letters and digits ("true", "openai", a cache name,
  // a version are not; replaced everywhere they appear, such words broke JSON output and relayed answers).
  const auto shaped = [](std::string_view v) {
    return v.size() >= 16 && v.find_first_of(" \t;,") == std::string_view::npos &&
           std::any_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           std::any_of(v.begin(), v.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
  };
  std::vector<std::string> out;
  if (named) {
    if (value.size() >= 8) out.emplace_back(value);
    // The credential after a scheme ("Bearer ", "Basic "), and each cookie's value.
    if (const auto space = value.find(' '); space != std::string_view::npos && space <= 10)
      if (const auto cred = value.find_first_not_of(' ', space);
          cred != std::string_view::npos && value.size() - cred >= 8)
        out.emplace_back(value.substr(cred));
    if (lower == "cookie")
      for (std::size_t at = value.find('='); at != std::string_view::npos; at = value.find('=', at + 1)) {
        const std::string_view v = value.substr(at + 1, value.find(';', at) - at - 1);
        if (v.size() >= 12) out.emplace_back(v);
      }
    return out;
  }
  // Any other name that speaks of one (x-session-token, a gateway's x-portkey-...): only a credential's look.
  for (const char* word : {"auth", "key", "token", "secret", "passw", "session", "signature", "credential"})
    if (lower.find(word) != std::string::npos && shaped(value)) {
      out.emplace_back(value);
      break;
    }
  return out;
}

std::string urlShown(std::string_view url) {
  // user:password@ left out wherever the last '@' after the authority's start is (in a query or a path too: an
  // error message showing less is no loss); a URL without a scheme ("user:pw@host/x") starts with its authority.
  const auto scheme = url.find("://");
  const std::size_t from = scheme != std::string_view::npos ? scheme + 3
                           : url.empty() || url[0] == '/'  ? url.size()
                                                           : 0;
  std::string shown(url);
  if (const auto at = url.rfind('@'); at != std::string_view::npos && at >= from && from < url.size())
    shown = std::string(url.substr(0, from)) + "..." + std::string(url.substr(at));
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
