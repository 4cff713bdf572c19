// The gateway's pure parts: its config section, route matching, what is forwarded, tier/group/deadline per
// request, token checks, error answers that tell the truth about waiting, and the SSE usage filter.
#include "error_answer.h"
#include "gateway_config.h"
#include "request_policy.h"
#include "route_table.h"
#include "secret.h"
#include "sse_relay.h"

#include <QtTest>

#include <cmath>
#include <cstdlib>

using namespace tg;
using namespace tg::gateway;

namespace {

EngineConfig engineWith(std::initializer_list<const char*> groups) {
  EngineConfig e;
  for (const char* g : groups) {
    GroupConfig gc;
    gc.name = g;
    gc.baseUrl = "http://127.0.0.1:9";
    e.groups.push_back(gc);
  }
  return e;
}

QString configError(const nlohmann::json& j) {
  try {
    loadGatewayConfig(j, engineWith({"openai", "batch"}), "cfg.json");
  } catch (const ConfigError& e) {
    return QString::fromStdString(e.path() + ": " + e.expected());
  }
  return {};
}

RouteConfig openaiRoute() {
  RouteConfig r;
  r.prefix = "/openai";
  r.group = "openai";
  r.groups = {"openai", "batch"};
  r.defaultTier = Tier::P1;
  return r;
}

constexpr std::array<double, kTierCount> kMaxWait{30, 120, 600};

const std::string* header(const HeaderList& h, const char* name) { return findHeader(h, name); }

}  // namespace

class TestGatewayPolicy : public QObject {
  Q_OBJECT
 private slots:
  void configDefaultsAndListen() {
    auto c = loadGatewayConfig({{"routes", {{{"prefix", "/openai"}, {"group", "openai"}}}}}, engineWith({"openai"}), "f");
    QCOMPARE(c.listenHost, std::string("127.0.0.1"));
    QCOMPARE(c.port, 8088);
    QCOMPARE(c.maxBodyBytes, std::int64_t(32) * 1024 * 1024);
    QCOMPARE(c.requestHeadTimeoutS, 30);
    auto v6 = loadGatewayConfig({{"listen", "[::1]:0"}, {"routes", {{{"prefix", "/a"}, {"group", "openai"}}}}},
                                engineWith({"openai"}), "f");
    QCOMPARE(v6.listenHost, std::string("::1"));
    QCOMPARE(v6.port, 0);
  }

  void configErrorsNameThePath() {
    const nlohmann::json route = {{"prefix", "/openai"}, {"group", "openai"}};
    QVERIFY(configError({{"routes", {route}}, {"listen", "0.0.0.0:8088"}}).contains("/gateway/listen: expected a loopback"));
    QVERIFY(configError({{"routes", {route}}, {"listen", "127.0.0.1"}}).startsWith("/gateway/listen"));
    QVERIFY(configError({{"routes", {route}}, {"listen", "127.0.0.1:70000"}}).contains("port from 0 to 65535"));
    // Beyond loopback only when asked, and never without tokens.
    QVERIFY(configError({{"routes", {route}}, {"listen", "0.0.0.0:8088"}, {"allow_non_loopback", true}})
                .startsWith("/gateway/clients"));
    QVERIFY(configError({{"routes", nlohmann::json::array()}}).startsWith("/gateway/routes"));
    QVERIFY(configError({{"routes", {{{"prefix", "/x"}, {"group", "nope"}}}}}).startsWith("/gateway/routes/0/group"));
    QVERIFY(configError({{"routes", {{{"prefix", "x"}, {"group", "openai"}}}}}).startsWith("/gateway/routes/0/prefix"));
    QVERIFY(configError({{"routes", {{{"prefix", "/x/"}, {"group", "openai"}}}}}).startsWith("/gateway/routes/0/prefix"));
    QVERIFY(configError({{"routes", {{{"prefix", "/metrics"}, {"group", "openai"}}}}}).contains("/metrics"));
    QVERIFY(configError({{"routes", {route, route}}}).contains("repeats"));
    QVERIFY(configError({{"routes", {{{"prefix", "/x"}, {"group", "openai"}, {"groups", {"zzz"}}}}}})
                .startsWith("/gateway/routes/0/groups/0"));
    QVERIFY(configError({{"routes", {{{"prefix", "/x"}, {"group", "openai"}, {"default_tier", "P9"}}}}})
                .startsWith("/gateway/routes/0/default_tier"));
    QVERIFY(configError({{"routes", {route}}, {"typo", 1}}).contains("typo"));
    QVERIFY(configError({{"routes", {route}}, {"request_head_timeout_s", 0}}).startsWith("/gateway/request_head_timeout_s"));
    QVERIFY(configError({{"routes", {route}}, {"request_body_timeout_s", 0}}).startsWith("/gateway/request_body_timeout_s"));
    QVERIFY(configError({{"routes", {{{"prefix", "/x"}, {"group", "openai"}, {"auth", "own"}}}}})
                .startsWith("/gateway/routes/0/auth"));
    QVERIFY(configError({{"routes", {route}}, {"clients", {{{"name", "a"}, {"token_env", "TOLLGATE_TEST_UNSET_X"}}}}})
                .contains("TOLLGATE_TEST_UNSET_X is not set"));
    qputenv("TOLLGATE_TEST_SHORT_TOKEN", "short");
    QVERIFY(configError({{"routes", {route}}, {"clients", {{{"name", "a"}, {"token_env", "TOLLGATE_TEST_SHORT_TOKEN"}}}}})
                .contains("at least 16"));
    // The name of refused requests in metrics and history: a client so named was counted with them.
    QVERIFY(configError({{"routes", {route}}, {"clients", {{{"name", "anonymous"}, {"token_env", "X"}}}}})
                .startsWith("/gateway/clients/0/name"));
    QVERIFY(configError({{"routes", {route}}, {"metrics_token_env", "TOLLGATE_TEST_UNSET_X"}})
                .contains("TOLLGATE_TEST_UNSET_X is not set"));
    QVERIFY(configError({{"routes", {route}}, {"metrics_token_env", "TOLLGATE_TEST_SHORT_TOKEN"}})
                .startsWith("/gateway/metrics_token_env"));
    QVERIFY(configError({{"routes", {route}}, {"metrics_token_env", ""}}).startsWith("/gateway/metrics_token_env"));
  }

