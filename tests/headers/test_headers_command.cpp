#include "headers_cli.h"
#include "headers_command.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <fstream>
#include <sstream>

using namespace tg;
using json = nlohmann::ordered_json;

namespace {

constexpr double kNow = 1732889021;  // the Date of every sample file

struct Run {
  int code = -1;
  std::string out, err;
  json j;
};

Run run(std::vector<std::string> args, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out, err;
  Run r;
  r.code = runHeadersCommand(args, in, out, err);
  r.out = out.str();
  r.err = err.str();
  if (r.code == 0 && !r.out.empty() && r.out.front() == '{') r.j = json::parse(r.out, nullptr, false);
  return r;
}

Run runAtNow(const std::string& input, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--now", std::to_string(static_cast<long long>(kNow))};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args, input);
}

std::string readFile(const QString& path) {
  std::ifstream f(path.toStdString(), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

QString q(const json& j) { return QString::fromStdString(j.dump()); }

}  // namespace

class TestHeadersCommand : public QObject {
  Q_OBJECT

 private slots:
  // Every sample file the README cites parses cleanly and gives the verdict it is there to show.
  void sampleFiles_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("status");
    QTest::addColumn<int>("scopes");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<double>("wait");
    QTest::addColumn<QString>("classification");
    QTest::newRow("openai-429") << "openai-429.txt" << 429 << 2 << "throttled" << 62.4 << "quota_exhausted";
    QTest::newRow("anthropic") << "anthropic.txt" << 200 << 4 << "ok" << 0.0 << "ok";
    QTest::newRow("github-403") << "github-403.txt" << 403 << 1 << "exhausted" << 1500.0 << "quota_exhausted";
    QTest::newRow("ietf-structured") << "ietf-structured.txt" << 429 << 2 << "throttled" << 30.0 << "quota_exhausted";
    QTest::newRow("bare-429") << "bare-429.txt" << 429 << 0 << "unknown_429" << 0.0 << "unknown";
    QTest::newRow("azure-retry-after-ms") << "azure-retry-after-ms.txt" << 429 << 2 << "throttled" << 1.5
                                          << "quota_exhausted";
  }
  void sampleFiles() {
    QFETCH(QString, file);
    QFETCH(int, status);
    QFETCH(int, scopes);
    QFETCH(QString, kind);
    QFETCH(double, wait);
    QFETCH(QString, classification);
    const std::string input = readFile(QString(TOLLGATE_SOURCE_DIR) + "/examples/headers/" + file);
    QVERIFY2(!input.empty(), qPrintable(file));
    const Run r = runAtNow(input);
    QCOMPARE(r.code, 0);
    QCOMPARE(QString::fromStdString(r.err), QString());
    QVERIFY2(r.j.is_object(), r.out.c_str());
    QCOMPARE(q(r.j["warnings"]), QString("[]"));
    QCOMPARE(r.j["status"].get<int>(), status);
    QCOMPARE(static_cast<int>(r.j["scopes"].size()), scopes);
    QCOMPARE(q(r.j["verdict"]["kind"]), q(kind.toStdString()));
    QCOMPARE(r.j["verdict"]["wait_s"].get<double>(), wait);
    QCOMPARE(q(r.j["verdict"]["classification"]), q(classification.toStdString()));
    QCOMPARE(r.j["server_date"].get<double>(), kNow);
  }

  void jsonShape() {
    const Run r = runAtNow("HTTP/1.1 429 Too Many Requests\n"
                           "x-ratelimit-limit-tokens: 30000\nx-ratelimit-remaining-tokens: 0\n"
                           "x-ratelimit-reset-tokens: 20s\nx-ratelimit-remaining-requests: junk\n"
                           "Retry-After: 20\nX-RateLimit-Group: llm\n");
    QCOMPARE(r.code, 0);
    const json& j = r.j;
    QCOMPARE(j["status"].get<int>(), 429);
    QCOMPARE(j["scopes"].size(), size_t(2));
    const json& req = j["scopes"][0];
    QCOMPARE(q(req), QString(R"({"name":"requests","dimension":"requests","dialect":"openai","limit":null,)"
                             R"("remaining":null,"reset_at":null,"reset_in_s":null,"window_s":null})"));
    const json& tok = j["scopes"][1];
    QCOMPARE(q(tok["dimension"]), QString("\"tokens\""));
    QCOMPARE(tok["limit"].get<double>(), 30000.0);
    QCOMPARE(tok["remaining"].get<double>(), 0.0);
    QCOMPARE(tok["reset_in_s"].get<double>(), 20.0);
    QCOMPARE(tok["reset_at"].get<double>(), kNow + 20);
    QCOMPARE(j["retry_after_s"].get<double>(), 20.0);
    QCOMPARE(q(j["retry_after_header"]), QString("\"Retry-After\""));
    QCOMPARE(q(j["group"]), QString("\"llm\""));
    QVERIFY(j["server_date"].is_null());
    QCOMPARE(q(j["verdict"]["kind"]), QString("\"throttled\""));
    QCOMPARE(j["verdict"]["until"].get<double>(), kNow + 20);
    QCOMPARE(q(j["verdict"]["reason"]), QString("\"Retry-After until 14:04:01 UTC\""));
    QCOMPARE(j["warnings"].size(), size_t(1));
    QVERIFY2(j["warnings"][0].get<std::string>().find("x-ratelimit-remaining-requests: 'junk'") == 0, r.out.c_str());
    // Key order is part of the output's readability.
    QVERIFY(r.out.find("\"status\"") < r.out.find("\"scopes\""));
    QVERIFY(r.out.find("\"warnings\"") > r.out.find("\"verdict\""));
  }

  void nullsWhenNothingIsKnown() {
    const Run r = runAtNow("Content-Type: text/plain\r\n");
    QCOMPARE(r.code, 0);
    QCOMPARE(q(r.j), QString(R"({"status":null,"scopes":[],"retry_after_s":null,"retry_after_header":null,)"
                             R"("group":null,"server_date":null,"verdict":{"kind":"ok","wait_s":0.0,"until":null,)"
                             R"("reason":"no scope exhausted","classification":"unknown"},"warnings":[]})"));
  }

  void statusOptionBeatsStatusLine() {
    const Run r = runAtNow("HTTP/2 200\nRetry-After: 5\n", {"--status", "429"});
    QCOMPARE(r.j["status"].get<int>(), 429);
    QCOMPARE(q(r.j["verdict"]["kind"]), QString("\"throttled\""));
    const Run eq = runAtNow("Retry-After: 5\n", {"--status=503"});
    QCOMPARE(eq.j["status"].get<int>(), 503);
    QCOMPARE(eq.j["verdict"]["wait_s"].get<double>(), 5.0);
  }

  void maxWaitOption() {
    const Run r = runAtNow("HTTP/1.1 429 Too Many Requests\nRetry-After: 60\n", {"--max-wait", "30"});
    QCOMPARE(q(r.j["verdict"]["kind"]), QString("\"exhausted\""));
    QCOMPARE(r.j["verdict"]["wait_s"].get<double>(), 60.0);
    const Run def = runAtNow("HTTP/1.1 429 Too Many Requests\nRetry-After: 121\n");
    QCOMPARE(q(def.j["verdict"]["kind"]), QString("\"exhausted\""));  // default cap is 120 s
  }

  void toleratesCrlfBlankLinesAndFolding() {
    const Run r = runAtNow("\r\nHTTP/1.1 429 Too Many Requests\r\n\r\nX-RateLimit-Remaining: 0\r\n"
                           "X-RateLimit-Reset:\r\n   7\r\n\r\n");
    QCOMPARE(r.code, 0);
    QCOMPARE(QString::fromStdString(r.err), QString());
    QCOMPARE(r.j["scopes"][0]["reset_in_s"].get<double>(), 7.0);
    QCOMPARE(q(r.j["warnings"]), QString("[]"));
  }

  void badLinesAreReportedAndSkipped() {
    const Run r = runAtNow("HTTP/1.1 429 Too Many Requests\nthis is not a header\nRetry-After: 4\n"
                           "{\"error\": \"slow down\"}\nHTTP/1.1 abc\n");
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.find("line 2: no ':' in 'this is not a header', skipped") != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find("line 4: '{\"error\"' is not a header name") != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find("line 5: bad status line 'HTTP/1.1 abc'") != std::string::npos, r.err.c_str());
    QCOMPARE(r.j["retry_after_s"].get<double>(), 4.0);
    QCOMPARE(r.j["status"].get<int>(), 429);
  }

