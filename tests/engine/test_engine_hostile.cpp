// The engine against hostile requests and a hostile upstream, over loopback: keys never go to a host the
// group did not name, nothing can be smuggled into the request head, every submit gets exactly one
// callback (also around stop), server-directed waits have a floor, bodies have a cap.
#include "config_loader.h"
#include "engine.h"
#include "raw_http_server.h"
#include "request_safety.h"
#include "result_log.h"
#include "secret.h"
#include "synthetic_workload.h"

#include <QtTest>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <poll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace tg;
using namespace tgtest;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSecret = "sk-test-secret-1234567890";

EngineConfig configFor(const std::string& baseUrl) {
  EngineConfig c;
  c.name = "hostile";
  GroupConfig g;
  g.name = "g";
  g.baseUrl = baseUrl;
  g.concurrency = 4;
  g.adaptive = false;
  KeyConfig k;
  k.name = "k";
  k.secret = kSecret;
  g.keys.push_back(k);
  c.groups.push_back(g);
  c.requestTimeoutS = 10;
  c.connectTimeoutS = 5;
  return c;
}

Request request(const std::string& id, const std::string& url = "/v1/x") {
  Request r;
  r.id = id;
  r.group = "g";
  r.url = url;
  r.body = R"({"max_tokens":1})";
  return r;
}



// A keep-alive upstream: answers the first request on each connection with 200 and keeps the connection;
// a request that arrives on an already used connection is read and dropped unanswered (the connection
// closes), the way a server that closed an idle connection looks to the client. Counts every request it
// reads per X-Id, so a resend libcurl makes by itself shows.
class DroppingKeepAliveServer {
 public:
  DroppingKeepAliveServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0)
      throw std::runtime_error("bind/listen failed");
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~DroppingKeepAliveServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int count(const std::string& id) {
    std::lock_guard lock(mutex_);
    int n = 0;
    for (const auto& s : ids_) n += s == id;
    return n;
  }

 private:
  static bool readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
  }
  // One request head (the tests send bodies small enough to arrive with it), or "" when the peer closed.
  std::string readHead(int c) {
    std::string in;
    char buf[4096];
    while (!stop_ && in.find("\r\n\r\n") == std::string::npos) {
      if (!readable(c, 50)) continue;
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return {};
      in.append(buf, static_cast<std::size_t>(n));
    }
    return in;
  }
  void run() {
    std::vector<int> open;
    while (!stop_) {
      if (readable(fd_, 20)) open.push_back(::accept(fd_, nullptr, nullptr));
      for (auto it = open.begin(); it != open.end();) {
        const int c = *it;
        if (!readable(c, 0)) { ++it; continue; }
        const std::string head = readHead(c);
        if (head.empty()) { ::close(c); it = open.erase(it); continue; }
        const auto at = head.find("X-Id: ");
        {
          std::lock_guard lock(mutex_);
          ids_.push_back(at == std::string::npos ? "" : head.substr(at + 6, head.find("\r\n", at) - at - 6));
        }
        if (served_.insert(c).second) {
          static const char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
          (void)!::send(c, kOk, sizeof kOk - 1, MSG_NOSIGNAL);
          ++it;
        } else {
          served_.erase(c);
          ::close(c);
          it = open.erase(it);
        }
      }
    }
    for (int c : open) ::close(c);
  }
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> ids_;
  std::set<int> served_;
};

}  // namespace

