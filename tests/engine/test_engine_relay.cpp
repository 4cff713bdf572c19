// The engine as a relay's back end, over loopback: a caller's cancel (queued: never sent; in flight: the
// connection is closed) and, with a ResponseSink, a response streamed through as it arrives, with
// backpressure, retries only before the first byte, and usage kept for token accounting.
#include "engine.h"
#include "raw_http_server.h"
#include "result_log.h"

#include <QtTest>

#include <atomic>
#include <mutex>
#include <strings.h>
#include <thread>
#include <utility>

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

// Records what a relay would have sent on, with a verdict per offered piece chosen by the test.
class RecordingSink : public ResponseSink {
 public:
  using Clock = std::chrono::steady_clock;
  struct Piece {
    Clock::time_point at;
    std::string data;
    SinkVerdict verdict;
  };
  // offer: 0-based number of the onChunk call (a re-offer after a pause counts again)
  std::function<SinkVerdict(std::string_view data, int offer)> verdict;
  bool acceptHead = true;

  bool onHead(int status, const HeaderList& headers) override {
    std::lock_guard lock(mutex_);
    heads_.push_back(status);
    headers_ = headers;
    return acceptHead;
  }
  SinkVerdict onChunk(std::string_view data) override {
    std::lock_guard lock(mutex_);
    const SinkVerdict v = verdict ? verdict(data, static_cast<int>(offers_.size())) : SinkVerdict::Accept;
    offers_.push_back({Clock::now(), std::string(data), v});
    if (v == SinkVerdict::Accept) body_ += data;
    if (v == SinkVerdict::Pause) paused_ = true;
    return v;
  }

  std::vector<int> heads() {
    std::lock_guard lock(mutex_);
    return heads_;
  }
  HeaderList headers() {
    std::lock_guard lock(mutex_);
    return headers_;
  }
  std::string body() {
    std::lock_guard lock(mutex_);
    return body_;
  }
  std::vector<Piece> offers() {
    std::lock_guard lock(mutex_);
    return offers_;
  }
  bool takePaused() {
    std::lock_guard lock(mutex_);
    return std::exchange(paused_, false);
  }

 private:
  std::mutex mutex_;
  std::vector<int> heads_;
  HeaderList headers_;
  std::string body_;
  std::vector<Piece> offers_;
  bool paused_ = false;
};

std::string header(const HeaderList& headers, const std::string& name) {
  for (const auto& [n, v] : headers)
    if (strcasecmp(n.c_str(), name.c_str()) == 0) return v;
  return {};
}

// A close-delimited 200 whose body follows in pieces, `gap` apart.
RawHttpServer::Reply stream(const std::string& contentType, std::vector<std::string> pieces,
                            std::chrono::milliseconds gap) {
  RawHttpServer::Reply r;
  r.raw = "HTTP/1.1 200 OK\r\nContent-Type: " + contentType + "\r\nConnection: close\r\n\r\n";
  r.pieces = std::move(pieces);
  r.gap = gap;
  return r;
}

std::string joined(const std::vector<std::string>& pieces) {
  std::string all;
  for (const auto& p : pieces) all += p;
  return all;
}

struct Relayed {
  Result result;
  int calls = 0;  // answers by the time the engine stopped: exactly one, or something is wrong
  std::chrono::steady_clock::duration took{};
};

// Sends one request with `sink` through an engine on `server` and waits (up to 10 s) for its answer.
Relayed relay(RawHttpServer& server, const std::shared_ptr<RecordingSink>& sink, const std::string& id,
              const std::function<void(EngineConfig&)>& edit = {}) {
  EngineConfig c = configFor(server.url());
  if (edit) edit(c);
  Engine e(c);
  e.start();
  Results res;
  Request r = request(id);
  r.sink = sink;
  const auto started = std::chrono::steady_clock::now();
  e.submit(std::move(r), res.callback());
  while (res.calls.load() == 0 && std::chrono::steady_clock::now() - started < 10s) std::this_thread::sleep_for(2ms);
  Relayed out;
  out.took = std::chrono::steady_clock::now() - started;
  e.stop();
  out.calls = res.calls.load();
  out.result = res.byId(id);
  return out;
}


}  // namespace

