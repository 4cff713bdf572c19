// SimServer's limits over real loopback sockets: bodies up to the parser's limit are answered and larger
// ones get 413; pipelined input beyond the reply cap is still processed; accept backs off when out of
// descriptors; request and idle timeouts; the connection cap; strict line endings; huge max_tokens;
// deeply nested JSON bodies; a client that pipelines and never reads.
#include "log.h"
#include "sim_server.h"
#include "sim_test_client.h"

#include <QtTest>

#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

using namespace tg;
using nlohmann::json;

namespace {

SimConfig configFrom(const char* text) { return SimConfig::fromJson(json::parse(text), "test"); }

double cpuSecondsOfProcess() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int highestOpenFd() {
  int highest = 2;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d)) highest = std::max(highest, std::atoi(e->d_name));
    ::closedir(d);
  }
  return highest;
}

// Lowers RLIMIT_NOFILE and occupies every free descriptor but `spare`; restores both when destroyed,
// also when a check fails half-way.
class DescriptorShortage {
 public:
  explicit DescriptorShortage(int spare) {
    getrlimit(RLIMIT_NOFILE, &old_);
    rlimit low = old_;
    low.rlim_cur = rlim_t(highestOpenFd() + 1 + 32);
    lowered_ = setrlimit(RLIMIT_NOFILE, &low) == 0;
    for (int fd; lowered_ && (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers_.push_back(fd);
    for (int i = 0; i < spare && !fillers_.empty(); ++i) {
      ::close(fillers_.back());
      fillers_.pop_back();
    }
  }
  ~DescriptorShortage() {
    for (int fd : fillers_) ::close(fd);
    if (lowered_) setrlimit(RLIMIT_NOFILE, &old_);
  }
  bool ok() const { return lowered_ && !fillers_.empty(); }

 private:
  rlimit old_{};
  bool lowered_ = false;
  std::vector<int> fillers_;
};

long peakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

const SimTestClient::Headers kGroupG = {{"X-RateLimit-Group", "g"}};

}  // namespace

class TestSimServerLimits : public QObject {
  Q_OBJECT

