// The per-minute request table (requests_1m): attempts folded per minute, group, key and endpoint.
// Real SQLite files in a temporary directory; time set by hand (tgtest::kT0).
#include "history_fixture.h"
#include "history_reader.h"
#include "history_store.h"
#include "request_aggregator.h"

#include <QtTest>

using namespace tg;
using namespace tgtest;

class TestHistoryAggregation : public TempDirTest {
  Q_OBJECT

 private slots:
  void requestTableAggregatesPerMinute();
  void r429CountsTheVerdictNotTheStatus_data();
  void r429CountsTheVerdictNotTheStatus();
  void requestsPerClient();
  void endpointsAreRoutesAndBounded();
};

// A path with an object's id in it is one route, not a row per object (20,000 file ids were 20,000 rows a minute);
// past 64 endpoints in a group's minute, the rest share one "(other)" row.
void TestHistoryAggregation::endpointsAreRoutesAndBounded() {
  QCOMPARE(endpointRoute("/v1/files/file-9fQe2Ad7Kx3mB8pL/content"), std::string("/v1/files/{id}/content"));
  QCOMPARE(endpointRoute("/v1/threads/thread_Ab3Cd5Ef7Gh9Jk1Lm3No5Pq/runs/run_Zx9Yw8Vu7Ts6Rq5P"),
           std::string("/v1/threads/{id}/runs/{id}"));
  QCOMPARE(endpointRoute("/v1/customers/cus_NffrFeUfNV2Hib/balance_transactions"),
           std::string("/v1/customers/{id}/balance_transactions"));
  QCOMPARE(endpointRoute("/v1/checkout/sessions/cs_test_a1B2c3D4e5F6g7H8"), std::string("/v1/checkout/sessions/{id}"));
  QCOMPARE(endpointRoute("/users/12345/repos"), std::string("/users/{id}/repos"));
  QCOMPARE(endpointRoute("/v1/items/3f2b8c1e-9a4d-4e7f-8b6a-0c1d2e3f4a5b"), std::string("/v1/items/{id}"));
  QCOMPARE(endpointRoute("/blobs/0123456789abcdef0123"), std::string("/blobs/{id}"));
  // A credential in the path (Telegram's bot token, a JWT): not kept in history nor in a log line.
  QCOMPARE(endpointRoute("/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage"),
           std::string("/{id}/sendMessage"));
  QCOMPARE(endpointRoute("/hooks/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
           std::string("/hooks/{id}"));
  QCOMPARE(endpointRoute("/bot123456789:AAE_kd8Xq-Zr9sLpQ_wTm3nYvB4cJ-aB2/getUpdates"),
           std::string("/{id}/getUpdates"));
  QCOMPARE(urlPath("http://127.0.0.1:9/bot123:x/send?api_key=1#f"), std::string("/bot123:x/send"));
  QCOMPARE(urlPath("http://127.0.0.1:9"), std::string("/"));
  for (const char* kept : {"/v1/chat/completions", "/v1/models/gpt-4o-mini-2024-07-18", "/v1/messages",
                           "/v1beta/models/gemini-1.5-pro:generateContent", "/openai/deployments/my-gpt4o/chat",
                           "/v1/models/claude-3-5-sonnet-20241022", "/v1/balance_transactions",
                           "/v1/entitlements/active_entitlements", "/orgs/acme/outside_collaborators",
                           "/orgs/acme/settings/network-configurations", "/openai/deployments/prod-gpt4oMini0718/chat",
                           "/models/meta-llama/Meta-Llama-3.1-8B-Instruct", "/models/Qwen/Qwen2.5-72B-Instruct",
                           "/v1/models/DeepSeek-R1-Distill-Qwen-32B", "/openai/deployments/GPT4o-Mini-Prod-2024/chat",
                           "/models/TinyLlama-1.1B-Chat-v1.0", "/models/Mistral-7B-Instruct-v0.3",
                           "/openai/deployments/MyGpt4oDeployment01/chat", "/openai/deployments/GPT4oMiniProd2024",
                           "/models/Qwen2VL72BInstruct",
                           "/", ""})
    QCOMPARE(endpointRoute(kept), std::string(kept));

  const QString path = file("endpoints.db");
  const EpochMs minute = kT0 - kT0 % 60'000;
  {
    auto store = openStore(path);
    QVERIFY(store);
    AttemptRecord a;
    a.group = "openai";
    a.keyFingerprint = "k:0000aaaa";
    a.status = 200;
    a.latencyMs = 10;
    for (int i = 0; i < 200; ++i) {
      a.tsMs = minute + i * 100;
      a.endpoint = "/v1/files/file-" + std::to_string(100000000000LL + i) + "abcd/content";
      store->append(a);
    }
    for (int i = 0; i < 100; ++i) {  // not ids: names a route template cannot tell from a route
      a.tsMs = minute + 30'000 + i * 100;
      a.endpoint = "/v1/reports/weekly-" + std::to_string(i);
      store->append(a);
    }
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  auto rows = reader->requestTable(minute, minute + 60'000, true);
  QVERIFY2(rows.ok(), rows.error.c_str());
  QCOMPARE(rows.value.size(), std::size_t(1 + 63 + 1));  // the files route, 63 report names, "(other)"
  std::int64_t files = 0, other = 0, total = 0;
  for (const RequestRow& r : rows.value) {
    total += r.requests;
    if (r.endpoint == "/v1/files/{id}/content") files = r.requests;
    if (r.endpoint == "(other)") other = r.requests;
  }
  QCOMPARE(files, std::int64_t(200));
  QCOMPARE(other, std::int64_t(37));
  QCOMPARE(total, std::int64_t(300));
}

// Gateway traffic: rows per client (the gateway client's name), apart from Tollgate's own work (client '').
void TestHistoryAggregation::requestsPerClient() {
  const QString path = file("clients.db");
  const EpochMs minute = kT0 - kT0 % 60'000;
  {
    auto store = openStore(path);
    QVERIFY(store);
    for (int i = 0; i < 6; ++i) {
      AttemptRecord a;
      a.tsMs = minute + i * 1000;
      a.group = "openai";
      a.keyFingerprint = "k:0000aaaa";
      a.endpoint = "/v1/chat/completions";
      a.client = i < 3 ? "svc-a" : (i < 5 ? "svc-b" : "");
      a.status = i == 1 ? 429 : 200;
      a.rateLimited = a.status == 429;
      a.latencyMs = 10;
      store->append(a);
    }
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  auto totals = reader->requestTable(minute, minute + 60'000, false);
  QVERIFY2(totals.ok(), totals.error.c_str());
  QCOMPARE(totals.value.size(), std::size_t(3));
  QCOMPARE(totals.value[0].client, std::string("svc-a"));  // busiest first
  QCOMPARE(totals.value[0].requests, std::int64_t(3));
  QCOMPARE(totals.value[0].r429, std::int64_t(1));
  QCOMPARE(totals.value[1].client, std::string("svc-b"));
  QCOMPARE(totals.value[1].requests, std::int64_t(2));
  QCOMPARE(totals.value[2].client, std::string());
  QCOMPARE(totals.value[2].requests, std::int64_t(1));
}

void TestHistoryAggregation::requestTableAggregatesPerMinute() {
  const QString path = file("requests.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    const EpochMs minute = kT0 - kT0 % 60'000;
    for (int i = 0; i < 100; ++i) {
      AttemptRecord a;
      a.tsMs = minute + i * 100;  // all within one minute
      a.group = "interactive";
      a.keyFingerprint = "k:0000aaaa";
      a.endpoint = "/v1/chat";
      a.status = i < 10 ? 429 : (i < 15 ? 503 : (i < 17 ? 0 : 200));
      a.rateLimited = a.status == 429;  // as the engine's verdict says; a 503 here has no Retry-After
      a.latencyMs = i + 1;  // 1..100
      a.retry = i % 10 == 0;
      store->append(a);
    }
    AttemptRecord other;
    other.tsMs = minute + 61'000;
    other.group = "batch";
    other.keyFingerprint = "k:0000bbbb";
    other.endpoint = "/v1/embed";
    other.status = 200;
    other.latencyMs = 40;
    store->append(other);
    QVERIFY(store->flush());
    // A later flush rewrites the still-open minute rather than adding to it.
    AttemptRecord late = other;
    late.tsMs += 1000;
    late.latencyMs = 60;
    store->append(late);
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  auto rows = reader->requestTable(kT0 - 120'000, kT0 + 600'000, true);
  QVERIFY2(rows.ok(), rows.error.c_str());
  QCOMPARE(rows.value.size(), std::size_t(2));
  const RequestRow& r = rows.value[0];
  QCOMPARE(r.group, std::string("interactive"));
  QCOMPARE(r.requests, std::int64_t(100));
  QCOMPARE(r.r429, std::int64_t(10));
  QCOMPARE(r.r5xx, std::int64_t(5));
  QCOMPARE(r.netErrors, std::int64_t(2));
  QCOMPARE(r.retries, std::int64_t(10));
  QCOMPARE(r.avgLatencyMs, 50.5);
  QVERIFY2(r.p95LatencyMs >= 94 && r.p95LatencyMs <= 96, qPrintable(QString::number(r.p95LatencyMs)));
  QCOMPARE(rows.value[1].requests, std::int64_t(2));
  QCOMPARE(rows.value[1].avgLatencyMs, 50.0);
  auto totals = reader->requestTable(kT0 - 120'000, kT0 + 600'000, false);
  QVERIFY(totals.ok());
  QCOMPARE(totals.value.size(), std::size_t(2));
  QCOMPARE(totals.value[0].requests, std::int64_t(100));  // busiest first
}

// requests_1m.r429 counts the engine's verdict, so history agrees with samples.r429 for a GitHub-style
// upstream (403 at remaining 0) and never recounts a status the engine did not call rate-limited.
void TestHistoryAggregation::r429CountsTheVerdictNotTheStatus_data() {
  QTest::addColumn<int>("status");
  QTest::addColumn<bool>("rateLimited");
  QTest::addColumn<qint64>("r429");
  QTest::addColumn<qint64>("r5xx");
  QTest::newRow("github 403, rate-limited") << 403 << true << qint64(1) << qint64(0);
  QTest::newRow("429, not rate-limited") << 429 << false << qint64(0) << qint64(0);
  QTest::newRow("429, rate-limited") << 429 << true << qint64(1) << qint64(0);
  QTest::newRow("403, not rate-limited") << 403 << false << qint64(0) << qint64(0);
  QTest::newRow("503 with Retry-After") << 503 << true << qint64(1) << qint64(1);
}

void TestHistoryAggregation::r429CountsTheVerdictNotTheStatus() {
  QFETCH(int, status);
  QFETCH(bool, rateLimited);
  QFETCH(qint64, r429);
  QFETCH(qint64, r5xx);
  const QString path = dir_.filePath(QString("verdict-%1-%2.db").arg(status).arg(rateLimited));
  const EpochMs minute = kT0 - kT0 % 60'000;
  {
    auto store = openStore(path);
    QVERIFY(store);
    AttemptRecord a;
    a.tsMs = minute + 5'000;
    a.group = "github";
    a.keyFingerprint = "k:0000cccc";
    a.endpoint = "/repos";
    a.status = status;
    a.rateLimited = rateLimited;
    a.latencyMs = 12;
    store->append(a);
    AttemptRecord ok = a;  // a plain success in the same minute counts as a request only
    ok.status = 200;
    ok.rateLimited = false;
    store->append(ok);
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  auto rows = reader->requestTable(minute, minute + 60'000, true);
  QVERIFY2(rows.ok(), rows.error.c_str());
  QCOMPARE(rows.value.size(), std::size_t(1));
  QCOMPARE(rows.value[0].minuteMs, minute);
  QCOMPARE(rows.value[0].requests, std::int64_t(2));
  QCOMPARE(rows.value[0].r429, std::int64_t(r429));
  QCOMPARE(rows.value[0].r5xx, std::int64_t(r5xx));
  QCOMPARE(rows.value[0].netErrors, std::int64_t(0));
}

QTEST_GUILESS_MAIN(TestHistoryAggregation)
#include "test_history_aggregation.moc"