class TestEngineRelay : public QObject {
  Q_OBJECT
 private slots:
  void cancelQueuedNeverSendsAndInFlightClosesTheConnection() {
    RawHttpServer server([](const std::string&, int index) {
      if (index == 0) return RawHttpServer::held();  // the first request stalls
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

  // An SSE stream reaches the sink piece by piece as the upstream sends it, not at the end; the Result keeps
  // only the usage event, which settles the tokens.
  void streamArrivesAsSent() {
    const std::string usage =
        R"(data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12}})";
    const std::vector<std::string> pieces = {
        "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}],\"usage\":null}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}],\"usage\":null}\n\n",
        "data: {\"choices\":[{\"delta\":{}}],\"usage\":null}\n\n",
        // The usage event split across two reads, CRLF style.
        usage.substr(0, 30), usage.substr(30) + "\r\n\r\n", "data: [DONE]\r\n\r\n"};
    constexpr auto kGap = 200ms;
    RawHttpServer server([&](const std::string&, int) { return stream("text/event-stream", pieces, kGap); });
    auto sink = std::make_shared<RecordingSink>();
    const Relayed relayed = relay(server, sink, "sse");
    QCOMPARE(relayed.calls, 1);
    const Result& out = relayed.result;
    QVERIFY2(out.ok() && out.committed && out.status == 200 && out.attempts == 1, describe(out));
    QCOMPARE(sink->heads(), std::vector<int>{200});
    QCOMPARE(header(sink->headers(), "Content-Type"), std::string("text/event-stream"));
    QCOMPARE(header(out.headers, "Content-Type"), std::string("text/event-stream"));
    QCOMPARE(sink->body(), joined(pieces));
    QCOMPARE(out.body, usage);
    QCOMPARE(out.tokensUsed, std::int64_t{12});
    // Piece i was complete at the sink soon after the server sent it (long before the stream ended).
    const auto sentAt = server.pieceTimes();
    QCOMPARE(sentAt.size(), pieces.size());
    const auto offers = sink->offers();
    std::size_t need = 0, got = 0, o = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      need += pieces[i].size();
      while (got < need && o < offers.size()) got += offers[o++].data.size();
      QVERIFY(got >= need);
      const auto late = std::chrono::duration_cast<std::chrono::milliseconds>(offers[o - 1].at - sentAt[i]);
      QVERIFY2(late < kGap / 2, QByteArray::number(static_cast<qlonglong>(late.count())) + " ms late, piece " +
                                    QByteArray::number(static_cast<qulonglong>(i)));
    }
  }

  // request_timeout_s bounds a relayed answer's silence, not its length: a 2.8 s stream whose pieces come
  // 0.4 s apart passes a 1 s timeout; an upstream that says nothing is cut (curl averages the speed over the
  // last 5 seconds, and the request's upload counts, so silence is noticed up to ~5 s after the timeout).
  void relayTimeoutIsSilenceNotLength() {
    const std::vector<std::string> pieces(8, "data: {\"choices\":[]}\n\n");
    RawHttpServer server([&](const std::string&, int) { return stream("text/event-stream", pieces, 400ms); });
    auto oneSecond = [](EngineConfig& c) {
      c.requestTimeoutS = 1;
      c.retry.maxAttempts = 1;
    };
    auto sink = std::make_shared<RecordingSink>();
    const Relayed whole = relay(server, sink, "long", oneSecond);
    QVERIFY2(whole.result.ok() && whole.result.committed, describe(whole.result));
    QCOMPARE(sink->body(), joined(pieces));
    QVERIFY(whole.took > 2500ms);
    RawHttpServer silent([](const std::string&, int) { return RawHttpServer::held(); });
    auto quiet = std::make_shared<RecordingSink>();
    const Relayed cut = relay(silent, quiet, "silent", oneSecond);
    QCOMPARE(cut.calls, 1);
    QVERIFY2(cut.result.error == ErrorKind::Timeout, describe(cut.result));
    QVERIFY2(cut.took < 9s, QByteArray::number(static_cast<qlonglong>(std::chrono::duration_cast<std::chrono::milliseconds>(cut.took).count())));
  }

  // Pause stops the transfer until resumeTransfer; the paused piece comes again, nothing is lost or doubled.
  void pauseAndResumeLoseNothing() {
    std::vector<std::string> pieces;
    for (int i = 0; i < 16; ++i)
      pieces.push_back("<piece " + std::to_string(i) + ">" + std::string(3000, static_cast<char>('a' + i)));
    RawHttpServer server([&](const std::string&, int) { return stream("application/octet-stream", pieces, 50ms); });
    Engine e(configFor(server.url()));
    e.start();
    auto sink = std::make_shared<RecordingSink>();
    sink->verdict = [](std::string_view, int offer) { return offer % 3 == 1 ? SinkVerdict::Pause : SinkVerdict::Accept; };
    Results res;
    Request r = request("paced");
    r.sink = sink;
    const RequestHandle h = e.submit(std::move(r), res.callback());
    std::vector<RecordingSink::Clock::time_point> resumedAt;
    const auto giveUp = RecordingSink::Clock::now() + 20s;
    while (res.calls.load() == 0 && RecordingSink::Clock::now() < giveUp) {
      if (sink->takePaused()) {
        std::this_thread::sleep_for(80ms);  // the relay's client is slow
        resumedAt.push_back(RecordingSink::Clock::now());
        e.resumeTransfer(h);
      }
      std::this_thread::sleep_for(5ms);
    }
    QCOMPARE(res.calls.load(), 1);
    const Result out = res.byId("paced");
    QVERIFY2(out.ok() && out.committed, describe(out));
    QCOMPARE(sink->body(), joined(pieces));
    // Every pause held the data back until its resume, and the same bytes were offered again.
    const auto offers = sink->offers();
    std::size_t pauses = 0;
    for (std::size_t i = 0; i + 1 < offers.size(); ++i) {
      if (offers[i].verdict != SinkVerdict::Pause) continue;
      QVERIFY(pauses < resumedAt.size());
      QVERIFY2(offers[i + 1].at >= resumedAt[pauses], "data reached the sink while it was paused");
      QVERIFY2(offers[i + 1].data.rfind(offers[i].data, 0) == 0, "the paused piece was not offered again");
      ++pauses;
    }
    QVERIFY2(pauses >= 3, QByteArray::number(static_cast<qulonglong>(pauses)));
    e.resumeTransfer(h);  // finished: ignored
  }

  // A 429 stays buffered and is retried; the sink sees only the 200 that followed.
  void rateLimitedThenCommitted() {
    const std::string ok = R"({"id":"x","usage":{"total_tokens":3}})";
    RawHttpServer server([&](const std::string&, int index) {
      if (index == 0) return RawHttpServer::status(429, "Retry-After: 0\r\n", R"({"error":"slow down"})");
      return stream("application/json", {ok.substr(0, 10), ok.substr(10)}, 50ms);
    });
    auto sink = std::make_shared<RecordingSink>();
    const Relayed relayed = relay(server, sink, "retried");
    QCOMPARE(relayed.calls, 1);
    const Result& out = relayed.result;
    QVERIFY2(out.ok() && out.committed && out.status == 200 && out.attempts == 2, describe(out));
    QCOMPARE(sink->heads(), std::vector<int>{200});
    QCOMPARE(sink->body(), ok);
    QCOMPARE(out.body, ok);  // not an event stream: the body is kept whole for usage (it is small)
    QCOMPARE(out.tokensUsed, std::int64_t{3});
  }

  // A final non-2xx never reaches the sink: it comes whole in the Result.
  void errorStatusStaysBuffered() {
    RawHttpServer server([](const std::string&, int) {
      return RawHttpServer::status(404, "X-Request-Id: r-1\r\n", R"({"error":"no such model"})");
    });
    auto sink = std::make_shared<RecordingSink>();
    const Relayed relayed = relay(server, sink, "missing");
    QCOMPARE(relayed.calls, 1);
    const Result& out = relayed.result;
    QVERIFY2(out.error == ErrorKind::Http && out.status == 404 && !out.committed, describe(out));
    QCOMPARE(out.body, std::string(R"({"error":"no such model"})"));
    QCOMPARE(header(out.headers, "X-Request-Id"), std::string("r-1"));
    QVERIFY(sink->heads().empty());
    QVERIFY(sink->offers().empty());
  }

  // Abort from onChunk ends the transfer at once (the upstream sees the connection close); not retried.
  void abortFromChunkEndsTheTransfer() {
    std::vector<std::string> pieces(10, std::string(100, 'z'));
    RawHttpServer server([&](const std::string&, int) { return stream("text/plain", pieces, 150ms); });
    auto sink = std::make_shared<RecordingSink>();
    sink->verdict = [](std::string_view, int offer) { return offer == 1 ? SinkVerdict::Abort : SinkVerdict::Accept; };
    const Relayed relayed = relay(server, sink, "aborted");
    QCOMPARE(relayed.calls, 1);
    const Result& out = relayed.result;
    QVERIFY2(out.error == ErrorKind::Cancelled && out.committed && out.status == 200 && out.attempts == 1,
             describe(out));
    QVERIFY2(relayed.took < 1000ms, "the transfer ran on after the abort");  // the whole stream takes 1.5 s
    QCOMPARE(sink->body(), pieces[0]);
    QTRY_COMPARE_WITH_TIMEOUT(server.closedByClient(), 1, 5000);
    std::this_thread::sleep_for(200ms);
    QCOMPARE(server.count(), 1);
  }

  // A sink that refuses the head ends the request Cancelled, without a retry.
  void refusedHeadIsNotRetried() {
    RawHttpServer server([](const std::string&, int) { return RawHttpServer::status(200, {}, "{}"); });
    auto sink = std::make_shared<RecordingSink>();
    sink->acceptHead = false;
    const Relayed relayed = relay(server, sink, "refused");
    QCOMPARE(relayed.calls, 1);
    const Result& out = relayed.result;
    QVERIFY2(out.error == ErrorKind::Cancelled && out.attempts == 1 && !out.committed, describe(out));
    QCOMPARE(sink->heads(), std::vector<int>{200});
    QVERIFY(sink->offers().empty());
    std::this_thread::sleep_for(200ms);
    QCOMPARE(server.count(), 1);
  }

  // A committed response that breaks off is a network error with its status, and is never sent again.
  void brokenStreamIsNotRetried() {
    RawHttpServer server([](const std::string&, int) {
      return RawHttpServer::raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\npartial");
    });
    auto sink = std::make_shared<RecordingSink>();
    const Relayed relayed = relay(server, sink, "broken");
    QCOMPARE(relayed.calls, 1);
    const Result& out = relayed.result;
    QVERIFY2(out.error == ErrorKind::Network && out.committed && out.status == 200 && out.attempts == 1,
             describe(out));
    QCOMPARE(sink->body(), std::string("partial"));
    std::this_thread::sleep_for(300ms);  // past the retry backoff it would have had
    QCOMPARE(server.count(), 1);
  }

  // Buffered (no sink), a 2xx that breaks off is not sent again where a repeat would do the work twice: the
  // upstream answered, so it did the work (an LLM API charged for it). A method that may be repeated, a POST
  // with an Idempotency-Key, or the operator's retry.resend_broken_answers is sent again, and the second answer
  // is the result. A 5xx that breaks off is retried as ever: the upstream did not do the work.
  void brokenAnswerIsResentOnlyWhereHarmless_data() {
    QTest::addColumn<QString>("method");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("idempotencyKey");
    QTest::addColumn<bool>("configured");
    QTest::addColumn<bool>("resent");
    QTest::newRow("POST 200") << "POST" << 200 << false << false << false;
    QTest::newRow("PATCH 201") << "PATCH" << 201 << false << false << false;
    QTest::newRow("GET 200") << "GET" << 200 << false << false << true;
    QTest::newRow("PUT 200") << "PUT" << 200 << false << false << true;
    QTest::newRow("POST 200 with Idempotency-Key") << "POST" << 200 << true << false << true;
    QTest::newRow("POST 200, resend_broken_answers") << "POST" << 200 << false << true << true;
    QTest::newRow("POST 502") << "POST" << 502 << false << false << true;
  }
  void brokenAnswerIsResentOnlyWhereHarmless() {
    QFETCH(QString, method);
    QFETCH(int, status);
    QFETCH(bool, idempotencyKey);
    QFETCH(bool, configured);
    QFETCH(bool, resent);
    std::atomic<int> calls{0};
    RawHttpServer server([&](const std::string&, int) {
      if (calls++ > 0) return RawHttpServer::status(200, {}, R"({"second":true})");
      return RawHttpServer::raw("HTTP/1.1 " + std::to_string(status) +
                                " X\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n{\"partial");
    });
    EngineConfig c = configFor(server.url());
    c.retry.resendBrokenAnswers = configured;
    Engine e(c);
    e.start();
    Results res;
    Request r = request("broken");
    r.method = method.toStdString();
    if (idempotencyKey) r.headers.emplace_back("Idempotency-Key", "row-17");
    e.submit(std::move(r), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 10000);
    std::this_thread::sleep_for(300ms);  // past the retry backoff it would have had
    e.stop();
    const Result out = res.byId("broken");
    if (resent) {
      QCOMPARE(server.count(), 2);
      QVERIFY2(out.error == ErrorKind::None && out.status == 200 && out.attempts == 2 &&
                   out.body == R"({"second":true})",
               describe(out));
    } else {
      QCOMPARE(server.count(), 1);
      QVERIFY2(out.error == ErrorKind::Network && out.status == 0 && out.attempts == 1 && !out.retryUseless &&
                   out.errorMessage.find("answered HTTP " + std::to_string(status) + " and its body broke off") !=
                       std::string::npos &&
                   out.errorMessage.find("Idempotency-Key") != std::string::npos,
               describe(out));
    }
  }

  // A caller's cancel reaches a transfer its sink paused: one answer, and the connection closes.
  void cancelWhilePaused() {
    RawHttpServer server([](const std::string&, int) {
      return stream("text/plain", std::vector<std::string>(10, std::string(50, 'p')), 100ms);
    });
    Engine e(configFor(server.url()));
    e.start();
    auto sink = std::make_shared<RecordingSink>();
    sink->verdict = [](std::string_view, int offer) { return offer >= 1 ? SinkVerdict::Pause : SinkVerdict::Accept; };
    Results res;
    Request r = request("paused");
    r.sink = sink;
    const RequestHandle h = e.submit(std::move(r), res.callback());
    bool paused = false;  // takePaused() clears the flag, so it is read once per try
    QTRY_VERIFY_WITH_TIMEOUT(paused = paused || sink->takePaused(), 5000);
    e.cancel(h, "client went away");
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 5000);
    const Result out = res.byId("paused");
    QVERIFY2(out.error == ErrorKind::Cancelled && out.errorMessage == "client went away", describe(out));
    QTRY_COMPARE_WITH_TIMEOUT(server.closedByClient(), 1, 5000);
    e.resumeTransfer(h);  // gone: ignored
    std::this_thread::sleep_for(100ms);
    QCOMPARE(sink->offers().size(), std::size_t{2});  // one accepted, one paused, nothing after
    QCOMPARE(res.calls.load(), 1);
  }

  // An event too large to keep (over 64 KiB) is skipped whole; the last usage event before it stays.
  void oversizedEventIsNotKept() {
    const std::string usage = R"(data: {"usage":{"total_tokens":21}})";
    const std::string big = "data: {\"usage\":{\"total_tokens\":99999},\"pad\":\"" + std::string(70 * 1024, 'x') + "\"}";
    std::vector<std::string> pieces = {usage + "\n\n"};
    for (std::size_t i = 0; i < big.size(); i += 8192) pieces.push_back(big.substr(i, 8192));
    pieces.push_back("\n\ndata: [DONE]\n\n");
    RawHttpServer server([&](const std::string&, int) { return stream("text/event-stream", pieces, 5ms); });
    auto sink = std::make_shared<RecordingSink>();
    const Relayed relayed = relay(server, sink, "big");
    QCOMPARE(relayed.calls, 1);
    QVERIFY2(relayed.result.ok(), describe(relayed.result));
    QCOMPARE(sink->body(), joined(pieces));  // the sink got all of it
    QCOMPARE(relayed.result.body, usage);
    QCOMPARE(relayed.result.tokensUsed, std::int64_t{21});
  }

  // The Responses API's response.completed repeats the whole output before its usage: over 64 KiB for a long
  // answer, it is not kept whole, but its tail is, and the usage there is counted. OpenAI's chat chunks carry
  // "usage": null until the last one states it.
  void usageAtTheEndOfAnEventTooLargeToKeep() {
    const std::string output(100 * 1024, 'o');
    const std::vector<std::string> pieces = {
        "data: {\"id\":\"c\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n",
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"text\":\"" +
            output.substr(0, 50 * 1024),
        output.substr(50 * 1024) + "\"}],\"usage\":{\"input_tokens\":30,\"output_tokens\":25000,"
                                   "\"total_tokens\":25030},\"metadata\":{}}}\n\n",
        "data: [DONE]\n\n"};
    RawHttpServer server([&](const std::string&, int) { return stream("text/event-stream", pieces, 5ms); });
    auto sink = std::make_shared<RecordingSink>();
    const Relayed relayed = relay(server, sink, "responses");
    QVERIFY2(relayed.result.ok() && relayed.result.committed, describe(relayed.result));
    QCOMPARE(sink->body(), joined(pieces));
    QCOMPARE(relayed.result.tokensUsed, std::int64_t{25030});
  }

  // Anthropic's stream states its input tokens in message_start and the output so far in each message_delta: the
  // whole stream's usage is counted (27 + 8), relayed or buffered (a job's), not the last event's alone (8).
  void anthropicStreamCountsInputAndOutput_data() {
    QTest::addColumn<bool>("relayed");
    QTest::newRow("relayed") << true;
    QTest::newRow("buffered") << false;
  }
  void anthropicStreamCountsInputAndOutput() {
    QFETCH(bool, relayed);
    const std::vector<std::string> pieces = {
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":"
        "{\"input_tokens\":27,\"cache_creation_input_tokens\":0,\"output_tokens\":1}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
        "{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":null},\"usage\":"
        "{\"output_tokens\":5}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
        "\"usage\":{\"output_tokens\":8}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"};
    RawHttpServer server([&](const std::string&, int) { return stream("text/event-stream", pieces, 5ms); });
    const Relayed out = relay(server, relayed ? std::make_shared<RecordingSink>() : nullptr, "anthropic");
    QCOMPARE(out.calls, 1);
    QVERIFY2(out.result.ok() && out.result.committed == relayed, describe(out.result));
    QCOMPARE(out.result.tokensUsed, std::int64_t{35});
  }

