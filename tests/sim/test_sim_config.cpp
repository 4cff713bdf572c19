// SimConfig validation: errors name the file, the JSON path and what was expected; examples all load.
#include "config_error.h"
#include "sim_config.h"

#include <QtTest>

#include <filesystem>

using namespace tg;
using nlohmann::json;

Q_DECLARE_METATYPE(std::string)

class TestSimConfig : public QObject {
  Q_OBJECT

 private slots:
  void rejects_data();
  void rejects();
  void defaults();
  void parsesFullConfig();
  void examplesLoad();
  void fileErrorsNameTheFile();
};

void TestSimConfig::rejects_data() {
  QTest::addColumn<QString>("config");
  QTest::addColumn<QString>("path");
  QTest::addColumn<QString>("expected");
  QTest::newRow("unknown top-level key") << R"({"dialekt":"openai"})" << "/dialekt" << "unknown key";
  QTest::newRow("unknown group key")
      << R"({"groups":{"g":{"limit":5,"windows":1}}})" << "/groups/g/windows" << "unknown key";
  QTest::newRow("wrong type") << R"({"groups":{"g":{"limit":"5"}}})" << "/groups/g/limit" << "expected a number";
  QTest::newRow("out of range") << R"({"groups":{"g":{"limit":5,"window_s":0}}})" << "/groups/g/window_s"
                                << "expected a number in";
  QTest::newRow("bad algorithm") << R"({"groups":{"g":{"algorithm":"leaky"}}})" << "/groups/g/algorithm"
                                 << "expected one of fixed-window";
  QTest::newRow("bad dialect") << R"({"dialect":"stripe"})" << "/dialect" << "expected one of";
  QTest::newRow("port range") << R"({"listen":{"port":70000}})" << "/listen/port" << "expected an integer in";
  QTest::newRow("zero connections") << R"({"connections":{"max":0}})" << "/connections/max" << "expected an integer in";
  QTest::newRow("unknown connections key") << R"({"connections":{"timeout":1}})" << "/connections/timeout"
                                           << "unknown key";
  QTest::newRow("request timeout 0") << R"({"connections":{"request_timeout_s":0}})"
                                     << "/connections/request_timeout_s" << "expected a number in";
  QTest::newRow("write timeout 0") << R"({"connections":{"write_timeout_s":0}})"
                                   << "/connections/write_timeout_s" << "expected a number in";
  QTest::newRow("write timeout not a number") << R"({"connections":{"write_timeout_s":[1,2]}})"
                                              << "/connections/write_timeout_s" << "expected a number";
  QTest::newRow("boolean given an array") << R"({"retry_after":[[[1]]]})" << "/retry_after"
                                          << "got an array of 1 element";
  QTest::newRow("paths not strings") << R"({"groups":{"g":{"paths":["/a",3]}}})" << "/groups/g/paths/1"
                                     << "non-empty string";
  QTest::newRow("latency p95 < mean") << R"({"latency_ms":{"mean":10,"p95":5}})" << "/latency_ms/p95"
                                      << "p95 >= mean";
  QTest::newRow("schedule unknown action") << R"({"schedule":[{"at_s":1,"action":"explode"}]})"
                                           << "/schedule/0/action" << "expected one of";
  QTest::newRow("schedule key of another action")
      << R"({"schedule":[{"at_s":1,"action":"outage","duration_s":1,"factor":2}]})" << "/schedule/0/factor"
      << "unknown key";
  QTest::newRow("schedule missing factor") << R"({"schedule":[{"at_s":1,"action":"scale_quota"}]})"
                                           << "/schedule/0/factor" << "missing";
  QTest::newRow("schedule unknown group")
      << R"({"groups":{"a":{"limit":1}},"schedule":[{"at_s":1,"action":"scale_quota","group":"b","factor":2}]})"
      << "/schedule/0/group" << "group defined in /groups";
  QTest::newRow("share above 1")
      << R"({"schedule":[{"at_s":1,"action":"errors","share":1.5,"duration_s":1}]})" << "/schedule/0/share"
      << "expected a number in";
  QTest::newRow("non-loopback host") << R"({"listen":{"host":"0.0.0.0"}})" << "/listen/host" << "loopback";
  QTest::newRow("groups not object") << R"({"groups":[1]})" << "/groups" << "expected an object";
  QTest::newRow("negative ttft") << R"({"stream_ttft_ms":-1})" << "/stream_ttft_ms" << "expected a number in";
  QTest::newRow("ttft not a number") << R"({"stream_ttft_ms":"50"})" << "/stream_ttft_ms" << "expected a number";
  QTest::newRow("interval too long") << R"({"stream_chunk_interval_ms":600001})" << "/stream_chunk_interval_ms"
                                     << "expected a number in";
  QTest::newRow("fractional chunks") << R"({"stream_chunks":2.5})" << "/stream_chunks" << "expected an integer";
  QTest::newRow("too many chunks") << R"({"stream_chunks":10001})" << "/stream_chunks" << "expected an integer in";
  QTest::newRow("tokens start spent without tokens")
      << R"({"groups":{"g":{"limit":5,"tokens_start_spent":true}}})" << "/groups/g/tokens_start_spent"
      << "needs tokens_per_window";
  QTest::newRow("limit under one") << R"({"groups":{"g":{"limit":0.5}}})" << "/groups/g/limit"
                                   << "at least 1 request per window";
  QTest::newRow("subnormal limit") << R"({"groups":{"g":{"algorithm":"gcra","limit":5e-324}}})" << "/groups/g/limit"
                                   << "at least 1 request per window";
  QTest::newRow("burst under one") << R"({"groups":{"g":{"limit":5,"burst":0.5}}})" << "/groups/g/burst"
                                   << "at least 1 request";
  QTest::newRow("tokens without a limit") << R"({"groups":{"g":{"tokens_per_window":10}}})"
                                          << "/groups/g/tokens_per_window" << "needs a limit > 0";
  QTest::newRow("set_limit under one")
      << R"({"groups":{"g":{"limit":5}},"schedule":[{"at_s":1,"action":"set_limit","group":"g","limit":0.5}]})"
      << "/schedule/0/limit" << "expected a number in";
  QTest::newRow("stream options nested") << R"({"stream":{"ttft_ms":5}})" << "/stream" << "unknown key";
}