class TestEngineHostile : public QObject {
  Q_OBJECT
 private slots:
  // --- item 3: the group's key goes only to the group's hosts ---
  void keyGoesToNoOtherHost() {
    RawHttpServer home, other;
    Engine e(configFor(home.url()));
    e.start();
    Results res;
    e.submit(request("steal", other.url() + "/steal"), res.callback());
    e.submit(request("home-absolute", home.url() + "/v1/x"), res.callback());
    e.submit(request("no-scheme", "127.0.0.1:" + std::to_string(other.port()) + "/steal"), res.callback());
    e.submit(request("relative", "steal"), res.callback());
    e.submit(request("userinfo", home.url() + "@127.0.0.1:" + std::to_string(other.port()) + "/steal"),
             res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 5, 10000);
    e.stop();
    QCOMPARE(other.count(), 0);
    QVERIFY(other.allBytes().find(kSecret) == std::string::npos);
    for (int i = 0; i < 5; ++i) {
      const Result r = res.at(static_cast<std::size_t>(i));
      if (r.id == "home-absolute") {
        QVERIFY2(r.ok(), describe(r));
        continue;
      }
      QVERIFY2(r.error == ErrorKind::Config && r.attempts == 0, describe(r));
      QVERIFY2(r.errorMessage.find(kSecret) == std::string::npos, describe(r));
    }
    for (int i = 0; i < 5; ++i) {
      const Result r = res.at(static_cast<std::size_t>(i));
      if (r.id != "steal") continue;
      // Names the host it refused and the group.
      QVERIFY2(r.errorMessage.find("127.0.0.1:" + std::to_string(other.port())) != std::string::npos, describe(r));
      QVERIFY2(r.errorMessage.find("\"g\"") != std::string::npos, describe(r));
    }
    QCOMPARE(home.count(), 1);
    QVERIFY(home.allBytes().find(std::string("Authorization: Bearer ") + kSecret) != std::string::npos);
  }

