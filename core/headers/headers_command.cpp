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
#include <ostream>

namespace tg {
namespace {

constexpr const char* kUsage =
    "usage: tollgate headers [--status N] [--now EPOCH] [--max-wait S] < response-headers.txt\n"
    "  --status N     HTTP status of the response (default: from an \"HTTP/1.1 429 ...\" line)\n"
    "  --now EPOCH    local wall clock in epoch seconds (default: now); reset_at = now + reset_in_s\n"
    "  --max-wait S   longest server-directed wait before the verdict is \"exhausted\" (default: 120)\n";

constexpr double kDefaultMaxWaitS = 120;  // RetryConfig::maxServerWaitS
constexpr int kExitUsage = 2;
constexpr int kMinStatus = 100;
constexpr int kMaxStatus = 599;

struct Options {
  std::optional<int> status;
  std::optional<double> now;
  double maxWaitS = kDefaultMaxWaitS;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<int> parseStatus(std::string_view s) {
  auto v = parseDecimal(s);
  if (!v || *v != std::floor(*v) || *v < kMinStatus || *v > kMaxStatus) return std::nullopt;
  return static_cast<int>(*v);
}

// Returns an error message naming the bad argument, or nothing.
std::optional<std::string> parseArgs(const std::vector<std::string>& args, Options& o, bool& help) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "--help" || name == "-h") {
      help = true;
      continue;
    }
    if (name != "--status" && name != "--now" && name != "--max-wait") return "unknown argument '" + args[i] + "'";
    if (!value) {
      if (i + 1 >= args.size()) return name + " needs a value";
      value = args[++i];
    }
    if (name == "--status") {
      o.status = parseStatus(*value);
      if (!o.status) return "--status '" + *value + "' is not an HTTP status (100-599)";
    } else {
      auto v = parseDecimal(*value);
      if (!v || *v < 0) return name + " '" + *value + "' is not a non-negative number of seconds";
      if (name == "--now") o.now = *v;
      else o.maxWaitS = *v;
    }
  }
  return std::nullopt;
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
};

Head readHead(std::istream& in, std::ostream& err) {
  Head head;
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    if (t.rfind("HTTP/", 0) == 0) {
      const size_t sp = t.find(' ');
      const auto code = sp == std::string_view::npos ? std::nullopt : parseStatus(trim(t.substr(sp + 1, 4)));
      if (!code) {
        err << "line " << lineNo << ": bad status line '" << t << "', skipped\n";
        continue;
      }
      head.status = code;
      head.headers.clear();
      continue;
    }
    if ((line.front() == ' ' || line.front() == '\t') && !head.headers.empty()) {
      head.headers.back().second += " " + std::string(t);  // obsolete line folding
      continue;
    }
    const size_t colon = t.find(':');
    if (colon == std::string_view::npos) {
      err << "line " << lineNo << ": no ':' in '" << t << "', skipped\n";
      continue;
    }
    const std::string_view name = trim(t.substr(0, colon));
    if (!isFieldName(name)) {
      err << "line " << lineNo << ": '" << name << "' is not a header name, skipped\n";
      continue;
    }
    head.headers.emplace_back(std::string(name), std::string(trim(t.substr(colon + 1))));
  }
  return head;
}

nlohmann::ordered_json number(double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr; }

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

int runHeadersCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  Options o;
  bool help = false;
  if (auto problem = parseArgs(args, o, help)) {
    err << "tollgate headers: " << *problem << "\n" << kUsage;
    return kExitUsage;
  }
  if (help) {
    out << kUsage;
    return 0;
  }
  const double now = o.now.value_or(static_cast<double>(nowEpochMs()) / 1000.0);
  Head head = readHead(in, err);
  const std::optional<int> status = o.status ? o.status : head.status;
  const QuotaReading reading = RateLimitHeaderParser::parse(head.headers, now);
  const QuotaVerdict verdict = decideVerdict(reading, status.value_or(0), now, o.maxWaitS);
  out << dumpJson(toJson(reading, verdict, status, now), 2) << "\n";
  return 0;
}

}  // namespace tg
