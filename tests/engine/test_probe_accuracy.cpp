// tollgate probe's limits: first the measures on hand-made outcomes (a fixed window's refills, a bucket's
// burst, requests in flight against a rate), then the whole probe over loopback against three simulator
// limiter kinds, asserting soft and hard within 10% of the configured limit. (bench/probe_accuracy measures
// every kind x answer and nginx; this keeps the behaviour from drifting.)
#include "probe.h"
#include "raw_http_server.h"
#include "sim_config.h"
#include "sim_server.h"

#include <QtTest>

#include <nlohmann/json.hpp>

using namespace tg;

namespace {

// Open loop at `rate` for `seconds`; `answer(i, sentS)` gives each request's status, `latencyS` its time.
template <typename Answer>
std::vector<ProbeOutcome> schedule(double rate, double seconds, double latencyS, Answer answer) {
  std::vector<ProbeOutcome> out;
  for (long i = 0; i < static_cast<long>(rate * seconds); ++i) {
    const double t = static_cast<double>(i) / rate;
    out.push_back({t, t + latencyS, answer(i, t), {}});
  }
  return out;
}

QString describe(const ProbeReport& r) { return QString::fromStdString(formatProbeTable(r)); }

// The probe of group "g" on an upstream listening on loopback `port`: these rates, step length and bisections.
ProbeOptions probeOf(int port, std::vector<double> rates, double stepS, int refineSteps) {
  ProbeOptions o;
  o.baseUrl = "http://127.0.0.1:" + std::to_string(port);
  o.group = "g";
  o.rates = std::move(rates);
  o.stepS = stepS;
  o.refineSteps = refineSteps;
  return o;
}

}  // namespace

class TestProbeAccuracy : public QObject {
  Q_OBJECT
 private slots:
  void sustainedRateOfAFixedWindowIsWholeWindows();
  void sustainedRateLeavesABucketsBurstOut();
  void steadyHalfJudgesCleanliness();
  void inFlightLimitSeparatesFromARateLimit();
  void softLimitIsNoHigherThanTheSustainedRate();
  void aLockoutsTrickleIsNotTheLimit();
  void probeFindsTheLimitOfEachKind_data();
  void probeFindsTheLimitOfEachKind();
  void probeWaitsWhatTheUpstreamAsksAndCapsEachStep();
  void probeSendsTheMethodAndBodyAsked();
  void probeRisesPastAShareBelowItsStop429();
};

void TestProbeAccuracy::sustainedRateOfAFixedWindowIsWholeWindows() {
  // 100/s offered at a window of 50 per second that turns at 0.3 s: each window accepts its first 50 and
  // refuses the rest. Counted over the whole 5 s step the phase makes it 60/s; between refills, 50/s.
  std::map<int, int> used;
  const auto outcomes = schedule(100, 5, 0.02, [&](long, double t) {
    const int window = static_cast<int>(std::floor(t + 0.7));
    return ++used[window] <= 50 ? 200 : 429;
  });
  const ProbeStep s = summarizeProbeStep(100, 5, outcomes);
  QCOMPARE(s.sent, 500L);
  QVERIFY2(std::abs(s.okPerS() - 50) > 5, qPrintable(QString::number(s.okPerS())));  // what the old probe reported
  QVERIFY2(std::abs(s.sustainedPerS - 50) < 0.5, qPrintable(QString::number(s.sustainedPerS)));
}

void TestProbeAccuracy::sustainedRateLeavesABucketsBurstOut() {
  // A bucket of 50 refilling 50/s, offered 80/s for 4 s: 50 + 4 x 50 = 250 accepted of 320.
  double tokens = 50, last = 0;
  const auto outcomes = schedule(80, 4, 0.02, [&](long, double t) {
    tokens = std::min(50.0, tokens + (t - last) * 50);
    last = t;
    if (tokens < 1) return 429;
    tokens -= 1;
    return 200;
  });
  const ProbeStep s = summarizeProbeStep(80, 4, outcomes);
  QVERIFY2(s.okPerS() > 60, qPrintable(QString::number(s.okPerS())));  // the burst inflates the whole step
  QVERIFY2(std::abs(s.sustainedPerS - 50) < 2.5, qPrintable(QString::number(s.sustainedPerS)));
  // Shuffled outcomes (answers come back in any order) measure the same.
  auto shuffled = outcomes;
  std::reverse(shuffled.begin(), shuffled.end());
  QCOMPARE(summarizeProbeStep(80, 4, shuffled).sustainedPerS, s.sustainedPerS);
}

