// JSONL job lines: every field validated, errors name the field. A job dropped while its requests are in
// flight (the dashboard replacing it) returns at once and still writes every result, against the simulator.
#include "engine_fixture.h"
#include "jsonl_job.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <set>

using namespace tg;

class TestJsonlJob : public QObject {
  Q_OBJECT
 private slots:
  void parsesAValidLine() {
    std::string err;
    auto r = parseJobLine(R"({"id":7,"group":"batch","tier":"P0","method":"PUT","url":"/v1/x","headers":{"X-A":"1"},)"
                          R"("body":{"q":1},"max_tokens":64,"deadline":2.5})",
                          &err);
    QVERIFY2(r, err.c_str());
    QCOMPARE(r->id, std::string("7"));
    QCOMPARE(r->tier, Tier::P0);
    QCOMPARE(r->method, std::string("PUT"));
    QCOMPARE(r->body, std::string(R"({"q":1})"));
    QCOMPARE(r->maxTokens, 64);
    QCOMPARE(r->deadlineS, 2.5);
    QCOMPARE(r->headers.size(), std::size_t(1));
  }

  void rejectsBadLines_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("error");
    QTest::newRow("not json") << "{oops" << "not valid JSON";
    QTest::newRow("array") << "[1,2]" << "expected a JSON object";
    QTest::newRow("no id") << R"({"group":"g","url":"/x"})" << "\"id\": expected a string or integer";
    QTest::newRow("empty id") << R"({"id":"","group":"g","url":"/x"})" << "\"id\": must not be empty";
    QTest::newRow("no group") << R"({"id":"a","url":"/x"})" << "\"group\": required string is missing";
    QTest::newRow("bad tier") << R"({"id":"a","group":"g","url":"/x","tier":"P9"})" << "\"tier\": expected P0, P1 or P2";
    QTest::newRow("bad url") << R"({"id":"a","group":"g","url":"x"})" << "\"url\": expected a path";
    QTest::newRow("bad header") << R"({"id":"a","group":"g","url":"/x","headers":{"A":1}})" << "\"headers\"/\"A\"";
    QTest::newRow("neg tokens") << R"({"id":"a","group":"g","url":"/x","max_tokens":-1})" << "\"max_tokens\"";
    QTest::newRow("bad deadline") << R"({"id":"a","group":"g","url":"/x","deadline":0})" << "\"deadline\"";
    QTest::newRow("unknown field") << R"({"id":"a","group":"g","url":"/x","priority":1})" << "unknown field \"priority\"";
  }

  void rejectsBadLines() {
    QFETCH(QString, line);
    QFETCH(QString, error);
    std::string err;
    QVERIFY(!parseJobLine(line.toStdString(), &err));
    QVERIFY2(err.find(error.toStdString()) != std::string::npos, err.c_str());
  }

  void resultRowsCarryTheOutcome() {
    Result r;
    r.id = "x";
    r.group = "g";
    r.status = 429;
    r.attempts = 3;
    r.error = ErrorKind::RateLimited;
    r.errorMessage = "HTTP 429";
    const auto j = resultToJson(r);
    QCOMPARE(j["ok"].get<bool>(), false);
    QCOMPARE(j["error"].get<std::string>(), std::string("rate_limited"));
    QCOMPARE(j["attempts"].get<int>(), 3);
    r.error = ErrorKind::None;
    r.status = 200;
    r.body = R"({"a":1})";
    QCOMPARE(resultToJson(r)["body"]["a"].get<int>(), 1);
  }

  void droppingAJobInFlightReturnsAtOnceAndLosesNoResult() {
    // 300 ms per response, 4 in flight: 12 requests take about a second.
    const nlohmann::json simJson{{"dialect", "none"}, {"group_by", "header"}, {"default_group", "g"},
                                 {"groups", {{"g", {{"limit", 0}}}}},
                                 {"latency_ms", {{"distribution", "fixed"}, {"mean", 300}}}};
    const nlohmann::json engineJson{
        {"name", "jsonl-test"},
        {"groups", nlohmann::json::array({{{"name", "g"}, {"base_url", "sim"}, {"concurrency", 4},
                                           {"keys", nlohmann::json::array({{{"name", "k"}}})}}})}};
    tgtest::EngineUnderTest eut(simJson, engineJson);
    QTemporaryDir dir;
    const std::string input = dir.filePath("job.jsonl").toStdString();
    {
      std::ofstream out(input);
      for (int i = 0; i < 12; ++i)
        out << nlohmann::json{{"id", "j" + std::to_string(i)}, {"group", "g"}, {"url", "/v1/chat/completions"}}.dump()
            << "\n";
    }
    auto job = std::make_unique<JsonlJob>(eut.engine(), JsonlJob::Options{input, {}, {}, 20000, {}});
    job->start();
    QTRY_VERIFY_WITH_TIMEOUT(job->progress().submitted == 12, 5000);
    QVERIFY(job->progress().done() < 12);  // still in flight
    QElapsedTimer t;
    t.start();
    job.reset();
    QVERIFY2(t.elapsed() < 200, qPrintable(QString("destructor took %1 ms").arg(t.elapsed())));
    // The engine finishes them after the job object is gone; each result still lands in the file, once.
    auto lines = [&] {
      std::ifstream in(input + ".results.jsonl");
      std::set<std::string> ids;
      int n = 0;
      for (std::string l; std::getline(in, l); ++n) ids.insert(nlohmann::json::parse(l)["id"].get<std::string>());
      return std::make_pair(n, ids.size());
    };
    QTRY_COMPARE_WITH_TIMEOUT(lines().first, 12, 10000);
    QCOMPARE(lines().second, std::size_t(12));
  }
};

QTEST_APPLESS_MAIN(TestJsonlJob)
#include "test_jsonl_job.moc"
