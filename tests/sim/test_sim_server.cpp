// SimServer over real sockets on loopback (port 0): dialect headers, 429 + Retry-After, per-key quotas,
// group mapping, stats, the early counter, the schedule, tiers, pipelining order, control endpoints.
#include "sim_server.h"
#include "sim_test_client.h"

#include <QtTest>

#include <chrono>
#include <regex>
#include <thread>

using namespace tg;
using nlohmann::json;

namespace {

SimConfig configFrom(const char* text) { return SimConfig::fromJson(json::parse(text), "test"); }

const SimTestClient::Headers kGroupG = {{"X-RateLimit-Group", "g"}};

}  // namespace

class TestSimServer : public QObject {
  Q_OBJECT

 private slots:
  void dialectHeaders_data();
  void dialectHeaders();
  void limitedAfterQuotaWithRetryAfter();
  void headerlessIsBare();
  void perKeySeparation();
  void groupMapping();
  void groupByPath();
  void statsEndpointCounts();
  void earlyCounterWhenRetryAfterIgnored();
  void honouringRetryAfterIsNeverEarly();
  void scheduleScalesQuota();
  void perTierCounts();
  void pipelinedRepliesKeepOrder();
  void tokensDimension();
  void anthropicAnswerIsAMessage();
  void tokensStartSpent();
  void controlEndpoints();
  void refusesNonLoopback();
  void stopIsIdempotent();
};

void TestSimServer::dialectHeaders_data() {
  QTest::addColumn<QString>("dialect");
  QTest::addColumn<QStringList>("expected");  // "name=regex"
  QTest::newRow("x-ratelimit") << "x-ratelimit"
                               << QStringList{"x-ratelimit-limit=3", "x-ratelimit-remaining=2",
                                              "x-ratelimit-reset=60", "x-ratelimit-group=g"};
  QTest::newRow("openai") << "openai"
                          << QStringList{"x-ratelimit-limit-requests=3", "x-ratelimit-remaining-requests=2",
                                         "x-ratelimit-reset-requests=(1m0s|59\\.\\d+s)",
                                         "x-ratelimit-limit-tokens=1000", "x-ratelimit-remaining-tokens=9\\d\\d",
                                         "x-ratelimit-reset-tokens=(\\d+h)?(\\d+m)?\\d+(\\.\\d+)?s|\\d+ms"};
  QTest::newRow("anthropic") << "anthropic"
                             << QStringList{"anthropic-ratelimit-requests-limit=3",
                                            "anthropic-ratelimit-requests-remaining=2",
                                            "anthropic-ratelimit-requests-reset=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ",
                                            "anthropic-ratelimit-tokens-limit=1000"};
  QTest::newRow("github") << "github"
                          << QStringList{"x-ratelimit-limit=3", "x-ratelimit-remaining=2", "x-ratelimit-used=1",
                                         "x-ratelimit-reset=\\d{10}", "x-ratelimit-resource=g"};
  QTest::newRow("ietf") << "ietf"
                        << QStringList{"ratelimit-limit=3", "ratelimit-remaining=2", "ratelimit-reset=60",
                                       "ratelimit-policy=3;w=60"};
  QTest::newRow("ietf-structured") << "ietf-structured"
                                   << QStringList{"ratelimit-policy=\"g\";q=3;w=60", "ratelimit=\"g\";r=2;t=60"};
}

void TestSimServer::dialectHeaders() {
  QFETCH(QString, dialect);
  QFETCH(QStringList, expected);
  auto cfg = configFrom(R"({"groups":{"g":{"limit":3,"window_s":60,"tokens_per_window":1000}}})");
  cfg.dialect = SimConfig::fromJson(json{{"dialect", dialect.toStdString()}}, "t").dialect;
  SimServer sim(cfg);
  SimTestClient c(sim.start());
  QVERIFY(c.connected());
  const auto r = c.request("POST", "/v1/chat", kGroupG, R"({"max_tokens":20})");
  QCOMPARE(r.status, 200);
  QVERIFY(r.has("date"));
  for (const auto& e : expected) {
    const auto eq = e.indexOf('=');
    const std::string name = e.left(eq).toStdString();
    const std::string want = e.mid(eq + 1).toStdString();
    QVERIFY2(r.has(name), qPrintable("missing header " + e.left(eq)));
    QVERIFY2(std::regex_match(r.header(name), std::regex(want)),
             qPrintable(QString("%1: %2 does not match %3")
                            .arg(e.left(eq), QString::fromStdString(r.header(name)), e.mid(eq + 1))));
  }
}