void TestProbeAccuracy::steadyHalfJudgesCleanliness() {
  // Refusals only in the first second (the last step's refusals still counted by the limiter): clean.
  const ProbeStep spill = summarizeProbeStep(40, 4, schedule(40, 4, 0.02, [](long, double t) { return t < 1 ? 429 : 200; }));
  QVERIFY(spill.share429() > 0.2);
  QVERIFY(spill.clean());
  // Refusals only in the last second (a burst spent): not clean.
  const ProbeStep spent = summarizeProbeStep(40, 4, schedule(40, 4, 0.02, [](long, double t) { return t >= 3 ? 429 : 200; }));
  QVERIFY(!spent.clean());
  // Other answers do not make a step unclean, nor do they count as refusals.
  const ProbeStep errors = summarizeProbeStep(40, 4, schedule(40, 4, 0.02, [](long i, double) { return i % 10 ? 200 : 503; }));
  QVERIFY(errors.clean());
  QCOMPARE(errors.r429, 0L);
  QCOMPARE(errors.other, 16L);
}

void TestProbeAccuracy::inFlightLimitSeparatesFromARateLimit() {
  const double latency = 0.16;
  // At most 8 accepted in flight, 160 ms each: 50/s. A clean step at 40/s, an overloaded one at 80/s.
  auto concurrency = [&](double rate) {
    std::vector<double> busyUntil;
    return schedule(rate, 3, latency, [&](long, double t) {
      std::erase_if(busyUntil, [t](double u) { return u <= t; });
      if (busyUntil.size() >= 8) return 429;
      busyUntil.push_back(t + latency);
      return 200;
    });
  };
  std::vector<ProbeStep> steps{summarizeProbeStep(40, 3, concurrency(40)), summarizeProbeStep(80, 3, concurrency(80))};
  QCOMPARE(inFlightLimitOf(steps), 8);
  QVERIFY2(std::abs(steps[1].sustainedPerS - 50) < 3, qPrintable(QString::number(steps[1].sustainedPerS)));

  // A bucket of 50/s at the same latency: refusals come whatever is in flight.
  auto bucket = [&](double rate) {
    double tokens = 5, last = 0;
    return schedule(rate, 3, latency, [&](long, double t) {
      tokens = std::min(5.0, tokens + (t - last) * 50);
      last = t;
      if (tokens < 1) return 429;
      tokens -= 1;
      return 200;
    });
  };
  QCOMPARE(inFlightLimitOf({summarizeProbeStep(40, 3, bucket(40)), summarizeProbeStep(80, 3, bucket(80))}), 0);

  // A queue (nginx limit_req without nodelay): refusals when 8 are held, but held because they wait their
  // turn. Accepted latency grows under overload: the rate binds, not the count.
  std::vector<ProbeStep> queue{summarizeProbeStep(40, 3, concurrency(40)), summarizeProbeStep(80, 3, concurrency(80))};
  queue[1].latencyS = 4 * queue[0].latencyS;
  QCOMPARE(inFlightLimitOf(queue), 0);
}

void TestProbeAccuracy::softLimitIsNoHigherThanTheSustainedRate() {
  // A step at 60/s ran clean on a bucket's burst; the overloaded one measured 50/s sustained.
  ProbeReport r;
  r.steps.push_back(summarizeProbeStep(40, 3, schedule(40, 3, 0.02, [](long, double) { return 200; })));
  r.steps.push_back(summarizeProbeStep(60, 3, schedule(60, 3, 0.02, [](long, double) { return 200; })));
  ProbeStep over = summarizeProbeStep(80, 3, schedule(80, 3, 0.02, [](long i, double) { return i % 8 < 5 ? 200 : 429; }));
  QVERIFY2(std::abs(over.sustainedPerS - 50) < 1, qPrintable(QString::number(over.sustainedPerS)));
  r.steps.push_back(over);
  concludeProbe(r);
  QVERIFY2(std::abs(r.softLimit - over.sustainedPerS) < 1e-9, qPrintable(describe(r)));
  QCOMPARE(r.hardLimit, over.sustainedPerS);
  QCOMPARE(r.inFlightLimit, 0);
  QVERIFY(QString::fromStdString(r.measured).startsWith("request rate"));
}

