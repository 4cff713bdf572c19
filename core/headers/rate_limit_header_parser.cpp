#include "rate_limit_header_parser.h"

#include "time_formats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

namespace tg {
namespace {

// Lower-case header names.
namespace hdr {
constexpr std::string_view kDate = "date";
constexpr std::string_view kRetryAfter = "retry-after";
constexpr std::string_view kRetryAfterMs = "retry-after-ms";
constexpr std::string_view kMsRetryAfterMs = "x-ms-retry-after-ms";
constexpr std::string_view kXLimit = "x-ratelimit-limit";
constexpr std::string_view kXRemaining = "x-ratelimit-remaining";
constexpr std::string_view kXReset = "x-ratelimit-reset";
constexpr std::string_view kXUsed = "x-ratelimit-used";
constexpr std::string_view kXResource = "x-ratelimit-resource";
constexpr std::string_view kXGroup = "x-ratelimit-group";
// X (Twitter) API v2: x-rate-limit-{limit,remaining,reset}, the reset in epoch seconds.
constexpr std::string_view kXApiLimit = "x-rate-limit-limit";
constexpr std::string_view kXApiRemaining = "x-rate-limit-remaining";
constexpr std::string_view kXApiReset = "x-rate-limit-reset";
constexpr std::string_view kIetfLimit = "ratelimit-limit";
constexpr std::string_view kIetfRemaining = "ratelimit-remaining";
constexpr std::string_view kIetfReset = "ratelimit-reset";
constexpr std::string_view kIetfPolicy = "ratelimit-policy";
constexpr std::string_view kIetfRateLimit = "ratelimit";
constexpr std::string_view kOpenAiPrefix = "x-ratelimit-";           // + {limit,remaining,reset}-<scope>
constexpr std::string_view kAnthropicPrefix = "anthropic-ratelimit-";  // + <scope>-{limit,remaining,reset}
}  // namespace hdr

// Spellings used in QuotaReading::retryAfterHeader (and kRetryAfterHeader).
constexpr const char* kRetryAfterMsName = "retry-after-ms";
constexpr const char* kMsRetryAfterMsName = "x-ms-retry-after-ms";

constexpr std::string_view kDialectX = "x-ratelimit";
constexpr std::string_view kDialectGithub = "github";
constexpr std::string_view kDialectXApi = "x-rate-limit";
constexpr std::string_view kDialectOpenAi = "openai";
constexpr std::string_view kDialectAnthropic = "anthropic";
constexpr std::string_view kDialectIetf = "ietf";
constexpr std::string_view kDialectIetfStructured = "ietf-structured";
constexpr const char* kRequestsScope = "requests";

// A reset or wait further out than this is a broken header, not a quota window.
constexpr double kMaxPlausibleWaitS = 400.0 * 86400.0;
// X-RateLimit-Reset carries a delta, epoch seconds or epoch milliseconds; magnitude tells them apart.
constexpr double kEpochMsAbove = 1e12;
constexpr double kEpochSAbove = 1e9;
// A count (limit, remaining, used, policy parameter) above this is malformed: no quota is that large, and
// it keeps every count exact in a double and convertible to a 64-bit integer without overflow.
constexpr double kMaxPlausibleCount = 1e15;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  const auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

struct Field {
  std::string name;   // as the server spelled it, for warnings
  std::string value;  // trimmed
};

// One item of a structured-field list, read tolerantly: `"name";k=v`, `token;k=v`, `100;w=10`, `key=value`.
struct ListItem {
  std::string text;  // the item as written, for warnings
  std::string bare;  // unquoted name, token or number
  bool quoted = false;
  std::optional<std::string> value;  // for dictionary members: `limit=10`
  std::map<std::string, std::string> params;
  std::set<std::string> quotedParams;  // written as strings ("10"): never an integer in a structured field
};

// Splits on `sep` outside double quotes.
std::vector<std::string_view> splitOutsideQuotes(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  bool inQuotes = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && inQuotes) ++i;
    else if (s[i] == '"') inQuotes = !inQuotes;
    else if (s[i] == sep && !inQuotes) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

// Every double quote opened is closed (a backslash escapes inside quotes), as splitOutsideQuotes reads them.
bool quotesClosed(std::string_view s) {
  bool inQuotes = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && inQuotes) ++i;
    else if (s[i] == '"') inQuotes = !inQuotes;
  }
  return !inQuotes;
}

