// JSONL job lines: every field validated, errors name the field.
#include "jsonl_job.h"

#include <QtTest>

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
};

QTEST_APPLESS_MAIN(TestJsonlJob)
#include "test_jsonl_job.moc"
