// The checks that keep a key on its own host and every header on one line, shared by every path that
// sends a key: the engine's transfers and `tollgate probe`.
#pragma once

#include "engine_config.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

// The only schemes a request may use (CURLOPT_PROTOCOLS_STR): the key must never leave over another protocol.
inline constexpr const char* kAllowedProtocols = "http,https";

// "scheme://host:port" of an absolute http(s) URL, lower-case with the port always spelled out, so two
// spellings of one origin compare equal. Empty, with *why set, when `url` is not such a URL.
std::string originOf(const std::string& url, std::string* why);

// An absolute http(s) URL in parts: its origin as originOf() spells it, its path ("/" at least, dot segments
// resolved) and the rest ("?query#fragment", empty when none). Nothing when it is not such a URL.
struct UrlParts {
  std::string origin, path, tail;
};
std::optional<UrlParts> urlParts(const std::string& url);

// RFC 9110 token (method names, header field names).
bool isHttpToken(std::string_view s);
// A field value: visible characters, spaces, tabs and obs-text; never CR, LF, NUL or other controls.
bool isFieldValue(std::string_view s);

// Text from a request or config for an error message: registered secrets redacted first (so none can be
// cut in half and escape), then control bytes as \xNN, at most kMaxShown characters of the redacted text.
std::string printable(std::string_view s);

// Why a request target ("/v1/chat?x=1", joined after a group's base_url) may not be sent, or empty: a byte
// that is not URL-encoded printable ASCII (a control byte would also forge a log line quoting it), or a "." or
// ".." segment, spelt out or URL-encoded (%2e; %2f and backslashes counted as slashes), which would leave
// base_url's path for another on the same host, the key with it.
std::string targetProblem(std::string_view target);

// Why a header would not go out as one well-formed line, or empty. `where` says whose header it is; the
// value is never quoted (it may be a key).
std::string headerProblem(const std::string& name, const std::string& value, const std::string& where);

// What a header written in a config carries that must be scrubbed as a key is. Under a credential's own name
// (*authorization, *-auth, authentication, api-key, x-api-key, *-api-key, *-subscription-key, *-access-key,
// *-secret-key, *-private-key, *-token, *-secret, *-password, *-signature, private-token): its value and the part
// after a scheme ("Bearer "), when they hold a letter or digit and 8 characters. Under Cookie: the whole and each value that looks like a credential. Under any
// other name mentioning a key, token, secret, session or signature: the value or the part after a scheme only when
// it looks like a credential (16 or more characters, no space, letters and digits). Empty for anything else.
std::vector<std::string> headerCredentials(std::string_view name, std::string_view value);

// A URL or request target for an error message: user:password@ and everything from "?" on left out ("...@",
// "?..."), where keys ride as often as in headers; then as printable() shows it. Shows less rather than more.
std::string urlShown(std::string_view url);

// Why group `g` of `cfg` cannot be sent to safely (base_url, allowed_hosts, group/key/tier headers), or
// empty. Appends base_url's origin and then allowed_hosts' to *origins when given.
std::string groupConfigProblem(const GroupConfig& g, const EngineConfig& cfg, std::vector<std::string>* origins);

}  // namespace tg
