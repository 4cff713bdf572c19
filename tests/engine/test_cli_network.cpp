// The networks operators run in, end to end through the tollgate binary: a DNS server that answers late, an
// upstream whose certificate is not in the system's store, an outbound proxy in the environment, a redirect.
// Real servers on loopback (openssl s_server, a raw HTTP server); the late DNS is a getaddrinfo shim preloaded
// into the real binary, whose libcurl resolves on its own threads as ever.
#include "cli_process.h"
#include "raw_http_server.h"

#include <QElapsedTimer>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using nlohmann::json;
using namespace tgtest;

namespace {

json group(const std::string& name, const std::string& baseUrl) {
  return {{"name", name}, {"base_url", baseUrl}, {"concurrency", 4}, {"keys", json::array({{{"name", "k"}}})}};
}

// A config of `groups`, `attempts` per request, a connect timeout of 1 s.
json configOf(const json& groups, int attempts = 1) {
  return {{"name", "net-test"},
          {"groups", groups},
          {"connect_timeout_s", 1},
          {"retry", {{"max_attempts", attempts}, {"base_backoff_s", 0.05}}}};
}

std::string line(const std::string& id, const std::string& group, const std::string& url = "/") {
  return json{{"id", id}, {"group", group}, {"tier", "P1"}, {"method", "GET"}, {"url", url}}.dump() + "\n";
}

std::map<std::string, json> rowsById(const QString& path) {
  std::map<std::string, json> rows;
  std::ifstream in(path.toStdString());
  for (std::string l; std::getline(in, l);) {
    json j = json::parse(l, nullptr, false);
    if (j.is_object()) rows[j.value("id", "")] = j;
  }
  return rows;
}

// The row of `id`, or one saying it is missing (a test fails on it, never throws).
json rowOf(const std::map<std::string, json>& rows, const std::string& id) {
  const auto it = rows.find(id);
  if (it != rows.end()) return it->second;
  return {{"id", id}, {"ok", false}, {"status", 0}, {"attempts", 0}, {"message", "no row for this id"}};
}

// `tollgate run --headless` of `job` on `config` in `dir`, with `extra` in an environment cleared of the
// machine's proxy and CA variables (a CI host may set them); the rows by id, *rc its exit code.
std::map<std::string, json> runJob(const QTemporaryDir& dir, const json& config, const std::string& job,
                                   const QProcessEnvironment& extra = {}, QByteArray* err = nullptr,
                                   const QStringList& flags = {}, int* rc = nullptr) {
  const QString cfg = dir.filePath("cfg.json"), jobFile = dir.filePath("job.jsonl"),
                results = dir.filePath("results.jsonl");
  QFile::remove(results);
  writeFile(cfg, config.dump());
  writeFile(jobFile, job);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const char* var : {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
                          "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"})
    env.remove(var);
  for (const QString& k : extra.keys()) env.insert(k, extra.value(k));
  QByteArray stderrText;
  const int exit = runTollgate(QStringList{"run", "--headless", "--quiet", "--history", "off", "--config", cfg,
                                         "--workload", jobFile, "--results", results} + flags,
                             nullptr, &stderrText, {}, env);
  if (exit != 0 && exit != 1) qWarning("tollgate run exited %d: %s", exit, stderrText.constData());
  if (err) *err = stderrText;
  if (rc) *rc = exit;
  return rowsById(results);
}

// The getaddrinfo shim preloaded: a name under .slow.test answers after 10 s, and then does not exist. The shim
// comes before a sanitizer's runtime; a report exits 86, which the tests' exit code checks catch.
QProcessEnvironment slowDns() {
  QProcessEnvironment env;
  env.insert("LD_PRELOAD", TOLLGATE_SLOW_DNS_SHIM);
  env.insert("TOLLGATE_TEST_DNS_DELAY_S", "10");
  const QString asan = qEnvironmentVariable("ASAN_OPTIONS");
  env.insert("ASAN_OPTIONS", asan + (asan.isEmpty() ? "" : ":") + "verify_asan_link_order=0:exitcode=86");
  return env;
}

bool run(const QString& program, const QStringList& args) {
  QProcess p;
  p.start(program, args);
  return p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

}  // namespace

