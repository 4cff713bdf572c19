// The one set of request-safety checks, on both paths that send a key: `runProbe` refuses a path that would
// move the request to another host and a key or group header that would not make one line (nothing reaches a
// second loopback server), and error messages quoting a request redact a secret before cutting it short.
#include "engine.h"
#include "probe.h"
#include "raw_http_server.h"
#include "request_safety.h"

#include <QtTest>

#include <atomic>
#include <mutex>
#include <stdexcept>

using namespace tg;
using namespace tgtest;

namespace {

constexpr const char* kSecret = "sk-probe-secret-1234567890";

ProbeOptions probeOptions(const RawHttpServer& home) {
  ProbeOptions o;
  o.baseUrl = home.url();
  o.group = "g";
  o.key.name = "k";
  o.key.secret = kSecret;
  o.rates = {5};
  o.stepS = 0.2;
  return o;
}

}  // namespace

class TestRequestSafety : public QObject {
  Q_OBJECT
 private slots:
  void probeSendsNothingOffItsPath_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("userinfo") << "@127.0.0.1:%1/x" << "path";
    QTest::newRow("no slash") << "x" << "path";
    QTest::newRow("scheme") << "ftp://127.0.0.1:%1/x" << "path";
    QTest::newRow("CRLF") << "/x\r\nHost: 127.0.0.1:%1" << "path";
  }
  void probeSendsNothingOffItsPath() {
    QFETCH(QString, path);
    QFETCH(QString, mentions);
    RawHttpServer home, other;
    ProbeOptions o = probeOptions(home);
    o.path = path.arg(other.port()).toStdString();
    try {
      runProbe(o);
      QFAIL("expected std::invalid_argument");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find(mentions.toStdString()) != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find(kSecret) == std::string::npos, e.what());
    }
    QCOMPARE(other.count(), 0);
    QCOMPARE(home.count(), 0);
  }

  void probeRefusesHeadersThatAreNotOneLine_data() {
    QTest::addColumn<QString>("field");
    QTest::newRow("key header") << "header";
    QTest::newRow("key prefix") << "prefix";
    QTest::newRow("group name") << "group";
    QTest::newRow("group header") << "groupHeader";
  }
  void probeRefusesHeadersThatAreNotOneLine() {
    QFETCH(QString, field);
    RawHttpServer home;
    ProbeOptions o = probeOptions(home);
    const std::string smuggled = "\r\nX-Smuggled: 1";
    if (field == "header") o.key.header += smuggled;
    if (field == "prefix") o.key.prefix += smuggled;
    if (field == "group") o.group += smuggled;
    if (field == "groupHeader") o.groupHeader += smuggled;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runProbe(o));
    QCOMPARE(home.count(), 0);
  }

  void probeRefusesABaseUrlThatIsNotHttp() {
    RawHttpServer home;
    ProbeOptions o = probeOptions(home);
    o.baseUrl = "file://" + home.url().substr(7);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runProbe(o));
    o.baseUrl = "ftp://127.0.0.1:" + std::to_string(home.port());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runProbe(o));
    QCOMPARE(home.count(), 0);
  }

  void probeRefusesStepsBeyondTheCap() {
    RawHttpServer home;
    ProbeOptions o = probeOptions(home);
    o.stepS = 1e15;  // was a double->ns conversion out of range (undefined)
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runProbe(o));
    QCOMPARE(home.count(), 0);
  }

  // A step too short to offer a request would report "every rate passed" having sent nothing; a body sent as
  // application/json that is not JSON, or not UTF-8, measures the upstream's 400s, not its limit.
  void probeRefusesWhatCannotMeasure_data() {
    QTest::addColumn<double>("stepS");
    QTest::addColumn<double>("rate");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("why");
    QTest::newRow("step 1e-300 s") << 1e-300 << 5.0 << QByteArray("{}") << "step_s";
    QTest::newRow("rate 1e-300") << 1.0 << 1e-300 << QByteArray("{}") << "offers no request in a step of";
    QTest::newRow("rate under a step") << 0.5 << 1.0 << QByteArray("{}") << "offers no request in a step of";
    QTest::newRow("body not UTF-8") << 0.2 << 5.0 << QByteArray("{\"a\":\"\xC3\x28\"}") << "not UTF-8";
    QTest::newRow("body not JSON") << 0.2 << 5.0 << QByteArray("{not json") << "is not JSON: ";
  }
  void probeRefusesWhatCannotMeasure() {
    QFETCH(double, stepS);
    QFETCH(double, rate);
    QFETCH(QByteArray, body);
    QFETCH(QString, why);
    RawHttpServer home;
    ProbeOptions o = probeOptions(home);
    o.stepS = stepS;
    o.rates = {rate};
    o.body = body.toStdString();
    const std::string problem = probeProblem(o);
    QVERIFY2(problem.find(why.toStdString()) != std::string::npos, problem.c_str());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runProbe(o));
    QCOMPARE(home.count(), 0);
  }

  // GET and HEAD send none of the default body, so it is not theirs to refuse; a body given for them is.
  void probeBodyOnlyWhereItIsSent() {
    QCOMPARE(probeBodyProblem("GET", ""), std::string());
    QCOMPARE(probeBodyProblem("HEAD", "{}"), std::string("a HEAD request sends no body"));
    QCOMPARE(probeBodyProblem("POST", ""), std::string());
    QCOMPARE(probeBodyProblem("PUT", "[1, 2]"), std::string());
    RawHttpServer home;
    ProbeOptions o = probeOptions(home);
    o.method = "GET";
    o.body = "not json, and never sent";
    QCOMPARE(probeProblem(o), std::string());
  }

  void targetsStayUnderTheBasePath_data() {
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<QString>("problem");  // empty: fine
    QTest::newRow("plain") << QByteArray("/v1/chat/completions?x=1&y=%2e%2e") << "";
    QTest::newRow("dots inside names") << QByteArray("/v1/a.b/..c/c../.../%2e%2ex") << "";
    QTest::newRow("encoded slash alone") << QByteArray("/v1/files/a%2Fb") << "";
    QTest::newRow("dot-dot") << QByteArray("/v1/../x") << "\"..\" segment";
    QTest::newRow("dot") << QByteArray("/v1/./x") << "\".\" segment";
    QTest::newRow("dot-dot at the end") << QByteArray("/v1/..") << "\"..\" segment";
    QTest::newRow("encoded dots") << QByteArray("/v1/%2e%2E/x") << "\"..\" segment";
    QTest::newRow("half encoded") << QByteArray("/v1/.%2e/x") << "\"..\" segment";
    QTest::newRow("encoded slash after") << QByteArray("/v1/..%2fx") << "\"..\" segment";
    QTest::newRow("encoded backslash") << QByteArray("/v1/..%5Cx") << "\"..\" segment";
    QTest::newRow("backslash") << QByteArray("/v1\\..\\x") << "\"..\" segment";
    QTest::newRow("dot-dot before the query") << QByteArray("/v1/..?a=b") << "\"..\" segment";
    QTest::newRow("CR") << QByteArray("/v1/x\rINFO") << "byte 0x0d at offset 5";
    QTest::newRow("space") << QByteArray("/v1/x y") << "byte 0x20";
    QTest::newRow("DEL") << QByteArray("/v1/x\x7f") << "byte 0x7f";
    QTest::newRow("raw UTF-8") << QByteArray("/v1/caf\xc3\xa9") << "byte 0xc3";
    QTest::newRow("control in the query") << QByteArray("/v1/x?a=\x1b[2J") << "byte 0x1b";
  }
  void targetsStayUnderTheBasePath() {
    QFETCH(QByteArray, target);
    QFETCH(QString, problem);
    const std::string p = targetProblem(target.toStdString());
    if (problem.isEmpty()) QVERIFY2(p.empty(), p.c_str());
    else QVERIFY2(p.find(problem.toStdString()) != std::string::npos, p.c_str());
  }

  void probeStillProbesItsOwnHost() {
    RawHttpServer home;
    const ProbeReport r = runProbe(probeOptions(home));
    QCOMPARE(r.steps.size(), std::size_t{1});
    QVERIFY(r.steps[0].ok >= 1);
    QVERIFY(home.count() >= 1);
    QVERIFY(home.allBytes().find(std::string("Authorization: Bearer ") + kSecret) != std::string::npos);
  }

  // A refused URL is quoted in the error, cut at 200 characters: the secret must be redacted before the cut,
  // or its first half survives into the message (redaction afterwards no longer recognises it).
  void secretAcrossTheCutIsRedacted() {
    RawHttpServer home;
    EngineConfig c;
    GroupConfig g;
    g.name = "g";
    g.baseUrl = home.url();
    KeyConfig k;
    k.name = "k";
    k.secret = kSecret;
    g.keys.push_back(k);
    c.groups.push_back(g);
    Engine e(c);
    e.start();
    std::string url = "ftp://x/";
    url += std::string(190 - url.size(), 'a');
    url += kSecret;  // characters 190..215: across the cut at 200
    Request r;
    r.id = "r";
    r.group = "g";
    r.url = url;
    std::mutex m;
    Result got;
    std::atomic<bool> done{false};
    e.submit(r, [&](const Result& res) {
      std::lock_guard lock(m);
      got = res;
      done = true;
    });
    QTRY_VERIFY_WITH_TIMEOUT(done.load(), 10000);
    e.stop();
    std::lock_guard lock(m);
    QCOMPARE(got.error, ErrorKind::Config);
    QVERIFY2(got.errorMessage.find("ftp://x/aaa") != std::string::npos, got.errorMessage.c_str());
    QVERIFY2(got.errorMessage.find(std::string(kSecret).substr(0, 8)) == std::string::npos, got.errorMessage.c_str());
    QCOMPARE(home.count(), 0);
  }
};

QTEST_GUILESS_MAIN(TestRequestSafety)
#include "test_request_safety.moc"