std::string unquote(std::string_view s, bool* wasQuoted = nullptr) {
  if (wasQuoted) *wasQuoted = false;
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return std::string(s);
  if (wasQuoted) *wasQuoted = true;
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] == '\\' && i + 2 < s.size()) ++i;
    out += s[i];
  }
  return out;
}

std::vector<ListItem> parseList(std::string_view value) {
  std::vector<ListItem> items;
  for (auto raw : splitOutsideQuotes(value, ',')) {
    raw = trim(raw);
    if (raw.empty()) continue;
    ListItem item;
    item.text = std::string(raw);
    auto parts = splitOutsideQuotes(raw, ';');
    std::string_view head = trim(parts[0]);
    const size_t eq = head.find('=');
    if (!head.empty() && head.front() != '"' && eq != std::string_view::npos) {
      item.bare = lower(trim(head.substr(0, eq)));
      item.value = unquote(trim(head.substr(eq + 1)));
    } else {
      item.bare = unquote(head, &item.quoted);
    }
    for (size_t i = 1; i < parts.size(); ++i) {
      const std::string_view p = trim(parts[i]);
      const size_t peq = p.find('=');
      if (peq == std::string_view::npos) item.params[lower(p)] = "?1";
      else {
        bool quoted = false;
        const std::string key = lower(trim(p.substr(0, peq)));
        item.params[key] = unquote(trim(p.substr(peq + 1)), &quoted);
        if (quoted) item.quotedParams.insert(key);
      }
    }
    items.push_back(std::move(item));
  }
  return items;
}

bool isTokenDimension(std::string_view scopeName) { return scopeName.find("token") != std::string_view::npos; }

class Reader {
 public:
  Reader(const HeaderList& headers, double nowEpochS) : now_(nowEpochS) {
    for (const auto& [rawName, rawValue] : headers) {
      const std::string name(trim(rawName));
      if (name.empty()) continue;
      Field f{name, std::string(trim(rawValue))};
      const std::string key = lower(name);
      auto it = fields_.find(key);
      if (it == fields_.end()) {
        fields_.emplace(key, std::move(f));
      } else if (key == hdr::kIetfPolicy || key == hdr::kIetfRateLimit) {
        it->second.value += ", " + f.value;  // list fields: repeated lines are one list
      } else if (it->second.value != f.value) {
        // A response that states one field twice (proxies adding their own, two spellings of one name):
        // the reading that risks fewer 429s wins, the lower count or the later reset.
        const Role role = roleOf(key);
        const bool second = role != Role::Other && moreConservative(role, key, f.value, it->second.value);
        const std::string kept = second ? f.value : it->second.value;
        const bool onlyReadable = role != Role::Other && !second && !readingOf(role, key, f.value) &&
                                  readingOf(role, key, kept);
        warn(f, "repeats " + it->second.name + " with a different value; using " +
                    (role == Role::Other ? "the first" : onlyReadable ? "the readable one" : "the more conservative") +
                    ", '" + kept + "'");
        if (second) it->second = std::move(f);  // later warnings about the value name the line it came on
      }
    }
  }

  enum class Role { Count, Used, Wait, Other };
  static Role roleOf(std::string_view key) {
    auto has = [&](std::string_view part) { return key.find(part) != std::string_view::npos; };
    if (key == hdr::kDate || key == hdr::kXResource || key == hdr::kXGroup) return Role::Other;
    if (has("reset") || has("retry-after")) return Role::Wait;
    if (has("ratelimit-used")) return Role::Used;
    if ((has("ratelimit") || has("rate-limit")) && (has("remaining") || has("limit-"))) return Role::Count;
    if (key.ends_with("-limit")) return Role::Count;
    return Role::Other;
  }

