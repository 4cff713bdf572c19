// Fuzz target: everything the gateway does with a client's request after libmicrohttpd has framed it (MHD's
// own HTTP parsing is fuzzed upstream, in OSS-Fuzz): the input is read loosely as "METHOD PATH\r\n", header
// lines up to a blank line, then the body; it goes through route matching, the token check, admission (tier,
// group, deadline, forwarded headers, the body's priority and stream options), the SSE relay (the body fed as
// an upstream stream in pieces), the error answers (the input as upstream headers, body and message) and the
// gateway config section (the body, when it is JSON). Never an exception, abort or hang.
#include "error_answer.h"
#include "gateway_config.h"
#include "json_text.h"
#include "request_policy.h"
#include "route_table.h"
#include "sse_relay.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace tg;
using namespace tg::gateway;

const RouteTable& routes() {
  static const RouteTable table = [] {
    RouteConfig openai{"/openai", "openai", {"openai", "batch"}, Tier::P1, Dialect::OpenAI, RouteAuth::Tollgate};
    RouteConfig anthropic{"/anthropic", "anthropic", {"anthropic"}, Tier::P2, Dialect::Anthropic, RouteAuth::PassThrough};
    RouteConfig generic{"/api/v2", "openai", {"openai"}, Tier::P0, Dialect::Generic, RouteAuth::Tollgate};
    return RouteTable({openai, anthropic, generic});
  }();
  return table;
}

const EngineConfig& engine() {
  static const EngineConfig e = [] {
    EngineConfig c;
    for (const char* name : {"openai", "batch", "anthropic"}) {
      GroupConfig g;
      g.name = name;
      g.baseUrl = "http://127.0.0.1:9";
      c.groups.push_back(g);
    }
    return c;
  }();
  return e;
}

std::string_view line(std::string_view& rest) {
  const auto nl = rest.find('\n');
  std::string_view l = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  ClientRequest in;
  const std::string_view first = line(rest);
  const auto space = first.find(' ');
  in.method = std::string(first.substr(0, space));
  std::string_view target = space == std::string_view::npos ? std::string_view() : first.substr(space + 1);
  const auto q = target.find('?');
  in.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) in.query = std::string(target.substr(q + 1));
  while (!rest.empty()) {
    const std::string_view h = line(rest);
    if (h.empty()) break;
    const auto colon = h.find(':');
    std::string_view value = colon == std::string_view::npos ? std::string_view() : h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    in.headers.emplace_back(std::string(h.substr(0, colon)), std::string(value));
  }
  in.body = std::string(rest);

  static const std::vector<ClientConfig> clients = {{"svc", "E", "fuzz-token-0123456789abcdef"}};
  (void)authenticate(clients, in.headers);
  (void)authenticate(clients, in.headers, /*passThrough=*/true);
  // A pass-through route's credential is a view into the headers: never past them.
  if (const std::string_view own = shownCredential(in.headers); !own.empty()) {
    bool inside = false;
    for (const auto& [k, v] : in.headers)
      inside = inside || (own.data() >= v.data() && own.data() + own.size() <= v.data() + v.size());
    if (!inside) __builtin_trap();
  }

  const RouteMatch m = routes().match(in.path);
  if (!m.route) (void)routes().notFoundBody(in.path);
  const RouteConfig& route = m.route ? *m.route : routes().routes().front();
  const std::array<double, kTierCount> maxWait{30, 120, 600};
  const std::string body = in.body;
  const HeaderList headers = in.headers;
  const Admission a = admit(route, std::move(in), maxWait, /*consumeAuth=*/route.auth == RouteAuth::Tollgate);
  if (a.status == 0 && a.tier > Tier::P2) __builtin_trap();  // an admitted request always has a real tier
  if (a.status == 0 && a.deadlineS < 0) __builtin_trap();

  // The body as an upstream SSE stream, cut at a point the input chooses.
  SseRelay relay(a.dropUsageChunk || size % 2 == 0);
  const std::size_t cut = body.empty() ? 0 : static_cast<std::size_t>(data[0]) % (body.size() + 1);
  std::string out = relay.feed(std::string_view(body).substr(0, cut));
  out += relay.feed(std::string_view(body).substr(cut));
  out += relay.finish();
  if (out.size() > body.size()) __builtin_trap();  // the relay only ever removes

  // The input as an upstream's final answer and as the words of the gateway's own errors.
  Result r;
  r.error = size % 3 == 0 ? ErrorKind::RateLimited : ErrorKind::Network;
  r.status = size % 3 == 0 ? 429 : 0;
  r.headers = headers;
  r.body = body;
  r.errorMessage = body.substr(0, 256);
  r.retryAfterS = size % 5 == 0 ? std::nan("") : static_cast<double>(size % 1000) / 7.0;
  for (Dialect d : {Dialect::OpenAI, Dialect::Anthropic}) {
    const Answer ans = answerFor(r, d, a.deadlineS);
    if (ans.status < 100 || ans.status > 599) __builtin_trap();
    (void)errorAnswer(400, "tollgate_bad_request", a.error + body.substr(0, 64), d);
  }

  // The body as a gateway config section.
  JsonParse j = parseJsonText(body);
  if (j.ok()) {
    try {
      (void)loadGatewayConfig(j.value, engine(), "fuzz.json");
    } catch (const ConfigError&) {
    }
  }
  return 0;
}
