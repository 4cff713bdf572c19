// The tollgate executable end to end: JSONL jobs that survive kill -9, malformed input reported with
// line numbers, config errors naming file/path/expectation, the headers and probe commands.
#include "cli_process.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <csignal>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

using nlohmann::json;

using namespace tgtest;

namespace {

std::vector<json> readJsonl(const QString& path, int* broken = nullptr) {
  std::ifstream in(path.toStdString());
  std::vector<json> rows;
  std::string line;
  while (std::getline(in, line)) {
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      if (broken) ++*broken;
      continue;
    }
    rows.push_back(j);
  }
  return rows;
}

// A config whose only group runs on the embedded simulator at 40 requests/s.
std::string slowConfig() {
  json c{{"name", "cli-test"},
         {"groups", json::array({{{"name", "batch"}, {"base_url", "sim"}, {"concurrency", 8}, {"keys", json::array({{{"name", "k"}}})}}})},
         {"simulator", {{"dialect", "openai"},
                        {"default_group", "batch"},
                        {"latency_ms", {{"distribution", "fixed"}, {"mean", 5}}},
                        {"groups", {{"batch", {{"algorithm", "token-bucket"}, {"limit", 40}, {"window_s", 1}}}}}}}};
  return c.dump(2);
}

// slowConfig() with a gateway on 127.0.0.1:port routing /openai to its group (plus `extra` keys of the section).
json slowConfigWithGateway(int port, const json& extra = json::object()) {
  json c = json::parse(slowConfig());
  c["gateway"] = {{"listen", "127.0.0.1:" + std::to_string(port)},
                  {"routes", json::array({{{"prefix", "/openai"}, {"group", "batch"}}})}};
  c["gateway"].update(extra);
  return c;
}

// `tollgate run` for 3 s of an 80/s batch workload on slowConfig() (plus `extra` arguments); `group` gets
// the report's "batch" group. False when the run failed.
bool batchRunReport(const QStringList& extra, json* group) {
  QTemporaryDir dir;
  const QString cfg = dir.filePath("cfg.json"), report = dir.filePath("report.json");
  json c = json::parse(slowConfig());
  c["workload"] = {{"streams", json::array({{{"group", "batch"}, {"tier", "P1"}, {"rate", 80}}})}};
  writeFile(cfg, c.dump());
  const int rc =
      runTollgate(QStringList{"run", "--headless", "--quiet", "--config", cfg, "--duration", "3", "--report", report} +
                  extra);
  if (rc != 0) return false;
  std::ifstream in(report.toStdString());
  *group = json::parse(in)["groups"]["batch"];
  return group->is_object();
}

