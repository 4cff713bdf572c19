// The simulator's limiter kinds as real upstreams have them, driven through SimResponder with hand-set time:
// nginx limit_req's leaky bucket (nodelay and delayed), a window that counts refused requests too, a
// concurrency-only limit, and the "retry-after" dialect (Retry-After and no quota headers).
#include "config_error.h"
#include "sim_config.h"
#include "sim_responder.h"

#include <QtTest>

using namespace tg;

namespace {
const TimePoint t0 = TimePoint{} + std::chrono::hours(1);
TimePoint at(double s) { return t0 + fromSeconds(s); }

SimConfig configFrom(const char* text) { return SimConfig::fromJson(nlohmann::json::parse(text), "test.json"); }

HttpRequest get() {
  HttpRequest r;
  r.method = "GET";
  r.target = "/v1/x";
  return r;
}

int statusOf(const SimReply& r) { return std::stoi(r.bytes.substr(9, 3)); }
bool hasHeader(const SimReply& r, const std::string& nameColon) {
  const auto head = r.bytes.substr(0, r.bytes.find("\r\n\r\n") + 2);
  return head.find("\r\n" + nameColon) != std::string::npos;
}
}  // namespace

class TestSimLimiterKinds : public QObject {
  Q_OBJECT
 private slots:
  void leakyBucketNodelayAdmitsBurstPlusOne();
  void leakyBucketDelaysTheExcess();
  void countRejectedLocksOutAClientThatKeepsAsking();
  void concurrencyLimitCountsAcceptedInFlight();
  void scaleQuotaScalesTheConcurrencyLimit();
  void retryAfterDialectSendsNothingElse();
  void configErrorsNameTheField_data();
  void configErrorsNameTheField();
};

void TestSimLimiterKinds::leakyBucketNodelayAdmitsBurstPlusOne() {
  // nginx: rate=50r/s burst=10 nodelay. 11 at once pass (one served plus 10 of excess), the 12th is refused,
  // and one more passes every 20 ms after.
  SimResponder sim(configFrom(R"({"dialect":"none","groups":{"default":{"algorithm":"leaky-bucket","limit":50,
      "window_s":1,"burst":10,"nodelay":true}}})"), t0);
  for (int i = 0; i < 11; ++i) {
    const auto r = sim.handle(get(), at(0), 0);
    QCOMPARE(statusOf(r), 200);
    QCOMPARE(r.delayS, 0.0);
  }
  const auto refused = sim.handle(get(), at(0.001), 0);
  QCOMPARE(statusOf(refused), 429);
  QVERIFY(!hasHeader(refused, "Retry-After:"));
  QVERIFY(!hasHeader(refused, "X-RateLimit-Remaining"));
  QCOMPARE(statusOf(sim.handle(get(), at(0.021), 0)), 200);
  QCOMPARE(statusOf(sim.handle(get(), at(0.022), 0)), 429);
  // Refused requests cost nothing: a client asking every millisecond still gets the rate (one per 20 ms).
  int ok = 0;
  for (int i = 0; i < 200; ++i) ok += statusOf(sim.handle(get(), at(0.023 + i * 0.001), 0)) == 200;
  QVERIFY2(ok >= 9 && ok <= 11, qPrintable(QString::number(ok)));
  // After a quarter second of quiet the burst is there again.
  for (int i = 0; i < 11; ++i) QCOMPARE(statusOf(sim.handle(get(), at(0.5), 0)), 200);
  QCOMPARE(statusOf(sim.handle(get(), at(0.5), 0)), 429);
}

void TestSimLimiterKinds::leakyBucketDelaysTheExcess() {
  // Without nodelay nginx holds each request of excess until its turn: the i-th of a burst is answered
  // i intervals later, so accepted requests leave at the rate.
  SimResponder sim(configFrom(R"({"dialect":"none","groups":{"default":{"algorithm":"leaky-bucket","limit":50,
      "window_s":1,"burst":10}}})"), t0);
  for (int i = 0; i < 11; ++i) {
    const auto r = sim.handle(get(), at(0), 0);
    QCOMPARE(statusOf(r), 200);
    QVERIFY2(std::abs(r.delayS - 0.02 * i) < 1e-6, qPrintable(QString("request %1 delayed %2 s").arg(i).arg(r.delayS)));
  }
  QCOMPARE(statusOf(sim.handle(get(), at(0), 0)), 429);
}

void TestSimLimiterKinds::countRejectedLocksOutAClientThatKeepsAsking() {
  const char* base = R"({"dialect":"none","groups":{"default":{"algorithm":"sliding-window","limit":10,
      "window_s":1%1}}})";
  SimResponder counting(configFrom(QString(base).arg(R"(,"count_rejected":true)").toUtf8().constData()), t0);
  SimResponder plain(configFrom(QString(base).arg("").toUtf8().constData()), t0);
  for (int i = 0; i < 10; ++i) {
    QCOMPARE(statusOf(counting.handle(get(), at(0), 0)), 200);
    QCOMPARE(statusOf(plain.handle(get(), at(0), 0)), 200);
  }
  // A client asking every 50 ms: the plain window lets some through once the first window's weight fades,
  // the counting one never does while the asking goes on.
  int plainOk = 0, countingOk = 0;
  for (int i = 1; i <= 60; ++i) {
    countingOk += statusOf(counting.handle(get(), at(i * 0.05), 0)) == 200;
    plainOk += statusOf(plain.handle(get(), at(i * 0.05), 0)) == 200;
  }
  QCOMPARE(countingOk, 0);
  QVERIFY2(plainOk >= 10, qPrintable(QString::number(plainOk)));
  // Once the client stays away for two windows, it is served again.
  QCOMPARE(statusOf(counting.handle(get(), at(5.1), 0)), 200);
}

