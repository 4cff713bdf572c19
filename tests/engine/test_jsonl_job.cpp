// JSONL job lines: every field validated, errors name the field. A job dropped while its requests are in
// flight (the dashboard replacing it) returns at once and still writes every result, against the simulator.
// Results are written off the engine thread: an unread pipe as the results file does not stall the engine,
// and a full disk is an error that names the file.
#include "engine_fixture.h"
#include "jsonl_job.h"
#include "line_file_writer.h"
#include "secret.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <poll.h>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tg;

namespace {

// A simulator without limits answering after `latencyMs`, and an engine with one group "g" in front of it.
nlohmann::json simJson(int latencyMs) {
  return {{"dialect", "none"}, {"group_by", "header"}, {"default_group", "g"}, {"groups", {{"g", {{"limit", 0}}}}},
          {"latency_ms", {{"distribution", "fixed"}, {"mean", latencyMs}}}};
}
nlohmann::json engineJson(int concurrency) {
  return {{"name", "jsonl-test"},
          {"groups", nlohmann::json::array({{{"name", "g"}, {"base_url", "sim"}, {"concurrency", concurrency},
                                             {"keys", nlohmann::json::array({{{"name", "k"}}})}}})}};
}

std::string writeJob(const QTemporaryDir& dir, int n) {
  const std::string input = dir.filePath("job.jsonl").toStdString();
  std::ofstream out(input);
  for (int i = 0; i < n; ++i)
    out << nlohmann::json{{"id", "j" + std::to_string(i)}, {"group", "g"}, {"url", "/v1/chat/completions"}}.dump()
        << "\n";
  return input;
}

}  // namespace

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
    tgtest::EngineUnderTest eut(simJson(300), engineJson(4));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 12);
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

  // A job far larger than the tier's queue: fed no faster than the queue takes it. Fed up to maxOutstanding, a
  // job of 200,000 lines with a capacity of 1,000 had 191,362 shed "queue full", written as results (and so
  // skipped by every resume), and the run exited 0.
  void aJobLargerThanTheQueueIsFedAsItDrains() {
    auto cfg = engineJson(8);
    cfg["tiers"] = {{"P1", {{"capacity", 20}}}};
    tgtest::EngineUnderTest eut(simJson(5), cfg);
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 400);
    JsonlJob job(eut.engine(), JsonlJob::Options{input, {}, {}, 20000, {}});
    job.start();
    QTRY_VERIFY_WITH_TIMEOUT(job.progress().finished, 20000);
    QCOMPARE(job.progress().succeeded, std::int64_t(400));
    QCOMPARE(job.progress().failed, std::int64_t(0));
    std::ifstream in(input + ".results.jsonl");
    int rows = 0;
    for (std::string l; std::getline(in, l); ++rows) QVERIFY2(l.find("queue full") == std::string::npos, l.c_str());
    QCOMPARE(rows, 400);
  }

  // A group slower than its tier's deadline allows for the whole job: fed only what it answers within half of
  // max_wait_s. Fed up to the queue's capacity, 200 lines to a group answering 10/s (max_wait_s 5) had 150 shed
  // "deadline passed", written as failures that every resume skipped.
  void aSlowGroupIsFedNoFasterThanItsDeadlineAllows() {
    auto cfg = engineJson(4);  // 4 in flight at 200 ms: 20/s
    cfg["tiers"] = {{"P1", {{"max_wait_s", 2}}}};
    tgtest::EngineUnderTest eut(simJson(200), cfg);
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 120);  // 6 s of work, three times the deadline
    JsonlJob job(eut.engine(), JsonlJob::Options{input, {}, {}, 20000, {}});
    job.start();
    QTRY_VERIFY_WITH_TIMEOUT(job.progress().finished, 30000);
    QCOMPARE(job.progress().failed, std::int64_t(0));
    QCOMPARE(job.progress().succeeded, std::int64_t(120));
  }

  // The same with the deadline on each line ("deadline": 2) and the tier's at its 600 s default: fed against the
  // line's (against the tier's, 22 of 30 such lines were shed).
  void linesWithTheirOwnDeadlineAreFedAgainstIt() {
    tgtest::EngineUnderTest eut(simJson(200), engineJson(4));
    QTemporaryDir dir;
    const std::string input = dir.filePath("job.jsonl").toStdString();
    {
      std::ofstream out(input);
      for (int i = 0; i < 120; ++i)
        out << nlohmann::json{{"id", "d" + std::to_string(i)}, {"group", "g"}, {"url", "/v1/x"}, {"deadline", 2}}.dump()
            << "\n";
    }
    JsonlJob job(eut.engine(), JsonlJob::Options{input, {}, {}, 20000, {}});
    job.start();
    QTRY_VERIFY_WITH_TIMEOUT(job.progress().finished, 30000);
    QCOMPARE(job.progress().failed, std::int64_t(0));
    QCOMPARE(job.progress().succeeded, std::int64_t(120));
  }

  // An orderly stop (the first Ctrl-C, --duration): nothing more is sent and what is in flight is answered and
  // written, so the resume sends nothing twice. Stopped at once, the requests in flight were aborted: sent and
  // paid for, unwritten, and sent again by the resume.
  void anOrderlyStopWritesWhatWasInFlight() {
    tgtest::EngineUnderTest eut(simJson(500), engineJson(4));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 40);
    JsonlJob job(eut.engine(), JsonlJob::Options{input, {}, {}, 20000, {}});
    job.start();
    QTRY_VERIFY_WITH_TIMEOUT(job.progress().done() >= 4, 5000);  // the first four answered, the next in flight
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    job.cancel();
    QVERIFY(eut.engine().finishInFlight(5));
    eut.engine().stop();
    QVERIFY(job.waitFinished(5));
    const std::int64_t sent = eut.sim().stats()["groups"]["g"]["requests"].get<std::int64_t>();
    QVERIFY2(sent >= 8 && sent < 40, qPrintable(QString::number(sent)));
    QCOMPARE(job.progress().done(), sent);  // every request sent has its result
    QCOMPARE(job.progress().failed, std::int64_t(0));
  }

  void anUnreadPipeDoesNotStallTheEngine() {
    tgtest::EngineUnderTest eut(simJson(1), engineJson(8));
    QTemporaryDir dir;
    constexpr int kRequests = 60;  // ~15 KB of result lines: more than the 4 KB pipe below can hold
    const std::string input = writeJob(dir, kRequests);
    const std::string fifo = dir.filePath("results.fifo").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    // A reader that is there (so the job can open the pipe) but reads nothing yet.
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    QVERIFY(reader >= 0);
    QVERIFY(::fcntl(reader, F_SETPIPE_SZ, 4096) > 0);

    std::atomic<int> observed{0};
    JsonlJob job(eut.engine(), JsonlJob::Options{input, fifo, {}, 20000, [&](const Result&) { ++observed; }});
    job.start();
    // Every result reaches its callback on the engine thread although the pipe is full ...
    QTRY_COMPARE_WITH_TIMEOUT(observed.load(), kRequests, 10000);
    // ... and the engine still answers new requests.
    std::atomic<bool> answered{false};
    Request extra;
    extra.id = "extra";
    extra.group = "g";
    extra.url = "/v1/chat/completions";
    eut.engine().submit(extra, [&](const Result& r) { answered = r.ok(); });
    QTRY_VERIFY_WITH_TIMEOUT(answered.load(), 5000);
    QVERIFY(!job.progress().finished);  // not all written: the pipe is full

    // Now read it: every result arrives exactly once, in whole lines, and the job finishes.
    std::string text;
    std::set<std::string> ids;
    int lines = 0;
    QElapsedTimer t;
    t.start();
    while (lines < kRequests && t.elapsed() < 10000) {
      pollfd p{reader, POLLIN, 0};
      ::poll(&p, 1, 100);
      char buf[4096];
      const ssize_t n = ::read(reader, buf, sizeof buf);
      if (n > 0) text.append(buf, std::size_t(n));
      for (std::size_t nl; (nl = text.find('\n')) != std::string::npos; text.erase(0, nl + 1)) {
        ++lines;
        ids.insert(nlohmann::json::parse(text.substr(0, nl))["id"].get<std::string>());
      }
    }
    QCOMPARE(lines, kRequests);
    QCOMPARE(ids.size(), std::size_t(kRequests));
    QVERIFY(job.waitFinished(10));
    QCOMPARE(job.progress().succeeded, std::int64_t(kRequests));
    QVERIFY(job.progress().writeError.empty());
    ::close(reader);
  }

  void aFullDiskIsAnErrorNamingTheFile() {
    tgtest::EngineUnderTest eut(simJson(1), engineJson(8));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 3);
    JsonlJob job(eut.engine(), JsonlJob::Options{input, "/dev/full", {}, 20000, {}});
    job.start();
    QVERIFY(job.waitFinished(10));  // the job still ends: a result that cannot be written is not waited for
    const std::string error = job.progress().writeError;
    QVERIFY2(error.find("/dev/full") != std::string::npos, error.c_str());
    QVERIFY2(error.find(std::strerror(ENOSPC)) != std::string::npos, error.c_str());
  }

  // Once a result cannot be written, the job stops reading: every request sent after it would be paid for,
  // lost, and sent again by the resume (a full disk went on to send all 3,000 requests of a job).
  void aFullDiskStopsTheFeed() {
    tgtest::EngineUnderTest eut(simJson(1), engineJson(8));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 2000);
    JsonlJob job(eut.engine(), JsonlJob::Options{input, "/dev/full", {}, 16, {}});
    job.start();
    QVERIFY(job.waitFinished(10));
    const JobProgress p = job.progress();
    QVERIFY2(p.submitted <= 64, qPrintable(QString::number(p.submitted)));  // was 2,000
    QVERIFY(!p.writeError.empty());
  }

  // Results that cannot be written cancel what the engine still holds of the job: queued, it was sent and lost
  // (a full disk after 354 rows: the upstream still got all 2,000 requests over the next 13 s).
  // Here a pipe whose reader leaves after 100 rows, by which time the job has fed far more than that.
  void aWriteFailureCancelsWhatIsQueued() {
    std::signal(SIGPIPE, SIG_IGN);  // as `tollgate run` does: EPIPE, a write error
    tgtest::EngineUnderTest eut(simJson(20), engineJson(8));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 3000);  // ~8 s at 8 in flight and 20 ms
    const std::string fifo = dir.filePath("results.fifo").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    QVERIFY(reader >= 0);
    JsonlJob job(eut.engine(), JsonlJob::Options{input, fifo, dir.filePath("rejects").toStdString(), 20000, {}});
    job.start();
    int rows = 0;
    QElapsedTimer t;
    t.start();
    while (rows < 100 && t.elapsed() < 10000) {
      pollfd p{reader, POLLIN, 0};
      ::poll(&p, 1, 100);
      char buf[512];
      const ssize_t n = ::read(reader, buf, sizeof buf);
      for (ssize_t i = 0; i < n; ++i) rows += buf[i] == '\n';
    }
    QVERIFY(job.progress().submitted > 300);  // fed ahead of what is written
    ::close(reader);
    QVERIFY(job.waitFinished(20));
    const JobProgress p = job.progress();
    QVERIFY2(p.writeError.find(std::strerror(EPIPE)) != std::string::npos, p.writeError.c_str());
    const std::int64_t sent = eut.sim().stats()["groups"]["g"]["requests"].get<std::int64_t>();
    QVERIFY2(sent < 1500, qPrintable(QString::number(sent)));  // all 3,000 without the cancel
    QVERIFY2(p.cancelled > 0, qPrintable(QString::number(p.cancelled)));
  }

  // Two jobs on one results file each read it for their resume before either wrote, so each sent every request
  // and every id ended up twice. The second is refused before it sends anything.
  void aSecondJobOnTheSameResultsIsRefused() {
    tgtest::EngineUnderTest eut(simJson(200), engineJson(8));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 20);
    const std::string results = dir.filePath("r.jsonl").toStdString();
    JsonlJob first(eut.engine(), JsonlJob::Options{input, results, {}, 20000, {}});
    first.start();
    JsonlJob second(eut.engine(), JsonlJob::Options{input, results, {}, 20000, {}});
    try {
      second.start();
      QFAIL("a second job on the same results file was started");
    } catch (const std::runtime_error& e) {
      QVERIFY2(std::string(e.what()).find(results + ": another job is writing it") == 0, e.what());
    }
    QCOMPARE(second.progress().submitted, std::int64_t(0));
    QVERIFY(first.waitFinished(10));
    QCOMPARE(first.progress().succeeded, std::int64_t(20));
  }

  // Stopped with its requests in flight, a job whose every line was read ends ("finished": its cancelled requests
  // count down as results do) but is not complete: run took such a job for done, exit 0 and "finished": true,
  // whenever the last cancellation's fsync beat its report.
  void aJobStoppedInFlightIsNotComplete() {
    tgtest::EngineUnderTest eut(simJson(2000), engineJson(8));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 8);
    JsonlJob job(eut.engine(), JsonlJob::Options{input, dir.filePath("r.jsonl").toStdString(), {}, 20000, {}});
    job.start();
    QTRY_COMPARE(job.progress().submitted, std::int64_t(8));
    QTRY_VERIFY(job.progress().readToEnd);
    eut.engine().stop();  // every request in flight is cancelled
    QVERIFY(job.waitFinished(10));
    const JobProgress p = job.progress();
    QCOMPARE(p.cancelled, std::int64_t(8));
    QVERIFY(p.finished);
    QVERIFY(!p.complete());
  }

  // A job with no bad line writes no rejects file: it made an empty one beside the job, and in a folder the user
  // cannot write (an installed package's examples) the job could not run at all.
  void aCleanJobLeavesNoRejectsFile() {
    tgtest::EngineUnderTest eut(simJson(1), engineJson(8));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 3);
    JsonlJob job(eut.engine(), JsonlJob::Options{input, dir.filePath("r.jsonl").toStdString(), {}, 20000, {}});
    job.start();
    QVERIFY(job.waitFinished(10));
    QCOMPARE(job.progress().succeeded, std::int64_t(3));
    QVERIFY(!QFileInfo::exists(QString::fromStdString(input + ".rejects.jsonl")));
  }

  // A resume rejects the same bad lines again; each is written once. A reject row torn by a kill is cut first
  // (the next row was glued to it: one unparseable line).
  void rejectsAreWrittenOnceAcrossResumes() {
    tgtest::EngineUnderTest eut(simJson(1), engineJson(8));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 3);
    {
      std::ofstream out(input, std::ios::app);
      out << "not json\n{\"id\": 5}\n";
    }
    const std::string rejects = dir.filePath("x.rejects.jsonl").toStdString();
    auto runOnce = [&] {
      // Started right after the last one is gone, whose writer threads close (and unlock) its files a moment
      // later: waited for, not refused as another job's.
      JsonlJob job(eut.engine(), JsonlJob::Options{input, dir.filePath("r.jsonl").toStdString(), rejects, 20000, {}});
      job.start();
      QVERIFY(job.waitFinished(10));
      QCOMPARE(job.progress().rejected, std::int64_t(2));
    };
    runOnce();
    {
      std::ofstream out(rejects, std::ios::app);
      out << "{\"line\": 4, \"err";  // a kill mid-row
    }
    runOnce();
    runOnce();
    std::ifstream in(rejects);
    std::vector<int> lines;
    for (std::string row; std::getline(in, row);) {
      const nlohmann::json j = nlohmann::json::parse(row);  // every row whole
      lines.push_back(j.at("line").get<int>());
    }
    QCOMPARE(lines, (std::vector<int>{4, 5}));
  }

  // After an outage a resume with retryFailed sends again the ids whose last row is a failure another try may pass
  // (shed, 5xx, network, 429s), not those that would fail again (a 400) or have passed since; without it, none.
  void aResumeRetriesWhatFailedForNowOnlyWhenAsked() {
    QVERIFY(worthRetrying({{"ok", false}, {"error", "shed"}, {"status", 0}}));
    QVERIFY(worthRetrying({{"ok", false}, {"error", "http"}, {"status", 503}}));
    QVERIFY(worthRetrying({{"ok", false}, {"error", "http"}, {"status", 408}}));
    QVERIFY(!worthRetrying({{"ok", false}, {"error", "http"}, {"status", 400}}));
    QVERIFY(!worthRetrying({{"ok", false}, {"error", "config"}, {"status", 0}}));
    QVERIFY(!worthRetrying({{"ok", true}, {"status", 200}}));
    QVERIFY(!worthRetrying(nlohmann::json::array()));
    QVERIFY(!worthRetrying({{"ok", nullptr}, {"error", "shed"}}));  // a row edited by hand: threw type_error
    tgtest::EngineUnderTest eut(simJson(1), engineJson(4));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 8);
    const std::string results = input + ".results.jsonl";
    {
      std::ofstream out(results);
      auto row = [&](const std::string& id, bool ok, const std::string& error, int status) {
        nlohmann::json j{{"id", id}, {"group", "g"}, {"ok", ok}, {"status", status}};
        if (!ok) j["error"] = error;
        out << j.dump() << "\n";
      };
      row("j0", true, "", 200);
      row("j1", false, "shed", 0);
      row("j2", false, "http", 400);
      row("j3", false, "http", 503);
      row("j4", false, "rate_limited", 429);
      row("j4", true, "", 200);  // passed since: done
      row("j5", true, "", 200);
      row("j5", false, "network", 0);  // the last row decides
    }
    auto sent = [&] { return eut.sim().stats()["groups"]["g"]["requests"].get<std::int64_t>(); };
    auto run = [&](bool retry) {
      JsonlJob::Options o{input, {}, {}, 20000, {}};
      o.retryFailed = retry;
      JsonlJob job(eut.engine(), o);
      job.start();
      if (!job.waitFinished(10)) return JobProgress{};
      return job.progress();
    };
    const JobProgress plain = run(false);
    QCOMPARE(plain.skipped, std::int64_t(6));  // j0-j5
    QCOMPARE(plain.retried, std::int64_t(0));
    QCOMPARE(sent(), std::int64_t(2));  // j6, j7
    const JobProgress again = run(true);
    QCOMPARE(again.retried, std::int64_t(3));  // j1, j3, j5
    QCOMPARE(again.skipped, std::int64_t(5));
    QCOMPARE(again.succeeded, std::int64_t(3));
    QCOMPARE(sent(), std::int64_t(5));
    std::ifstream in(results);
    std::map<std::string, bool> last;
    int rows = 0;
    for (std::string l; std::getline(in, l); ++rows) {
      const auto j = nlohmann::json::parse(l);
      last[j["id"].get<std::string>()] = j["ok"].get<bool>();
    }
    QCOMPARE(rows, 8 + 2 + 3);  // appended below, nothing rewritten
    for (const char* id : {"j0", "j1", "j3", "j4", "j5", "j6", "j7"}) QVERIFY2(last[id], id);
    QVERIFY(!last["j2"]);
    QCOMPARE(run(true).retried, std::int64_t(0));  // nothing left worth it
    QCOMPARE(sent(), std::int64_t(5));
  }

  // An id holding an API key was written scrubbed to the results, so every resume sent that line again.
  void anIdHoldingAKeyIsRejected() {
    const std::string key = "sk-jsonl-test-key-7a1f93";
    SecretRegistry::add(key);
    tgtest::EngineUnderTest eut(simJson(1), engineJson(4));
    QTemporaryDir dir;
    const std::string input = writeJob(dir, 2);
    {
      std::ofstream out(input, std::ios::app);
      out << nlohmann::json{{"id", "user-" + key}, {"group", "g"}, {"url", "/v1/x"}}.dump() << "\n";
    }
    for (int run = 0; run < 2; ++run) {
      JsonlJob job(eut.engine(), JsonlJob::Options{input, {}, {}, 20000, {}});
      job.start();
      QVERIFY(job.waitFinished(10));
      QCOMPARE(job.progress().rejected, std::int64_t(1));
      QCOMPARE(job.progress().succeeded, std::int64_t(run == 0 ? 2 : 0));
    }
    QCOMPARE(eut.sim().stats()["groups"]["g"]["requests"].get<std::int64_t>(), std::int64_t(2));
    std::ifstream in(input + ".rejects.jsonl");
    const std::string rejects((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    QVERIFY2(rejects.find("holds an API key") != std::string::npos, rejects.c_str());
    QVERIFY2(rejects.find(key) == std::string::npos, rejects.c_str());
  }

  // A pipe (--workload /dev/stdin) is read once: it was read to its end to count its lines, and the job then
  // found it empty and sent nothing. A directory, or a results file that is the job file, is refused.
  void aJobFromAPipeIsReadOnce() {
    tgtest::EngineUnderTest eut(simJson(1), engineJson(8));
    QTemporaryDir dir;
    const std::string lines = [&] {
      std::ifstream in(writeJob(dir, 3));
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }();
    const std::string fifo = dir.filePath("job.fifo").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] {
      const int fd = ::open(fifo.c_str(), O_WRONLY);  // waits for the job to open it
      if (fd < 0) return;
      (void)!::write(fd, lines.data(), lines.size());
      ::close(fd);
    });
    JsonlJob noResults(eut.engine(), JsonlJob::Options{fifo, {}, {}, 20000, {}});  // not next to /dev/stdin
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, noResults.start());
    JsonlJob toDevice(eut.engine(), JsonlJob::Options{fifo, "/dev/null", {}, 20000, {}});  // nor next to /dev/null
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, toDevice.start());
    JsonlJob job(eut.engine(), JsonlJob::Options{fifo, dir.filePath("r.jsonl").toStdString(), {}, 20000, {}});
    try {
      job.start();
    } catch (...) {
      ::close(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK));  // lets the writer go
      writer.join();
      throw;
    }
    const bool finished = job.waitFinished(10);
    writer.join();
    QVERIFY(finished);
    QCOMPARE(job.progress().succeeded, std::int64_t(3));
    QCOMPARE(job.options().rejects, dir.filePath("r.jsonl.rejects.jsonl").toStdString());
    JsonlJob folder(eut.engine(), JsonlJob::Options{dir.path().toStdString(), {}, {}, 20000, {}});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, folder.start());
    const std::string input = writeJob(dir, 2);
    JsonlJob same(eut.engine(), JsonlJob::Options{input, input, {}, 20000, {}});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, same.start());
  }

  // A disk that fills mid-line: the piece written is taken back, so no torn row stays in the middle of the file
  // (the next line that fits would land right after it, and a resume cuts only a torn last line). The process's
  // file size limit stands in for the disk: a write across it is cut short, the next one fails (EFBIG).
  void aLineCutShortIsTakenBack() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("r.jsonl").toStdString();
    const std::string line(59, 'a');  // 60 bytes with its newline
    rlimit was{};
    QCOMPARE(::getrlimit(RLIMIT_FSIZE, &was), 0);
    const auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = was;
    small.rlim_cur = 100;
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::vector<int> written;
    std::mutex m;
    std::condition_variable cv;
    {
      LineFileWriter w(path);
      for (int i = 0; i < 2; ++i)
        w.append(line, [&](bool ok) {
          std::lock_guard lk(m);
          written.push_back(ok);
          cv.notify_one();
        });
      std::unique_lock lk(m);
      QVERIFY(cv.wait_for(lk, std::chrono::seconds(5), [&] { return written.size() == 2; }));
      QVERIFY2(w.error().find("cannot write") != std::string::npos, w.error().c_str());
    }
    ::setrlimit(RLIMIT_FSIZE, &was);
    std::signal(SIGXFSZ, oldHandler);
    QCOMPARE(written, (std::vector<int>{1, 0}));
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    QCOMPARE(text, line + "\n");  // was 100 bytes: the line and 40 of the next
  }
};

QTEST_APPLESS_MAIN(TestJsonlJob)
#include "test_jsonl_job.moc"