  // A Retry-After that ends past the request's deadline (a client's short timeout) is not waited: the request ends
  // at once with the upstream's own 429 and its wait, instead of being held where no deadline sweep sees it and shed
  // when the wait ends. A 5xx whose backoff would end past the deadline ends with that 5xx, its retry not spent.
  void aWaitPastTheDeadlineEndsAtOnce_data() {
    QTest::addColumn<int>("status");
    QTest::addColumn<double>("backoffS");
    QTest::newRow("429, Retry-After: 3") << 429 << 0.05;
    QTest::newRow("503, a backoff of up to 600 s") << 503 << 600.0;  // full jitter: under 0.5 s once in 1,200
  }
  void aWaitPastTheDeadlineEndsAtOnce() {
    QFETCH(int, status);
    QFETCH(double, backoffS);
    RawHttpServer server([&](const std::string&, int) {
      return RawHttpServer::status(status, status == 429 ? "Retry-After: 3\r\n" : "", R"({"error":"upstream"})");
    });
    EngineConfig c = configFor(server.url());
    c.retry.baseBackoffS = backoffS;
    c.retry.maxBackoffS = backoffS;
    Engine e(c);
    e.start();
    Results res;
    Request r = request("late");
    r.deadlineS = 0.5;
    const auto started = std::chrono::steady_clock::now();
    e.submit(std::move(r), res.callback());
    QTRY_COMPARE_WITH_TIMEOUT(res.calls.load(), 1, 5000);
    const double tookS = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const Result out = res.byId("late");
    QVERIFY2(out.status == status && out.attempts == 1 && out.shed == ShedReason::None &&
                 out.body == R"({"error":"upstream"})" &&
                 out.errorMessage.find("ends") != std::string::npos &&
                 out.errorMessage.find("after this request's deadline (P1)") != std::string::npos,
             describe(out));
    if (status == 429) QVERIFY2(out.retryAfterS > 2.5 && out.retryAfterS <= 3.0, describe(out));
    QVERIFY2(tookS < 0.45, qPrintable(QString::number(tookS)));  // before the deadline, not when the wait ends
    std::this_thread::sleep_for(300ms);
    e.stop();
    QCOMPARE(server.count(), 1);
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