  // curl -i -L prints every response of a redirect chain; only the last one's headers count.
  void laterStatusLineStartsANewResponse() {
    const Run r = runAtNow("HTTP/1.1 301 Moved Permanently\nRetry-After: 99\nLocation: /x\n\n"
                           "HTTP/1.1 429 Too Many Requests\nRetry-After: 3\n");
    QCOMPARE(r.j["status"].get<int>(), 429);
    QCOMPARE(r.j["retry_after_s"].get<double>(), 3.0);
  }

  // curl -i prints the body after the head's blank line: not headers (a JSON body's indented lines were folded
  // into x-ratelimit-reset-tokens, whose value then failed: "throttled 0.12 s" for a 62 s token wait).
  void theBodyAfterTheHeadIsSkipped() {
    const Run r = runAtNow("HTTP/1.1 429 Too Many Requests\nretry-after: 3\nx-ratelimit-reset-tokens: 62s\n"
                           "x-ratelimit-remaining-tokens: 0\nx-ratelimit-limit-tokens: 1000\n\n{\n"
                           "    \"error\": {\"message\": \"Rate limit reached\"}\n}\n");
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.find("lines 7-9: the body after the head, skipped") != std::string::npos, r.err.c_str());
    QCOMPARE(r.j["scopes"][0]["reset_in_s"].get<double>(), 62.0);
    QCOMPARE(q(r.j["warnings"]), QString("[]"));
    // Diagnostics quote the input safely: no escape sequence reaches the terminal, and at most 200 bytes of it.
    const Run esc = runAtNow("\x1b[2J\x1b[31mFAKE" + std::string(5000, 'x') + "\n");
    QVERIFY2(esc.err.find('\x1b') == std::string::npos, esc.err.c_str());
    QVERIFY2(esc.err.size() < 400, esc.err.c_str());
    // No input at all is an error, not an "ok" verdict.
    for (const std::string empty : {"", "\n", "\r\n\r\n"}) {
      const Run none = runAtNow(empty);
      QCOMPARE(none.code, 2);
      QVERIFY2(none.err.find("no input") != std::string::npos, none.err.c_str());
    }
  }

  void laterValueWins() {
    const Run r = run({"--now", "5", "--now=1000", "--status", "200", "--status", "429"}, "X-RateLimit-Reset: 15\n");
    QCOMPARE(r.code, 0);
    QCOMPARE(r.j["scopes"][0]["reset_at"].get<double>(), 1015.0);
    QCOMPARE(r.j["status"].get<int>(), 429);
  }

  void resetAtUsesNow() {
    const Run r = run({"--now", "1000"}, "X-RateLimit-Reset: 15\n");
    QCOMPARE(r.j["scopes"][0]["reset_at"].get<double>(), 1015.0);
  }

  void usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown argument") << QStringList{"--verbose"} << "unknown argument '--verbose'";
    QTest::newRow("positional") << QStringList{"file.txt"} << "unknown argument 'file.txt'";
    QTest::newRow("status missing value") << QStringList{"--status"} << "--status needs a value";
    QTest::newRow("status not a number") << QStringList{"--status", "abc"} << "--status 'abc' is not an HTTP status";
    QTest::newRow("status out of range") << QStringList{"--status=42"} << "--status '42' is not an HTTP status";
    QTest::newRow("status fractional") << QStringList{"--status", "429.5"} << "--status '429.5'";
    QTest::newRow("now negative") << QStringList{"--now", "-5"} << "--now '-5' is not a number of seconds";
    // The command line's number rule: whole, finite, 0..1e15 (1e300 printed "reset_at": 1e+300).
    QTest::newRow("now signed") << QStringList{"--now", "+5"} << "--now '+5'";
    QTest::newRow("now past 1e15") << QStringList{"--now", "1e16"} << "--now '1e16'";
    QTest::newRow("now garbage") << QStringList{"--now", "today"} << "--now 'today'";
    QTest::newRow("max-wait garbage") << QStringList{"--max-wait", "x"} << "--max-wait 'x'";
    QTest::newRow("max-wait missing value") << QStringList{"--status", "429", "--max-wait"} << "--max-wait needs a value";
    QTest::newRow("first bad value in word order") << QStringList{"--now", "x", "--status", "abc"} << "--now 'x'";
    QTest::newRow("a later bad value") << QStringList{"--status", "429", "--status", "4"} << "--status '4'";
  }
  void usageErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    std::vector<std::string> a;
    for (const auto& s : args) a.push_back(s.toStdString());
    const Run r = run(a, "Retry-After: 1\n");
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.find("tollgate headers: " + message.toStdString()) == 0, r.err.c_str());
    QVERIFY2(r.err.find("usage:") != std::string::npos, r.err.c_str());
    QCOMPARE(QString::fromStdString(r.out), QString());
  }

  void help_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("--help") << QStringList{"--help"};
    QTest::newRow("-h") << QStringList{"-h"};
    QTest::newRow("with options") << QStringList{"--status", "429", "--help"};
  }
  void help() {
    QFETCH(QStringList, args);
    std::vector<std::string> a;
    for (const auto& s : args) a.push_back(s.toStdString());
    const Run r = run(a, "Retry-After: 1\n");
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.find("usage: tollgate headers") == 0, r.out.c_str());
    QVERIFY2(r.out.find("--max-wait S") != std::string::npos, r.out.c_str());
    QCOMPARE(QString::fromStdString(r.err), QString());
  }

  // The logic the command calls, without a command line: the options struct and a hand-set clock.
  void describeTakesOptionsAndNow() {
    std::istringstream in("HTTP/1.1 200 OK\nX-RateLimit-Reset: 15\nRetry-After: 60\n");
    std::ostringstream diag;
    HeadersOptions o;
    o.status = 429;
    o.maxWaitS = 30;
    const json j = json::parse(describeResponseHead(in, o, 1000, diag));
    QCOMPARE(j["status"].get<int>(), 429);
    QCOMPARE(j["scopes"][0]["reset_at"].get<double>(), 1015.0);
    QCOMPARE(q(j["verdict"]["kind"]), QString("\"exhausted\""));
    QCOMPARE(QString::fromStdString(diag.str()), QString());
  }

  void parsesHttpStatus_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("expected");  // 0: rejected
    QTest::newRow("429") << "429" << 429;
    QTest::newRow("100") << "100" << 100;
    QTest::newRow("599") << "599" << 599;
    QTest::newRow("600") << "600" << 0;
    QTest::newRow("99") << "99" << 0;
    QTest::newRow("fraction") << "429.5" << 0;
    QTest::newRow("trailing") << "429x" << 0;
    QTest::newRow("nan") << "nan" << 0;
    QTest::newRow("empty") << "" << 0;
  }
  void parsesHttpStatus() {
    QFETCH(QString, text);
    QFETCH(int, expected);
    QCOMPARE(parseHttpStatus(text.toStdString()).value_or(0), expected);
  }
};

QTEST_APPLESS_MAIN(TestHeadersCommand)
#include "test_headers_command.moc"