void TestSimServer::limitedAfterQuotaWithRetryAfter() {
  for (const char* dialect : {"x-ratelimit", "github"}) {
    auto cfg = configFrom(R"({"groups":{"g":{"limit":3,"window_s":30}}})");
    cfg.dialect = SimConfig::fromJson(json{{"dialect", dialect}}, "t").dialect;
    SimServer sim(cfg);
    SimTestClient c(sim.start());
    for (int i = 0; i < 3; ++i) QCOMPARE(c.request("GET", "/x", kGroupG).status, 200);
    const auto r = c.request("GET", "/x", kGroupG);
    const bool github = std::string(dialect) == "github";
    QCOMPARE(r.status, github ? 403 : 429);
    const int retryAfter = std::atoi(r.header("retry-after").c_str());
    QVERIFY2(retryAfter >= 29 && retryAfter <= 30, r.header("retry-after").c_str());  // rounded up
    QCOMPARE(r.header("x-ratelimit-remaining"), std::string("0"));
    QVERIFY2(QString::fromStdString(r.body).contains("limit 3 per 30 s"), r.body.c_str());
  }
}

void TestSimServer::headerlessIsBare() {
  SimServer sim(configFrom(R"({"dialect":"none","groups":{"g":{"limit":1,"window_s":30}}})"));
  SimTestClient c(sim.start());
  QCOMPARE(c.request("GET", "/x", kGroupG).status, 200);
  const auto r = c.request("GET", "/x", kGroupG);
  QCOMPARE(r.status, 429);
  QVERIFY(!r.has("retry-after"));
  QVERIFY(!r.has("x-ratelimit-limit") && !r.has("ratelimit-policy") && !r.has("x-ratelimit-remaining"));
}

void TestSimServer::perKeySeparation() {
  SimServer sim(configFrom(R"({"groups":{"g":{"limit":2,"window_s":30,"per_key":true}}})"));
  SimTestClient c(sim.start());
  const SimTestClient::Headers a = {{"X-RateLimit-Group", "g"}, {"Authorization", "Bearer sk-key-a"}};
  const SimTestClient::Headers b = {{"X-RateLimit-Group", "g"}, {"x-api-key", "sk-key-b"}};
  QCOMPARE(c.request("GET", "/x", a).status, 200);
  QCOMPARE(c.request("GET", "/x", a).status, 200);
  QCOMPARE(c.request("GET", "/x", a).status, 429);
  QCOMPARE(c.request("GET", "/x", b).status, 200);
  const auto s = sim.stats();
  const auto& keys = s["groups"]["g"]["keys"];
  QCOMPARE(keys.size(), std::size_t(2));
  const std::string dump = s.dump();
  QVERIFY2(dump.find("sk-key-a") == std::string::npos, "a key leaked into stats");
  for (const auto& [fp, k] : keys.items()) QVERIFY(QString::fromStdString(fp).contains(QRegularExpression("^k:[0-9a-f]{8}$")));
}

void TestSimServer::groupMapping() {
  SimServer sim(configFrom(
      R"({"default_group":"d","groups":{"a":{"limit":1,"window_s":30},"b":{"limit":1,"window_s":30}}})"));
  SimTestClient c(sim.start());
  QCOMPARE(c.request("GET", "/x", {{"X-RateLimit-Group", "a"}}).header("x-ratelimit-group"), std::string("a"));
  QCOMPARE(c.request("GET", "/x", {{"x-ratelimit-group", "b"}}).header("x-ratelimit-group"), std::string("b"));
  QCOMPARE(c.request("GET", "/x", {{"X-RateLimit-Group", "a"}}).status, 429);
  // Unknown and absent groups go to the implicit, unlimited default group.
  for (int i = 0; i < 5; ++i) {
    const auto r = c.request("GET", "/x", {{"X-RateLimit-Group", "zzz"}});
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("x-ratelimit-group"), std::string("d"));
  }
  QCOMPARE(sim.stats()["groups"]["d"]["requests"].get<int>(), 5);
}

void TestSimServer::groupByPath() {
  SimServer sim(configFrom(R"({"group_by":"path","groups":{"chat":{"paths":["/v1/chat"]},
                                "emb":{"paths":["/v1/emb","/v2/emb"]}}})"));
  SimTestClient c(sim.start());
  QCOMPARE(c.request("GET", "/v1/chat/completions").header("x-ratelimit-group"), std::string("chat"));
  QCOMPARE(c.request("GET", "/v2/embeddings?x=1").header("x-ratelimit-group"), std::string("emb"));
  QCOMPARE(c.request("GET", "/other").header("x-ratelimit-group"), std::string("default"));
}

