// The gateway over real loopback HTTP, in front of the engine and tollgate-sim (OpenAI dialect): answers
// relayed whole, refusals (400/401/404/413/502) that name what is wrong, tiers that order the queue, sheds
// whose Retry-After is the quota's truth, and a client that hangs up while queued never reaching upstream.
#include "gateway_fixture.h"
#include "log.h"
#include "../engine/raw_http_server.h"
#include "secret.h"

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>

using namespace tgtest;

namespace {

nlohmann::json simConfig() {
  return {{"dialect", "openai"},
          {"retry_after", true},
          {"group_by", "header"},
          {"default_group", "open"},
          {"latency_ms", {{"distribution", "fixed"}, {"mean", 5}, {"p95", 5}}},
          {"groups",
           {{"open", {{"algorithm", "fixed-window"}, {"limit", 0}, {"window_s", 1}}},
            {"tight", {{"algorithm", "fixed-window"}, {"limit", 3}, {"window_s", 4}, {"per_key", false}}},
            {"serial", {{"algorithm", "fixed-window"}, {"limit", 0}, {"window_s", 1}}},
            {"perkey", {{"algorithm", "fixed-window"}, {"limit", 2}, {"window_s", 10}, {"per_key", true}}}}}};
}

nlohmann::json engineConfig() {
  auto group = [](const char* name, int concurrency, const char* base = "sim") {
    return nlohmann::json{{"name", name}, {"base_url", base}, {"concurrency", concurrency}, {"adaptive", false},
                          {"keys", {{{"name", std::string(name) + "-key"}}}}};
  };
  return {{"name", "gateway-test"},
          {"tiers", {{"P0", {{"max_wait_s", 20}}}, {"P1", {{"max_wait_s", 20}}}, {"P2", {{"max_wait_s", 20}}}}},
          {"groups", {group("open", 8), group("tight", 4), group("serial", 1), group("dead", 2, "http://127.0.0.1:1"),
                      group("perkey", 4)}},
          {"gateway",
           {{"clients", {{{"name", "svc-test"}, {"token_env", "TOLLGATE_TEST_GATEWAY_TOKEN"}}}},
            {"max_body_bytes", 4096},
            {"routes",
             {{{"prefix", "/openai"}, {"group", "open"}, {"groups", {"open", "tight", "serial"}}},
              {{"prefix", "/dead"}, {"group", "dead"}},
              {{"prefix", "/own"}, {"group", "perkey"}, {"auth", "pass_through"}}}}}}};
}

const std::string kChat = R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":8})";
const std::vector<std::string> kAuth = {std::string("Authorization: Bearer ") + kToken, "Content-Type: application/json"};

// Queue depth of a group's tier in the latest snapshot (-1 before the first snapshot lists the group).
int queued(GatewayUnderTest& g, const char* group, int tier) {
  auto snap = g.engine().latestSnapshot();
  const auto* gs = snap ? snap->find(group) : nullptr;
  return gs ? gs->queueDepth[static_cast<std::size_t>(tier)] : -1;
}

std::string findHeaderIn(const tg::HeaderList& h, const char* name) {
  for (const auto& [k, v] : h)
    if (strcasecmp(k.c_str(), name) == 0) return v;
  return {};
}

std::vector<std::string> with(std::vector<std::string> h, const std::vector<std::string>& more) {
  h.insert(h.end(), more.begin(), more.end());
  return h;
}

struct Piece {
  double atS;
  std::string bytes;
};
struct StreamCapture {
  std::chrono::steady_clock::time_point t0;
  std::vector<Piece> pieces;
};
std::size_t capturePiece(char* p, std::size_t s, std::size_t n, void* u) {
  auto* c = static_cast<StreamCapture*>(u);
  c->pieces.push_back({std::chrono::duration<double>(std::chrono::steady_clock::now() - c->t0).count(),
                       std::string(p, s * n)});
  return s * n;
}

// A streaming POST, every piece of the body stamped with its arrival time.
StreamCapture streamCall(const std::string& url, const std::vector<std::string>& headers, const std::string& body,
                         long* status, tg::HeaderList* head) {
  StreamCapture cap;
  cap.t0 = std::chrono::steady_clock::now();
  Reply r = call(url, "POST", headers, body, 30, &capturePiece, &cap);
  *status = r.status;
  *head = std::move(r.headers);
  return cap;
}

// A streamed chat completion through `url`: 200, an event stream with no Content-Length, ending in [DONE], and
// relayed as it arrived (the pieces spread over the simulator's ~400 ms of chunks, not one burst). The bytes in
// `all`.
void expectRelayedStream(const std::string& url, std::string* all = nullptr) {
  const std::string ask = R"({"model":"m","messages":[],"max_tokens":8,"stream":true})";
  long status = 0;
  tg::HeaderList head;
  StreamCapture cap = streamCall(url, kAuth, ask, &status, &head);
  QCOMPARE(status, 200L);
  QVERIFY(findHeaderIn(head, "content-type").find("text/event-stream") != std::string::npos);
  QVERIFY(findHeaderIn(head, "content-length").empty());
  std::string bytes;
  for (const auto& p : cap.pieces) bytes += p.bytes;
  QVERIFY2(bytes.size() >= 14 && bytes.substr(bytes.size() - 14) == "data: [DONE]\n\n", bytes.c_str());
  QVERIFY(cap.pieces.size() >= 4);
  const double spread = cap.pieces.back().atS - cap.pieces.front().atS;
  QVERIFY2(spread >= 0.3, std::to_string(spread).c_str());
  if (all) *all = std::move(bytes);
}

// Sends `raw` a piece of `step` bytes every `everyMs` (from the start again when it ends) until the gateway
// closes the connection; the seconds that took, or -1 after `maxS`.
// Sends `first` at once, then `raw` (over and over) `step` bytes every `everyMs`; the seconds until the gateway
// closed the connection, or -1 if it was still open after `maxS`.
double dribbleUntilClosed(int port, const std::string& raw, std::size_t step, int everyMs, double maxS,
                          const std::string& first = {}) {
  const int fd = connectTo(port);
  if (fd < 0) return -2;
  if (!first.empty() && ::send(fd, first.data(), first.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(first.size()))
    return -3;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::size_t at = 0;
  while (elapsed() < maxS) {
    if (::send(fd, raw.data() + at, std::min(step, raw.size() - at), MSG_NOSIGNAL) < 0) break;
    at = (at + step) % raw.size();
    std::this_thread::sleep_for(std::chrono::milliseconds(everyMs));
    char c;
    const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) break;
  }
  const double s = elapsed();
  ::close(fd);
  return s < maxS ? s : -1;
}

nlohmann::json streamingSim() {
  auto sim = simConfig();
  sim["stream_ttft_ms"] = 150;
  sim["stream_chunk_interval_ms"] = 100;
  sim["stream_chunks"] = 5;
  return sim;
}

}  // namespace