  // Seconds from now the wait or reset field `key` stands for, in the forms its reader below takes; nullopt when
  // that reader would refuse it (unreadable, negative or implausibly far).
  std::optional<double> waitOf(std::string_view key, std::string_view v) const {
    std::optional<double> s;
    if (key == hdr::kRetryAfterMs || key == hdr::kMsRetryAfterMs) {
      if (auto ms = parseDecimal(v)) s = *ms / 1000.0;
    } else if (key == hdr::kRetryAfter) {
      if (auto d = parseDecimal(v)) s = *d;
      else if (auto t = parseHttpDate(v, now_)) s = *t - now_;
    } else if (key.starts_with(std::string(hdr::kOpenAiPrefix) + "reset-")) {
      if (auto d = parseGoDuration(v)) s = *d;
      else if (auto t = parseRfc3339(v)) s = *t - now_;
    } else if (auto d = parseDecimal(v)) {
      s = *d > kEpochMsAbove ? *d / 1000.0 - now_ : *d > kEpochSAbove ? *d - now_ : *d;
    } else if (auto t = parseHttpDate(v, now_)) {
      s = *t - now_;
    } else if (auto t = parseRfc3339(v)) {
      s = *t - now_;
    } else if (auto d = parseGoDuration(v)) {
      s = *d;
    }
    if (!s || *s < 0 || *s > kMaxPlausibleWaitS) return std::nullopt;
    return s;
  }

  // A count, or a wait in seconds from now, as the reader of field `key` would take `v`; nullopt when it would
  // refuse it (unreadable, negative, out of range).
  std::optional<double> readingOf(Role role, std::string_view key, std::string_view v) const {
    if (role == Role::Wait) return waitOf(key, v);
    auto d = parseDecimal(v);
    if (!d || *d < 0 || *d > kMaxPlausibleCount) return std::nullopt;
    return d;
  }

  // Whether `candidate` is the more conservative reading of the field `key` already holding `kept`. A "used"
  // count is conservative when higher; other counts (limit, remaining) when lower; waits when later. A value its
  // reader would refuse never replaces a readable one: it would take the good reading with it (its warning
  // comes when the kept one is read, if that is bad too).
  bool moreConservative(Role role, std::string_view key, std::string_view candidate, std::string_view kept) const {
    auto c = readingOf(role, key, candidate), k = readingOf(role, key, kept);
    if (!c) return false;
    if (!k) return true;
    return role == Role::Count ? *c < *k : *c > *k;
  }

  QuotaReading read() {
    readDate();
    readRetryAfter();
    if (const Field* g = find(hdr::kXGroup); g && !g->value.empty()) r_.group = g->value;
    readXRateLimit();
    readXApi();
    readOpenAi();
    readAnthropic();
    readIetf();
    readIetfStructured();
    return std::move(r_);
  }

 private:
  const Field* find(std::string_view lowerName) const {
    auto it = fields_.find(lowerName);
    return it == fields_.end() ? nullptr : &it->second;
  }

  // Any field whose lower-case name starts with `prefix`: families absent from a response cost one lookup.
  bool hasPrefix(std::string_view prefix) const {
    auto it = fields_.lower_bound(prefix);
    return it != fields_.end() && std::string_view(it->first).substr(0, prefix.size()) == prefix;
  }

  void warn(const Field& f, const std::string& what) { r_.warnings.push_back(f.name + ": '" + f.value + "' " + what); }

  // The server's clock for absolute times.
  double clock() const { return r_.serverDateEpochS.value_or(now_); }

  // A limit, remaining or used count: finite and non-negative, else a warning and nothing.
  std::optional<double> count(const Field* f) {
    if (!f) return std::nullopt;
    return countFrom(*f, f->value);
  }

  std::optional<double> countFrom(const Field& f, std::string_view text) {
    auto v = parseDecimal(text);
    if (!v) warn(f, "is not a number");
    else if (*v < 0) warn(f, "is negative, ignored");
    else if (*v > kMaxPlausibleCount) warn(f, "is out of range, ignored");
    else return v;
    return std::nullopt;
  }