void TestSimServer::statsEndpointCounts() {
  SimServer sim(configFrom(R"({"groups":{"g":{"limit":2,"window_s":30}}})"));
  SimTestClient c(sim.start());
  for (int i = 0; i < 4; ++i) c.request("GET", "/x", kGroupG);
  for (int i = 0; i < 3; ++i) QCOMPARE(c.request("GET", "/__sim/stats").status, 200);  // never limited
  const auto r = c.request("GET", "/__sim/stats");
  const auto s = json::parse(r.body);
  QCOMPARE(s["totals"]["requests"].get<int>(), 4);  // stats requests are not counted
  QCOMPARE(s["groups"]["g"]["ok"].get<int>(), 2);
  QCOMPARE(s["groups"]["g"]["r429"].get<int>(), 2);
  QCOMPARE(s["groups"]["g"]["limit"].get<double>(), 2.0);
  QVERIFY(s["uptime_s"].get<double>() >= 0);
  const auto& hist = s["groups"]["g"]["history"];
  QVERIFY(!hist.empty() && hist.size() <= 120);
  int ok = 0, r429 = 0;
  for (const auto& h : hist) ok += h["ok"].get<int>(), r429 += h["r429"].get<int>();
  QCOMPARE(ok, 2);
  QCOMPARE(r429, 2);
  QCOMPARE(c.request("POST", "/__sim/reset").status, 200);
  QCOMPARE(sim.stats()["totals"]["requests"].get<int>(), 0);
}

void TestSimServer::earlyCounterWhenRetryAfterIgnored() {
  SimServer sim(configFrom(R"({"early_grace_ms":0,"groups":{"g":{"limit":1,"window_s":30}}})"));
  SimTestClient c(sim.start());
  const SimTestClient::Headers h = {{"X-RateLimit-Group", "g"}, {"Authorization", "Bearer k1"}};
  QCOMPARE(c.request("GET", "/x", h).status, 200);
  QCOMPARE(c.request("GET", "/x", h).status, 429);
  QCOMPARE(sim.stats()["groups"]["g"]["early"].get<int>(), 0);
  QCOMPARE(c.request("GET", "/x", h).status, 429);  // ignored Retry-After
  QCOMPARE(c.request("GET", "/x", h).status, 429);
  const auto s = sim.stats();
  QCOMPARE(s["groups"]["g"]["early"].get<int>(), 2);
  QCOMPARE(s["totals"]["early"].get<int>(), 2);
  // Another key was told nothing: not early.
  QCOMPARE(c.request("GET", "/x", {{"X-RateLimit-Group", "g"}, {"Authorization", "Bearer k2"}}).status, 200);
  QCOMPARE(sim.stats()["groups"]["g"]["early"].get<int>(), 2);
}

void TestSimServer::honouringRetryAfterIsNeverEarly() {
  for (const char* fmt : {"seconds", "ms"}) {
    auto cfg = configFrom(R"({"early_grace_ms":0,"groups":{"g":{"algorithm":"gcra","limit":4,"window_s":1,"burst":1}}})");
    cfg.retryAfterFormat = SimConfig::fromJson(json{{"retry_after_format", fmt}}, "t").retryAfterFormat;
    SimServer sim(cfg);
    SimTestClient c(sim.start());
    int limited = 0;
    for (int i = 0; i < 3; ++i) {
      auto r = c.request("GET", "/x", kGroupG);
      if (r.status != 429) continue;
      ++limited;
      const double wait = r.has("retry-after-ms") ? std::atof(r.header("retry-after-ms").c_str()) / 1000
                                                  : std::atof(r.header("retry-after").c_str());
      QVERIFY(wait > 0);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));  // the client honours the server's word
      QCOMPARE(c.request("GET", "/x", kGroupG).status, 200);             // and is let through
    }
    QVERIFY(limited > 0);
    QCOMPARE(sim.stats()["groups"]["g"]["early"].get<int>(), 0);
  }
}

void TestSimServer::scheduleScalesQuota() {
  SimServer sim(configFrom(R"({"groups":{"g":{"limit":10,"window_s":30}},
      "schedule":[{"at_s":0.3,"action":"scale_quota","group":"*","factor":0.5}]})"));
  SimTestClient c(sim.start());
  QCOMPARE(c.request("GET", "/x", kGroupG).header("x-ratelimit-limit"), std::string("10"));
  QVERIFY(waitFor([&] { return sim.stats()["groups"]["g"]["limit"].get<double>() == 5.0; }));
  const auto r = c.request("GET", "/x", kGroupG);
  QCOMPARE(r.header("x-ratelimit-limit"), std::string("5"));
  QCOMPARE(r.header("x-ratelimit-remaining"), std::string("3"));
}

