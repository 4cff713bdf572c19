// Protocol pieces without sockets: the HTTP request parser (pipelining, partial input, refusals), the
// dialect header formats, the chat body fields and the stream's chunk framing.
#include "chat_body_scan.h"
#include "http_request_parser.h"
#include "http_response_writer.h"
#include "rate_limit_header_writer.h"
#include "time_text.h"

#include <QtTest>

using namespace tg;

class TestSimProtocol : public QObject {
  Q_OBJECT

 private slots:
  void parser_data();
  void parser();
  void parsesPipelinedRequestsInOrder();
  void expectContinue();
  void goDuration_data();
  void goDuration();
  void dates();
  void retryAfterRoundsUp();
  void noneDialectIsBare();
  void chatBody_data();
  void chatBody();
  void chunkFraming();
};

void TestSimProtocol::parser_data() {
  QTest::addColumn<QByteArray>("input");
  QTest::addColumn<int>("status");  // 0 NeedMore, 1 Complete, 2 Error
  QTest::addColumn<int>("errorStatus");
  QTest::addColumn<bool>("keepAlive");
  QTest::addColumn<QByteArray>("body");
  QTest::newRow("get") << QByteArray("GET /a HTTP/1.1\r\nHost: x\r\n\r\n") << 1 << 0 << true << QByteArray();
  QTest::newRow("post body") << QByteArray("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello") << 1 << 0 << true
                             << QByteArray("hello");
  QTest::newRow("partial head") << QByteArray("GET /a HTTP/1.1\r\nHost: x\r\n") << 0 << 0 << true << QByteArray();
  QTest::newRow("partial body") << QByteArray("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel") << 0 << 0 << true
                                << QByteArray();
  QTest::newRow("connection close") << QByteArray("GET / HTTP/1.1\r\nConnection: close\r\n\r\n") << 1 << 0 << false
                                    << QByteArray();
  QTest::newRow("http/1.0") << QByteArray("GET / HTTP/1.0\r\n\r\n") << 1 << 0 << false << QByteArray();
  QTest::newRow("http/1.0 keep-alive") << QByteArray("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n") << 1 << 0
                                       << true << QByteArray();
  QTest::newRow("chunked refused") << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") << 2 << 411
                                   << true << QByteArray();
  QTest::newRow("bad length") << QByteArray("POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n") << 2 << 400 << true
                              << QByteArray();
  QTest::newRow("bad request line") << QByteArray("HELLO\r\n\r\n") << 2 << 400 << true << QByteArray();
  QTest::newRow("http/2 preface") << QByteArray("PRI * HTTP/2.0\r\n\r\n") << 2 << 505 << true << QByteArray();
  QTest::newRow("huge head") << QByteArray("GET / HTTP/1.1\r\nX: ") + QByteArray(70000, 'a') << 2 << 431 << true
                             << QByteArray();
  // A bare LF must not hide the Content-Length that follows it inside the previous header's value.
  QTest::newRow("bare LF hides a header") << QByteArray("POST / HTTP/1.1\r\nX-A: 1\nContent-Length: 5\r\n\r\nhello")
                                          << 2 << 400 << true << QByteArray();
  QTest::newRow("bare LF head") << QByteArray("GET / HTTP/1.1\nHost: x\n\n") << 2 << 400 << true << QByteArray();
  QTest::newRow("bare LF, head not ended") << QByteArray("GET / HTTP/1.1\nHost: x") << 2 << 400 << true
                                           << QByteArray();
  QTest::newRow("bare CR") << QByteArray("GET / HTTP/1.1\r\nX-A: 1\rContent-Length: 5\r\n\r\n") << 2 << 400 << true
                           << QByteArray();
  QTest::newRow("CR at the end waits") << QByteArray("GET / HTTP/1.1\r\nHost: x\r") << 0 << 0 << true << QByteArray();
  QTest::newRow("NUL in a value") << QByteArray("GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n", 28) << 2 << 400 << true
                                  << QByteArray();
  QTest::newRow("space in a name") << QByteArray("GET / HTTP/1.1\r\nX A: 1\r\n\r\n") << 2 << 400 << true << QByteArray();
  QTest::newRow("space in the target") << QByteArray("GET /a b HTTP/1.1\r\n\r\n") << 2 << 400 << true << QByteArray();
  QTest::newRow("bad version") << QByteArray("GET / HTTP/1.x\r\n\r\n") << 2 << 400 << true << QByteArray();
  QTest::newRow("body over 16 MiB") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 16777217\r\n\r\n") << 2 << 413
                                    << true << QByteArray();
}