void TestProbeAccuracy::aLockoutsTrickleIsNotTheLimit() {
  // A window that counts refused requests locks out a client offering 320/s, letting one in 20 through; 160/s
  // ran clean. The trickle is no limit: soft and hard are the clean rate.
  ProbeReport r;
  r.steps.push_back(summarizeProbeStep(160, 3, schedule(160, 3, 0.02, [](long, double) { return 200; })));
  const ProbeStep locked = summarizeProbeStep(320, 3, schedule(320, 3, 0.02, [](long i, double) { return i % 20 ? 429 : 200; }));
  QVERIFY2(locked.sustainedPerS > 10 && locked.sustainedPerS < 20, qPrintable(QString::number(locked.sustainedPerS)));
  r.steps.push_back(locked);
  concludeProbe(r);
  QVERIFY2(std::abs(r.softLimit - 160) < 1e-9, qPrintable(describe(r)));
  QVERIFY2(std::abs(r.hardLimit - 160) < 1e-9, qPrintable(describe(r)));
  QCOMPARE(probeCeiling(r.steps), 0.0);
}

void TestProbeAccuracy::probeFindsTheLimitOfEachKind_data() {
  QTest::addColumn<QString>("sim");
  QTest::addColumn<int>("inFlight");
  // Each 40 requests/s: a token bucket with a small burst (bare 429s), nginx's leaky bucket with nodelay
  // (Retry-After only), and 8 in flight at 200 ms each (no rate limit at all).
  QTest::newRow("token bucket, bare")
      << R"({"dialect":"none","retry_after":false,"latency_ms":{"mean":20},
            "groups":{"g":{"algorithm":"token-bucket","limit":40,"window_s":1,"burst":10}}})" << 0;
  QTest::newRow("leaky bucket nodelay, Retry-After")
      << R"({"dialect":"retry-after","latency_ms":{"mean":20},
            "groups":{"g":{"algorithm":"leaky-bucket","limit":40,"window_s":1,"burst":8,"nodelay":true}}})" << 0;
  QTest::newRow("8 in flight, bare")
      << R"({"dialect":"none","retry_after":false,"latency_ms":{"mean":200},
            "groups":{"g":{"max_concurrent":8}}})" << 8;
}

void TestProbeAccuracy::probeFindsTheLimitOfEachKind() {
  QFETCH(QString, sim);
  QFETCH(int, inFlight);
  SimServer server(SimConfig::fromJson(nlohmann::json::parse(sim.toStdString()), "test.json"));
  const ProbeReport r = runProbe(probeOf(server.start("127.0.0.1", 0), {20, 80}, 1.5, 3));
  const double limit = 40;
  QVERIFY2(std::abs(r.softLimit - limit) <= 0.1 * limit, qPrintable(describe(r)));
  QVERIFY2(std::abs(r.hardLimit - limit) <= 0.1 * limit, qPrintable(describe(r)));
  QVERIFY2(r.inFlightLimit == inFlight, qPrintable(describe(r)));
  QVERIFY2(r.sent() < 600, qPrintable(describe(r)));  // bounded cost: 2 rising and 3 bisection steps
}