void TestSimServer::perTierCounts() {
  SimServer sim(configFrom(R"({"groups":{"g":{"limit":100,"window_s":30}}})"));
  SimTestClient c(sim.start());
  for (const char* t : {"P0", "P0", "P2", "p1", "bogus"}) c.request("GET", "/x", {{"X-RateLimit-Group", "g"}, {"X-Tollgate-Tier", t}});
  c.request("GET", "/x", kGroupG);
  const auto tiers = sim.stats()["groups"]["g"]["tiers"];
  QCOMPARE(tiers["P0"]["requests"].get<int>(), 2);
  QCOMPARE(tiers["P1"]["requests"].get<int>(), 1);
  QCOMPARE(tiers["P2"]["requests"].get<int>(), 1);
  QCOMPARE(tiers["none"]["requests"].get<int>(), 2);
}

void TestSimServer::pipelinedRepliesKeepOrder() {
  SimServer sim(configFrom(R"({"latency_ms":{"distribution":"uniform","mean":40,"p95":75}})"));
  SimTestClient c(sim.start());
  std::string batch;
  for (int i = 0; i < 10; ++i) batch += SimTestClient::format("GET", "/p" + std::to_string(i), {}, {});
  QVERIFY(c.sendRaw(batch));
  for (int i = 1; i <= 10; ++i) {
    const auto r = c.readResponse();
    QCOMPARE(r.status, 200);
    QCOMPARE(json::parse(r.body)["id"].get<std::string>(), "sim-" + std::to_string(i));
  }
  const auto s = sim.stats();
  QVERIFY2(s["totals"]["max_concurrent"].get<int>() >= 2, s["totals"].dump().c_str());
  QCOMPARE(s["totals"]["in_flight"].get<int>(), 0);
}

void TestSimServer::tokensDimension() {
  SimServer sim(configFrom(
      R"({"dialect":"openai","retry_after_format":"ms","groups":{"g":{"limit":100,"window_s":60,"tokens_per_window":100}}})"));
  SimTestClient c(sim.start());
  auto r = c.request("POST", "/v1/chat", kGroupG, R"({"max_tokens":80})");
  QCOMPARE(r.status, 200);
  const auto usage = json::parse(r.body)["usage"];
  QCOMPARE(usage["completion_tokens"].get<int>(), 40);
  QCOMPARE(usage["total_tokens"].get<int>(), usage["prompt_tokens"].get<int>() + 40);
  r = c.request("POST", "/v1/chat", kGroupG, R"({"max_tokens":80})");
  QCOMPARE(r.status, 429);
  QVERIFY(r.has("retry-after-ms") && r.has("retry-after"));
  QVERIFY2(QString::fromStdString(r.body).contains("tokens"), r.body.c_str());
  QCOMPARE(c.request("POST", "/v1/chat", kGroupG, R"({"max_tokens":500})").status, 413);  // can never fit
}

// The anthropic dialect answers with a Message, as the anthropic SDK reads one (it read no content at all).
void TestSimServer::anthropicAnswerIsAMessage() {
  SimServer sim(configFrom(R"({"dialect":"anthropic","groups":{"g":{"limit":100,"window_s":60}}})"));
  SimTestClient c(sim.start());
  const auto r = c.request("POST", "/v1/messages", kGroupG, R"({"model":"claude-x","max_tokens":80})");
  QCOMPARE(r.status, 200);
  const auto m = json::parse(r.body);
  QCOMPARE(m["type"].get<std::string>(), std::string("message"));
  QCOMPARE(m["role"].get<std::string>(), std::string("assistant"));
  QCOMPARE(m["model"].get<std::string>(), std::string("claude-x"));
  QCOMPARE(m["content"][0]["type"].get<std::string>(), std::string("text"));
  QVERIFY(!m["content"][0]["text"].get<std::string>().empty());
  QCOMPARE(m["stop_reason"].get<std::string>(), std::string("end_turn"));
  QVERIFY(m["id"].get<std::string>().rfind("msg_sim_", 0) == 0);
  QCOMPARE(m["usage"]["output_tokens"].get<int>(), 40);
  QVERIFY(m["usage"]["input_tokens"].get<int>() > 0 && !m["usage"].contains("total_tokens"));
}