void TestSimProtocol::parser() {
  QFETCH(QByteArray, input);
  QFETCH(int, status);
  QFETCH(int, errorStatus);
  QFETCH(bool, keepAlive);
  QFETCH(QByteArray, body);
  HttpRequest req;
  const auto o = HttpRequestParser::parse(std::string_view(input.constData(), std::size_t(input.size())), req);
  QCOMPARE(int(o.status), status);
  QCOMPARE(o.errorStatus, errorStatus);
  if (o.status != HttpRequestParser::Status::Complete) return;
  QCOMPARE(o.consumed, std::size_t(input.size()));
  QCOMPARE(req.keepAlive, keepAlive);
  QCOMPARE(QByteArray::fromStdString(req.body), body);
}

void TestSimProtocol::parsesPipelinedRequestsInOrder() {
  const std::string in =
      "POST /one?q=1 HTTP/1.1\r\nContent-Length: 3\r\nX-Tollgate-Tier: P0\r\n\r\nabc"
      "GET /two HTTP/1.1\r\nAuthorization: Bearer k\r\n\r\n"
      "GET /thr";
  std::string_view rest = in;
  HttpRequest r;
  auto o = HttpRequestParser::parse(rest, r);
  QCOMPARE(o.status, HttpRequestParser::Status::Complete);
  QCOMPARE(r.path(), std::string_view("/one"));
  QCOMPARE(r.body, std::string("abc"));
  QVERIFY(r.header("x-tollgate-tier") && *r.header("x-tollgate-tier") == "P0");
  rest.remove_prefix(o.consumed);
  o = HttpRequestParser::parse(rest, r);
  QCOMPARE(o.status, HttpRequestParser::Status::Complete);
  QCOMPARE(r.target, std::string("/two"));
  QCOMPARE(*r.header("authorization"), std::string("Bearer k"));
  rest.remove_prefix(o.consumed);
  QCOMPARE(HttpRequestParser::parse(rest, r).status, HttpRequestParser::Status::NeedMore);
}

void TestSimProtocol::expectContinue() {
  HttpRequest r;
  const auto o =
      HttpRequestParser::parse("POST / HTTP/1.1\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n", r);
  QCOMPARE(o.status, HttpRequestParser::Status::NeedMore);
  QVERIFY(o.expectContinue);
}

void TestSimProtocol::goDuration_data() {
  QTest::addColumn<double>("seconds");
  QTest::addColumn<QString>("expected");
  QTest::newRow("zero") << 0.0 << "0s";
  QTest::newRow("250ms") << 0.25 << "250ms";
  QTest::newRow("rounds up to ms") << 0.0101 << "11ms";
  QTest::newRow("1s") << 1.0 << "1s";
  QTest::newRow("1.5s") << 1.5 << "1.5s";
  QTest::newRow("1m0s") << 60.0 << "1m0s";
  QTest::newRow("6m0s") << 360.0 << "6m0s";
  QTest::newRow("59.999s") << 59.9985 << "59.999s";
  QTest::newRow("2h0m0s") << 7200.0 << "2h0m0s";
  QTest::newRow("1h1m1.25s") << 3661.25 << "1h1m1.25s";
}