// GET `path` on loopback `port` (HTTP/1.1, Connection: close): the whole answer, head and body; empty on failure.
std::string httpGet(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[8192];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY2(!bin().isEmpty(), "TOLLGATE_BIN is set by CTest"); }

  void jsonlJobSurvivesKillMinus9WithoutLossOrDuplicates() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json"), job = dir.filePath("job.jsonl"), results = dir.filePath("results.jsonl");
    writeFile(cfg, slowConfig());
    std::string lines;
    const int n = 240;
    for (int i = 0; i < n; ++i) {
      if (i == 17) lines += "{this is not json\n";  // line 18
      if (i == 90) lines += R"({"id":"bad-tier","group":"batch","tier":"P7","url":"/v1/x"})" "\n";  // line 92
      lines += json{{"id", "req-" + std::to_string(i)}, {"group", "batch"}, {"tier", i % 3 == 0 ? "P0" : "P2"},
                    {"url", "/v1/chat/completions"}, {"body", {{"prompt", "hi"}}}, {"max_tokens", 8}}
                   .dump() +
               "\n";
    }
    writeFile(job, lines);
    const QStringList args{"run", "--headless", "--quiet", "--config", cfg, "--workload", job, "--results", results};

    QProcess first;
    first.start(bin(), args);
    QVERIFY(first.waitForStarted(5000));
    // Kill it hard once part of the job is done.
    QTRY_VERIFY_WITH_TIMEOUT(readJsonl(results).size() >= 60, 30000);
    ::kill(static_cast<pid_t>(first.processId()), SIGKILL);
    QVERIFY(first.waitForFinished(5000));
    const auto partial = readJsonl(results).size();
    QVERIFY2(partial < static_cast<std::size_t>(n), "killed too late to test resume");

    QByteArray out, err;
    QCOMPARE(runTollgate(args, &out, &err), 0);
    int broken = 0;
    const auto rows = readJsonl(results, &broken);
    QCOMPARE(broken, 0);
    std::set<std::string> ids;
    for (const auto& r : rows) {
      QVERIFY2(ids.insert(r["id"].get<std::string>()).second, ("duplicate " + r.dump()).c_str());
      QVERIFY2(r["ok"].get<bool>(), r.dump().c_str());
      QCOMPARE(r["status"].get<int>(), 200);
    }
    QCOMPARE(static_cast<int>(ids.size()), n);
    // The malformed lines are reported with their line numbers, once per run, and skipped.
    QVERIFY2(err.contains("job.jsonl:18: not valid JSON"), err.constData());
    QVERIFY2(err.contains("job.jsonl:92: \"tier\": expected P0, P1 or P2"), err.constData());
    const auto rejects = readJsonl(job + ".rejects.jsonl");
    QVERIFY(rejects.size() >= 2);
    QCOMPARE(rejects[0]["line"].get<int>(), 18);
  }

  void configErrorsNameFilePathAndExpectation_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown key") << R"({"groups":[{"name":"a","base_url":"http://127.0.0.1:1","concurency":4}]})"
                                 << "/groups/0/concurency: unknown key";
    QTest::newRow("wrong type") << R"({"groups":[{"name":"a","base_url":"http://127.0.0.1:1","concurrency":"many"}]})"
                                << "/groups/0/concurrency: expected an integer";
    QTest::newRow("out of range") << R"({"global_concurrency":0,"groups":[{"name":"a","base_url":"http://x"}]})"
                                  << "/global_concurrency: expected an integer in [1, 100000], got 0";
    QTest::newRow("bad url") << R"({"groups":[{"name":"a","base_url":"ftp://x"}]})"
                             << "/groups/0/base_url: expected an http:// or https:// URL";
    QTest::newRow("missing env") << R"({"groups":[{"name":"a","base_url":"https://api.example","keys":[{"name":"k","env":"TOLLGATE_TEST_UNSET_VAR"}]}]})"
                                 << "/groups/0/keys/0/env: environment variable TOLLGATE_TEST_UNSET_VAR is not set";
    QTest::newRow("syntax") << R"({"groups": [)" << "invalid JSON";
    QTest::newRow("bad sim") << R"({"groups":[{"name":"a","base_url":"sim"}],"simulator":{"dialect":"klingon"}})"
                             << "/simulator/dialect";
    // A simulator section is checked where no group uses it, and named at its own path (it named /groups/a/limit).
    QTest::newRow("unused bad sim")
        << R"({"groups":[{"name":"a","base_url":"http://127.0.0.1:1"}],"simulator":{"groups":{"a":{"limit":-1}}}})"
        << "/simulator/groups/a/limit: expected a number";
  }

  void configErrorsNameFilePathAndExpectation() {
    QFETCH(QString, config);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString cfg = dir.filePath("bad.json");
    writeFile(cfg, config.toStdString());
    QByteArray out, err;
    QCOMPARE(runTollgate({"run", "--headless", "--config", cfg, "--duration", "1"}, &out, &err), 2);
    QVERIFY2(err.contains(cfg.toUtf8()), err.constData());
    QVERIFY2(err.contains(expected.toUtf8()), err.constData());
  }

  void badArgumentsAreNamed() {
    QByteArray out, err;
    QCOMPARE(runTollgate({"run", "--headless", "--duration", "soon"}, &out, &err), 2);
    QVERIFY2(err.contains("--duration: expected a number"), err.constData());
    QCOMPARE(runTollgate({"run", "--frobnicate"}, &out, &err), 2);
    QVERIFY2(err.contains("unknown argument \"--frobnicate\""), err.constData());
    QCOMPARE(runTollgate({"launch"}, &out, &err), 2);
  }

  void headersCommandNormalizesAProviderResponse() {
    QByteArray out, err;
    const QByteArray raw =
        "HTTP/1.1 429 Too Many Requests\r\n"
        "x-ratelimit-limit-requests: 500\r\n"
        "x-ratelimit-remaining-requests: 0\r\n"
        "x-ratelimit-reset-requests: 6m0s\r\n"
        "retry-after-ms: 1500\r\n"
        "garbage line without colon\r\n";
    QCOMPARE(runTollgate({"headers", "--now", "1700000000"}, &out, &err, raw), 0);
    const json j = json::parse(out.toStdString());
    QCOMPARE(j["status"].get<int>(), 429);
    QCOMPARE(j["retry_after_s"].get<double>(), 1.5);
    QCOMPARE(j["verdict"]["classification"].get<std::string>(), std::string("quota_exhausted"));
    QVERIFY(err.contains("6"));  // the bad line is reported with its line number
  }

  // What a command prints is its answer: written to a full disk, it fails (headers and run's report exited 0 with
  // nothing written). A --screenshot that cannot be written fails too.
  void anAnswerThatCannotBeWrittenFails() {
    QProcess p;
    p.setStandardOutputFile(QStringLiteral("/dev/full"));
    p.start(bin(), {"headers", "--now", "1700000000"});
    QVERIFY(p.waitForStarted(5000));
    p.write("HTTP/1.1 429 Too Many Requests\r\nretry-after: 2\r\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(p.readAllStandardError().contains("cannot write to standard output"), "no word of the write");
    QProcess version;
    version.setStandardOutputFile(QStringLiteral("/dev/full"));
    version.start(bin(), {"--version"});
    QVERIFY(version.waitForFinished(30000));
    QCOMPARE(version.exitCode(), 1);

    QTemporaryDir home;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", home.path());
    QByteArray out, err;
    QCOMPARE(runTollgate({"--history", "off", "--screenshot", home.filePath("no/such/dir/shot.png"),
                          "--screenshot-after", "0.5"},
                         &out, &err, {}, env),
             1);
    QVERIFY2(err.contains("cannot write"), err.constData());
  }

  void headlessRunWritesAReport() {
    json g;
    QTemporaryDir dir;
    const QString db = dir.filePath("h.db");
    QVERIFY(batchRunReport({"--history", db}, &g));
    // The samples hold the whole run, its last moment too (the one a second missed the last 0.5-0.8 s).
    QByteArray rows;
    QCOMPARE(runTollgate({"history", "export", "--db", db, "--from", "-1h", "--to", "now", "--format", "jsonl"}, &rows),
             0);
    long sends = 0;
    for (const QByteArray& line : rows.split('\n'))
      if (!line.isEmpty()) sends += json::parse(line.toStdString()).value("sends", 0L);
    QCOMPARE(sends, g["sent"].get<long>());
    QVERIFY2(g["ok"].get<int>() > 60, g.dump().c_str());  // ~40/s for 3 s after the initial burst
    QVERIFY2(g["share_429"].get<double>() < 0.05, g.dump().c_str());
    for (const char* k : {"sent", "ok", "r429", "r5xx", "retries", "shed", "goodput_per_s", "latency_p50_ms",
                          "latency_p95_ms", "wait_p50_ms", "wait_p95_ms"})
      QVERIFY2(g.contains(k), k);
  }

  // Results that cannot be written (a full disk: /dev/full) are lost to the resume too: the run fails (exit 1),
  // says which file, and the report says so. It exited 0 with "succeeded: 2, finished: true".
  void aRunWhoseResultsCannotBeWrittenFails() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json"), job = dir.filePath("job.jsonl"), report = dir.filePath("r.json");
    writeFile(cfg, slowConfig());
    writeFile(job, "{\"id\":\"a\",\"group\":\"batch\",\"url\":\"/v1/x\"}\n"
                   "{\"id\":\"b\",\"group\":\"batch\",\"url\":\"/v1/x\"}\n");
    QByteArray err;
    QCOMPARE(runTollgate({"run", "--headless", "--quiet", "--config", cfg, "--workload", job, "--results", "/dev/full",
                          "--history", "off", "--duration", "10", "--report", report},
                         nullptr, &err),
             1);
    QVERIFY2(err.contains("/dev/full"), err.constData());
    std::ifstream in(report.toStdString());
    const json r = json::parse(in);
    QVERIFY2(r["job"]["write_error"].get<std::string>().find("/dev/full") != std::string::npos, r.dump().c_str());
  }

  // A job stopped by SIGINT or SIGTERM before its end exits 1 and says the same command resumes it (it exited 0,
  // silent under --quiet: a script took it for a finished job). A report that cannot be written fails the run
  // (it exited 0 with an empty file: the full disk shows only when the file is flushed).
  void aJobStoppedBeforeItsEndOrAnUnwrittenReportFails() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json"), job = dir.filePath("job.jsonl"), results = dir.filePath("r.jsonl");
    writeFile(cfg, slowConfig());
    std::string lines;
    for (int i = 0; i < 400; ++i)
      lines += json{{"id", "r" + std::to_string(i)}, {"group", "batch"}, {"url", "/v1/x"}}.dump() + "\n";
    writeFile(job, lines);
    QProcess run;
    run.start(bin(), {"run", "--headless", "--quiet", "--config", cfg, "--workload", job, "--results", results,
                      "--history", "off"});
    QVERIFY(run.waitForStarted(5000));
    QTRY_VERIFY_WITH_TIMEOUT(readJsonl(results).size() >= 20, 30000);
    ::kill(static_cast<pid_t>(run.processId()), SIGINT);
    QVERIFY(run.waitForFinished(10000));
    QCOMPARE(run.exitStatus(), QProcess::NormalExit);
    QCOMPARE(run.exitCode(), 1);
    const QByteArray err = run.readAllStandardError();
    QVERIFY2(err.contains("interrupted with the job unfinished"), err.constData());

    writeFile(job, lines.substr(0, lines.find('\n') + 1));
    QByteArray reportErr;
    QCOMPARE(runTollgate({"run", "--headless", "--quiet", "--config", cfg, "--workload", job, "--results", results,
                          "--history", "off", "--report", "/dev/full"},
                         nullptr, &reportErr),
             1);
    QVERIFY2(reportErr.contains("cannot write the report to /dev/full"), reportErr.constData());
  }

  // --report or --history naming the job or its results is refused before anything runs: a report written over
  // the results file lost every result (the next run sent them all again), and a job file became the report.
  void outputsThatWouldOverwriteTheJobAreRefused() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json"), job = dir.filePath("job.jsonl"), results = dir.filePath("r.jsonl");
    writeFile(cfg, slowConfig());
    const std::string line = json{{"id", "r0"}, {"group", "batch"}, {"url", "/v1/x"}}.dump() + "\n";
    writeFile(job, line);
    writeFile(results, "{\"id\":\"old\"}\n");
    const QStringList base{"run", "--headless", "--quiet", "--config", cfg, "--workload", job};
    QByteArray err;
    QCOMPARE(runTollgate(base + QStringList{"--results", results, "--report", results, "--history", "off"}, nullptr,
                         &err),
             2);
    QVERIFY2(err.contains("is the job's results: it would be overwritten"), err.constData());
    QCOMPARE(runTollgate(base + QStringList{"--results", results, "--history", results}, nullptr, &err), 2);
    QVERIFY2(err.contains("the history file"), err.constData());
    QCOMPARE(runTollgate(base + QStringList{"--report", job, "--history", "off"}, nullptr, &err), 2);
    QVERIFY2(err.contains("is the job (--workload)"), err.constData());
    QCOMPARE(runTollgate(base + QStringList{"--report", dir.filePath("none/r.json"), "--history", "off"}, nullptr,
                         &err),
             2);
    QVERIFY2(err.contains("cannot create it in"), err.constData());
    std::ifstream in(results.toStdString());
    std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    QCOMPARE(kept, std::string("{\"id\":\"old\"}\n"));
    std::ifstream inJob(job.toStdString());
    std::string keptJob((std::istreambuf_iterator<char>(inJob)), std::istreambuf_iterator<char>());
    QCOMPARE(keptJob, line);
  }

  // Under a file-size limit (ulimit -f) a write past it raised SIGXFSZ, which killed the run mid-line with no
  // word (exit 153). It is now a write error like a full disk: named, taken back, exit 1.
  void aFileSizeLimitIsAWriteError() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json"), job = dir.filePath("job.jsonl"), results = dir.filePath("r.jsonl");
    writeFile(cfg, slowConfig());
    std::string lines;
    for (int i = 0; i < 60; ++i)
      lines += json{{"id", "r" + std::to_string(i)}, {"group", "batch"}, {"url", "/v1/x"}}.dump() + "\n";
    writeFile(job, lines);
    QProcess run;
    run.setChildProcessModifier([] {
      rlimit small{4000, 4000};
      ::setrlimit(RLIMIT_FSIZE, &small);
    });
    run.start(bin(), {"run", "--headless", "--quiet", "--config", cfg, "--workload", job, "--results", results,
                      "--history", "off"});
    QVERIFY(run.waitForStarted(5000));
    QVERIFY(run.waitForFinished(60000));
    QCOMPARE(run.exitStatus(), QProcess::NormalExit);  // not killed by SIGXFSZ
    QCOMPARE(run.exitCode(), 1);
    const QByteArray err = run.readAllStandardError();
    QVERIFY2(err.contains(results.toUtf8() + ": cannot write"), err.constData());
    int broken = 0;
    QVERIFY(!readJsonl(results, &broken).empty());
    QCOMPARE(broken, 0);
  }

  // --max-rps GROUP=N holds the group to N requests/s whatever the workload offers (80/s, > 60 sent above).
  void headlessRunHoldsTheRateCeiling() {
    json g;
    QVERIFY(batchRunReport({"--max-rps", "batch=10"}, &g));
    QVERIFY2(g["sent"].get<int>() >= 15 && g["sent"].get<int>() <= 36, g.dump().c_str());
  }

  // Rate steps open loop: clean below the simulator's 40/s (burst 40), refused at 80/s, then bisected below
  // the lower of 80/s and 1.1x the rate sustained there; the probe waits a second after 429s before the next
  // step. (Accuracy is measured in a benchmark and in test_probe_accuracy, not here.)
  void probeFindsTheLimit() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json");
    writeFile(cfg, slowConfig());
    QByteArray out, err;
    QCOMPARE(runTollgate({"probe", "--config", cfg, "--group", "batch", "--rates", "10,80", "--step-s", "2"}, &out, &err), 0);
    const QList<QByteArray> lines = out.split('\n');
    QVERIFY2(lines.size() >= 1 + 2 + 4 + 4, out.constData());  // head, 2 rising, 4 refining, stopped, 2 limits, binds
    QVERIFY2(lines[1].contains("10.0") && lines[1].contains("rise") && lines[1].contains(" 0.0%"), out.constData());
    QVERIFY2(lines[2].contains("80.0") && lines[2].contains("rise") && !lines[2].contains(" 0.0%"), out.constData());
    const double firstRefine = lines[3].trimmed().split(' ').at(0).toDouble();
    QVERIFY2(lines[3].contains("refine") && firstRefine > 10 && firstRefine <= 45, out.constData());  // halfway at most
    QVERIFY2(lines[3].contains("     1.0  "), out.constData());  // waited a second after the 429s
    QVERIFY2(out.contains("what binds: request rate") && out.contains("cost: "), out.constData());
    QVERIFY2(out.contains("stopped: ") && out.contains("passed --stop-429 10.0%"), out.constData());
    // The hard limit is the rate sustained once the burst was spent: near 40/s, not the 60/s the 80/s step's
    // accepted requests average to with the burst in.
    const int at = out.indexOf("hard limit");
    QVERIFY(at >= 0);
    const double hard = out.mid(at).split(':').at(1).trimmed().split(' ').at(0).toDouble();
    QVERIFY2(hard > 30 && hard < 50, out.constData());
  }

  // `check` reads a config as serve would (every section, every token's variable) and starts nothing: it runs
  // beside the serve it is for, whose port is taken (held here), and contacts no upstream. A bad config is named.
  void checkReadsAConfigAndStartsNothing() {
    int port = 0;
    const int held = listeningLoopbackSocket(&port);
    QVERIFY(held >= 0);
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json");
    json c = slowConfigWithGateway(
        port, {{"clients", json::array({{{"name", "web"}, {"token_env", "TOLLGATE_TEST_CHECK_TOKEN"}}})}});
    writeFile(cfg, c.dump());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TOLLGATE_TEST_CHECK_TOKEN", "check-token-0123456789abcdef");
    QByteArray out, err;
    QCOMPARE(runTollgate({"check", "--config", cfg, "--history", "off"}, &out, &err, {}, env), 0);
    ::close(held);
    QVERIFY2(out.contains("valid"), out.constData());
    QVERIFY2(out.contains("gateway: 127.0.0.1:" + QByteArray::number(port) + ", 1 route, 1 client token"),
             out.constData());
    QVERIFY2(!out.contains("check-token") && !err.contains("check-token"), out.constData());
    QVERIFY2(err.isEmpty(), err.constData());  // no engine, no simulator, no gateway started
    // The token's variable unset: the error serve would give, exit 2.
    QCOMPARE(runTollgate({"check", "--config", cfg}, &out, &err), 2);
    QVERIFY2(err.contains("/gateway/clients/0/token_env") && err.contains("TOLLGATE_TEST_CHECK_TOKEN"),
             err.constData());
    QCOMPARE(runTollgate({"check"}, &out, &err), 2);
    QVERIFY2(err.contains("--config FILE is required"), err.constData());
    // --serve: as serve reads it, which needs a gateway section (the unit's check let serve exit 2 at every restart).
    c.erase("gateway");
    writeFile(cfg, c.dump());
    QCOMPARE(runTollgate({"check", "--config", cfg, "--history", "off"}, &out, &err), 0);
    QCOMPARE(runTollgate({"check", "--serve", "--config", cfg, "--history", "off"}, &out, &err), 2);
    QVERIFY2(err.contains("no \"gateway\" section"), err.constData());
  }

  // The probe stops the engine and sends by itself: a config's gateway is not opened (it would take services'
  // calls into a stopped engine). Its port is held here, so a gateway that tried would log that it is taken.
  void probeOpensNoGateway() {
    int port = 0;
    const int held = listeningLoopbackSocket(&port);
    QVERIFY(held >= 0);
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json");
    json c = slowConfigWithGateway(port);
    writeFile(cfg, c.dump());
    QByteArray out, err;
    const int rc = runTollgate({"probe", "--config", cfg, "--group", "batch", "--rates", "5", "--step-s", "0.4"}, &out,
                               &err);
    ::close(held);
    QCOMPARE(rc, 0);
    QVERIFY2(!err.contains("gateway"), err.constData());
    QVERIFY2(out.contains("stopped: "), out.constData());
  }

  // A port already taken: serve fails naming the address it was asked for (it said 127.0.0.1:0, the bound
  // port before any was bound).
  void serveNamesTheAddressItCannotTake() {
    int port = 0;
    const int held = listeningLoopbackSocket(&port);
    QVERIFY(held >= 0);
    const std::string address = "127.0.0.1:" + std::to_string(port);
    QByteArray err;
    const int rc = runTollgate({"serve", "--listen", QString::fromStdString(address), "--duration", "1", "--history",
                                "off", "--quiet"}, nullptr, &err);
    ::close(held);
    QCOMPARE(rc, 1);
    QVERIFY2(err.contains(("tollgate serve: gateway: cannot listen on " + address + ": ").c_str()), err.constData());
    QVERIFY2(!err.contains("running without the gateway"), err.constData());  // it does not: it exits 1
  }

  // "localhost" is bound as 127.0.0.1: the banner says the address a client can reach, not a name it may
  // resolve to ::1 first.
  void serveSaysTheAddressItBound() {
    QByteArray out;
    QCOMPARE(runTollgate({"serve", "--listen", "localhost:0", "--duration", "1", "--history", "off", "--quiet"}, &out),
             0);
    QVERIFY2(out.startsWith("gateway: http://127.0.0.1:") && !out.startsWith("gateway: http://127.0.0.1:0\n"),
             out.constData());
  }

  // --listen goes into the config's gateway section: its error named the config file's /gateway/listen.
  void serveNamesTheListenFlagItCannotRead() {
    QByteArray err;
    QCOMPARE(runTollgate({"serve", "--listen", ":0", "--duration", "1", "--history", "off", "--quiet"}, nullptr, &err),
             2);
    QVERIFY2(err.contains("tollgate serve: --listen :0: expected a host before the port"), err.constData());
  }

  // Not on a terminal (a service's journal, a log file): the status block comes once a minute, not every second.
  void serveOffATerminalWritesItsStatusAMinute() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json");
    json c = json::parse(slowConfig());
    c["gateway"] = {{"listen", "127.0.0.1:0"}, {"routes", json::array({{{"prefix", "/openai"}, {"group", "batch"}}})}};
    writeFile(cfg, c.dump());
    QByteArray out, err;
    QCOMPARE(runTollgate({"serve", "--config", cfg, "--duration", "2.5", "--history", "off"}, &out, &err), 0);
    QVERIFY2(out.contains("gateway: http://127.0.0.1:"), out.constData());
    QVERIFY2(!out.contains("--- t="), out.constData());  // two of them, a second apart, before
  }

  // SIGHUP reads the config again: a group's concurrency and rate ceiling change live (as an operator's would),
  // what else changed is named as a restart's, and a file that no longer loads changes nothing.
  void serveReloadsItsConfigOnSighup() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json");
    json c = json::parse(slowConfig());
    // The file's own address is refused (beyond loopback, no clients): --listen replaces it, on reloads too.
    c["gateway"] = {{"listen", "0.0.0.0:0"}, {"routes", json::array({{{"prefix", "/openai"}, {"group", "batch"}}})}};
    writeFile(cfg, c.dump());
    QProcess serve;
    const QString history = dir.filePath("history.db");
    serve.start(bin(), {"serve", "--config", cfg, "--listen", "127.0.0.1:0", "--history", history, "--quiet",
                        "--duration", "60"});
    QVERIFY(serve.waitForStarted(5000));
    QByteArray out, err;
    for (int i = 0; i < 100 && !out.contains("\nroute:"); ++i) {
      serve.waitForReadyRead(100);
      out += serve.readAllStandardOutput();
    }
    const int at = out.indexOf("gateway: http://127.0.0.1:");
    QVERIFY2(at >= 0, out.constData());
    const int port = out.mid(at + 26, out.indexOf('\n', at) - at - 26).toInt();
    QVERIFY(port > 0);
    const auto limit = [&] {
      const std::string m = httpGet(port, "/metrics");
      const std::string key = "tollgate_concurrency_ceiling{group=\"batch\"} ";
      const auto k = m.find(key);
      return k == std::string::npos ? -1 : std::atoi(m.c_str() + k + key.size());
    };
    QTRY_COMPARE_WITH_TIMEOUT(limit(), 8, 5000);
    const auto hangUpAndRead = [&](const char* until) {
      ::kill(static_cast<pid_t>(serve.processId()), SIGHUP);
      QByteArray said;
      for (int i = 0; i < 50 && !said.contains(until); ++i) {
        serve.waitForReadyRead(100);
        said += serve.readAllStandardError();
      }
      return said;
    };

    c["groups"][0]["concurrency"] = 3;
    c["groups"][0]["rate_ceiling"] = {{"requests_per_s", 20}};
    c["retry"] = {{"max_attempts", 3}};
    writeFile(cfg, c.dump());
    err = hangUpAndRead("restart");
    QVERIFY2(err.contains("batch concurrency 8 -> 3; batch rate_ceiling none -> 20 req/s\n"),
             err.constData());
    QVERIFY2(err.contains("not applied until a restart (only concurrency and rate ceilings change live): /retry"),
             err.constData());
    QTRY_COMPARE_WITH_TIMEOUT(limit(), 3, 5000);

    // A save cut short, inside a header's value.
    writeFile(cfg, "{\"groups\": [{\"name\": \"b\", \"headers\": {\"Authorization\": \"Bearer sk-cut-sh");
    err = hangUpAndRead("nothing changed");
    QVERIFY2(err.contains("SIGHUP: ") && err.contains(cfg.toUtf8()) && err.contains("nothing changed"),
             err.constData());
    QVERIFY2(!err.contains("sk-cut"), err.constData());  // the parser's quote of what it read stays out
    QCOMPARE(serve.state(), QProcess::Running);
    QCOMPARE(limit(), 3);

    c["groups"][0]["concurrency"] = 5;  // only what changed since the last reload is applied
    writeFile(cfg, c.dump());
    err = hangUpAndRead("restart");
    QVERIFY2(err.contains("SIGHUP: " + cfg.toUtf8() + ": batch concurrency 3 -> 5\n") ||
                 err.contains("SIGHUP: " + cfg.toUtf8() + ": batch concurrency 3 -> 5\r\n"),
             err.constData());
    QTRY_COMPARE_WITH_TIMEOUT(limit(), 5, 5000);

    serve.terminate();
    QVERIFY(serve.waitForFinished(35000));
    QCOMPARE(serve.exitCode(), 0);
    // In history: each reload (what it applied, what waits for a restart, or why it was refused) and the actions.
    QByteArray events;
    QCOMPARE(runTollgate({"history", "export", "--db", history, "--from", "0", "--to", "now", "--format", "jsonl",
                          "--what", "events"}, &events),
             0);
    std::vector<std::string> reloads;
    int actions = 0;
    for (const auto& line : events.split('\n')) {
      const json e = json::parse(line.toStdString(), nullptr, false);
      if (e.is_discarded()) continue;
      const json& d = e["detail"];
      if (e["kind"] == "config_reload")
        reloads.push_back(e["severity"].get<std::string>() + " " + d.value("restart_only", json()).dump() + " " +
                          std::to_string(d.value("applied", json::array()).size()));
      actions += e["kind"] == "operator" && d.value("actor", "") == "config reload";
    }
    std::string seen;
    for (const auto& r : reloads) seen += r + " | ";
    QVERIFY2((reloads == std::vector<std::string>{"warn [\"/retry\"] 2", "error null 0", "warn [\"/retry\"] 1"}),
             seen.c_str());
    QCOMPARE(actions, 3);
  }

  void probeStopsWhenTheUpstreamRefusesTheMethod() {
    QTemporaryDir dir;
    const QString cfg = dir.filePath("cfg.json");
    writeFile(cfg, slowConfig());
    QByteArray out, err;
    // The simulator's control endpoint answers a GET 405: no rate can be learnt, and the probe says why
    // instead of reporting "0 req/s".
    // It exits 1 (it exited 0 with limits of 0 req/s a script would take for measured) and names the answers.
    QCOMPARE(runTollgate({"probe", "--config", cfg, "--group", "batch", "--rates", "5,10", "--step-s", "0.5", "--method",
                          "GET", "--path", "/__sim/control"}, &out, &err), 1);
    QVERIFY2(out.contains("neither 2xx nor 429") && out.contains("--method"), out.constData());
    QVERIFY2(err.contains("no limit measured") && err.contains("x HTTP 405"), err.constData());
    QCOMPARE(out.count(" rise "), 1);
    // Nothing listening is told apart from a refused method: no answer, and libcurl's reason.
    int port = 0;
    const int held = listeningLoopbackSocket(&port);
    ::close(held);  // a port that was free a moment ago, now closed
    json down = json::parse(slowConfig());
    down.erase("simulator");
    down["groups"][0]["base_url"] = "http://127.0.0.1:" + std::to_string(port);
    writeFile(cfg, down.dump());
    QCOMPARE(runTollgate({"probe", "--config", cfg, "--group", "batch", "--rates", "5", "--step-s", "0.5"}, &out,
                         &err), 1);
    QVERIFY2(err.contains("x no answer (") && !err.contains("--method"), err.constData());
    // libcurl's own words, naming the address (its generic text said "Couldn't connect to server" alone), and no
    // verdict on what binds when nothing was measured.
    QVERIFY2(err.contains(("port " + std::to_string(port)).c_str()), err.constData());
    QVERIFY2(!out.contains("what binds"), out.constData());
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
