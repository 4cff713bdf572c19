// A JSONL job against hostile input and a hostile upstream, over real loopback HTTP: binary junk lines,
// bodies nested millions deep, numbers past int32, an upstream answering 200 with bytes that are not UTF-8
// or with 2M '[', and one echoing the Authorization header back. Every line still gets a result or a reject
// that parses as JSON, the engine thread lives on, and the key's secret is in neither file.
#include "config_loader.h"
#include "engine.h"
#include "jsonl_job.h"
#include "secret.h"

#include <QTemporaryDir>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

using namespace tg;

namespace {

constexpr const char* kKeyEnv = "TG_HOSTILE_TEST_KEY";
constexpr const char* kSecret = "sk-hostile-0123456789abcdef";
const std::string kBinaryBody("\xFF\xFE\x00\x01 not text \xC3", 15);

// A minimal HTTP/1.1 upstream on loopback: one request per connection, the answer chosen by path.
class RawUpstream {
 public:
  RawUpstream() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 64) != 0)
      qFatal("cannot listen on loopback");
    socklen_t len = sizeof a;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) qFatal("getsockname");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~RawUpstream() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      serve(c);
      ::close(c);
    }
  }

  static void serve(int c) {
    std::string req;
    char buf[4096];
    std::size_t headEnd = std::string::npos;
    while (headEnd == std::string::npos) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, std::size_t(n));
      headEnd = req.find("\r\n\r\n");
    }
    const std::string head = req.substr(0, headEnd);
    std::size_t contentLength = 0;
    for (std::istringstream lines(head); !lines.eof();) {
      std::string l;
      std::getline(lines, l);
      if (l.rfind("Content-Length:", 0) == 0 || l.rfind("content-length:", 0) == 0)
        contentLength = std::stoul(l.substr(15));
    }
    while (req.size() < headEnd + 4 + contentLength) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, std::size_t(n));
    }
    const std::string path = head.substr(head.find(' ') + 1, head.find(' ', head.find(' ') + 1) - head.find(' ') - 1);
    std::string body;
    if (path == "/binary") body = kBinaryBody;
    else if (path == "/deep") body = std::string(2000000, '[');
    else if (path == "/echo") body = nlohmann::json{{"you_sent", head}}.dump();
    else body = head;  // /echo-text
    const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    for (std::size_t off = 0; off < reply.size();) {
      const ssize_t n = ::send(c, reply.data() + off, reply.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += std::size_t(n);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<nlohmann::json> jsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path, std::ios::binary);
  for (std::string l; std::getline(in, l);) {
    try {
      out.push_back(nlohmann::json::parse(l));
    } catch (const std::exception& e) {
      qWarning("%s: line does not parse: %s", path.c_str(), e.what());
      out.push_back(nullptr);
    }
  }
  return out;
}

}  // namespace