void TestSimProtocol::goDuration() {
  QFETCH(double, seconds);
  QFETCH(QString, expected);
  QCOMPARE(QString::fromStdString(RateLimitHeaderWriter::goDuration(seconds)), expected);
}

void TestSimProtocol::dates() {
  // The simulator's Date and reset headers come from the one formatter (rows in tests/base/test_time_text).
  QCOMPARE(formatUtc(784111777000, UtcStyle::HttpDate), std::string("Sun, 06 Nov 1994 08:49:37 GMT"));
  QCOMPARE(formatUtc(784111777000, UtcStyle::Iso), std::string("1994-11-06T08:49:37Z"));
}

void TestSimProtocol::retryAfterRoundsUp() {
  RateLimitHeaderInput in;
  in.group = "g";
  in.windowS = 60;
  in.requests = {false, 10, 0, 30.2, 30.2};
  in.limited = in.requestsBlocked = true;
  in.retryAfterS = 30.2;
  in.wallNowS = 1000.5;
  HeaderList h;
  const double told = RateLimitHeaderWriter(SimDialect::Ietf, true, RetryAfterFormat::Seconds).write(in, h);
  QCOMPARE(told, 31.0);
  const auto find = [&](const std::string& name) {
    for (const auto& [k, v] : h)
      if (k == name) return v;
    return std::string("<absent>");
  };
  QCOMPARE(find("Retry-After"), std::string("31"));
  QCOMPARE(find("RateLimit-Reset"), std::string("31"));
  QCOMPARE(find("RateLimit-Policy"), std::string("10;w=60"));
  h.clear();
  QCOMPARE(RateLimitHeaderWriter(SimDialect::OpenAi, true, RetryAfterFormat::Ms).write(in, h), 30.2);
  QCOMPARE(find("Retry-After-Ms"), std::string("30200"));
  QCOMPARE(find("x-ratelimit-reset-requests"), std::string("30.2s"));
  h.clear();
  // Absolute forms: the next whole second at or after now + wait.
  QCOMPARE(RateLimitHeaderWriter(SimDialect::GitHub, false, RetryAfterFormat::Seconds).write(in, h), 30.5);
  QCOMPARE(find("X-RateLimit-Reset"), std::string("1031"));
  QCOMPARE(find("X-RateLimit-Used"), std::string("10"));
  QCOMPARE(find("Retry-After"), std::string("<absent>"));
}

void TestSimProtocol::noneDialectIsBare() {
  RateLimitHeaderInput in;
  in.requests = {false, 10, 0, 3, 3};
  in.limited = in.requestsBlocked = true;
  in.retryAfterS = 3;
  HeaderList h;
  QCOMPARE(RateLimitHeaderWriter(SimDialect::None, true, RetryAfterFormat::Seconds).write(in, h), 0.0);
  QVERIFY(h.empty());
}