  // A wait in seconds from the response; refuses absurd values rather than parking traffic for years.
  std::optional<double> plausibleWait(const Field& f, double s) {
    if (s > kMaxPlausibleWaitS) {
      warn(f, "is implausibly far in the future, ignored");
      return std::nullopt;
    }
    return std::max(0.0, s);
  }

  struct Reset {
    double inS = 0;
    bool absolute = false;
  };

  std::optional<Reset> resetAt(const Field& f, double epochS) {
    auto w = plausibleWait(f, epochS - clock());
    if (!w) return std::nullopt;
    return Reset{*w, true};
  }

  std::optional<Reset> resetIn(const Field& f, double deltaS) {
    auto w = plausibleWait(f, deltaS);
    if (!w) return std::nullopt;
    return Reset{*w, false};
  }

  // Delta seconds, epoch seconds or epoch ms by magnitude; a date is accepted too.
  std::optional<Reset> flexibleReset(const Field* f) {
    if (!f) return std::nullopt;
    if (auto v = parseDecimal(f->value)) {
      if (*v < 0) {
        warn(*f, "is negative, ignored");
        return std::nullopt;
      }
      if (*v > kEpochMsAbove) return resetAt(*f, *v / 1000.0);
      if (*v > kEpochSAbove) return resetAt(*f, *v);
      return resetIn(*f, *v);
    }
    if (auto t = parseHttpDate(f->value, now_)) return resetAt(*f, *t);
    if (auto t = parseRfc3339(f->value)) return resetAt(*f, *t);
    // A duration with units ("6m0s", "1.5s", "120ms"), as OpenAI's per-scope resets are written, which
    // gateways copying that style also put in a bare X-RateLimit-Reset.
    if (auto d = parseGoDuration(f->value)) return resetIn(*f, *d);
    warn(*f, "is not a reset time (seconds, duration, epoch or date)");
    return std::nullopt;
  }

  static void applyReset(QuotaScope& s, const std::optional<Reset>& reset) {
    if (!reset) return;
    s.resetInS = reset->inS;
    s.resetFromAbsoluteTime = reset->absolute;
  }

  QuotaScope& addScope(std::string name, std::string_view dialect) {
    QuotaScope s;
    s.dimension = isTokenDimension(name) ? Dimension::Tokens : Dimension::Requests;
    s.name = std::move(name);
    s.dialect = std::string(dialect);
    r_.scopes.push_back(std::move(s));
    return r_.scopes.back();
  }

  void readDate() {
    const Field* f = find(hdr::kDate);
    if (!f) return;
    if (auto t = parseHttpDate(f->value, now_)) r_.serverDateEpochS = *t;
    else warn(*f, "is not an HTTP-date");
  }

  void readRetryAfter() {
    const std::pair<std::string_view, const char*> msForms[] = {{hdr::kRetryAfterMs, kRetryAfterMsName},
                                                                {hdr::kMsRetryAfterMs, kMsRetryAfterMsName}};
    for (const auto& [key, name] : msForms) {
      const Field* f = find(key);
      if (!f) continue;
      auto ms = parseDecimal(f->value);
      if (!ms) {
        warn(*f, "is not a number of milliseconds");
        continue;
      }
      if (*ms < 0) {
        warn(*f, "is negative, ignored");
        continue;
      }
      if (auto w = plausibleWait(*f, *ms / 1000.0); w && !r_.retryAfterS) {
        r_.retryAfterS = *w;
        r_.retryAfterHeader = name;
      }
    }
    const Field* f = find(hdr::kRetryAfter);
    if (!f) return;
    std::optional<double> wait;
    if (auto s = parseDecimal(f->value)) {
      if (*s < 0) warn(*f, "is negative, ignored");
      else wait = plausibleWait(*f, *s);
    } else if (auto t = parseHttpDate(f->value, now_)) {
      wait = plausibleWait(*f, *t - clock());
    } else {
      warn(*f, "is neither delay-seconds nor an HTTP-date");
    }
    if (wait && !r_.retryAfterS) {
      r_.retryAfterS = *wait;
      r_.retryAfterHeader = kRetryAfterHeader;
    }
  }