class TestGatewayLoopback : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { qputenv("TOLLGATE_TEST_GATEWAY_TOKEN", kToken); }

  void relaysTheAnswerWhole() {
    GatewayUnderTest g(simConfig(), engineConfig());
    Reply r = call(g.url("/openai/v1/chat/completions"), "POST", kAuth, kChat);
    QCOMPARE(r.status, 200L);
    QVERIFY2(r.header("content-length"), "a non-streamed answer carries Content-Length");
    QCOMPARE(std::to_string(r.body.size()), *r.header("content-length"));
    QVERIFY(nlohmann::json::parse(r.body).contains("usage"));
    QVERIFY(r.header("content-type") && *r.header("content-type") == "application/json");  // the upstream's head
    QVERIFY(r.header("server") && *r.header("server") == "tollgate-sim");
    QCOMPARE(g.simRequests("open"), std::int64_t(1));
    QCOMPARE(g.gateway().requestsByClient().at("svc-test"), std::uint64_t(1));
    // /healthz needs no token.
    QCOMPARE(call(g.url("/healthz"), "GET", {}).status, 200L);
    // On one keep-alive connection, twice: the first answer closed it (queued before the request was read).
    const std::string twice = rawExchange(g.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                                    "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QVERIFY2(twice.rfind("HTTP/1.1 200", 0) == 0 && twice.find("HTTP/1.1 200", 1) != std::string::npos,
             twice.c_str());
    const std::string head = rawExchange(g.port(), "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QVERIFY2(head.rfind("HTTP/1.1 200", 0) == 0 && head.find("\"ok\"") == std::string::npos, head.c_str());  // was 404
    const std::string post = rawExchange(g.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                                                   "Connection: close\r\n\r\n");
    QVERIFY2(post.rfind("HTTP/1.1 405", 0) == 0 && post.find("Allow: GET, HEAD") != std::string::npos, post.c_str());
    // HEAD through a route: the upstream's length, not the empty body's (it was Content-Length: 0).
    const std::string headApi = rawExchange(g.port(), "HEAD /openai/v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                                      "Bearer " + std::string(kToken) + "\r\nConnection: close\r\n\r\n");
    const auto lengthAt = headApi.find("Content-Length: ");
    QVERIFY2(headApi.rfind("HTTP/1.1 200", 0) == 0 && lengthAt != std::string::npos, headApi.c_str());
    const long headLength = std::strtol(headApi.c_str() + lengthAt + 16, nullptr, 10);
    const Reply getApi = call(g.url("/openai/v1/models"), "GET", kAuth);
    // The simulator's ids grow by a digit now and then.
    QVERIFY2(std::abs(headLength - static_cast<long>(getApi.body.size())) <= 2, headApi.c_str());
    QVERIFY2(headApi.find("\r\n\r\n") + 4 == headApi.size(), "a HEAD answer has no body");
    QVERIFY2(headApi.find("Content-Length", lengthAt + 1) == std::string::npos, headApi.c_str());  // one, not two
    QCOMPARE(g.simRequests("open"), std::int64_t(3));
    // The absolute-form (a client given the gateway as its HTTP proxy) is routed by its path, checked as ever.
    const std::string absolute = rawExchange(g.port(), "POST http://127.0.0.1:" + std::to_string(g.port()) +
                                                           "/openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                                                           "Authorization: Bearer " + std::string(kToken) +
                                                           "\r\nContent-Length: " + std::to_string(kChat.size()) +
                                                           "\r\nConnection: close\r\n\r\n" + kChat);
    QVERIFY2(absolute.rfind("HTTP/1.1 200", 0) == 0 && absolute.find("\"usage\"") != std::string::npos,
             absolute.substr(0, 300).c_str());
    QCOMPARE(g.simRequests("open"), std::int64_t(4));
    const std::string self = "localhost:" + std::to_string(g.port());
    const std::string dots = rawExchange(g.port(), "GET HTTPS://" + self + "/openai/../x HTTP/1.1\r\nHost: x\r\n"
                                                   "Authorization: Bearer " + std::string(kToken) +
                                                   "\r\nConnection: close\r\n\r\n");
    QVERIFY2(dots.rfind("HTTP/1.1 400", 0) == 0, dots.substr(0, 300).c_str());
    const std::string bare = rawExchange(g.port(), "GET http://" + self + "?q=1 HTTP/1.1\r\nHost: x\r\n"
                                                   "Connection: close\r\n\r\n");
    QVERIFY2(bare.rfind("HTTP/1.1 404", 0) == 0, bare.substr(0, 300).c_str());  // "/" is no route
    // A URL for another host (a client with a global HTTP_PROXY): not sent upstream with the group's key.
    for (const std::string other : {"http://api.openai.com/openai/v1/chat/completions",
                                    "http://127.0.0.1:1/openai/v1/chat/completions",
                                    "http://evil#frag/openai/v1/chat/completions"}) {
      const std::string a = rawExchange(g.port(), "POST " + other + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                                      std::string(kToken) + "\r\nContent-Length: " +
                                                      std::to_string(kChat.size()) + "\r\nConnection: close\r\n\r\n" + kChat);
      QVERIFY2(a.rfind("HTTP/1.1 421", 0) == 0 && a.find("not a proxy") != std::string::npos, a.substr(0, 300).c_str());
    }
    QCOMPARE(g.simRequests("open"), std::int64_t(4));
    // A request head of 16 KiB still fits the connection's memory (its size is a memset per request).
    Reply big = call(g.url("/openai/v1/chat/completions"), "POST", with(kAuth, {"X-Big: " + std::string(16000, 'b')}), kChat);
    QCOMPARE(big.status, 200L);
  }

  // A client that sends part of a request and closes at once (data and FIN together): its connection must go.
  // In epoll mode libmicrohttpd 0.9.75 missed that close, and each held a slot in CLOSE-WAIT for the idle
  // timeout (120 s): 4,200 of them made the gateway unreachable for two minutes.
  void aClientThatLeavesMidRequestFreesItsConnection() {
    GatewayUnderTest g(simConfig(), engineConfig());
    std::FILE* log = std::tmpfile();
    tg::Log::setSink(log);
    const std::string partialHead = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    const std::string partialBody = "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                    std::string(kToken) + "\r\nContent-Length: 100\r\n\r\n{\"model\"";
    for (int i = 0; i < 60; ++i) {
      const int fd = connectTo(g.port());
      QVERIFY(fd >= 0);
      const std::string& raw = i % 2 ? partialBody : partialHead;
      ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
      ::close(fd);
    }
    QTRY_COMPARE_WITH_TIMEOUT(g.gateway().openConnections(), 0, 5000);
    QCOMPARE(call(g.url("/healthz"), "GET", {}).status, 200L);
    // The client's doing, not Tollgate's: not a warning each (60 of them, read as faults).
    tg::Log::setSink(stderr);
    std::rewind(log);
    std::string text;
    for (int c; (c = std::fgetc(log)) != EOF;) text += static_cast<char>(c);
    std::fclose(log);
    QVERIFY2(text.find("remote side") == std::string::npos, text.c_str());
  }

  // Any client can make libmicrohttpd warn (a header too large: 431), without a token: 100 such probes wrote 98
  // warnings. Past ten a minute they are counted, not written.
  void aHostileClientCannotFillTheLog() {
    GatewayUnderTest g(simConfig(), engineConfig());
    std::FILE* log = std::tmpfile();
    tg::Log::setSink(log);
    const std::string huge = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(40000, 'b') +
                             "\r\nConnection: close\r\n\r\n";
    int refused = 0;
    for (int i = 0; i < 30; ++i) refused += rawExchange(g.port(), huge).rfind("HTTP/1.1 431", 0) == 0;
    g.gateway().stop();  // says how many were not written
    tg::Log::setSink(stderr);
    std::rewind(log);
    std::string text;
    for (int c; (c = std::fgetc(log)) != EOF;) text += static_cast<char>(c);
    std::fclose(log);
    QCOMPARE(refused, 30);
    int warnings = 0;
    for (std::size_t at = 0; (at = text.find("WARN  [gateway]", at)) != std::string::npos; ++at) ++warnings;
    QVERIFY2(warnings <= 11, text.c_str());
    QVERIFY2(text.find("more libmicrohttpd message(s) not shown") != std::string::npos, text.c_str());
  }

  // libmicrohttpd's timeout is an idle one: a client that dribbles its request a byte at a time never meets it,
  // and one such client per connection slot shuts the gateway (slowloris). Head and body have deadlines of their own.
  void aDribbledRequestIsCutAtItsDeadline() {
    auto cfg = engineConfig();
    cfg["gateway"]["request_head_timeout_s"] = 1;
    cfg["gateway"]["idle_timeout_s"] = 2;
    cfg["gateway"]["request_body_timeout_s"] = 2;
    GatewayUnderTest g(simConfig(), cfg);
    // A whole head, then its body a byte every 200 ms: cut 2 s after the head (it was only idle-bounded: never).
    const std::string post = "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                             std::string(kToken) + "\r\nContent-Length: 4000\r\n\r\n";
    const double bodyS = dribbleUntilClosed(g.port(), "{", 1, 200, 8, post);
    QVERIFY2(bodyS >= 1.9 && bodyS <= 4.5, std::to_string(bodyS).c_str());
    // Headers after the request line, a piece every 200 ms: cut 1 s after the request line (the sweep is a second).
    const std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 's');
    const double headS = dribbleUntilClosed(g.port(), head, 4, 200, 8);
    QVERIFY2(headS >= 0.9 && headS <= 3.5, std::to_string(headS).c_str());
    // The request line itself, a byte every 250 ms: no request line yet, so idle + head (3 s) after connecting.
    const double lineS = dribbleUntilClosed(g.port(), "GET /" + std::string(300, 'a'), 1, 250, 10);
    QVERIFY2(lineS >= 2.9 && lineS <= 5.5, std::to_string(lineS).c_str());
    // A whole head sent slowly within its time is served, on a connection kept alive past the idle timeout's
    // length in total (each piece is activity, and the answer starts the next head's time afresh).
    const int fd = connectTo(g.port());
    QVERIFY(fd >= 0);
    const std::string slow = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    for (int round = 0; round < 2; ++round) {
      for (char ch : slow) {
        QVERIFY(::send(fd, &ch, 1, MSG_NOSIGNAL) == 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      std::string got;  // the whole answer, so the next round reads only its own
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0;) got.append(buf, static_cast<std::size_t>(n));
      QVERIFY2(got.rfind("HTTP/1.1 200", 0) == 0, got.substr(0, 200).c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // idle, past the head's 1 s, under 3 s
    }
    ::close(fd);
    QTRY_COMPARE_WITH_TIMEOUT(g.gateway().openConnections(), 0, 5000);
    QCOMPARE(call(g.url("/healthz"), "GET", {}).status, 200L);
  }

  void refusesWhatItCannotServe() {
    GatewayUnderTest g(simConfig(), engineConfig());
    Reply none = call(g.url("/openai/v1/chat/completions"), "POST", {"Content-Type: application/json"}, kChat);
    QCOMPARE(none.status, 401L);
    Reply wrong = call(g.url("/openai/v1/chat/completions"), "POST",
                       {"Authorization: Bearer test-gateway-token-0123456788"}, kChat);
    QCOMPARE(wrong.status, 401L);
    QVERIFY(wrong.body.find("0123456788") == std::string::npos);  // the token shown is not echoed
    Reply missing = call(g.url("/elsewhere/v1/x"), "GET", kAuth);
    QCOMPARE(missing.status, 404L);
    QVERIFY(missing.body.find("/openai") != std::string::npos && missing.body.find("/dead") != std::string::npos);
    Reply big = call(g.url("/openai/v1/chat/completions"), "POST", kAuth, std::string(5000, 'x'));
    QCOMPARE(big.status, 413L);
    QVERIFY(big.body.find("4096") != std::string::npos);
    // Chunked, so the size is only known while reading: still 413, and the connection is not left hanging.
    std::string chunked = "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                          std::string(kToken) + "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    // 40 KiB of a 4 KiB limit: the connection was dropped with no answer past twice the limit.
    for (int i = 0; i < 20; ++i) chunked += "800\r\n" + std::string(2048, 'y') + "\r\n";
    chunked += "0\r\n\r\n";
    const std::string answer = rawExchange(g.port(), chunked);
    QVERIFY2(answer.rfind("HTTP/1.1 413", 0) == 0, answer.substr(0, 80).c_str());
    // Framing it cannot read is refused at once; it waited for a body until the idle timeout.
    const std::string head = "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                             std::string(kToken) + "\r\n";
    const std::string gzip = rawExchange(g.port(), head + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
    QVERIFY2(gzip.rfind("HTTP/1.1 501", 0) == 0, gzip.substr(0, 80).c_str());
    QVERIFY2(gzip.find("only chunked") != std::string::npos, gzip.c_str());
    const std::string both =
        rawExchange(g.port(), head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    QVERIFY2(both.rfind("HTTP/1.1 400", 0) == 0, both.substr(0, 80).c_str());
    const std::string hosts = rawExchange(g.port(), head + "Host: y\r\nContent-Length: 2\r\n\r\n{}");
    QVERIFY2(hosts.rfind("HTTP/1.1 400", 0) == 0, hosts.substr(0, 80).c_str());
    // A header name that is not a token is the client's error, not the gateway's configuration.
    const std::string name = rawExchange(g.port(), head + "X-Foo : a\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    QVERIFY2(name.rfind("HTTP/1.1 400", 0) == 0 && name.find("tollgate_bad_request") != std::string::npos, name.c_str());
    Reply tier = call(g.url("/openai/v1/chat/completions"), "POST", with(kAuth, {"X-Tollgate-Tier: urgent"}), kChat);
    QCOMPARE(tier.status, 400L);
    QVERIFY(tier.body.find("X-Tollgate-Tier") != std::string::npos);
    Reply group = call(g.url("/openai/v1/chat/completions"), "POST", with(kAuth, {"X-RateLimit-Group: dead"}), kChat);
    QCOMPARE(group.status, 400L);
    const std::string garbage = rawExchange(g.port(), "GET /openai/v1/models HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n");
    QVERIFY2(garbage.rfind("HTTP/1.1 400", 0) == 0, garbage.substr(0, 80).c_str());
    // A dot segment would leave base_url's path for another on the same host (the key with it); a control byte
    // would forge the log line quoting the path. Refused before routing, spelt out or encoded.
    for (const char* target : {"/openai/../x", "/openai/v1/%2e%2E/x", "/openai/v1/..%2fx", "/openai/./v1/models",
                               "/openai/v1/models\r2026\x0bINFO\x0b" "forged", "/openai/v1/\x1b[2Jmodels",
                               "/openai/v1/\xffx"}) {
      const std::string head = std::string("GET ") + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                               kToken + "\r\nConnection: close\r\n\r\n";
      const std::string a = rawExchange(g.port(), head);
      QVERIFY2(a.rfind("HTTP/1.1 400", 0) == 0 && a.find("tollgate_bad_request") != std::string::npos,
               (std::string(target) + " -> " + a.substr(0, 300)).c_str());
    }
    const std::string lengths = rawExchange(g.port(), "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                                                      "Authorization: Bearer " + std::string(kToken) +
                                                      "\r\nContent-Length: 2\r\nContent-Length: 40\r\n"
                                                      "Connection: close\r\n\r\n{}");
    QVERIFY2(lengths.rfind("HTTP/1.1 400", 0) == 0 && lengths.find("Content-Length") != std::string::npos,
             lengths.substr(0, 300).c_str());
    QCOMPARE(g.simRequests("open"), std::int64_t(0));  // none of it went upstream
    // Still serving after all that.
    QCOMPARE(call(g.url("/openai/v1/chat/completions"), "POST", kAuth, kChat).status, 200L);
  }

  // auth: pass_through: the client's own key goes upstream (the group's does not), its quota is kept apart
  // per key, and the gateway token moves to X-Tollgate-Token.
  void passThroughSendsTheClientsOwnKey() {
    GatewayUnderTest g(simConfig(), engineConfig());
    const std::string url = g.url("/own/v1/chat/completions");
    const std::string token = std::string("X-Tollgate-Token: ") + kToken;
    const std::string json = "Content-Type: application/json";
    Reply noToken = call(url, "POST", {"Authorization: Bearer sk-client-aaaa-0001", json}, kChat);
    QCOMPARE(noToken.status, 401L);
    QVERIFY2(noToken.body.find("X-Tollgate-Token") != std::string::npos, noToken.body.c_str());
    Reply tokenAsKey = call(url, "POST", {std::string("Authorization: Bearer ") + kToken, json}, kChat);
    QCOMPARE(tokenAsKey.status, 401L);
    Reply noKey = call(url, "POST", {token, json}, kChat);
    QCOMPARE(noKey.status, 401L);
    QVERIFY2(noKey.body.find("own API key") != std::string::npos, noKey.body.c_str());
    // A Connection header naming the key's header drops it from what is forwarded: refused, never sent with the
    // group's own key in its place (it was: the key checked on arrival was not the one forwarded).
    for (const auto& [key, connection] :
         {std::pair{"Authorization: Bearer sk-client-dddd-0004", "Connection: authorization"},
          std::pair{"Authorization: Bearer sk-client-dddd-0004", "Connection: keep-alive, Authorization"},
          std::pair{"x-api-key: sk-client-dddd-0004", "Connection: x-api-key"}}) {
      Reply r = call(url, "POST", {token, json, key, connection}, kChat);
      QVERIFY2(r.status == 400 && r.body.find("Connection") != std::string::npos,
               (std::to_string(r.status) + " " + r.body).c_str());
    }
    QCOMPARE(g.simRequests("perkey"), std::int64_t(0));
    // The simulator allows each key 2 requests per 10 s: two clients get two each at once, which one key could not.
    auto as = [&](const std::string& auth, const char* deadline) {
      return call(url, "POST", {token, json, auth, std::string("X-Tollgate-Deadline: ") + deadline}, kChat);
    };
    for (const char* key : {"sk-client-aaaa-0001", "sk-client-bbbb-0002"})
      for (int i = 0; i < 2; ++i) {
        Reply r = as(std::string("Authorization: Bearer ") + key, "2");
        QVERIFY2(r.status == 200, (std::to_string(r.status) + " " + r.body).c_str());
      }
    QCOMPARE(g.simRequests("perkey"), std::int64_t(4));
    // A's third waits on A's quota (the simulator said none left until the window ends) and is shed at its
    // deadline with that wait, never sent to burn a 429; a third client's key (x-api-key) is not held by it.
    Reply third = as("Authorization: Bearer sk-client-aaaa-0001", "0.5");
    QCOMPARE(third.status, 429L);
    QVERIFY2(third.header("retry-after-ms") && std::stod(*third.header("retry-after-ms")) > 5000, third.body.c_str());
    QVERIFY(third.body.find("sk-client") == std::string::npos);
    QCOMPARE(as("x-api-key: sk-client-cccc-0003", "2").status, 200L);
    QCOMPARE(g.simRequests("perkey"), std::int64_t(5));
    // The clients' own keys are not metrics series (any client could add one, each with its fingerprint, for
    // whoever scrapes), and no key is in them.
    QTest::qWait(300);  // a fresh snapshot
    Reply m = call(g.url("/metrics"), "GET", {});
    QCOMPARE(m.status, 200L);
    QVERIFY(m.body.find("tollgate_queue_depth{group=\"perkey\"") != std::string::npos);
    QVERIFY(m.body.find(tg::keyFingerprint("sk-client-aaaa-0001")) == std::string::npos);
    QVERIFY(m.body.find(tg::keyFingerprint("sk-client-cccc-0003")) == std::string::npos);
    QVERIFY(m.body.find("sk-client") == std::string::npos);
    QVERIFY(m.body.find(kToken) == std::string::npos);
  }

  // With gateway.metrics_token_env, /metrics answers only a scrape showing that token (401 otherwise, a client's
  // gateway token included), and the token is in no answer; /healthz stays open for load balancers.
  void metricsTokenGuardsTheScrape() {
    qputenv("TOLLGATE_TEST_METRICS_TOKEN", "metrics-token-0123456789");
    nlohmann::json cfg = engineConfig();
    cfg["gateway"]["metrics_token_env"] = "TOLLGATE_TEST_METRICS_TOKEN";
    GatewayUnderTest g(simConfig(), cfg);
    QCOMPARE(call(g.url("/openai/v1/chat/completions"), "POST", kAuth, kChat).status, 200L);
    Reply none = call(g.url("/metrics"), "GET", {});
    QCOMPARE(none.status, 401L);
    QVERIFY2(none.header("www-authenticate") && none.header("www-authenticate")->find("Bearer") == 0, none.body.c_str());
    QVERIFY2(none.body.find("metrics_token_env") != std::string::npos, none.body.c_str());
    QCOMPARE(call(g.url("/metrics"), "GET", {std::string("Authorization: Bearer ") + kToken}).status, 401L);
    QCOMPARE(call(g.url("/metrics"), "GET", {"Authorization: Bearer metrics-token-012345678"}).status, 401L);
    QCOMPARE(call(g.url("/metrics"), "GET", {"x-api-key: metrics-token-0123456789"}).status, 401L);
    QCOMPARE(call(g.url("/healthz"), "GET", {}).status, 200L);
    Reply m = call(g.url("/metrics"), "GET", {"Authorization: Bearer metrics-token-0123456789"});
    QCOMPARE(m.status, 200L);
    QVERIFY2(m.body.find(R"(tollgate_gateway_requests_total{client="svc-test",route="/openai",status="200"} 1)") !=
                 std::string::npos, m.body.c_str());
    QVERIFY2(m.body.find(R"(route="/metrics",status="401"} 4)") != std::string::npos, m.body.c_str());
    QVERIFY(m.body.find("metrics-token-0123456789") == std::string::npos);
  }

  // An upstream that echoes the key it was sent (in a header, an error body, a 200 body, a stream cut mid-key)
  // never hands it to the gateway's client: the gateway adds the group's key so that services never hold it.
  void anEchoedKeyNeverReachesTheClient() {
    const std::string key = "sk-gateway-echo-secret-0123456789";
    qputenv("TG_TEST_ECHO_KEY", QByteArray::fromStdString(key));
    RawHttpServer upstream([](const std::string& raw, int) {
      const auto at = raw.find("Authorization: ");
      const std::string auth = at == std::string::npos ? "" : raw.substr(at + 15, raw.find("\r\n", at) - at - 15);
      if (raw.find(" /v1/stream ") != std::string::npos) {
        RawHttpServer::Reply r;
        r.raw = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
        const std::string event = "data: {\"choices\":[{\"delta\":{\"content\":\"" + auth + "\"}}]}\n\n";
        r.pieces = {event.substr(0, 40), event.substr(40), "data: [DONE]\n\n"};  // the key is cut at 40
        r.gap = std::chrono::milliseconds(50);
        return r;
      }
      if (raw.find(" /v1/gzip ") != std::string::npos) {  // compressed although not asked to be
        // gzip of {"you_sent":"Bearer sk-gateway-echo-secret-0123456789"}
        static const char kGz[] =
            "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xab\x56\xaa\xcc\x2f\x8d\x2f\x4e\xcd\x2b\x51\xb2\x52\x72\x4a"
            "\x4d\x2c\x4a\x2d\x52\x28\xce\xd6\x4d\x4f\x2c\x49\x2d\x4f\xac\xd4\x4d\x4d\xce\xc8\xd7\x2d\x4e\x4d\x2e"
            "\x4a\x2d\xd1\x35\x30\x34\x32\x36\x31\x35\x33\xb7\xb0\x54\xaa\x05\x00\x0a\xe5\x40\x5c\x37\x00\x00\x00";
        return RawHttpServer::status(200, "Content-Encoding: gzip\r\n", std::string(kGz, sizeof kGz - 1));
      }
      // As encoders write it: JSON's \u002d for '-' (.NET escapes '+' so), URL encoding's %2D, and in a name.
      std::string json = auth, url = auth;
      for (std::size_t at; (at = json.find('-')) != std::string::npos;) json.replace(at, 1, "\\u002d");
      for (std::size_t at; (at = url.find('-')) != std::string::npos;) url.replace(at, 1, "%2D");
      const std::string name = auth.size() > 7 ? "X-Seen-" + auth.substr(7) + ": 1\r\n" : "";
      const int status = raw.find(" /v1/fail ") != std::string::npos ? 401 : 200;
      return RawHttpServer::status(status, "X-Echo: " + auth + "\r\nX-Echo-Pct: " + url + "\r\n" + name,
                                   "{\"you_sent\":\"" + auth + "\",\"escaped\":\"" + json + "\"}");
    });
    auto cfg = engineConfig();
    cfg["groups"].push_back({{"name", "echo"}, {"base_url", upstream.url()}, {"concurrency", 2},
                             {"keys", {{{"name", "echo-key"}, {"env", "TG_TEST_ECHO_KEY"}}}}});
    cfg["gateway"]["routes"].push_back({{"prefix", "/echo"}, {"group", "echo"}});
    GatewayUnderTest g(simConfig(), cfg);
    for (const char* path : {"/echo/v1/ok", "/echo/v1/fail", "/echo/v1/gzip"}) {
      Reply r = call(g.url(path), "POST", kAuth, kChat);
      QVERIFY2(r.status == 200 || r.status == 401, r.body.c_str());
      QVERIFY2(r.body.find(key) == std::string::npos && r.body.find("u002d") == std::string::npos &&
                   r.body.find(tg::keyFingerprint(key)) != std::string::npos,
               r.body.c_str());
      QVERIFY(!r.header("content-encoding"));  // handed on decoded
      for (const auto& [k, v] : r.headers) {
        QVERIFY2(v.find("echo-secret") == std::string::npos && v.find("echo%2Dsecret") == std::string::npos &&
                     k.find("echo-secret") == std::string::npos,
                 (k + ": " + v).c_str());
      }
    }
    const std::string stream = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})";
    Reply s = call(g.url("/echo/v1/stream"), "POST", kAuth, stream);
    QCOMPARE(s.status, 200L);
    QVERIFY2(s.body.find(key) == std::string::npos && s.body.find(tg::keyFingerprint(key)) != std::string::npos &&
                 s.body.find("[DONE]") != std::string::npos,
             s.body.c_str());
    QVERIFY(upstream.allBytes().find("Bearer " + key) != std::string::npos);  // the upstream did get it
  }

  // A Location into the upstream comes back onto the route (a client following it stays behind the gateway, its
  // quota and the key it adds); one to another host is left alone. Any status: a 307, a 201's too.
  void aLocationIntoTheUpstreamComesBackOnTheRoute() {
    std::string origin;  // set before the first request: the port is known once the server listens
    RawHttpServer upstream([&origin](const std::string& raw, int) {
      if (raw.find(" /v1/go ") != std::string::npos)
        return RawHttpServer::status(307, "Location: " + origin + "/v1/moved/../there?x=1#f\r\n");
      if (raw.find(" /v1/make ") != std::string::npos)
        return RawHttpServer::status(201, "Location: /v1/items/7\r\n");
      return RawHttpServer::status(302, "Location: https://elsewhere.example/v1/x\r\n");
    });
    origin = upstream.url();
    auto cfg = engineConfig();
    cfg["groups"].push_back({{"name", "moving"}, {"base_url", upstream.url()}, {"concurrency", 2}});
    cfg["groups"].back()["keys"] = nlohmann::json::array({{{"name", "moving-key"}}});
    cfg["gateway"]["routes"].push_back({{"prefix", "/mv"}, {"group", "moving"}});
    GatewayUnderTest g(simConfig(), cfg);
    Reply r = call(g.url("/mv/v1/go"), "POST", kAuth, kChat);
    QCOMPARE(r.status, 307L);
    QVERIFY(r.header("location"));
    QCOMPARE(*r.header("location"), std::string("/mv/v1/there?x=1#f"));
    r = call(g.url("/mv/v1/make"), "POST", kAuth, kChat);
    QCOMPARE(r.status, 201L);
    QCOMPARE(*r.header("location"), std::string("/mv/v1/items/7"));
    r = call(g.url("/mv/v1/away"), "POST", kAuth, kChat);
    QCOMPARE(r.status, 302L);
    QCOMPARE(*r.header("location"), std::string("https://elsewhere.example/v1/x"));
    QCOMPARE(upstream.count(), 3);  // each once: a redirect is the client's to follow
  }

  // A plain 2xx is held whole until it ends; one that breaks off reaches the client as the gateway's 502 saying
  // so, sent once (the upstream may have acted on it). Not "unreachable", nor "part relayed": none of it was.
  void aHeldAnswerThatBreaksOffIsA502() {
    RawHttpServer upstream([](const std::string&, int) {
      return RawHttpServer::raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\npartial");
    });
    auto cfg = engineConfig();
    cfg["groups"].push_back({{"name", "broken"}, {"base_url", upstream.url()}, {"concurrency", 2}});
    cfg["groups"].back()["keys"] = nlohmann::json::array({{{"name", "broken-key"}}});
    cfg["gateway"]["routes"].push_back({{"prefix", "/br"}, {"group", "broken"}});
    GatewayUnderTest g(simConfig(), cfg);
    Reply r = call(g.url("/br/v1/chat/completions"), "POST", kAuth, kChat);
    QCOMPARE(r.status, 502L);
    QVERIFY2(r.body.find("(HTTP 200) broke off") != std::string::npos && r.body.find("partial") == std::string::npos &&
                 r.body.find("relayed") == std::string::npos && r.body.find("unreachable") == std::string::npos,
             r.body.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the backoff a retry would have had
    QCOMPARE(upstream.count(), 1);
  }

  // An orderly stop (serve's SIGTERM) lets what the upstream is working on finish, and answers what waits at once:
  // cancelling everything aborted requests 20-233 ms under way upstream, paid for and then sent again.
  void aStopLetsTheRequestsInFlightFinish() {
    RawHttpServer upstream([](const std::string&, int) {
      const std::string body = R"({"answer":"finished after a while"})";
      RawHttpServer::Reply r;
      r.raw = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
              "\r\nConnection: close\r\n\r\n";
      r.pieces = {body.substr(0, 12), body.substr(12, 12), body.substr(24)};
      r.gap = std::chrono::milliseconds(400);
      return r;
    });
    auto cfg = engineConfig();
    cfg["groups"].push_back({{"name", "slow"}, {"base_url", upstream.url()}, {"concurrency", 1}});
    cfg["groups"].back()["keys"] = nlohmann::json::array({{{"name", "slow-key"}}});
    cfg["gateway"]["routes"].push_back({{"prefix", "/slow"}, {"group", "slow"}});
    GatewayUnderTest g(simConfig(), cfg);
    Reply sent, waiting;
    std::thread first([&] { sent = call(g.url("/slow/v1/chat/completions"), "POST", kAuth, kChat); });
    QTRY_COMPARE_WITH_TIMEOUT(upstream.count(), 1, 5000);
    std::atomic<bool> secondAnswered{false};
    std::thread second([&] {
      waiting = call(g.url("/slow/v1/chat/completions"), "POST", kAuth, kChat);
      secondAnswered = true;
    });
    QTRY_VERIFY_WITH_TIMEOUT(queued(g, "slow", 0) + queued(g, "slow", 1) + queued(g, "slow", 2) == 1, 5000);
    std::thread stopping([&] { g.gateway().stop(10); });
    QTRY_VERIFY_WITH_TIMEOUT(secondAnswered.load(), 5000);  // answered at once, while the first is still under way
    // No new connection during the drain: it was taken by the kernel and left unread until the drain ended.
    const auto t0 = std::chrono::steady_clock::now();
    const Reply late = call(g.url("/healthz"), "GET", {}, "", 5);
    const double lateS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stopping.join();
    first.join();
    second.join();
    QVERIFY2(late.status == 0 && lateS < 0.5, qPrintable(QString("status %1 after %2 s").arg(late.status).arg(lateS)));
    QCOMPARE(sent.status, 200L);
    QVERIFY2(sent.body.find("finished after a while") != std::string::npos, sent.body.c_str());
    QCOMPARE(waiting.status, 503L);
    QVERIFY2(waiting.body.find("stopping") != std::string::npos, waiting.body.c_str());
    QVERIFY2(waiting.seconds < sent.seconds, "the queued client waited for the drain");
    QCOMPARE(upstream.count(), 1);  // the queued one was never sent
  }

  void unreachableUpstreamIs502WithTheReason() {
    GatewayUnderTest g(simConfig(), engineConfig());
    Reply r = call(g.url("/dead/v1/chat/completions"), "POST", with(kAuth, {"X-Tollgate-Deadline: 5"}), kChat);
    QCOMPARE(r.status, 502L);
    QVERIFY2(r.body.find("unreachable") != std::string::npos, r.body.c_str());
  }

  void deadlineShedSaysWhenQuotaReturns() {
    GatewayUnderTest g(simConfig(), engineConfig());
    const auto tight = with(kAuth, {"X-RateLimit-Group: tight"});
    for (int i = 0; i < 3; ++i)
      QCOMPARE(call(g.url("/openai/v1/chat/completions"), "POST", tight, kChat).status, 200L);
    // The window (4 s) is spent: a request that may wait 0.5 s is shed, told the truth about the reset.
    Reply r = call(g.url("/openai/v1/chat/completions"), "POST", with(tight, {"X-Tollgate-Deadline: 0.5"}), kChat);
    QCOMPARE(r.status, 429L);
    QVERIFY2(r.header("retry-after-ms"), r.body.c_str());
    const double ms = std::stod(*r.header("retry-after-ms"));
    QVERIFY2(ms > 1500 && ms <= 4000 * 1.1, std::to_string(ms).c_str());
    QCOMPARE(*r.header("x-should-retry"), std::string("true"));
    QVERIFY(r.seconds >= 0.4 && r.seconds < 2.0);  // held until its deadline, not bounced at once
    QCOMPARE(g.simRequests("tight"), std::int64_t(3));  // never sent to burn a 429
  }

  void clientGoneWhileQueuedIsNeverSent() {
    GatewayUnderTest g(simConfig(), engineConfig());
    const auto tight = with(kAuth, {"X-RateLimit-Group: tight"});
    for (int i = 0; i < 3; ++i) QCOMPARE(call(g.url("/openai/v1/chat/completions"), "POST", tight, kChat).status, 200L);
    const int fd = connectTo(g.port());
    QVERIFY(fd >= 0);
    const std::string req = "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                            std::string(kToken) + "\r\nX-RateLimit-Group: tight\r\nX-Tollgate-Deadline: 15\r\n" +
                            "Content-Type: application/json\r\nContent-Length: " + std::to_string(kChat.size()) +
                            "\r\n\r\n" + kChat;
    ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    QTRY_COMPARE_WITH_TIMEOUT(queued(g, "tight", 1), 1, 3000);
    close(fd);  // the client gives up
    QTRY_COMPARE_WITH_TIMEOUT(queued(g, "tight", 1), 0, 3000);
    // Past the window's reset the quota is back, and still nothing more reached the upstream.
    QTest::qWait(4500);
    QCOMPARE(g.simRequests("tight"), std::int64_t(3));
    QCOMPARE(call(g.url("/openai/v1/chat/completions"), "POST", tight, kChat).status, 200L);
    QCOMPARE(g.simRequests("tight"), std::int64_t(4));
    // Counted, as nginx logs it (it was in no series), and a scrape is counted as one, not as an unrouted "-".
    QVERIFY(call(g.url("/metrics"), "GET", {}).status == 200);
    const std::string m = call(g.url("/metrics"), "GET", {}).body;
    QVERIFY2(m.find(R"(tollgate_gateway_requests_total{client="svc-test",route="/openai",status="499"} 1)") !=
                 std::string::npos, m.c_str());
    QVERIFY2(m.find(R"(route="/metrics",status="200"} 1)") != std::string::npos, m.c_str());
    QVERIFY2(m.find(R"(route="-")") == std::string::npos, m.c_str());
  }

  void streamsChunkByChunk() {
    GatewayUnderTest g(streamingSim(), engineConfig());
    std::string all;
    expectRelayedStream(g.url("/openai/v1/chat/completions"), &all);
    if (QTest::currentTestFailed()) return;
    // The client did not ask for usage: the gateway did (to count tokens), and removed that chunk.
    QVERIFY2(all.find("\"choices\":[]") == std::string::npos, all.c_str());
    // Tokens were counted from the usage the stream reported.
    QTRY_VERIFY_WITH_TIMEOUT(g.engine().latestSnapshot()->find("open")->counters.tokensUsed > 0, 2000);

    const std::string withUsage =
        R"({"model":"m","messages":[],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true}})";
    long status = 0;
    tg::HeaderList head2;
    StreamCapture asked = streamCall(g.url("/openai/v1/chat/completions"), kAuth, withUsage, &status, &head2);
    std::string all2;
    for (const auto& p : asked.pieces) all2 += p.bytes;
    QVERIFY2(all2.find("\"choices\":[]") != std::string::npos, "asked for usage: the usage chunk is kept");
  }

  // A generic route reads no body, so the request does not say it streams: the answer's type does.
  void genericRouteStreamsWhatTheUpstreamStreams() {
    auto cfg = engineConfig();
    cfg["gateway"]["routes"].push_back({{"prefix", "/any"}, {"group", "open"}, {"dialect", "generic"}});
    GatewayUnderTest g(streamingSim(), cfg);
    expectRelayedStream(g.url("/any/v1/chat/completions"));  // held whole, it came in one piece with a length
    if (QTest::currentTestFailed()) return;
    // A plain answer on the same route still goes out whole, with its length.
    Reply plain = call(g.url("/any/v1/chat/completions"), "POST", kAuth, kChat);
    QCOMPARE(plain.status, 200L);
    QVERIFY(plain.header("content-length"));
  }

  // An answer is framed by its own type, whatever the request announced: JSON lines (Ollama's /api/chat) to a
  // request with "stream": true went into an event relay and were held to the end. A HEAD has no body to frame:
  // a stream-typed HEAD answer was sent chunked with an empty chunk, which broke the next answer on the connection.
  void streamsAreFramedByTheirOwnType() {
    RawHttpServer upstream([](const std::string& raw, int) {
      RawHttpServer::Reply r;
      r.raw = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n";
      if (raw.rfind("HEAD ", 0) == 0) return r;
      for (int i = 0; i < 5; ++i)
        r.pieces.push_back("{\"message\":{\"content\":\"" + std::to_string(i) + "\"},\"done\":" +
                           (i == 4 ? "true" : "false") + "}\n");
      r.gap = std::chrono::milliseconds(150);
      return r;
    });
    auto cfg = engineConfig();
    cfg["groups"].push_back({{"name", "ollama"}, {"base_url", upstream.url()}, {"concurrency", 2},
                             {"keys", {{{"name", "ollama-key"}}}}});
    cfg["gateway"]["routes"].push_back({{"prefix", "/ollama"}, {"group", "ollama"}});  // the openai dialect
    GatewayUnderTest g(simConfig(), cfg);
    long status = 0;
    tg::HeaderList head;
    StreamCapture cap = streamCall(g.url("/ollama/api/chat"), kAuth,
                                   R"({"model":"llama3","stream":true,"messages":[{"role":"user","content":"hi"}]})",
                                   &status, &head);
    QCOMPARE(status, 200L);
    std::string all;
    for (const auto& p : cap.pieces) all += p.bytes;
    QCOMPARE(std::count(all.begin(), all.end(), '\n'), 5L);
    QVERIFY2(cap.pieces.size() >= 4, all.c_str());
    QVERIFY2(cap.pieces.back().atS - cap.pieces.front().atS >= 0.4, all.c_str());  // held, it came at once
    const std::string headAnswer = rawExchange(g.port(), "HEAD /ollama/api/chat HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                                         "Bearer " + std::string(kToken) + "\r\nConnection: close\r\n\r\n");
    QVERIFY2(headAnswer.rfind("HTTP/1.1 200", 0) == 0, headAnswer.c_str());
    QVERIFY2(headAnswer.find("chunked") == std::string::npos, headAnswer.c_str());
    QVERIFY2(headAnswer.find("\r\n\r\n") + 4 == headAnswer.size(), headAnswer.c_str());
  }

  void anthropicStreamsAndErrorsInItsShape() {
    auto sim = streamingSim();
    sim["dialect"] = "anthropic";
    auto cfg = engineConfig();
    cfg["gateway"]["routes"][0]["dialect"] = "anthropic";
    GatewayUnderTest g(sim, cfg);
    const std::string ask = R"({"model":"claude","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]})";
    long status = 0;
    tg::HeaderList head;
    StreamCapture cap = streamCall(g.url("/openai/v1/messages"), with(kAuth, {"anthropic-version: 2023-06-01"}), ask,
                                   &status, &head);
    QCOMPARE(status, 200L);
    std::string all;
    for (const auto& p : cap.pieces) all += p.bytes;
    QVERIFY2(all.find("event: message_start") != std::string::npos && all.find("event: message_stop") != std::string::npos,
             all.c_str());
    QVERIFY(all.find("\"output_tokens\"") != std::string::npos);  // nothing removed from Anthropic's stream
    Reply bad = call(g.url("/openai/v1/messages"), "POST", with(kAuth, {"X-Tollgate-Tier: P9"}), ask);
    QCOMPARE(bad.status, 400L);
    const auto j = nlohmann::json::parse(bad.body);
    QCOMPARE(j["type"], "error");
    QCOMPARE(j["error"]["type"], "invalid_request_error");
  }

  void clientGoneMidStreamAbortsTheTransfer() {
    auto sim = streamingSim();
    sim["stream_chunks"] = 40;  // ~4 s of chunks
    GatewayUnderTest g(sim, engineConfig());
    const std::string ask = R"({"model":"m","messages":[],"max_tokens":8,"stream":true})";
    const int fd = connectTo(g.port());
    const std::string req = "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                            std::string(kToken) + "\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(ask.size()) + "\r\n\r\n" + ask;
    ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    char buf[512];
    QVERIFY(::recv(fd, buf, sizeof buf, 0) > 0);  // the head (and maybe a chunk) arrived
    close(fd);
    QTRY_COMPARE_WITH_TIMEOUT(g.sim().stats()["totals"]["streams_aborted"].get<int>(), 1, 3000);
    QTRY_COMPARE_WITH_TIMEOUT(g.engine().latestSnapshot()->globalInFlight, 0, 3000);
  }

  void tierHeaderOrdersTheQueue() {
    auto sim = simConfig();
    sim["latency_ms"] = {{"distribution", "fixed"}, {"mean", 250}, {"p95", 250}};  // 6 x 250 ms: seen queued
    GatewayUnderTest g(sim, engineConfig());
    const auto serial = with(kAuth, {"X-RateLimit-Group: serial"});
    std::atomic<int> order{0};
    std::vector<int> p2Done(6, -1);
    int p0Done = -1;
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i)
      threads.emplace_back([&, i] {
        Reply r = call(g.url("/openai/v1/chat/completions"), "POST", with(serial, {"X-Tollgate-Tier: P2"}), kChat);
        if (r.status == 200) p2Done[i] = order++;
      });
    QTRY_VERIFY_WITH_TIMEOUT(queued(g, "serial", 2) >= 4, 3000);
    Reply p0 = call(g.url("/openai/v1/chat/completions"), "POST", with(serial, {"X-Tollgate-Tier: P0"}), kChat);
    QCOMPARE(p0.status, 200L);
    p0Done = order++;
    for (auto& t : threads) t.join();
    int p2After = 0;
    for (int d : p2Done) {
      QVERIFY(d >= 0);
      p2After += d > p0Done ? 1 : 0;
    }
    QVERIFY2(p2After >= 3, ("P0 finished at " + std::to_string(p0Done) + ", P2s after it: " + std::to_string(p2After)).c_str());
  }
};

QTEST_GUILESS_MAIN(TestGatewayLoopback)
#include "test_gateway_loopback.moc"