void TestSimConfig::rejects() {
  QFETCH(QString, config);
  QFETCH(QString, path);
  QFETCH(QString, expected);
  try {
    SimConfig::fromJson(json::parse(config.toStdString()), "sim.json");
    QFAIL("accepted an invalid config");
  } catch (const ConfigError& e) {
    const QString what = QString::fromStdString(e.what());
    QVERIFY2(what.startsWith("sim.json: "), qPrintable(what));
    QCOMPARE(QString::fromStdString(e.path()), path);
    QVERIFY2(what.contains(expected), qPrintable(what));
  }
}

void TestSimConfig::defaults() {
  const auto c = SimConfig::fromJson(json::object(), "sim.json");
  QCOMPARE(c.host, std::string("127.0.0.1"));
  QCOMPARE(c.dialect, SimDialect::XRateLimit);
  QVERIFY(c.retryAfter);
  QCOMPARE(c.groupHeader, std::string("X-RateLimit-Group"));
  QVERIFY(c.groups.empty());
  QCOMPARE(c.stream.ttftMs, 50.0);
  QCOMPARE(c.stream.chunkIntervalMs, 20.0);
  QCOMPARE(c.stream.chunks, 0);
  const auto d = SimConfig::builtinDefault();
  QVERIFY(d.groups.count("interactive") && d.groups.count("batch"));
}

void TestSimConfig::parsesFullConfig() {
  const auto c = SimConfig::fromJson(json::parse(R"({
    "listen": {"host": "127.0.0.1", "port": 0}, "dialect": "ietf-structured", "retry_after_format": "ms",
    "group_by": "path", "default_group": "misc",
    "groups": {"chat": {"algorithm": "gcra", "limit": 60, "window_s": 60, "burst": 10,
                        "tokens_per_window": 1000, "per_key": false, "paths": ["/v1/chat"]}},
    "latency_ms": {"distribution": "lognormal", "mean": 5, "p95": 15},
    "stream_ttft_ms": 0, "stream_chunk_interval_ms": 7.5, "stream_chunks": 3,
    "schedule": [{"at_s": 2, "action": "outage", "duration_s": 1},
                 {"at_s": 1, "action": "scale_quota", "group": "chat", "factor": 0.5}]})"),
                                     "sim.json");
  QCOMPARE(c.port, 0);
  QCOMPARE(c.dialect, SimDialect::IetfStructured);
  QCOMPARE(c.retryAfterFormat, RetryAfterFormat::Ms);
  QCOMPARE(c.groupBy, GroupBy::Path);
  const auto& g = c.groups.at("chat");
  QCOMPARE(g.algorithm, LimitAlgorithm::Gcra);
  QCOMPARE(g.burst, 10.0);
  QVERIFY(!g.perKey);
  QCOMPARE(g.userAgent, std::string("chat"));
  QCOMPARE(c.latency.distribution, LatencyDistribution::Lognormal);
  QCOMPARE(c.stream.ttftMs, 0.0);
  QCOMPARE(c.stream.chunkIntervalMs, 7.5);
  QCOMPARE(c.stream.chunks, 3);
  QCOMPARE(c.schedule.size(), std::size_t(2));
  QCOMPARE(c.schedule[0].kind, SimAction::Kind::ScaleQuota);  // sorted by time
}

void TestSimConfig::examplesLoad() {
  const std::filesystem::path dir = std::filesystem::path(TOLLGATE_SOURCE_DIR) / "examples" / "sim";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    try {
      SimConfig::fromFile(e.path().string());
    } catch (const ConfigError& err) {
      QFAIL(err.what());
    }
    ++n;
  }
  QVERIFY2(n >= 6, qPrintable(QString("only %1 examples").arg(n)));
}

void TestSimConfig::fileErrorsNameTheFile() {
  try {
    SimConfig::fromFile("/nonexistent/sim.json");
    QFAIL("loaded a missing file");
  } catch (const ConfigError& e) {
    QVERIFY(QString(e.what()).contains("/nonexistent/sim.json"));
  }
}

QTEST_GUILESS_MAIN(TestSimConfig)
#include "test_sim_config.moc"