  // X-RateLimit-{Limit,Remaining,Reset,Used}; GitHub when X-RateLimit-Resource names the bucket.
  void readXRateLimit() {
    const Field* limitF = find(hdr::kXLimit);
    const Field* remainingF = find(hdr::kXRemaining);
    const Field* resetF = find(hdr::kXReset);
    const Field* usedF = find(hdr::kXUsed);
    const Field* resourceF = find(hdr::kXResource);
    if (!limitF && !remainingF && !resetF && !usedF && !resourceF) return;

    std::string name = kRequestsScope;
    std::string_view dialect = kDialectX;
    if (resourceF) {
      dialect = kDialectGithub;
      if (resourceF->value.empty()) warn(*resourceF, "is empty");
      else name = resourceF->value;
      r_.githubResource = name;
    }
    QuotaScope& s = addScope(name, dialect);
    s.dimension = Dimension::Requests;  // GitHub's resources ("core", "search") count requests
    s.limit = count(limitF).value_or(kUnknown);
    s.remaining = count(remainingF).value_or(kUnknown);
    if (auto used = count(usedF); used && !known(s.remaining) && known(s.limit))
      s.remaining = std::max(0.0, s.limit - *used);
    applyReset(s, flexibleReset(resetF));
  }

  // X (Twitter) API: x-rate-limit-{limit,remaining,reset} per endpoint, the reset as epoch seconds.
  void readXApi() {
    const Field* limitF = find(hdr::kXApiLimit);
    const Field* remainingF = find(hdr::kXApiRemaining);
    const Field* resetF = find(hdr::kXApiReset);
    if (!limitF && !remainingF && !resetF) return;
    QuotaScope& s = addScope(kRequestsScope, kDialectXApi);
    s.limit = count(limitF).value_or(kUnknown);
    s.remaining = count(remainingF).value_or(kUnknown);
    applyReset(s, flexibleReset(resetF));
  }

  // x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets as Go durations ("6m0s").
  void readOpenAi() {
    if (!hasPrefix(hdr::kOpenAiPrefix)) return;
    for (const char* scope : {"requests", "tokens"}) {
      const std::string suffix = std::string("-") + scope;
      const Field* limitF = find(std::string(hdr::kOpenAiPrefix) + "limit" + suffix);
      const Field* remainingF = find(std::string(hdr::kOpenAiPrefix) + "remaining" + suffix);
      const Field* resetF = find(std::string(hdr::kOpenAiPrefix) + "reset" + suffix);
      if (!limitF && !remainingF && !resetF) continue;
      QuotaScope& s = addScope(scope, kDialectOpenAi);
      s.limit = count(limitF).value_or(kUnknown);
      s.remaining = count(remainingF).value_or(kUnknown);
      if (!resetF) continue;
      if (auto d = parseGoDuration(resetF->value)) applyReset(s, resetIn(*resetF, *d));
      else if (auto t = parseRfc3339(resetF->value)) applyReset(s, resetAt(*resetF, *t));
      else warn(*resetF, "is not a duration");
    }
  }

  // anthropic-ratelimit-<scope>-{limit,remaining,reset}, resets as RFC 3339 times.
  void readAnthropic() {
    if (!hasPrefix(hdr::kAnthropicPrefix)) return;
    for (const char* scope : {"requests", "tokens", "input-tokens", "output-tokens"}) {
      const std::string prefix = std::string(hdr::kAnthropicPrefix) + scope + "-";
      const Field* limitF = find(prefix + "limit");
      const Field* remainingF = find(prefix + "remaining");
      const Field* resetF = find(prefix + "reset");
      if (!limitF && !remainingF && !resetF) continue;
      QuotaScope& s = addScope(scope, kDialectAnthropic);
      s.limit = count(limitF).value_or(kUnknown);
      s.remaining = count(remainingF).value_or(kUnknown);
      if (!resetF) continue;
      if (auto t = parseRfc3339(resetF->value)) applyReset(s, resetAt(*resetF, *t));
      else applyReset(s, flexibleReset(resetF));
    }
  }