void TestSimLimiterKinds::concurrencyLimitCountsAcceptedInFlight() {
  SimResponder sim(configFrom(R"({"dialect":"retry-after","latency_ms":{"mean":100},
      "groups":{"default":{"max_concurrent":2}}})"), t0);
  const auto a = sim.handle(get(), at(0), 0);
  const auto b = sim.handle(get(), at(0), 0);
  QCOMPARE(statusOf(a), 200);
  QCOMPARE(statusOf(b), 200);
  const auto c = sim.handle(get(), at(0.01), 0);
  QCOMPARE(statusOf(c), 429);
  QVERIFY2(hasHeader(c, "Retry-After: 1\r\n"), c.bytes.c_str());
  sim.onSent(c, at(0.01));  // a refusal holds no slot
  QCOMPARE(statusOf(sim.handle(get(), at(0.02), 0)), 429);
  sim.onSent(a, at(0.1));
  const auto d = sim.handle(get(), at(0.1), 0);
  QCOMPARE(statusOf(d), 200);
  sim.onDropped(b);  // a dropped connection frees its slot too
  QCOMPARE(statusOf(sim.handle(get(), at(0.11), 0)), 200);
  const auto stats = sim.stats(at(0.2));
  QCOMPARE(stats["groups"]["default"]["concurrency_limit"].get<int>(), 2);
  QCOMPARE(stats["groups"]["default"]["admitted_in_flight"].get<int>(), 2);
}

// scale_quota moves a concurrency-only limit as it moves a rate (limiter_matrix halves and doubles it): the
// requests admitted over a lowered limit finish, and a new one is admitted once fewer than it are in flight.
void TestSimLimiterKinds::scaleQuotaScalesTheConcurrencyLimit() {
  SimResponder sim(configFrom(R"({"dialect":"retry-after","latency_ms":{"mean":100},
      "groups":{"default":{"max_concurrent":4}}})"), t0);
  std::vector<SimReply> admitted;
  for (int i = 0; i < 4; ++i) admitted.push_back(sim.handle(get(), at(0), 0));
  for (const auto& r : admitted) QCOMPARE(statusOf(r), 200);
  sim.scaleQuota("*", 0.5, at(0.05));
  QCOMPARE(sim.stats(at(0.05))["groups"]["default"]["concurrency_limit"].get<int>(), 2);
  QCOMPARE(statusOf(sim.handle(get(), at(0.05), 0)), 429);
  sim.onSent(admitted[0], at(0.1));
  sim.onSent(admitted[1], at(0.1));
  QCOMPARE(statusOf(sim.handle(get(), at(0.1), 0)), 429);  // 2 in flight of 2
  sim.onSent(admitted[2], at(0.1));
  const auto under = sim.handle(get(), at(0.1), 0);
  QCOMPARE(statusOf(under), 200);
  sim.scaleQuota("*", 1.5, at(0.2));  // 6 (of the configured 4)
  for (int i = 0; i < 4; ++i) QCOMPARE(statusOf(sim.handle(get(), at(0.2), 0)), 200);
  QCOMPARE(statusOf(sim.handle(get(), at(0.2), 0)), 429);  // 6 in flight
  sim.setLimit("default", 10, at(0.3));  // a rate added keeps the concurrency where the scale left it
  QCOMPARE(sim.stats(at(0.3))["groups"]["default"]["concurrency_limit"].get<int>(), 6);
}

void TestSimLimiterKinds::retryAfterDialectSendsNothingElse() {
  SimResponder sim(configFrom(R"({"dialect":"retry-after","groups":{"default":{"algorithm":"fixed-window",
      "limit":2,"window_s":1}}})"), t0);
  const auto ok = sim.handle(get(), at(0), 0);
  QCOMPARE(statusOf(ok), 200);
  QVERIFY(!hasHeader(ok, "X-RateLimit-Remaining"));
  QVERIFY(!hasHeader(ok, "RateLimit-Remaining"));
  sim.handle(get(), at(0), 0);
  const auto refused = sim.handle(get(), at(0.5), 0);
  QCOMPARE(statusOf(refused), 429);
  QVERIFY(hasHeader(refused, "Retry-After: 1\r\n"));
  QVERIFY(!hasHeader(refused, "X-RateLimit-Remaining"));
}

void TestSimLimiterKinds::configErrorsNameTheField_data() {
  QTest::addColumn<QString>("config");
  QTest::addColumn<QString>("path");
  QTest::newRow("nodelay on a window") << R"({"groups":{"g":{"limit":5,"nodelay":true}}})" << "/groups/g/nodelay";
  QTest::newRow("count_rejected on a bucket")
      << R"({"groups":{"g":{"algorithm":"token-bucket","limit":5,"count_rejected":true}}})"
      << "/groups/g/count_rejected";
  QTest::newRow("fractional max_concurrent") << R"({"groups":{"g":{"max_concurrent":2.5}}})"
                                             << "/groups/g/max_concurrent";
  QTest::newRow("retry-after dialect without it") << R"({"dialect":"retry-after","retry_after":false})"
                                                  << "/retry_after";
}

void TestSimLimiterKinds::configErrorsNameTheField() {
  QFETCH(QString, config);
  QFETCH(QString, path);
  try {
    configFrom(config.toUtf8().constData());
    QFAIL("accepted");
  } catch (const ConfigError& e) {
    QVERIFY2(QString(e.what()).contains(path), e.what());
  }
}

QTEST_GUILESS_MAIN(TestSimLimiterKinds)
#include "test_sim_limiter_kinds.moc"