void TestProbeAccuracy::probeWaitsWhatTheUpstreamAsksAndCapsEachStep() {
  // A fixed window of 15 per 5 s, answering an overflow with a whole-second Retry-After and nothing else. The 10/s
  // step takes 10; the 80/s step, capped at 30 requests (0.4 s), gets 5 and then Retry-After 4-5 (the window turns
  // 5 s after it began). The bisection after it waits that out (4-5 s, not the 1-s cool-down of a bare 429) and
  // gets the whole new window. The 160/s step after the refused one is never sent: the rise stops there.
  SimServer server(SimConfig::fromJson(nlohmann::json::parse(R"({"dialect":"retry-after","latency_ms":{"mean":5},
      "groups":{"g":{"algorithm":"fixed-window","limit":15,"window_s":5}}})"), "test.json"));
  ProbeOptions o = probeOf(server.start("127.0.0.1", 0), {10, 80, 160}, 1, 1);
  o.maxPerStep = 30;
  const ProbeReport r = runProbe(o);
  QVERIFY2(r.steps.size() == 3, qPrintable(describe(r)));
  QVERIFY2(r.stopped.find("at 80.0 req/s passed --stop-429 10.0%") != std::string::npos, qPrintable(describe(r)));
  QVERIFY2(r.steps[0].sent == 10 && r.steps[0].r429 == 0, qPrintable(describe(r)));
  QVERIFY2(r.steps[1].sent == 30 && r.steps[1].seconds < 0.6, qPrintable(describe(r)));  // the cap, not 80 in 1 s
  QVERIFY2(r.steps[1].ok == 5 && r.steps[1].r429 == 25, qPrintable(describe(r)));
  QVERIFY2(r.steps[2].refine && r.steps[2].waitedS > 2.5 && r.steps[2].waitedS < 5.5, qPrintable(describe(r)));
  QVERIFY2(r.steps[2].ok == 15, qPrintable(describe(r)));  // sent into the new window: all of it (none before)
}

void TestProbeAccuracy::probeRisesPastAShareBelowItsStop429() {
  // The same window with --stop-429 0.9: the 80/s step's 25 of 30 refused (83%) do not stop the rise; the 160/s step
  // is sent after the Retry-After (a new window: 15 of 30 refused) and the rates run out. No step passed the
  // threshold, so there is no bisection, and the report says so rather than "every rate passed".
  SimServer server(SimConfig::fromJson(nlohmann::json::parse(R"({"dialect":"retry-after","latency_ms":{"mean":5},
      "groups":{"g":{"algorithm":"fixed-window","limit":15,"window_s":5}}})"), "test.json"));
  ProbeOptions o = probeOf(server.start("127.0.0.1", 0), {10, 80, 160}, 1, 1);
  o.maxPerStep = 30;
  o.stop429 = 0.9;
  const ProbeReport r = runProbe(o);
  QVERIFY2(r.steps.size() == 3, qPrintable(describe(r)));
  QVERIFY2(r.steps[1].rate == 80 && r.steps[1].share429() > 0.8, qPrintable(describe(r)));
  QVERIFY2(!r.steps[2].refine && r.steps[2].rate == 160 && r.steps[2].sent == 30, qPrintable(describe(r)));
  QVERIFY2(r.stopped.find("no step's 429 share passed --stop-429 90.0% (at most 83.3%, at 80.0 req/s)") !=
               std::string::npos,
           qPrintable(describe(r)));
}

void TestProbeAccuracy::probeSendsTheMethodAndBodyAsked() {
  // What goes over the wire, read by a raw loopback server: the method, the path, the body with its type; and
  // no body for a GET.
  auto probeOnce = [](const std::string& method, const std::string& body) {
    tgtest::RawHttpServer server;
    ProbeOptions o = probeOf(server.port(), {4}, 0.5, 0);
    o.path = "/v1/things";
    o.method = method;
    o.body = body;
    runProbe(o);
    const auto got = server.received();
    return got.empty() ? std::string() : got.front().raw;
  };
  const std::string put = probeOnce("PUT", R"({"input":"probe"})");
  QVERIFY2(put.starts_with("PUT /v1/things HTTP/1.1\r\n"), put.c_str());
  QVERIFY2(put.find("\r\n\r\n{\"input\":\"probe\"}") != std::string::npos, put.c_str());
  QVERIFY2(put.find("Content-Type: application/json") != std::string::npos, put.c_str());
  const std::string get = probeOnce("GET", R"({"input":"probe"})");
  QVERIFY2(get.starts_with("GET /v1/things HTTP/1.1\r\n"), get.c_str());
  QVERIFY2(get.find("probe\"}") == std::string::npos, get.c_str());
}

QTEST_GUILESS_MAIN(TestProbeAccuracy)
#include "test_probe_accuracy.moc"