  std::optional<double> paramNumber(const Field& f, const ListItem& item, const char* key) {
    auto it = item.params.find(key);
    if (it == item.params.end()) return std::nullopt;
    auto v = parseDecimal(it->second);
    if (!v || *v < 0 || *v > kMaxPlausibleCount) {
      r_.warnings.push_back(f.name + ": '" + item.text + "' has a bad " + key + "=" + it->second);
      return std::nullopt;
    }
    return v;
  }

  static bool isNumericItem(const ListItem& item) {
    return !item.quoted && !item.value && parseDecimal(item.bare).has_value();
  }

  // Older IETF draft: RateLimit-{Limit,Remaining,Reset} and a numeric RateLimit-Policy "100;w=10, 1000;w=3600";
  // draft-07 also put all three into one dictionary, RateLimit: limit=10, remaining=5, reset=30.
  void readIetf() {
    const Field* limitF = find(hdr::kIetfLimit);
    const Field* remainingF = find(hdr::kIetfRemaining);
    const Field* resetF = find(hdr::kIetfReset);
    const Field* policyF = find(hdr::kIetfPolicy);
    const Field* combinedF = find(hdr::kIetfRateLimit);

    std::vector<ListItem> policies;  // numeric ones only; named ones are the structured form
    if (policyF)
      for (auto& item : parseList(policyF->value))
        if (isNumericItem(item)) policies.push_back(std::move(item));
    std::vector<ListItem> members;  // `limit=10` dictionary members of a combined RateLimit field
    if (combinedF)
      for (auto& item : parseList(combinedF->value))
        if (item.value) members.push_back(std::move(item));
    if (!limitF && !remainingF && !resetF && policies.empty() && members.empty()) return;

    QuotaScope& s = addScope(kRequestsScope, kDialectIetf);
    // RateLimit-Limit may itself carry the policy list: "10, 10;w=1, 50;w=60". Its first item is the limit.
    if (limitF) {
      auto items = parseList(limitF->value);
      if (items.empty()) warn(*limitF, "is empty");
      else if (auto v = countFrom(*limitF, items.front().bare)) s.limit = *v;
      for (auto& item : items)
        if (isNumericItem(item) && item.params.count("w")) policies.push_back(std::move(item));
    }
    s.remaining = count(remainingF).value_or(kUnknown);
    applyReset(s, flexibleReset(resetF));

    for (const auto& m : members) {
      Field mf{combinedF->name, m.text};
      if (m.bare == "limit") s.limit = countFrom(mf, *m.value).value_or(s.limit);
      else if (m.bare == "remaining") s.remaining = countFrom(mf, *m.value).value_or(s.remaining);
      else if (m.bare == "reset") {
        if (auto v = countFrom(mf, *m.value)) applyReset(s, resetIn(mf, *v));
      }
    }

    if (policies.empty()) return;
    const ListItem* chosen = &policies.front();
    for (const auto& p : policies)
      if (known(s.limit) && parseDecimal(p.bare) == s.limit) {
        chosen = &p;
        break;
      }
    const Field& from = policyF ? *policyF : *limitF;
    if (!known(s.limit)) s.limit = countFrom(from, chosen->bare).value_or(kUnknown);
    if (auto w = paramNumber(from, *chosen, "w")) s.windowS = *w;
  }

  // RFC 8941 sf-integer: an optional minus and 1 to 15 digits.
  static bool isSfInteger(std::string_view v) {
    if (!v.empty() && v.front() == '-') v.remove_prefix(1);
    if (v.empty() || v.size() > 15) return false;
    return std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  }