class TestJsonlHostile : public QObject {
  Q_OBJECT
 private slots:
  void rejectsHostileLines_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("error");
    QTest::newRow("binary junk") << QByteArray("\xFF\xFE\x00\x01junk\x80", 9) << "not valid JSON";
    QTest::newRow("binary in a string") << QByteArray("{\"id\":\"\xFF\"}") << "not valid JSON";
    QTest::newRow("body 4M deep") << ("{\"id\":\"a\",\"group\":\"g\",\"url\":\"/x\",\"body\":" + QByteArray(4000000, '['))
                                  << "nested deeper than 256 levels";
    QTest::newRow("max_tokens 2^31") << QByteArray(R"({"id":"a","group":"g","url":"/x","max_tokens":2147483648})")
                                     << "\"max_tokens\": expected an integer in [0, 100000000], got 2147483648";
    QTest::newRow("max_tokens 2^64-1")
        << QByteArray(R"({"id":"a","group":"g","url":"/x","max_tokens":18446744073709551615})")
        << "got 18446744073709551615";
    QTest::newRow("max_tokens float") << QByteArray(R"({"id":"a","group":"g","url":"/x","max_tokens":1.5})")
                                      << "\"max_tokens\"";
    QTest::newRow("deadline 1e10") << QByteArray(R"({"id":"a","group":"g","url":"/x","deadline":1e10})")
                                   << "\"deadline\": expected a positive number of seconds, at most 604800";
    QTest::newRow("deadline 1e400") << QByteArray(R"({"id":"a","group":"g","url":"/x","deadline":1e400})")
                                    << "number overflow parsing '1e400'";
    QTest::newRow("header CRLF") << QByteArray(R"({"id":"a","group":"g","url":"/x","headers":{"X":"1\r\nEvil: 2"}})")
                                 << "\"headers\"/\"X\"";
    QTest::newRow("url named twice") << QByteArray(R"({"id":"a","group":"g","url":"/x","url":"/y"})")
                                     << "not valid JSON: duplicate key at /url";
  }
  void rejectsHostileLines() {
    QFETCH(QByteArray, line);
    QFETCH(QString, error);
    std::string err;
    QVERIFY(!parseJobLine(line.toStdString(), &err));
    QVERIFY2(err.find(error.toStdString()) != std::string::npos, err.c_str());
  }

  // A malformed line's error quotes the end of what was read, not all of it: a 50 MB string ending in a byte that is
  // not UTF-8 was copied whole into the error (100 MB on stderr, 227 MB of rejects for two lines).
  void anErrorQuotesLittleOfAHugeLine() {
    std::string err;
    const std::string line = "{\"id\":\"x\",\"group\":\"g\",\"url\":\"/x\",\"body\":\"" + std::string(2000000, 'a') +
                             "\xff\"}";
    QVERIFY(!parseJobLine(line, &err));
    QVERIFY2(err.size() < 400, err.substr(0, 400).c_str());
    QVERIFY2(err.find("ill-formed UTF-8") != std::string::npos, err.c_str());
    QVERIFY2(rejectLine(1, err, line).size() < line.size() * 2, "the reject keeps the raw line once, not twice");
  }

  void theLargestAcceptedValuesStillParse() {
    std::string err;
    auto r = parseJobLine(R"({"id":18446744073709551615,"group":"g","url":"/x","max_tokens":100000000,"deadline":604800})",
                          &err);
    QVERIFY2(r, err.c_str());
    QCOMPARE(r->id, std::string("18446744073709551615"));
    QCOMPARE(r->maxTokens, 100000000);
  }

  void resultBodiesAreKeptAsJsonTextOrExactBytes() {
    Result r;
    r.id = "x";
    r.group = "g";
    r.status = 200;
    r.body = kBinaryBody;
    auto j = resultToJson(r);
    QVERIFY(!j.contains("body"));
    const QByteArray decoded = QByteArray::fromBase64(QByteArray::fromStdString(j["body_base64"].get<std::string>()));
    QCOMPARE(decoded, QByteArray(kBinaryBody.data(), qsizetype(kBinaryBody.size())));
    r.body = "plain text, caf\xC3\xA9";
    QCOMPARE(resultToJson(r)["body"].get<std::string>(), r.body);
    r.body = std::string(2000000, '[');
    QCOMPARE(resultToJson(r)["body"].get<std::string>().size(), std::size_t(2000000));
    r.error = ErrorKind::Network;
    r.errorMessage = "reset by \xFF";
    QCOMPARE(resultToJson(r)["message"].get<std::string>(), std::string("reset by \xEF\xBF\xBD"));
  }

  void aHostileUpstreamAndJobFileLoseNothingAndLeakNoSecret() {
    qputenv(kKeyEnv, kSecret);
    RawUpstream upstream;
    const nlohmann::json engineJson{
        {"name", "hostile"},
        {"groups", nlohmann::json::array({{{"name", "g"},
                                           {"base_url", upstream.url()},
                                           {"concurrency", 2},
                                           {"keys", nlohmann::json::array({{{"name", "k"}, {"env", kKeyEnv}}})}}})}};
    TollgateConfig c = ConfigLoader::fromJson(engineJson, "(test config)");
    Engine engine(c.engine);
    engine.start();

    QTemporaryDir dir;
    const std::string input = dir.filePath("job.jsonl").toStdString();
    {
      std::ofstream out(input, std::ios::binary);
      for (const char* path : {"/binary", "/deep", "/echo", "/echo-text"})
        out << nlohmann::json{{"id", std::string(path + 1)}, {"group", "g"}, {"url", path}}.dump() << "\n";
      out << std::string("\xFF\xFE\x00junk\x80\n", 9);
      // Rejected for the unknown field, with the secret in its raw text.
      out << nlohmann::json{{"id", "leak"}, {"group", "g"}, {"url", "/x"},
                            {"headers", {{"Authorization", std::string("Bearer ") + kSecret}}}, {"typo", 1}}
                 .dump()
          << "\n";
      out << R"({"id":"deep","group":"g","url":"/x","body":)" << std::string(100000, '[') << "\n";
      out << R"({"id":"big","group":"g","url":"/x","max_tokens":2147483648})" << "\n";
    }
    JsonlJob job(engine, JsonlJob::Options{input, {}, {}, 20000, {}});
    job.start();
    QVERIFY(job.waitFinished(30));
    const JobProgress p = job.progress();
    QCOMPARE(p.succeeded, std::int64_t(4));
    QCOMPARE(p.rejected, std::int64_t(4));

    const std::string resultsText = slurp(input + ".results.jsonl");
    const std::string rejectsText = slurp(input + ".rejects.jsonl");
    QVERIFY2(resultsText.find(kSecret) == std::string::npos, resultsText.substr(0, 2000).c_str());
    QVERIFY2(rejectsText.find(kSecret) == std::string::npos, rejectsText.c_str());
    QVERIFY2(resultsText.find(keyFingerprint(kSecret)) != std::string::npos, resultsText.substr(0, 2000).c_str());

    std::map<std::string, nlohmann::json> byId;
    for (const auto& j : jsonLines(input + ".results.jsonl")) {
      QVERIFY(j.is_object());
      byId[j["id"].get<std::string>()] = j;
    }
    QCOMPARE(byId.size(), std::size_t(4));
    QCOMPARE(QByteArray::fromBase64(QByteArray::fromStdString(byId["binary"]["body_base64"].get<std::string>())),
             QByteArray(kBinaryBody.data(), qsizetype(kBinaryBody.size())));
    QCOMPARE(byId["deep"]["body"].get<std::string>(), std::string(2000000, '['));
    QVERIFY(byId["echo"]["body"].is_object());
    QVERIFY(byId["echo-text"]["body"].is_string());

    const auto rejects = jsonLines(input + ".rejects.jsonl");
    QCOMPARE(rejects.size(), std::size_t(4));
    for (const auto& j : rejects) QVERIFY(j.is_object() && j.contains("line") && j.contains("error"));
    QCOMPARE(rejects[0]["line"].get<int>(), 5);
    QCOMPARE(QByteArray::fromBase64(QByteArray::fromStdString(rejects[0]["raw_base64"].get<std::string>())),
             QByteArray("\xFF\xFE\x00junk\x80", 8));
    QVERIFY(rejects[2]["error"].get<std::string>().find("nested deeper") != std::string::npos);

    // The engine thread survived all of it.
    std::atomic<bool> done{false};
    Request again;
    again.id = "after";
    again.group = "g";
    again.url = "/echo";
    engine.submit(again, [&](const Result& r) { done = r.ok(); });
    QTRY_VERIFY_WITH_TIMEOUT(done.load(), 10000);
    engine.stop();
  }
};

QTEST_APPLESS_MAIN(TestJsonlHostile)
#include "test_jsonl_hostile.moc"