  void routesMatchOnSegmentBoundaries() {
    RouteConfig a = openaiRoute();
    RouteConfig b = openaiRoute();
    b.prefix = "/openai/batch";
    b.group = "batch";
    RouteTable t({a, b});
    QCOMPARE(t.match("/openai/v1/chat/completions").route->group, std::string("openai"));
    QCOMPARE(t.match("/openai/v1/chat/completions").rest, std::string("/v1/chat/completions"));
    QCOMPARE(t.match("/openai/batch/v1/x").route->group, std::string("batch"));  // longest prefix wins
    QCOMPARE(t.match("/openai").rest, std::string(""));
    QVERIFY(!t.match("/openaiX/v1").route);
    QVERIFY(!t.match("/").route);
    QVERIFY(!t.match("").route);
    const auto body = nlohmann::json::parse(t.notFoundBody("/nope\xff"));  // not UTF-8: still valid JSON
    QCOMPARE(body["error"]["routes"].size(), std::size_t(2));
  }

  // A redirect into the upstream is followed through the gateway (as nginx's proxy_redirect default rewrites it);
  // relayed as it came, the client went around the gateway, its quota and the key it adds.
  void redirectsIntoTheUpstreamStayOnTheGateway_data() {
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("expected");
    const QString base = "https://api.example.com/v1";
    QTest::newRow("absolute, same origin") << "https://api.example.com/v1/chat/x?a=1#f" << base
                                           << "/openai/chat/x?a=1#f";
    QTest::newRow("default port spelled") << "https://API.example.com:443/v1/models" << base << "/openai/models";
    QTest::newRow("absolute path") << "/v1/files/1" << base << "/openai/files/1";
    QTest::newRow("base path itself") << "https://api.example.com/v1" << base << "/openai";
    QTest::newRow("base at the root") << "http://127.0.0.1:9/v2/x" << "http://127.0.0.1:9" << "/openai/v2/x";
    QTest::newRow("outside base path") << "/v2/x" << base << "/v2/x";
    QTest::newRow("segment boundary") << "/v1x/y" << base << "/v1x/y";
    QTest::newRow("another host") << "https://elsewhere.example/v1/x" << base << "https://elsewhere.example/v1/x";
    QTest::newRow("another scheme") << "http://api.example.com/v1/x" << base << "http://api.example.com/v1/x";
    QTest::newRow("scheme-relative") << "//api.example.com/v1/x" << base << "//api.example.com/v1/x";
    QTest::newRow("relative") << "x/y" << base << "x/y";
    QTest::newRow("root path, base at the root") << "/" << "http://127.0.0.1:9" << "/openai/";
    QTest::newRow("dot segments") << "/v1/../v1/files" << base << "/openai/files";
    QTest::newRow("dot segments leaving base") << "/v1/../x" << base << "/v1/../x";
  }
  void redirectsIntoTheUpstreamStayOnTheGateway() {
    QFETCH(QString, location);
    QFETCH(QString, base);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(tg::gateway::gatewayLocation(location.toStdString(), base.toStdString(),
                                                                 "/openai/")),
             expected);
  }

  void headersForwardedAndDropped() {
    ClientRequest in{"POST", "/v1/chat/completions", "", {}, "{}"};
    in.headers = {{"Host", "127.0.0.1:8088"}, {"Authorization", "Bearer gateway-token"}, {"Content-Length", "2"},
                  {"Connection", "keep-alive, X-Private"}, {"X-Private", "1"}, {"X-Tollgate-Tier", "P0"},
                  {"X-RateLimit-Group", "batch"}, {"X-Stainless-Lang", "js"}, {"Accept-Encoding", "gzip"},
                  {"Transfer-Encoding", "chunked"}, {"OpenAI-Organization", "org-1"}};
    Admission a = admit(openaiRoute(), in, kMaxWait, /*consumeAuth=*/true);
    QCOMPARE(a.status, 0);
    QCOMPARE(a.tier, Tier::P0);
    QCOMPARE(a.group, std::string("batch"));
    HeaderList expected = {{"X-Stainless-Lang", "js"}, {"OpenAI-Organization", "org-1"}};
    QCOMPARE(a.forward, expected);
    // Pass-through keeps the client's own Authorization.
    Admission p = admit(openaiRoute(), in, kMaxWait, /*consumeAuth=*/false);
    QVERIFY(header(p.forward, "authorization"));
  }

  void tierFromHeaderThenBodyThenRoute() {
    ClientRequest in{"POST", "/v1/x", "", {{"Content-Type", "application/json"}}, R"({"model":"m","priority":"P2"})"};
    Admission a = admit(openaiRoute(), in, kMaxWait, true);
    QCOMPARE(a.tier, Tier::P2);
    QCOMPARE(a.tierSource, std::string("body"));
    QVERIFY(a.body.find("priority") == std::string::npos);  // Tollgate's word, not sent to the provider
    in.headers.emplace_back("X-Tollgate-Tier", "p0");
    QCOMPARE(admit(openaiRoute(), in, kMaxWait, true).tier, Tier::P0);
    ClientRequest plain{"POST", "/v1/x", "", {}, R"({"model":"m","priority":"high"})"};
    Admission r = admit(openaiRoute(), plain, kMaxWait, true);
    QCOMPARE(r.tier, Tier::P1);  // not a tier name: the provider's own field, left alone
    QCOMPARE(r.body, plain.body);
    ClientRequest bad{"POST", "/v1/x", "", {{"X-Tollgate-Tier", "P7"}}, ""};
    QCOMPARE(admit(openaiRoute(), bad, kMaxWait, true).status, 400);
    ClientRequest foreign{"POST", "/v1/x", "", {{"X-RateLimit-Group", "other"}}, ""};
    Admission f = admit(openaiRoute(), foreign, kMaxWait, true);
    QCOMPARE(f.status, 400);
    QVERIFY(f.error.find("openai, batch") != std::string::npos);
  }

  void deadlineFromHeadersCappedByTier() {
    ClientRequest in{"GET", "/v1/models", "", {{"X-Tollgate-Deadline", "2.5"}}, ""};
    QCOMPARE(admit(openaiRoute(), in, kMaxWait, true).deadlineS, 2.5);
    ClientRequest sdk{"GET", "/v1/models", "", {{"X-Stainless-Timeout", "600"}, {"X-Tollgate-Tier", "P0"}}, ""};
    QCOMPARE(admit(openaiRoute(), sdk, kMaxWait, true).deadlineS, 30.0);  // P0's max wait
    ClientRequest shortSdk{"GET", "/v1/models", "", {{"X-Stainless-Timeout", "10"}}, ""};
    QCOMPARE(admit(openaiRoute(), shortSdk, kMaxWait, true).deadlineS, 9.0);  // a second left for the answer
    // "1" is a timeout of 1.0-1.99 s (the SDK truncates): half of it queues, not 50 ms.
    ClientRequest oneSecond{"GET", "/v1/models", "", {{"X-Stainless-Timeout", "1"}}, ""};
    QCOMPARE(admit(openaiRoute(), oneSecond, kMaxWait, true).deadlineS, 0.5);
    ClientRequest twoSeconds{"GET", "/v1/models", "", {{"X-Stainless-Timeout", "2"}}, ""};
    QCOMPARE(admit(openaiRoute(), twoSeconds, kMaxWait, true).deadlineS, 1.0);
    for (const char* v : {"0", "-1", "nan", "inf", "1e400", "3s", ""}) {
      ClientRequest bad{"GET", "/v1/models", "", {{"X-Tollgate-Deadline", v}}, ""};
      QCOMPARE(admit(openaiRoute(), bad, kMaxWait, true).status, 400);
    }
    ClientRequest none{"GET", "/v1/models", "", {}, ""};
    QCOMPARE(admit(openaiRoute(), none, kMaxWait, true).deadlineS, 0.0);
  }

  void streamAsksForUsageOnlyWhenMissing() {
    ClientRequest s{"POST", "/v1/chat/completions", "", {}, R"({"model":"m","stream":true})"};
    Admission a = admit(openaiRoute(), s, kMaxWait, true);
    QVERIFY(a.stream);
    QVERIFY(a.dropUsageChunk);
    QCOMPARE(nlohmann::json::parse(a.body)["stream_options"]["include_usage"], true);
    ClientRequest asked{"POST", "/v1/chat/completions", "", {},
                        R"({"model":"m","stream":true,"stream_options":{"include_usage":true}})"};
    Admission b = admit(openaiRoute(), asked, kMaxWait, true);
    QVERIFY(b.stream);
    QVERIFY(!b.dropUsageChunk);
    QCOMPARE(b.body, asked.body);  // nothing to change: byte for byte
    RouteConfig anthropic = openaiRoute();
    anthropic.dialect = Dialect::Anthropic;
    Admission c = admit(anthropic, s, kMaxWait, true);
    QVERIFY(c.stream);
    QVERIFY(!c.dropUsageChunk);  // Anthropic streams report usage unasked
    ClientRequest notJson{"POST", "/v1/x", "", {}, "{\"stream\":tru"};
    QCOMPARE(admit(openaiRoute(), notJson, kMaxWait, true).body, notJson.body);
  }

  void tokensComparedWhole() {
    std::vector<ClientConfig> clients = {{"svc-a", "A", "token-aaaaaaaaaaaaaaaa"}, {"svc-b", "B", "token-bbbbbbbbbbbbbbbb"}};
    QCOMPARE(authenticate(clients, {{"Authorization", "Bearer token-bbbbbbbbbbbbbbbb"}})->name, std::string("svc-b"));
    QCOMPARE(authenticate(clients, {{"x-api-key", "token-aaaaaaaaaaaaaaaa"}})->name, std::string("svc-a"));
    QVERIFY(!authenticate(clients, {{"Authorization", "Bearer token-aaaaaaaaaaaaaaa"}}));   // a prefix
    QVERIFY(!authenticate(clients, {{"Authorization", "Bearer token-aaaaaaaaaaaaaaaaa"}})); // longer
    QVERIFY(!authenticate(clients, {{"Authorization", "Bearer "}}));
    QVERIFY(!authenticate(clients, {}));
    QVERIFY(!authenticate(clients, {{"Authorization", "token-aaaaaaaaaaaaaaaa"}}));  // not a Bearer
    // Pass-through routes: Authorization / x-api-key carry the client's own key, the token X-Tollgate-Token.
    const HeaderList own = {{"Authorization", "Bearer sk-own-key-1234"}, {"X-Tollgate-Token", "token-aaaaaaaaaaaaaaaa"}};
    QCOMPARE(authenticate(clients, own, true)->name, std::string("svc-a"));
    QVERIFY(!authenticate(clients, {{"Authorization", "Bearer token-aaaaaaaaaaaaaaaa"}}, true));
    QCOMPARE(std::string(shownCredential(own)), std::string("sk-own-key-1234"));
    QCOMPARE(std::string(shownCredential({{"x-api-key", "sk-ant-1"}})), std::string("sk-ant-1"));
    QVERIFY(shownCredential({{"Authorization", "Basic abc"}}).empty());
    auto c = loadGatewayConfig({{"routes", {{{"prefix", "/own"}, {"group", "openai"}, {"auth", "pass_through"}}}}},
                               engineWith({"openai"}), "f");
    QCOMPARE(int(c.routes.at(0).auth), int(RouteAuth::PassThrough));
    // The client's key is forwarded (not consumed), the token is not.
    Admission a = admit(c.routes.at(0), ClientRequest{"POST", "/v1/x", "", own, "{}"}, kMaxWait, false);
    QVERIFY(header(a.forward, "authorization") && *header(a.forward, "authorization") == "Bearer sk-own-key-1234");
    QVERIFY(!header(a.forward, "x-tollgate-token"));
  }

  void shedAnswersTellTheTruth() {
    Result r;
    r.error = ErrorKind::Shed;
    r.shed = ShedReason::Deadline;
    r.retryAfterS = 4.2;
    r.errorMessage = "deadline passed while queued";
    Answer a = answerFor(r, Dialect::OpenAI, std::nan(""));
    QCOMPARE(a.status, 429);
    QCOMPARE(*header(a.headers, "retry-after"), std::string("5"));
    QCOMPARE(*header(a.headers, "retry-after-ms"), std::string("4200"));
    QCOMPARE(*header(a.headers, "x-should-retry"), std::string("true"));
    QCOMPARE(nlohmann::json::parse(a.body)["error"]["type"], "tollgate_shed_deadline");
    // Longer than the client's own budget, or than the SDKs honour: don't retry.
    QCOMPARE(*header(answerFor(r, Dialect::OpenAI, 3.0).headers, "x-should-retry"), std::string("false"));
    r.retryAfterS = 75;
    QCOMPARE(*header(answerFor(r, Dialect::OpenAI, std::nan("")).headers, "x-should-retry"), std::string("false"));
    // Unknown wait (operator pause): no invented Retry-After.
    Result paused;
    paused.error = ErrorKind::Shed;
    paused.shed = ShedReason::TierPaused;
    paused.retryUseless = true;  // as the scheduler says of an operator's pause
    Answer p = answerFor(paused, Dialect::Anthropic, std::nan(""));
    QCOMPARE(p.status, 503);
    QVERIFY(!header(p.headers, "retry-after"));
    QCOMPARE(*header(p.headers, "x-should-retry"), std::string("false"));
    QCOMPARE(nlohmann::json::parse(p.body)["error"]["type"], "overloaded_error");
    // The gateway's own refusals in Anthropic's types (its errors page): callers switch on them.
    for (const auto& [status, type] : std::vector<std::pair<int, std::string>>{
             {400, "invalid_request_error"}, {401, "authentication_error"}, {403, "permission_error"},
             {404, "not_found_error"}, {413, "request_too_large"}, {429, "rate_limit_error"}, {504, "timeout_error"}})
      QCOMPARE(nlohmann::json::parse(errorAnswer(status, "tollgate_x", "m", Dialect::Anthropic).body)["error"]["type"]
                   .get<std::string>(),
               type);
    // Held back by concurrency alone: no invented wait, and the client's own backoff decides.
    Result busy;
    busy.error = ErrorKind::Shed;
    busy.shed = ShedReason::Deadline;
    Answer b = answerFor(busy, Dialect::OpenAI, std::nan(""));
    QCOMPARE(b.status, 429);
    QVERIFY(!header(b.headers, "retry-after") && !header(b.headers, "x-should-retry"));
    Result net;
    net.error = ErrorKind::Network;
    net.errorMessage = "Couldn't connect to server";
    Answer n = answerFor(net, Dialect::OpenAI, std::nan(""));
    QCOMPARE(n.status, 502);
    QVERIFY(n.body.find("Couldn't connect") != std::string::npos);
    // A final upstream 429 is relayed as it came, its own Retry-After kept.
    Result up;
    up.error = ErrorKind::RateLimited;
    up.status = 429;
    up.retryAfterS = 7;
    up.headers = {{"Retry-After", "7"}, {"Content-Length", "2"}, {"x-ratelimit-remaining-requests", "0"}};
    up.body = "{}";
    Answer u = answerFor(up, Dialect::OpenAI, std::nan(""));
    QCOMPARE(u.status, 429);
    QCOMPARE(u.body, std::string("{}"));
    QVERIFY(!header(u.headers, "content-length"));
    QCOMPARE(*header(u.headers, "retry-after"), std::string("7"));
    QVERIFY(!header(u.headers, "retry-after-ms"));
  }

  void sseRelayDropsOnlyTheUnaskedUsageChunk() {
    const std::string content = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n";
    const std::string usage = "data: {\"choices\":[],\"usage\":{\"total_tokens\":9}}\n\n";
    const std::string done = "data: [DONE]\n\n";
    SseRelay pass(false);
    QCOMPARE(pass.feed(content + usage), content + usage);
    SseRelay filter(true);
    std::string out;
    const std::string all = content + usage + done;
    for (char ch : all) out += filter.feed(std::string_view(&ch, 1));  // one byte at a time
    out += filter.finish();
    QCOMPARE(out, content + done);
    SseRelay crlf(true);
    QCOMPARE(crlf.feed("data: {\"choices\":[],\"usage\":{}}\r\n\r\ndata: [DONE]\r\n\r\n"), std::string("data: [DONE]\r\n\r\n"));
  }

  // A stream the request did not announce is known by its type; JSON lines go out line by line, redacted.
  void streamTypesAndLineFraming() {
    QCOMPARE(streamFramingOf("text/event-stream; charset=utf-8"), std::optional(StreamFraming::Events));
    QCOMPARE(streamFramingOf(" Application/X-NDJSON"), std::optional(StreamFraming::Lines));
    QCOMPARE(streamFramingOf("application/jsonl;charset=utf-8"), std::optional(StreamFraming::Lines));
    QVERIFY(!streamFramingOf("application/json"));
    QVERIFY(!streamFramingOf("text/event-streams"));
    QVERIFY(!streamFramingOf(""));

    const std::string key = "sk-ndjson-echo-secret-0123456789";
    tg::SecretRegistry::add(key);
    SseRelay lines(true, StreamFraming::Lines);  // no usage filter on lines: the flag is for OpenAI's events
    const std::string first = "{\"message\":{\"content\":\"a\"},\"done\":false}\n";
    QCOMPARE(lines.feed(first + "{\"message\":{\"content\":\"" + key.substr(0, 9)), first);  // a line at a time
    const std::string out = lines.feed(key.substr(9) + "\"},\"done\":true}\n");
    QVERIFY2(out.find(key) == std::string::npos && out.find(tg::keyFingerprint(key)) != std::string::npos, out.c_str());
    QVERIFY(out.size() > 2 && out.back() == '\n');
    QCOMPARE(lines.finish(), std::string());
    SseRelay events(false);  // the same bytes framed as events wait for a blank line
    QCOMPARE(events.feed(first), std::string());
  }

  // An upstream that echoes the key it was sent (a debug header, an error quoting the request) must not hand
  // it to the gateway's client: relayed answers and streams are redacted, a key cut across two pieces too.
  void relayedAnswersNeverCarryAKey() {
    const std::string key = "sk-policy-echo-secret-0123456789";
    tg::SecretRegistry::add(key);
    const std::string fp = tg::keyFingerprint(key);
    Result up;
    up.status = 401;
    up.error = ErrorKind::Http;
    up.headers = {{"X-Echo", "Bearer " + key}};
    up.body = "{\"error\":\"bad key Bearer " + key + "\"}";
    const Answer a = answerFor(up, Dialect::OpenAI, std::nan(""));
    QVERIFY2(a.body.find(key) == std::string::npos && a.body.find(fp) != std::string::npos, a.body.c_str());
    QVERIFY(header(a.headers, "x-echo")->find(key) == std::string::npos);
    for (bool filter : {false, true}) {
      SseRelay relay(filter);
      const std::string event = "data: {\"choices\":[{\"delta\":{\"content\":\"" + key + "\"}}]}\n\n";
      std::string out = relay.feed(std::string_view(event).substr(0, 30));  // the key is cut here
      QCOMPARE(out, std::string());  // the incomplete event waits for its blank line
      out += relay.feed(std::string_view(event).substr(30));
      out += relay.finish();
      QVERIFY2(out.find(key) == std::string::npos && out.find(fp) != std::string::npos, out.c_str());
    }
    // Not an event stream: passed on past kMaxHeld, less a tail that keeps a key cut at the end whole.
    SseRelay plain(false);
    const std::string filler(SseRelay::kMaxHeld, 'x');
    std::string out = plain.feed(filler + key.substr(0, 10));
    QVERIFY(out.size() >= SseRelay::kMaxHeld - SseRelay::kKeep);
    out += plain.feed(key.substr(10) + "}");
    out += plain.finish();
    QVERIFY(out.find(key) == std::string::npos && out.find(fp) != std::string::npos);
    QCOMPARE(out.size(), filler.size() + fp.size() + 1);
  }
};

QTEST_GUILESS_MAIN(TestGatewayPolicy)
#include "test_gateway_policy.moc"