  void allowedHostsAdmitListedOrigins() {
    RawHttpServer home, other, third;
    const nlohmann::json j{
        {"groups",
         {{{"name", "g"},
           {"base_url", home.url()},
           {"allowed_hosts", {other.url()}},
           {"keys", {{{"name", "k"}}}}}}}};
    const TollgateConfig c = ConfigLoader::fromJson(j, "(test)");
    QCOMPARE(c.engine.groups[0].allowedHosts.size(), std::size_t{1});
    Engine e(c.engine);
    e.start();
    Results res;
    e.submit(request("other", other.url() + "/ok"), res.callback());
    e.submit(request("third", third.url() + "/no"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 2, 10000);
    e.stop();
    QCOMPARE(other.count(), 1);
    QCOMPARE(third.count(), 0);
    // A malformed entry is a config error naming its path.
    nlohmann::json bad = j;
    bad["groups"][0]["allowed_hosts"] = {"ftp://x"};
    try {
      ConfigLoader::fromJson(bad, "(test)");
      QFAIL("expected a ConfigError");
    } catch (const ConfigError& err) {
      QVERIFY2(std::string(err.what()).find("/groups/0/allowed_hosts/0") != std::string::npos, err.what());
    }
  }

  void malformedUrlFailsAtOnce() {
    RawHttpServer home;
    Engine e(configFor(home.url()));
    e.start();
    Results res;
    e.submit(request("bad", "http://[::1/x"), res.callback());
    e.submit(request("space", "http://exa mple.com/x"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 2, 10000);
    for (int i = 0; i < 2; ++i) {
      const Result r = res.at(static_cast<std::size_t>(i));
      QVERIFY2(r.error == ErrorKind::Config && r.attempts <= 1, describe(r));
    }
  }

  // --- item 4: nothing smuggled into the request head ---
  void injectedHeadersAndMethodsAreRefused() {
    RawHttpServer home;
    Engine e(configFor(home.url()));
    e.start();
    Results res;
    Request a = request("crlf-value");
    a.headers = {{"X-A", "1\r\nX-Injected: yes"}};
    e.submit(a, res.callback());
    Request b = request("lf-value");
    b.headers = {{"X-B", "1\nX-Injected: yes"}};
    e.submit(b, res.callback());
    Request c = request("bad-name");
    c.headers = {{"X-Injected: yes\r\nX-C", "1"}};
    e.submit(c, res.callback());
    Request d = request("method");
    d.method = "DELETE /x HTTP/1.1\r\nX-Injected: yes\r\n\r\nGET";
    e.submit(d, res.callback());
    Request n = request("nul");
    n.headers = {{"X-N", std::string("1\0X-Injected: yes", 17)}};
    e.submit(n, res.callback());
    Request ok = request("tab-ok");
    ok.headers = {{"X-Ok", "a\tb"}};
    ok.method = "PATCH";
    e.submit(ok, res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 6, 10000);
    e.stop();
    QVERIFY2(home.allBytes().find("X-Injected") == std::string::npos, home.allBytes().c_str());
    QCOMPARE(home.count(), 1);
    QVERIFY(home.allBytes().rfind("PATCH /v1/x HTTP/1.1\r\n", 0) == 0);
    for (int i = 0; i < 6; ++i) {
      const Result r = res.at(static_cast<std::size_t>(i));
      if (r.id == "tab-ok") {
        QVERIFY2(r.ok(), describe(r));
        continue;
      }
      QVERIFY2(r.error == ErrorKind::Config && r.attempts == 0, describe(r));
      if (r.id == "crlf-value") QVERIFY2(r.errorMessage.find("X-A") != std::string::npos, describe(r));
      if (r.id == "method") QVERIFY2(r.errorMessage.find("method") != std::string::npos, describe(r));
    }
  }

  // Credentials written where they do not belong are not quoted back: a key pasted into "env" (its variable's name
  // belongs there), a URL's user:password@ and query, a header written as "Name: value" in the name's place. A
  // credential written inline in a group's headers is scrubbed as a key is (an upstream echoing it handed it to
  // results files and gateway clients); a header that is no credential is left alone.
  void credentialsInConfigAreNeitherQuotedNorEchoed() {
    const std::string pasted = "sk-proj-PASTEDKEYINSTEADOFNAME9999";
    nlohmann::json j{{"groups", {{{"name", "g"}, {"base_url", "http://127.0.0.1:9"}, {"keys", {{{"name", "k"}}}}}}}};
    j["groups"][0]["keys"][0]["env"] = pasted;
    try {
      ConfigLoader::fromJson(j, "(test)");
      QFAIL("expected a ConfigError");
    } catch (const ConfigError& err) {
      QVERIFY2(std::string(err.what()).find("/groups/0/keys/0/env") != std::string::npos, err.what());
      QVERIFY2(std::string(err.what()).find("PASTEDKEY") == std::string::npos, err.what());
    }

    RawHttpServer home;
    nlohmann::json withHeaders = j;
    withHeaders["groups"][0]["base_url"] = home.url();
    withHeaders["groups"][0]["keys"] = nlohmann::json::array();
    withHeaders["groups"][0]["headers"] = {{"api-key", "azure-INLINESECRET-5555abcd"},
                                           {"Authorization", "Bearer tok-INLINESECRET-7777efgh"},
                                           {"x-session-token", "sess0INLINESECRET99z"},
                                           {"anthropic-version", "2023-06-01"},
                                           {"x-portkey-provider", "assistant"},
                                           {"x-portkey-cache-force-refresh", "true"},
                                           {"Helicone-Session-Name", "chat completions"}};
    const TollgateConfig c = ConfigLoader::fromJson(withHeaders, "(test)");
    const std::string echoed = SecretRegistry::redact(
        "api-key: azure-INLINESECRET-5555abcd; token tok-INLINESECRET-7777efgh; x-session-token: sess0INLINESECRET99z");
    QVERIFY2(echoed.find("INLINESECRET") == std::string::npos, echoed.c_str());
    // Words under names that only mention a key or a session are no credential: replaced wherever they appear, they
    // broke JSON output ({"ok":true}) and relayed answers ("role":"assistant").
    const std::string ordinary = R"({"ok":true,"role":"assistant","object":"chat completions","v":"2023-06-01"})";
    QCOMPARE(SecretRegistry::redact(ordinary), ordinary);
    Engine e(c.engine);  // and the header still goes to its own upstream, as written
    e.start();
    Results res;
    Request r = request("echo");
    r.headers.clear();
    e.submit(r, res.callback());
    Request bad = request("bad-url", "/v1/../x?api_key=QUERYSECRET111");
    e.submit(bad, res.callback());
    Request url = request("userinfo", "http://user:USERINFOSECRET222@[bad/x");
    e.submit(url, res.callback());
    Request name = request("name");
    name.headers = {{"Authorization: Bearer NAMESECRET333", "x"}};
    e.submit(name, res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 4, 10000);
    e.stop();
    QVERIFY2(home.allBytes().find("api-key: azure-INLINESECRET-5555abcd\r\n") != std::string::npos,
             home.allBytes().c_str());
    for (int i = 0; i < 4; ++i) {
      const Result got = res.at(static_cast<std::size_t>(i));
      if (got.id == "echo") {
        QVERIFY2(got.ok(), describe(got));
        continue;
      }
      QVERIFY2(got.error == ErrorKind::Config, describe(got));
      for (const char* secret : {"QUERYSECRET", "USERINFOSECRET", "NAMESECRET"})
        QVERIFY2(got.errorMessage.find(secret) == std::string::npos, describe(got));
    }
    QCOMPARE(urlShown("https://u:p@api.example.com:8443/v1/x?key=1#f"),
             std::string("https://...@api.example.com:8443/v1/x?..."));
    QCOMPARE(urlShown("/v1/x"), std::string("/v1/x"));
    QCOMPARE(urlShown("https://u:p/ss@host/x"), std::string("https://...@host/x"));
    QCOMPARE(urlShown("https://u:p?ss@host"), std::string("https://...@host"));
    QCOMPARE(urlShown("user:pw@host/x"), std::string("...@host/x"));
    QCOMPARE(urlShown("/v1/x?to=a@b"), std::string("/v1/x?..."));
    QCOMPARE(urlShown("//u:pw@host/x"), std::string("//...@host/x"));
    // An '@' past the authority is no userinfo: the host stays in the message.
    QCOMPARE(urlShown("https://api.example.com/v1/x?email=a@b.com"), std::string("https://api.example.com/v1/x?..."));
    QCOMPARE(urlShown("https://registry.npmjs.org/@scope/pkg"), std::string("https://registry.npmjs.org/@scope/pkg"));
    QCOMPARE(urlShown("http://[::1]/x"), std::string("http://[::1]/x"));
    QCOMPARE(urlShown("http://host:8443/x"), std::string("http://host:8443/x"));
    QCOMPARE(urlShown("https://u:pw?x"), std::string("https://..."));
    // What a config's headers register: the credential under its own name or after a scheme, never a word.
    const auto creds = [](const char* n, const char* v) { return headerCredentials(n, v); };
    QVERIFY(creds("Helicone-Auth", "Bearer sk-helicone-abc123def456").size() == 2);
    QCOMPARE(creds("cf-aig-authorization", "Bearer cfut_0123456789abcdef").back(),
             std::string("cfut_0123456789abcdef"));
    QVERIFY(creds("X-Authorization", "Token abcdefgh12345678").size() == 2);
    QVERIFY(creds("Authorization", "        ").empty());
    QVERIFY(creds("Authorization", "========").empty());
    QCOMPARE(creds("X-Access-Key", "0123456789012345").size(), std::size_t{1});  // all digits, yet named a key
    QVERIFY(creds("x-portkey-cache-force-refresh", "true").empty());
    QVERIFY(creds("OpenAI-Organization", "org-AbCdEf0123456789").empty());
    const auto cookie = creds("Cookie", "tz=America/New_York; sid=\"s3ss10nAbCdEf0123456\"; theme=dark");
    QVERIFY(std::find(cookie.begin(), cookie.end(), "s3ss10nAbCdEf0123456") != cookie.end());
    QVERIFY(std::find(cookie.begin(), cookie.end(), "America/New_York") == cookie.end());
  }

  // --- item 6: exactly one callback per submit, around stop too ---
  void submitAfterStopCallsBackOnce() {
    RawHttpServer home;
    Results res;
    {
      Engine e(configFor(home.url()));
      e.start();
      e.stop();
      e.submit(request("after-stop"), res.callback());
      QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 5000);
      QCOMPARE(res.at(0).error, ErrorKind::Cancelled);
    }
    {
      // Never started: the destructor answers what was queued.
      Engine e(configFor(home.url()));
      e.submit(request("never-started"), res.callback());
    }
    QCOMPARE(res.calls.load(), 2);
    QCOMPARE(res.at(1).error, ErrorKind::Cancelled);
  }

  void submitsRacingStopCallBackOnce() {
    RawHttpServer home;
    for (int round = 0; round < 5; ++round) {
      Results res;
      std::atomic<int> submitted{0};
      auto e = std::make_unique<Engine>(configFor(home.url()));
      e->start();
      std::thread feeder([&] {
        for (int i = 0; i < 2000; ++i) {
          e->submit(request("r" + std::to_string(i)), res.callback());
          ++submitted;
        }
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(2 * round));
      e->stop();
      feeder.join();
      QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), submitted.load(), 5000);
      e.reset();
      QCOMPARE(res.calls.load(), 2000);
      for (int i = 0; i < 2000; i += 97) QCOMPARE(res.countIds("r" + std::to_string(i)), 1);
    }
  }

