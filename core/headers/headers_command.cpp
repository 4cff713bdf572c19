#include "headers_command.h"

#include "json_text.h"

#include "quota_verdict.h"
#include "rate_limit_header_parser.h"
#include "time_formats.h"
#include "types.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <istream>
#include <optional>
#include <stdexcept>
#include <ostream>

namespace tg {
namespace {

constexpr int kMinStatus = 100;
constexpr int kMaxStatus = 599;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// RFC 9110 token characters: what a header name may contain.
bool isFieldName(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!(std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos))
      return false;
  return true;
}

struct Head {
  std::optional<int> status;
  HeaderList headers;
  int lines = 0;  // read that are not blank (the status line and the body's aside)
};

// Input quoted in a diagnostic: one line, no escape sequences, valid UTF-8, at most 200 bytes of it.
std::string shown(std::string_view t) {
  constexpr std::size_t kMax = 200;
  std::string out = toValidUtf8(escapeControlBytes(t.substr(0, kMax)));
  if (t.size() > kMax) out += "...";
  return out;
}

Head readHead(std::istream& in, std::ostream& err) {
  Head head;
  std::string line;
  int lineNo = 0;
  // After a blank line, a line that is no header begins the head's body (`curl -i`): skipped up to the next status
  // line (100 Continue, a redirect followed). Read as headers, a JSON body's indented lines were folded into the
  // last header and spoilt it. Header lines after a blank one are still headers (pasted with gaps).
  bool afterBlank = false, inBody = false;
  int bodyFrom = 0;
  auto endBody = [&](int upTo) {
    if (inBody) err << "lines " << bodyFrom << "-" << upTo << ": the body after the head, skipped\n";
    inBody = false;
  };
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string_view t = trim(line);
    if (t.rfind("HTTP/", 0) == 0) {
      ++head.lines;
      endBody(lineNo - 1);
      afterBlank = false;
      const size_t sp = t.find(' ');
      const auto code = sp == std::string_view::npos ? std::nullopt : parseHttpStatus(trim(t.substr(sp + 1, 4)));
      if (!code) {
        err << "line " << lineNo << ": bad status line '" << shown(t) << "', skipped\n";
        continue;
      }
      head.status = code;
      head.headers.clear();
      continue;
    }
    if (inBody) continue;
    if (!t.empty()) ++head.lines;
    if (t.empty()) {
      afterBlank = head.status || !head.headers.empty();
      continue;
    }
    const bool folded = line.front() == ' ' || line.front() == '\t';
    const size_t colon = t.find(':');
    const std::string_view name = colon == std::string_view::npos ? std::string_view() : trim(t.substr(0, colon));
    if (afterBlank && (folded || !isFieldName(name))) {
      inBody = true;
      bodyFrom = lineNo;
      continue;
    }
    afterBlank = false;
    if (folded && !head.headers.empty()) {
      head.headers.back().second += " " + std::string(t);  // obsolete line folding
      continue;
    }
    if (colon == std::string_view::npos) {
      err << "line " << lineNo << ": no ':' in '" << shown(t) << "', skipped\n";
      continue;
    }
    if (!isFieldName(name)) {
      err << "line " << lineNo << ": '" << shown(name) << "' is not a header name, skipped\n";
      continue;
    }
    head.headers.emplace_back(std::string(name), std::string(trim(t.substr(colon + 1))));
  }
  endBody(lineNo);
  return head;
}

nlohmann::ordered_json number(double v) { return numberOrNull(v); }

nlohmann::ordered_json number(const std::optional<double>& v) { return v ? number(*v) : nullptr; }

nlohmann::ordered_json toJson(const QuotaReading& r, const QuotaVerdict& v, std::optional<int> status, double now) {
  nlohmann::ordered_json j;
  j["status"] = status ? nlohmann::ordered_json(*status) : nullptr;
  j["scopes"] = nlohmann::ordered_json::array();
  for (const auto& s : r.scopes) {
    nlohmann::ordered_json js;
    js["name"] = s.name;
    js["dimension"] = std::string(dimensionName(s.dimension));
    js["dialect"] = s.dialect;
    js["limit"] = number(s.limit);
    js["remaining"] = number(s.remaining);
    js["reset_at"] = s.resetInS ? number(now + *s.resetInS) : nullptr;
    js["reset_in_s"] = number(s.resetInS);
    js["window_s"] = number(s.windowS);
    j["scopes"].push_back(std::move(js));
  }
  j["retry_after_s"] = number(r.retryAfterS);
  j["retry_after_header"] = r.retryAfterS ? nlohmann::ordered_json(r.retryAfterHeader) : nullptr;
  j["group"] = r.group ? nlohmann::ordered_json(*r.group) : nullptr;
  j["server_date"] = number(r.serverDateEpochS);
  j["verdict"] = {{"kind", std::string(verdictKindName(v.kind))},
                  {"wait_s", v.waitS},
                  {"until", number(v.untilEpochS)},
                  {"reason", v.reason},
                  {"classification", std::string(verdictClassName(v.classification))}};
  j["warnings"] = r.warnings;
  return j;
}

}  // namespace

std::optional<int> parseHttpStatus(std::string_view s) {
  auto v = parseDecimal(s);
  if (!v || *v != std::floor(*v) || *v < kMinStatus || *v > kMaxStatus) return std::nullopt;
  return static_cast<int>(*v);
}

std::string describeResponseHead(std::istream& in, const HeadersOptions& o, double now, std::ostream& diag) {
  Head head = readHead(in, diag);
  // Nothing to read and no --status (a bare 429 is worth asking about): an empty or unreadable stdin, not "ok".
  if (head.lines == 0 && !o.status)
    throw std::invalid_argument("no input: expected response header lines on standard input (curl -i's output), "
                                "or --status N");
  const std::optional<int> status = o.status ? o.status : head.status;
  const QuotaReading reading = RateLimitHeaderParser::parse(head.headers, now);
  const QuotaVerdict verdict = decideVerdict(reading, status.value_or(0), now, o.maxWaitS);
  return dumpJson(toJson(reading, verdict, status, now), 2) + "\n";
}

}  // namespace tg