void TestSimProtocol::chatBody_data() {
  QTest::addColumn<QString>("body");
  QTest::addColumn<qint64>("maxTokens");
  QTest::addColumn<bool>("stream");
  QTest::addColumn<bool>("includeUsage");
  QTest::addColumn<QString>("model");
  QTest::newRow("plain") << R"({"model":"m","max_tokens":20})" << qint64(20) << false << false << "m";
  QTest::newRow("stream") << R"({"stream":true,"max_tokens":8})" << qint64(8) << true << false << "";
  QTest::newRow("stream false") << R"({"stream":false})" << qint64(0) << false << false << "";
  QTest::newRow("stream as string") << R"({"stream":"true"})" << qint64(0) << false << false << "";
  QTest::newRow("later stream wins") << R"({"stream":true,"stream":null})" << qint64(0) << false << false << "";
  QTest::newRow("include usage") << R"({"stream":true,"stream_options":{"include_usage":true}})" << qint64(0)
                                 << true << true << "";
  QTest::newRow("include usage false") << R"({"stream":true,"stream_options":{"include_usage":false}})"
                                       << qint64(0) << true << false << "";
  QTest::newRow("later stream_options wins")
      << R"({"stream_options":{"include_usage":true},"stream_options":{}})" << qint64(0) << false << false << "";
  QTest::newRow("include_usage elsewhere")
      << R"({"stream":true,"x":{"include_usage":true},"stream_options":{"y":{"include_usage":true}}})" << qint64(0)
      << true << false << "";
  QTest::newRow("nested keys are not top-level")
      << R"({"messages":[{"stream":true,"max_tokens":9,"model":"x"}],"max_tokens":3})" << qint64(3) << false
      << false << "";
  QTest::newRow("max_tokens not a number") << R"({"max_tokens":"20"})" << qint64(0) << false << false << "";
  QTest::newRow("max_tokens negative") << R"({"max_tokens":-5})" << qint64(0) << false << false << "";
  QTest::newRow("max_tokens float") << R"({"max_tokens":12.9})" << qint64(12) << false << false << "";
  QTest::newRow("max_tokens huge") << R"({"max_tokens":1e300})" << qint64(kMaxTokensCap) << false << false << "";
  QTest::newRow("model not a string") << R"({"model":["m"]})" << qint64(0) << false << false << "";
  QTest::newRow("model too long") << QString(R"({"model":"%1"})").arg(QString(300, 'm')) << qint64(0) << false
                                  << false << "";
  QTest::newRow("not an object") << R"([{"stream":true}])" << qint64(0) << false << false << "";
  QTest::newRow("truncated") << R"({"stream":true,"max_tokens":5)" << qint64(0) << false << false << "";
  QTest::newRow("too deep") << QString(R"({"stream":true,"a":%1%2})").arg(QString(300, '['), QString(300, ']'))
                            << qint64(0) << false << false << "";
}

void TestSimProtocol::chatBody() {
  QFETCH(QString, body);
  QFETCH(qint64, maxTokens);
  QFETCH(bool, stream);
  QFETCH(bool, includeUsage);
  QFETCH(QString, model);
  const ChatBodyFields f = scanChatBody(body.toStdString());
  QCOMPARE(qint64(f.maxTokens), maxTokens);
  QCOMPARE(f.stream, stream);
  QCOMPARE(f.includeUsage, includeUsage);
  QCOMPARE(QString::fromStdString(f.model), model);
}

void TestSimProtocol::chunkFraming() {
  QCOMPARE(HttpResponseWriter::chunk("data: x\n\n"), std::string("9\r\ndata: x\n\n\r\n"));
  QCOMPARE(HttpResponseWriter::chunk(std::string(300, 'a')), "12c\r\n" + std::string(300, 'a') + "\r\n");
  QVERIFY(HttpResponseWriter::chunk("").empty());  // "0\r\n\r\n" would end the body
  HttpResponseWriter w;
  const std::string head = w.serializeStreamHead(200, {{"X-A", "1"}}, true, false, 1764500000);
  QVERIFY2(head.find("Transfer-Encoding: chunked\r\n") != std::string::npos, head.c_str());
  QVERIFY2(head.find("Content-Type: text/event-stream") != std::string::npos, head.c_str());
  QVERIFY2(head.find("Content-Length") == std::string::npos, head.c_str());
  QVERIFY2(head.find("Connection: close") == std::string::npos, head.c_str());
  QVERIFY(head.size() > 4 && head.compare(head.size() - 4, 4, "\r\n\r\n") == 0);
  const std::string closeDelimited = w.serializeStreamHead(200, {}, false, false, 1764500000);
  QVERIFY2(closeDelimited.find("Transfer-Encoding") == std::string::npos, closeDelimited.c_str());
  QVERIFY2(closeDelimited.find("Connection: close\r\n") != std::string::npos, closeDelimited.c_str());
}

QTEST_GUILESS_MAIN(TestSimProtocol)
#include "test_sim_protocol.moc"