 private slots:
  void bodyUnderTheParserLimitIsAnswered();
  void bodyOverTheLimitGets413();
  void pipelinedBeyondTheReplyCapIsAnswered();
  void pipelinedThenEofIsAnsweredInFull();
  void acceptBacksOffWhenOutOfDescriptors();
  void slowRequestGets408();
  void idleConnectionIsClosed();
  void connectionCapRefusesWith503();
  void bareLfCannotSmuggleARequest();
  void hugeMaxTokensDoesNotOverflow();
  void deepJsonToControlIsRejected();
  void deepJsonToChatCostsNoMemory();
  void clientThatNeverReadsIsClosed();
};

void TestSimServerLimits::bodyUnderTheParserLimitIsAnswered() {
  SimServer sim(configFrom(R"({})"));
  SimTestClient c(sim.start());
  const std::string body(10 << 20, 'x');  // between the old 4 MiB read limit and the parser's 16 MiB
  const auto r = c.request("POST", "/v1/chat", {}, body);
  QCOMPARE(r.status, 200);
  QCOMPARE(json::parse(r.body)["usage"]["prompt_tokens"].get<std::int64_t>(), std::int64_t(body.size() / 4));
  QCOMPARE(c.request("GET", "/x").status, 200);  // the connection is still usable
}

void TestSimServerLimits::bodyOverTheLimitGets413() {
  SimServer sim(configFrom(R"({})"));
  SimTestClient c(sim.start());
  QVERIFY(c.sendRaw("POST /v1/chat HTTP/1.1\r\nHost: x\r\nContent-Length: 16777217\r\n\r\n"));
  const auto r = c.readResponse();
  QCOMPARE(r.status, 413);
  QCOMPARE(r.header("connection"), std::string("close"));
  QVERIFY(c.closedByPeer(3000));
}

void TestSimServerLimits::pipelinedBeyondTheReplyCapIsAnswered() {
  SimServer sim(configFrom(R"({})"));
  SimTestClient c(sim.start());
  constexpr int kRequests = 1500;  // more than the 1024 replies a connection may have queued
  std::string batch;
  for (int i = 0; i < kRequests; ++i) batch += SimTestClient::format("GET", "/p" + std::to_string(i), {}, {});
  QVERIFY(c.sendRaw(batch));
  for (int i = 1; i <= kRequests; ++i) {
    const auto r = c.readResponse();
    QVERIFY2(r.status == 200, qPrintable(QString("response %1 of %2: status %3").arg(i).arg(kRequests).arg(r.status)));
    QCOMPARE(json::parse(r.body)["id"].get<std::string>(), "sim-" + std::to_string(i));
  }
}

void TestSimServerLimits::pipelinedThenEofIsAnsweredInFull() {
  SimServer sim(configFrom(R"({"latency_ms":{"distribution":"fixed","mean":2}})"));
  SimTestClient c(sim.start());
  constexpr int kRequests = 1500;
  std::string batch;
  for (int i = 0; i < kRequests; ++i) batch += SimTestClient::format("GET", "/p", {}, {});
  QVERIFY(c.sendRaw(batch));
  QVERIFY(c.shutdownWrite());
  for (int i = 1; i <= kRequests; ++i) {
    const auto r = c.readResponse();
    QVERIFY2(r.status == 200, qPrintable(QString("response %1 of %2: status %3").arg(i).arg(kRequests).arg(r.status)));
  }
  QVERIFY(c.closedByPeer(3000));
}

void TestSimServerLimits::acceptBacksOffWhenOutOfDescriptors() {
  std::FILE* logFile = std::tmpfile();
  QVERIFY(logFile);
  Log::setSink(logFile);
  SimServer sim(configFrom(R"({})"));
  const int port = sim.start();
  double cpu = 0;
  int answered = 0;
  {
    DescriptorShortage shortage(3);  // one client, its accepted socket, and a second client
    QVERIFY(shortage.ok());
    auto first = std::make_unique<SimTestClient>(port);
    QCOMPARE(first->request("GET", "/x").status, 200);
    SimTestClient second(port);  // queued by the kernel; the server's accept fails with EMFILE
    QVERIFY(second.connected());
    QVERIFY(second.sendRaw(SimTestClient::format("GET", "/x", {}, {})));
    const double before = cpuSecondsOfProcess();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    cpu = cpuSecondsOfProcess() - before;
    first.reset();  // frees a descriptor on the server: accepting resumes
    answered = second.readResponse().status;
  }
  sim.stop();
  Log::setSink(stderr);
  std::rewind(logFile);
  int acceptLines = 0;
  char line[1024];
  while (std::fgets(line, sizeof line, logFile))
    if (std::strstr(line, "accept")) ++acceptLines;
  std::fclose(logFile);
  QVERIFY2(cpu < 0.3, qPrintable(QString("the loop used %1 s of CPU in 1 s while out of descriptors").arg(cpu)));
  QVERIFY2(acceptLines >= 1 && acceptLines <= 2, qPrintable(QString("%1 accept log lines").arg(acceptLines)));
  QCOMPARE(answered, 200);
}

void TestSimServerLimits::slowRequestGets408() {
  SimServer sim(configFrom(R"({"connections":{"request_timeout_s":0.3}})"));
  SimTestClient c(sim.start());
  QCOMPARE(c.request("GET", "/x").status, 200);
  const auto start = std::chrono::steady_clock::now();
  QVERIFY(c.sendRaw("GET /x HTTP/1.1\r\nHost: x\r\n"));  // the head never ends
  const auto r = c.readResponse();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  QCOMPARE(r.status, 408);
  QVERIFY2(waited >= 0.25 && waited < 3, qPrintable(QString::number(waited)));
  QVERIFY(c.closedByPeer(3000));
}

void TestSimServerLimits::idleConnectionIsClosed() {
  SimServer sim(configFrom(R"({"connections":{"idle_timeout_s":0.3}})"));
  const int port = sim.start();
  SimTestClient used(port), silent(port);
  QCOMPARE(used.request("GET", "/x").status, 200);
  QVERIFY(used.closedByPeer(3000));
  QVERIFY(silent.closedByPeer(3000));  // connected, never sent a byte
  // A connection waiting on a slow reply is not idle.
  SimServer slow(configFrom(R"({"connections":{"idle_timeout_s":0.2},"latency_ms":{"mean":600}})"));
  SimTestClient waiting(slow.start());
  QCOMPARE(waiting.request("GET", "/x").status, 200);
}

void TestSimServerLimits::connectionCapRefusesWith503() {
  SimServer sim(configFrom(R"({"connections":{"max":2}})"));
  const int port = sim.start();
  auto a = std::make_unique<SimTestClient>(port);
  SimTestClient b(port);
  QCOMPARE(a->request("GET", "/x").status, 200);
  QCOMPARE(b.request("GET", "/x").status, 200);
  SimTestClient over(port);
  const auto r = over.readResponse();
  QCOMPARE(r.status, 503);
  QVERIFY(over.closedByPeer(3000));
  a.reset();
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {  // the server notices the close asynchronously
    SimTestClient next(port);
    served = next.request("GET", "/x").status == 200;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  QVERIFY(served);
  QCOMPARE(sim.stats()["totals"]["requests"].get<int>(), 3);  // refused connections are not API requests
}

void TestSimServerLimits::bareLfCannotSmuggleARequest() {
  SimServer sim(configFrom(R"({})"));
  SimTestClient c(sim.start());
  const std::string smuggled = "POST /__sim/reset HTTP/1.1\r\n\r\n";
  QVERIFY(c.sendRaw("POST /v1/chat HTTP/1.1\r\nX-A: 1\nContent-Length: " + std::to_string(smuggled.size()) +
                    "\r\n\r\n" + smuggled));
  const auto r = c.readResponse();
  QCOMPARE(r.status, 400);
  QVERIFY2(QString::fromStdString(r.body).contains("CRLF"), r.body.c_str());
  QVERIFY(c.closedByPeer(3000));
  QCOMPARE(sim.stats()["totals"]["requests"].get<int>(), 0);
}

void TestSimServerLimits::hugeMaxTokensDoesNotOverflow() {
  SimServer sim(configFrom(R"({"groups":{"g":{"limit":100,"window_s":60,"tokens_per_window":1000}}})"));
  SimTestClient c(sim.start());
  for (const char* body : {R"({"max_tokens":9223372036854775807,"pad":"xxxxxxxx"})", R"({"max_tokens":1e300})",
                           R"({"max_tokens":18446744073709551615})"}) {
    const auto r = c.request("POST", "/v1/chat", kGroupG, body);
    QVERIFY2(r.status == 413, qPrintable(QString("%1 -> %2 %3").arg(body).arg(r.status).arg(r.body.c_str())));
  }
  QCOMPARE(c.request("POST", "/v1/chat", kGroupG, R"({"max_tokens":-5})").status, 200);
  const auto r = c.request("POST", "/v1/chat", {}, R"({"max_tokens":9223372036854775807})");  // unlimited group
  QCOMPARE(r.status, 200);
  QVERIFY2(json::parse(r.body)["usage"]["total_tokens"].get<double>() > 0, r.body.c_str());
}

// The control endpoint once parsed any depth and its error message dumped the bad value whole, recursing
// once per level: a million levels overflowed the simulator thread's stack.
void TestSimServerLimits::deepJsonToControlIsRejected() {
  SimServer sim(configFrom(R"({})"));
  SimTestClient c(sim.start());
  constexpr std::size_t kLevels = 1 << 20;
  const std::string deep = std::string(kLevels, '[') + std::string(kLevels, ']');
  const auto r = c.request("POST", "/__sim/control", {}, R"({"action":"errors","duration_s":1,"status":)" + deep + "}");
  QCOMPARE(r.status, 400);
  QVERIFY2(r.body.size() < 1000, r.body.substr(0, 1000).c_str());
  QVERIFY2(QString::fromStdString(r.body).contains("deeper than"), r.body.c_str());
  // A shallow array in the same place is named by its type and size, never dumped.
  std::string hundred = "1";
  for (int i = 1; i < 100; ++i) hundred += ",1";
  const auto wide = c.request("POST", "/__sim/control", {}, R"({"action":"errors","duration_s":1,"status":[)" + hundred + "]}");
  QCOMPARE(wide.status, 400);
  QVERIFY2(QString::fromStdString(wide.body).contains("got an array of 100 elements"), wide.body.c_str());
  SimTestClient after(sim.port());
  QCOMPARE(after.request("GET", "/x").status, 200);
}

// A chat body only has its top-level "max_tokens" read; eight million levels once became a DOM of
// over half a gigabyte before the parser reached the end of the body.
void TestSimServerLimits::deepJsonToChatCostsNoMemory() {
  SimServer sim(configFrom(R"({})"));
  SimTestClient c(sim.start());
  const std::string body = R"({"max_tokens":8,"a":)" + std::string(8 << 20, '[');
  const long before = peakRssKb();
  const auto r = c.request("POST", "/v1/chat", {}, body);
  const long grownMb = (peakRssKb() - before) / 1024;
  QCOMPARE(r.status, 200);
  QCOMPARE(json::parse(r.body)["usage"]["completion_tokens"].get<int>(), 0);  // not JSON: no max_tokens
  QVERIFY2(grownMb < 200, qPrintable(QString("peak memory grew by %1 MB").arg(grownMb)));
  // max_tokens is still read from a well-formed body, and the last of duplicate keys wins as before.
  QCOMPARE(json::parse(c.request("POST", "/v1/chat", {}, R"({"a":[{"max_tokens":2}],"max_tokens":8})").body)
               ["usage"]["completion_tokens"].get<int>(), 4);
  QCOMPARE(json::parse(c.request("POST", "/v1/chat", {}, R"({"max_tokens":8,"max_tokens":"x"})").body)
               ["usage"]["completion_tokens"].get<int>(), 0);
  QCOMPARE(json::parse(c.request("POST", "/v1/chat", {}, R"({"max_tokens":8} trailing)").body)
               ["usage"]["completion_tokens"].get<int>(), 0);
}

// A client that pipelines requests and never reads its replies once held its connection (megabytes of
// buffered replies and input) forever: it was not idle, and no request was partial.
void TestSimServerLimits::clientThatNeverReadsIsClosed() {
  SimServer sim(configFrom(R"({"connections":{"write_timeout_s":0.3,"idle_timeout_s":60,"request_timeout_s":60}})"));
  const int port = sim.start();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  QVERIFY(fd >= 0);
  const int small = 4096;
  QCOMPARE(::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);  // before connect: a small window
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  QCOMPARE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  std::string requests;
  for (int i = 0; i < 40000; ++i) requests += "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";  // ~10 MB of replies
  std::size_t off = 0;
  const auto sendUntil = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (off < requests.size() && std::chrono::steady_clock::now() < sendUntil) {
    const ssize_t n = ::send(fd, requests.data() + off, requests.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) off += static_cast<std::size_t>(n);
    else if (n < 0 && errno != EAGAIN && errno != EINTR) break;
    else std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Never read: wait for the reset (an abortive close shows as an error on the socket without reading).
  const auto start = std::chrono::steady_clock::now();
  bool reset = false;
  while (!reset && std::chrono::steady_clock::now() - start < std::chrono::seconds(4)) {
    pollfd p{fd, 0, 0};
    reset = ::poll(&p, 1, 50) == 1 && (p.revents & (POLLERR | POLLHUP));
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  ::close(fd);
  QVERIFY2(reset, "a client that never reads still holds its connection after 4 s");
  QCOMPARE(err, ECONNRESET);
  QVERIFY2(waited < 3, qPrintable(QString::number(waited)));
  SimTestClient after(port);
  QCOMPARE(after.request("GET", "/x").status, 200);
}

QTEST_GUILESS_MAIN(TestSimServerLimits)
#include "test_sim_server_limits.moc"