class TestCliNetwork : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY2(!bin().isEmpty(), "TOLLGATE_BIN is set by CTest"); }

  // A lookup given up (here: past connect_timeout_s) waited for its resolver thread on the engine's one transfer
  // thread: a DNS server answering in 10 s froze every group, and the gateway's relays, for as long.
  void aSlowNameLookupHoldsOnlyItsOwnGroup() {
    RawHttpServer fast;
    QTemporaryDir dir;
    std::string job = line("slow", "slow");
    for (int i = 0; i < 30; ++i) job += line("fast-" + std::to_string(i), "fast");
    const QProcessEnvironment env = slowDns();
    QElapsedTimer took;
    took.start();
    // The fast group paced at 10/s: its 30 requests span the slow lookup's 1-s timeout and the 9 s after it.
    const std::string fastUrl = "http://127.0.0.1:" + std::to_string(fast.port());
    const json config = configOf(json::array({group("slow", "http://api.slow.test:8080"), group("fast", fastUrl)}));
    int rc = -1;
    const auto rows = runJob(dir, config, job, env, nullptr, {"--max-rps", "fast=10"}, &rc);
    const qint64 ms = took.elapsed();
    QCOMPARE(rc, 0);  // a failed request is a row: the job itself ran to its end
    QCOMPARE(static_cast<int>(rows.size()), 31);
    const json slow = rowOf(rows, "slow");
    QVERIFY2(!slow["ok"].get<bool>() && slow["message"].get<std::string>().find("esolv") != std::string::npos,
             slow.dump().c_str());
    for (int i = 0; i < 30; ++i)
      QVERIFY2(rowOf(rows, "fast-" + std::to_string(i))["ok"].get<bool>(), "a fast row failed");
    // ~3 s of pacing; a frozen engine takes 10 s more.
    QVERIFY2(ms < 8000, qPrintable(QString("the job took %1 ms").arg(ms)));
  }

  // hiredis looked the Redis name up on the shared-quota worker's thread, unbounded: a DNS server answering in
  // 10 s held a 20-row job for 20 s (the worker's connect, then the subscriber's at the stop). The lookup is
  // bounded (the call's timeout, at least 1 s) and the instance falls back, saying why.
  void aSlowRedisNameFallsBackWithinASecond() {
    QTemporaryDir dir;
    std::string job;
    for (int i = 0; i < 20; ++i) job += line("r-" + std::to_string(i), "shared");
    json config = configOf(json::array({group("shared", "sim")}));
    config["simulator"] = {{"groups", {{"shared", {{"algorithm", "fixed-window"}, {"limit", 0}, {"window_s", 1}}}}}};
    config["shared_quota"] = {{"redis", "redis.slow.test:6379"}, {"timeout_ms", 50}, {"groups", {"shared"}}};
    const QProcessEnvironment env = slowDns();
    QElapsedTimer took;
    took.start();
    QByteArray err;
    int rc = -1;
    const auto rows = runJob(dir, config, job, env, &err, {}, &rc);
    const qint64 ms = took.elapsed();
    QCOMPARE(rc, 0);
    QCOMPARE(static_cast<int>(rows.size()), 20);
    for (const auto& [id, row] : rows) QVERIFY2(row["ok"].get<bool>(), row.dump().c_str());
    QVERIFY2(err.contains("redis.slow.test:6379: the name did not resolve within 1 s"), err.constData());
    QVERIFY2(ms < 6000, qPrintable(QString("the job took %1 ms").arg(ms)));
  }

  // An upstream whose certificate the system's store does not hold: one attempt (the same on every retry), an
  // error naming the host and where trust comes from; trusted through CURL_CA_BUNDLE, as the curl command is.
  void aCertificateOfOurOwnIsTrustedThroughTheEnvironment() {
    QTemporaryDir dir;
    const QString cert = dir.filePath("cert.pem"), key = dir.filePath("key.pem");
    QVERIFY(run("openssl", {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                            "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                            "subjectAltName=IP:127.0.0.1"}));
    QProcess server;
    int port = 0;
    for (int tries = 0; tries < 3 && !port; ++tries) {
      port = freePort();
      server.start("openssl", {"s_server", "-accept", "127.0.0.1:" + QString::number(port), "-cert", cert, "-key",
                               key, "-www", "-quiet"});
      if (!server.waitForStarted(5000) || !serverListening(server, port)) port = 0;
    }
    QVERIFY2(port, "openssl s_server did not start");
    // Three attempts allowed: an untrusted certificate takes one (the same answer every time).
    const json config = configOf(json::array({group("tls", "https://127.0.0.1:" + std::to_string(port))}), 3);

    QByteArray err;
    // Ten rows: each still counts as a failed connection (the report's network_errors, the breaker).
    std::string untrustedJob = line("untrusted", "tls");
    for (int i = 0; i < 9; ++i) untrustedJob += line("untrusted-" + std::to_string(i), "tls");
    const QString report = dir.filePath("report.json");
    auto rows = runJob(dir, config, untrustedJob, {}, &err, {"--report", report});
    const json untrusted = rowOf(rows, "untrusted");
    const std::string message = untrusted.value("message", "");
    QVERIFY2(!untrusted["ok"].get<bool>() && untrusted["attempts"].get<int>() == 1, untrusted.dump().c_str());
    QVERIFY2(message.find("https://127.0.0.1:" + std::to_string(port)) != std::string::npos, message.c_str());
    QVERIFY2(message.find("CURL_CA_BUNDLE") != std::string::npos, message.c_str());
    std::ifstream reportIn(report.toStdString());
    const json tls = json::parse(reportIn, nullptr, false)["groups"]["tls"];
    QVERIFY2(tls.value("network_errors", 0) == 10, tls.dump().c_str());

    QProcessEnvironment env;
    env.insert("CURL_CA_BUNDLE", cert);
    rows = runJob(dir, config, line("trusted", "tls"), env, &err);
    QVERIFY2(rowOf(rows, "trusted")["ok"].get<bool>(), rowOf(rows, "trusted").dump().c_str());
    QCOMPARE(rowOf(rows, "trusted")["status"].get<int>(), 200);
    QVERIFY2(err.contains(("trusting the CA bundle " + cert).toUtf8()), err.constData());

    env.insert("CURL_CA_BUNDLE", dir.filePath("no-such.pem"));
    rows = runJob(dir, config, line("missing", "tls"), env, &err);
    QVERIFY2(!rowOf(rows, "missing")["ok"].get<bool>(), rowOf(rows, "missing").dump().c_str());
    QVERIFY2(err.contains("CURL_CA_BUNDLE=" + dir.filePath("no-such.pem").toUtf8() + ": not a readable file"),
             err.constData());
    server.kill();
    server.waitForFinished(5000);
  }

  // An outbound proxy in the environment (libcurl reads http_proxy) is for the internet, never for loopback: the
  // embedded simulator and a model server on this host went to the proxy (here: none listening) and failed.
  void loopbackNeverGoesThroughAProxy() {
    RawHttpServer local;
    QTemporaryDir dir;
    const int deadProxy = freePort();
    QProcessEnvironment env;
    env.insert("http_proxy", "http://user:proxy-password@127.0.0.1:" + QString::number(deadProxy));
    QByteArray err;
    const json config = configOf(json::array({group("local", "http://127.0.0.1:" + std::to_string(local.port()))}));
    const auto rows = runJob(dir, config, line("direct", "local"), env, &err);
    QVERIFY2(rowOf(rows, "direct")["ok"].get<bool>(), rowOf(rows, "direct").dump().c_str());
    QCOMPARE(static_cast<int>(local.received().size()), 1);
    // Said at start, without the proxy's password.
    QVERIFY2(err.contains(("proxy 127.0.0.1:" + std::to_string(deadProxy) + " (http_proxy)").c_str()),
             err.constData());
    QVERIFY2(!err.contains("proxy-password"), err.constData());
  }

  // An answer in a Content-Encoding libcurl cannot decode is the upstream's, the same every time: one attempt,
  // not retries as for a network error.
  void anUndecodableAnswerIsNotRetried() {
    RawHttpServer odd([](const std::string&, int) {
      return RawHttpServer::status(200, "Content-Encoding: x-unheard-of\r\n", "%%%%");
    });
    QTemporaryDir dir;
    const json config = configOf(json::array({group("odd", "http://127.0.0.1:" + std::to_string(odd.port()))}), 3);
    const auto rows = runJob(dir, config, line("odd", "odd"));
    const json r = rowOf(rows, "odd");
    QVERIFY2(!r["ok"].get<bool>() && r["attempts"].get<int>() == 1, r.dump().c_str());
    QCOMPARE(static_cast<int>(odd.received().size()), 1);
  }

  // A redirect is not followed (the key would go where it points) and is no success: a job wrote every row of an
  // http:// base_url that the provider moves to https:// as "ok" with an empty body.
  void aRedirectIsAFailureNamingWhereItLeads() {
    RawHttpServer moved([](const std::string&, int) {
      return RawHttpServer::status(
          301, "Location: https://user:pass-secret@elsewhere.example/v1/x?key=sk-secret-in-query#tok-secret\r\n", "");
    });
    QTemporaryDir dir;
    // Three attempts allowed: a redirect takes one.
    const json config = configOf(json::array({group("old", "http://127.0.0.1:" + std::to_string(moved.port()))}), 3);
    const auto rows = runJob(dir, config, line("moved", "old", "/v1/x"));
    const json r = rowOf(rows, "moved");
    QVERIFY2(!r["ok"].get<bool>() && r["status"].get<int>() == 301 && r["attempts"].get<int>() == 1,
             r.dump().c_str());
    const std::string message = r.value("message", "");
    QVERIFY2(message.find("redirected to https://elsewhere.example:443/v1/x") != std::string::npos, message.c_str());
    QVERIFY2(message.find("secret") == std::string::npos, message.c_str());  // no user, query or fragment
    QCOMPARE(static_cast<int>(moved.received().size()), 1);
  }
};

QTEST_GUILESS_MAIN(TestCliNetwork)
#include "test_cli_network.moc"