  void inFlightAtStopCallsBack() {
    RawHttpServer slow([](const std::string&, int) { return RawHttpServer::held(); });
    Engine e(configFor(slow.url()));
    e.start();
    Results res;
    e.submit(request("slow"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(slow.count(), 1, 5000);
    e.stop();
    QCOMPARE(res.calls.load(), 1);
    QCOMPARE(res.at(0).error, ErrorKind::Cancelled);
  }

  // --- item 11: Retry-After: 0 does not hammer ---
  void retryAfterZeroIsSpacedAndBounded() {
    RawHttpServer limited([](const std::string&, int) { return RawHttpServer::status(429, "Retry-After: 0\r\n"); });
    EngineConfig c = configFor(limited.url());
    c.retry.maxBackoffS = 0.5;
    Engine e(c);
    e.start();
    Results res;
    e.submit(request("limited"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 30000);
    const Result r = res.at(0);
    QVERIFY2(!r.ok() && r.attempts <= c.retry.maxAttempts, describe(r));
    const auto got = limited.received();
    QCOMPARE(static_cast<int>(got.size()), r.attempts);
    for (std::size_t i = 1; i < got.size(); ++i) {
      const double gapS = std::chrono::duration<double>(got[i].at - got[i - 1].at).count();
      QVERIFY2(gapS >= 0.9 * c.retry.baseBackoffS, qPrintable(QString("attempt %1 came %2 s after the one before")
                                                                   .arg(i + 1).arg(gapS)));
    }
  }


  // --- the fault soak's finding: libcurl's own resend on a dead reused connection is an attempt ---
  void libcurlResendIsACountedAttempt() {
    for (const bool budget : {false, true}) {
      DroppingKeepAliveServer up;
      EngineConfig c = configFor(up.url());
      c.groups[0].concurrency = 1;
      c.retry.maxAttempts = 3;
      c.retry.baseBackoffS = 0.05;
      c.retry.maxBackoffS = 0.1;
      if (!budget) {
        c.retry.budgetRatio = 0;
        c.retry.budgetMinRetries = 0;
      }
      Engine e(c);
      e.start();
      Results res;
      for (const char* id : {"first", "second"}) {
        Request r = request(id);
        r.headers.emplace_back("X-Id", id);
        e.submit(r, res.callback());
        QTRY_COMPARE_WITH_TIMEOUT(res.countIds(id), 1, 20000);
      }
      e.stop();
      const Result second = res.at(1);
      // Every send the upstream saw is an attempt the result reports: none behind the engine's back.
      QVERIFY2(up.count("second") == second.attempts,
               qPrintable(QString("budget %1: upstream saw %2 sends, the result says %3 attempts (%4)")
                              .arg(budget).arg(up.count("second")).arg(second.attempts).arg(describe(second).constData())));
      if (!budget) {
        QCOMPARE(second.attempts, 1);  // no budget: libcurl's resend is refused, not made silently
        QVERIFY2(!second.ok(), describe(second));
      } else {
        QVERIFY2(second.attempts >= 2 && second.attempts <= c.retry.maxAttempts, describe(second));
      }
    }
  }

  // --- item 10: response bodies have a cap ---
  void oversizedBodyFailsNamingTheLimit() {
    const std::string big(200 * 1024, 'x');
    RawHttpServer sized([&](const std::string&, int) { return RawHttpServer::status(200, {}, big); });
    RawHttpServer chunked([&](const std::string&, int) {
      std::string raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
      for (int i = 0; i < 20; ++i) raw += "2800\r\n" + std::string(0x2800, 'y') + "\r\n";
      return RawHttpServer::raw(raw + "0\r\n\r\n");
    });
    for (RawHttpServer* s : {&sized, &chunked}) {
      EngineConfig c = configFor(s->url());
      c.maxResponseBytes = 64 * 1024;
      Engine e(c);
      e.start();
      Results res;
      e.submit(request("big"), res.callback());
      QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 10000);
      const Result r = res.at(0);
      QVERIFY2(!r.ok() && r.attempts == 1, describe(r));
      QVERIFY2(r.errorMessage.find("65536") != std::string::npos, describe(r));
      QVERIFY(r.body.size() <= 64 * 1024);
    }
  }

  // A header line over libcurl's 100 KB limit: the upstream's answer, said so, not retried as a network failure
  // (it read "network: Out of memory", was sent twice and fed the breaker).
  void aHeaderLineTooLongIsTheUpstreamsAnswer() {
    RawHttpServer home([](const std::string&, int) {
      return RawHttpServer::status(200, "X-Big: " + std::string(200 * 1024, 'b') + "\r\n");
    });
    Engine e(configFor(home.url()));
    e.start();
    Results res;
    e.submit(request("big-head"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 10000);
    e.stop();
    const Result r = res.at(0);
    QVERIFY2(r.error == ErrorKind::Http && r.attempts == 1, describe(r));
    QVERIFY2(r.errorMessage.find("response head too large") != std::string::npos, describe(r));
    QCOMPARE(home.count(), 1);
  }

  // --- item 7/10: numbers from outside never overflow time or counts ---
  void hugeDeadlineIsClamped() {
    RawHttpServer home;
    Engine e(configFor(home.url()));
    e.start();
    Results res;
    Request r = request("far");
    r.deadlineS = 1e10;
    e.submit(r, res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 5000);
    QVERIFY2(res.at(0).ok(), describe(res.at(0)));
  }

  void zeroRemainingWithoutResetStillFlows() {
    // remaining 0 and no reset: check() lets requests go (nothing says when capacity returns), and the key's
    // headroom minus its in-flight count is below -1; dispatch must still pick the key.
    RawHttpServer home([](const std::string&, int) {
      std::this_thread::sleep_for(20ms);
      return RawHttpServer::status(200, "X-RateLimit-Limit: 100\r\nX-RateLimit-Remaining: 0\r\n");
    });
    Engine e(configFor(home.url()));
    e.start();
    Results res;
    for (int i = 0; i < 8; ++i) e.submit(request("z" + std::to_string(i)), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 8, 10000);
    for (int i = 0; i < 8; ++i) QVERIFY2(res.at(static_cast<std::size_t>(i)).ok(), describe(res.at(static_cast<std::size_t>(i))));
  }

  void outOfRangeLimitIsNoEvent() {
    RawHttpServer home([](const std::string&, int i) {
      return RawHttpServer::status(200, i == 0 ? "X-RateLimit-Limit: 100\r\n" : "X-RateLimit-Limit: 1e19\r\n");
    });
    Engine e(configFor(home.url()));
    std::mutex m;
    std::vector<std::string> messages;
    e.onEvent([&](const Event& ev) {
      std::lock_guard lock(m);
      messages.push_back(ev.message);
    });
    e.start();
    Results res;
    e.submit(request("a"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 5000);
    e.submit(request("b"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 2, 5000);
    e.stop();
    std::lock_guard lock(m);
    for (const auto& msg : messages) QVERIFY2(msg.find("limit changed") == std::string::npos, msg.c_str());
  }

  // --- item 5: a workload destroyed while its requests are queued ---
  void workloadDestroyedWithQueuedRequests() {
    RawHttpServer home;
    Engine e(configFor(home.url()));
    e.setGroupPaused("g", true);  // everything the workload submits stays queued
    e.start();
    WorkloadProfile p;
    WorkloadStream s;
    s.group = "g";
    s.rate = 500;
    s.path = "/v1/x";
    s.promptBytes = 10;
    p.streams.push_back(s);
    auto results = std::make_shared<std::atomic<int>>(0);
    std::int64_t submitted = 0;
    {
      SyntheticWorkload w(e, p);
      w.onResult([results](const Result&) { ++*results; });
      w.start();
      QTRY_VERIFY_WITH_TIMEOUT(w.submitted() >= 20, 5000);
      w.stop();
      submitted = w.submitted();
    }  // destroyed with its requests queued
    e.setGroupPaused("g", false);  // now their callbacks arrive
    QTRY_COMPARE_WITH_TIMEOUT(static_cast<std::int64_t>(results->load()), submitted, 10000);
    e.stop();
  }
};

QTEST_GUILESS_MAIN(TestEngineHostile)
#include "test_engine_hostile.moc"