  // The structured form's numeric parameters are integers. A field with any other (10.5, 1e3, "10") does
  // not parse as a structured field, and RFC 8941 has a field that fails to parse ignored as a whole.
  const Field* wellFormedStructured(const Field* f, std::initializer_list<const char*> params) {
    if (!f) return nullptr;
    if (!quotesClosed(f->value)) {  // the rest of the line would be read as one policy's name
      warn(*f, "is malformed (a quoted string is not closed); ignored");
      return nullptr;
    }
    for (const auto& item : parseList(f->value)) {
      if (isNumericItem(item) || item.value) continue;  // the older drafts' forms, read by readIetf
      for (const char* key : params)
        if (auto it = item.params.find(key);
            it != item.params.end() && (item.quotedParams.contains(key) || !isSfInteger(it->second))) {
          const std::string shown = item.quotedParams.contains(key) ? '"' + it->second + '"' : it->second;
          warn(*f, std::string("is malformed (") + key + "=" + shown + " is not an integer); ignored");
          return nullptr;
        }
    }
    return f;
  }

  // Structured form: RateLimit-Policy: "default";q=100;w=10 and RateLimit: "default";r=50;t=30.
  void readIetfStructured() {
    const Field* policyF = wellFormedStructured(find(hdr::kIetfPolicy), {"q", "w"});
    const Field* stateF = wellFormedStructured(find(hdr::kIetfRateLimit), {"r", "t"});
    const size_t firstScope = r_.scopes.size();
    auto scopeNamed = [&](const std::string& name) -> QuotaScope& {
      for (size_t i = firstScope; i < r_.scopes.size(); ++i)
        if (r_.scopes[i].name == name) return r_.scopes[i];
      return addScope(name, kDialectIetfStructured);
    };
    // A policy named twice in one field (repeated lines are one list; a proxy may add its own): the reading that
    // risks fewer 429s, as for any field stated twice: the lower quota and remaining, the longer window and the
    // later reset.
    auto repeated = [&](std::set<std::string>& named, const Field& f, const std::string& name) {
      if (named.insert(name).second) return false;
      warn(f, "names policy '" + name + "' twice; using the more conservative values");
      return true;
    };
    auto lowest = [](double was, double now) { return known(was) ? std::min(was, now) : now; };
    if (policyF) {
      std::set<std::string> named;
      for (const auto& item : parseList(policyF->value)) {
        if (isNumericItem(item) || item.value) continue;
        if (item.bare.empty()) {
          warn(*policyF, "has a policy without a name");
          continue;
        }
        QuotaScope& s = scopeNamed(item.bare);
        const bool again = repeated(named, *policyF, item.bare);
        if (auto q = paramNumber(*policyF, item, "q")) s.limit = again ? lowest(s.limit, *q) : *q;
        if (auto w = paramNumber(*policyF, item, "w")) s.windowS = again && s.windowS ? std::max(*s.windowS, *w) : *w;
        if (auto qu = item.params.find("qu"); qu != item.params.end())
          s.dimension = isTokenDimension(qu->second) ? Dimension::Tokens : Dimension::Requests;
      }
    }
    if (stateF) {
      std::set<std::string> named;
      for (const auto& item : parseList(stateF->value)) {
        if (item.value) continue;  // draft-07 dictionary member, read by readIetf
        if (item.bare.empty() || isNumericItem(item)) {
          warn(*stateF, "has an item without a policy name");
          continue;
        }
        QuotaScope& s = scopeNamed(item.bare);
        const bool again = repeated(named, *stateF, item.bare);
        if (auto rem = paramNumber(*stateF, item, "r")) s.remaining = again ? lowest(s.remaining, *rem) : *rem;
        if (auto t = paramNumber(*stateF, item, "t")) {
          Field tf{stateF->name, item.text};
          const auto reset = resetIn(tf, *t);
          if (!again || !s.resetInS || (reset && reset->inS > *s.resetInS)) applyReset(s, reset);
        }
      }
    }
  }

  double now_;
  std::map<std::string, Field, std::less<>> fields_;  // by lower-case name; looked up without copies
  QuotaReading r_;
};

}  // namespace

QuotaReading RateLimitHeaderParser::parse(const HeaderList& headers, double nowEpochS) {
  if (!std::isfinite(nowEpochS)) nowEpochS = 0;
  return Reader(headers, nowEpochS).read();
}

}  // namespace tg