// A key's token bucket that starts spent refuses the first request until its own cost has refilled, and says
// when; every key starts spent, and the request dimension does not.
void TestSimServer::tokensStartSpent() {
  SimServer sim(configFrom(R"({"dialect":"openai","retry_after_format":"ms","groups":{"g":{"algorithm":"token-bucket",)"
                           R"("limit":100,"window_s":60,"tokens_per_window":600,"tokens_start_spent":true}}})"));
  SimTestClient c(sim.start());
  const std::string body = R"({"max_tokens":16})";  // 16 + 17 bytes / 4 = 20 tokens: 2 s of a 10/s refill
  for (const char* key : {"Bearer a", "Bearer b"}) {
    auto headers = kGroupG;
    headers.push_back({"Authorization", key});
    const auto r = c.request("POST", "/v1/chat", headers, body);
    QCOMPARE(r.status, 429);
    QCOMPARE(r.header("x-ratelimit-remaining-tokens"), std::string("0"));
    QCOMPARE(r.header("x-ratelimit-remaining-requests"), std::string("100"));
    const double waitMs = std::stod(r.header("retry-after-ms"));
    QVERIFY2(waitMs > 1900 && waitMs <= 2000, r.header("retry-after-ms").c_str());
  }
}

void TestSimServer::controlEndpoints() {
  SimServer sim(configFrom(R"({"groups":{"g":{"limit":100,"window_s":30}}})"));
  SimTestClient c(sim.start());
  QCOMPARE(c.request("POST", "/__sim/control", {}, R"({"action":"set_limit","group":"g","limit":1})").status, 200);
  QCOMPARE(c.request("GET", "/x", kGroupG).header("x-ratelimit-limit"), std::string("1"));
  QCOMPARE(c.request("POST", "/__sim/control", {}, R"({"action":"set_limit","group":"nope","limit":1})").status, 400);
  QCOMPARE(c.request("POST", "/__sim/control", {}, R"({"action":"scale_quota","factor":0})").status, 400);
  QCOMPARE(c.request("POST", "/__sim/control", {}, "not json").status, 400);
  sim.scaleQuota("*", 4);
  QCOMPARE(sim.stats()["groups"]["g"]["limit"].get<double>(), 4.0);
  // Under one request a window, every request would be "too large" (413): refused, or held at one.
  QCOMPARE(c.request("POST", "/__sim/control", {}, R"({"action":"set_limit","group":"g","limit":0.5})").status, 400);
  QVERIFY_EXCEPTION_THROWN(sim.setLimit("g", 0.5), std::invalid_argument);
  sim.setLimit("g", 20);
  sim.scaleQuota("*", 0.01);
  QCOMPARE(sim.stats()["groups"]["g"]["limit"].get<double>(), 1.0);
  const auto held = c.request("GET", "/x", kGroupG);
  QVERIFY2(held.status == 200 || held.status == 429, std::to_string(held.status).c_str());
  QVERIFY_EXCEPTION_THROWN(sim.setLimit("nope", 1), std::invalid_argument);
  QCOMPARE(c.request("POST", "/__sim/control", {}, R"({"action":"outage","duration_s":30})").status, 200);
  QCOMPARE(c.request("GET", "/x", kGroupG).status, 503);
  QCOMPARE(sim.stats()["groups"]["g"]["r5xx"].get<int>(), 1);
  QCOMPARE(c.request("GET", "/__sim/stats").status, 200);  // control plane still answers in an outage

  SimServer sim2(configFrom(R"({})"));
  SimTestClient c2(sim2.start());
  QCOMPARE(c2.request("POST", "/__sim/control", {}, R"({"action":"reset_connections","duration_s":30})").status, 200);
  QCOMPARE(c2.request("GET", "/x").status, 0);  // closed without a response
  QVERIFY(waitFor([&] { return sim2.stats()["totals"]["resets"].get<int>() == 1; }));
}

void TestSimServer::refusesNonLoopback() {
  SimServer sim(SimConfig{});
  try {
    sim.start("0.0.0.0", 0);
    QFAIL("listened on a non-loopback address");
  } catch (const std::runtime_error& e) {
    QVERIFY2(QString(e.what()).contains("loopback"), e.what());
  }
  QVERIFY(sim.start("127.0.0.1", 0) > 0);
}

void TestSimServer::stopIsIdempotent() {
  SimServer sim(SimConfig{});
  sim.stop();
  const int port = sim.start();
  SimTestClient c(port);
  QCOMPARE(c.request("GET", "/x").status, 200);
  sim.stop();
  sim.stop();
  QCOMPARE(c.request("GET", "/x").status, 0);
}

QTEST_GUILESS_MAIN(TestSimServer)
#include "test_sim_server.moc"
