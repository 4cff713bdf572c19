// The engine against a real tollgate-sim over loopback HTTP.
#include "engine_fixture.h"

#include <QtTest>

#include <cmath>

using namespace tg;
using namespace tgtest;
using nlohmann::json;

namespace {

json simConfig(const std::string& dialect, json groups, json extra = json::object()) {
  json j{{"dialect", dialect},
         {"retry_after", true},
         {"group_by", "header"},
         {"default_group", "g"},
         {"latency_ms", {{"distribution", "fixed"}, {"mean", 2}}},
         {"groups", std::move(groups)}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

json engineConfig(int concurrency, json groupExtra = json::object(), json extra = json::object()) {
  json g{{"name", "g"}, {"base_url", "sim"}, {"concurrency", concurrency}, {"keys", json::array({{{"name", "k1"}}})}};
  for (auto it = groupExtra.begin(); it != groupExtra.end(); ++it) g[it.key()] = it.value();
  json j{{"name", "test"}, {"global_concurrency", 256}, {"groups", json::array({g})}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

// ok/s of each full second in which the sim served anything; the first two (the initial burst) and
// the last are dropped.
std::vector<int> steadyOkPerSecond(const json& history) {
  std::vector<int> ok;
  for (const auto& s : history) ok.push_back(s["ok"].get<int>());
  while (!ok.empty() && ok.front() == 0) ok.erase(ok.begin());
  while (!ok.empty() && ok.back() == 0) ok.pop_back();
  if (ok.size() >= 3) {
    ok.erase(ok.begin(), ok.begin() + 2);
    ok.pop_back();
  }
  return ok;
}

QString describe(const std::vector<int>& v) {
  QStringList s;
  for (int x : v) s << QString::number(x);
  return s.join(",");
}

// An upstream holding 4 requests in flight (100 ms each) and answering bare 429s, 120 requests at concurrency
// 32: the group's concurrency limit becomes 4 and stays there, the breaker never opens, all 120 succeed, and
// the 429s are the first burst's 28 or about that (a few more from tries at a fifth).
void expectInFlightCapOf4(bool refuseAtOnce) {
  EngineUnderTest t(simConfig("none", {{"g", {{"max_concurrent", 4}}}},
                              {{"retry_after", false}, {"refuse_at_once", refuseAtOnce},
                               {"latency_ms", {{"distribution", "fixed"}, {"mean", 100}}}}),
                    engineConfig(32, json::object(), {{"retry", {{"max_attempts", 6}}}}));
  t.submit("g", Tier::P1, 120);
  QTRY_VERIFY_WITH_TIMEOUT(t.group("g") && t.group("g")->concurrencyLimit == 4, 5000);
  QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 120, 20000);
  QCOMPARE(t.collected.ok.load(), 120);
  QCOMPARE(t.collected.countEvents(EventKind::BreakerTransition, "-> open"), 0);
  const json s = t.sim().stats();
  const int r429 = s["totals"]["r429"].get<int>();
  QVERIFY2(r429 >= 20 && r429 <= 28 + 3, qPrintable(QString("429s %1").arg(r429)));
  QCOMPARE(t.group("g")->concurrencyLimit, 4);
}

}  // namespace

class TestEngineSim : public QObject {
  Q_OBJECT
 private slots:
  void rateCeilingPacesSendsOverLoopback() {
    // The upstream would take 1000/s; the operator's ceiling of 20 req/s (from the config) is what goes out,
    // until it is lifted live.
    EngineUnderTest t(simConfig("openai", {{"g", {{"algorithm", "token-bucket"}, {"limit", 1000}, {"window_s", 1}}}}),
                      engineConfig(64, {{"rate_ceiling", {{"requests_per_s", 20}}}}));
    const auto start = std::chrono::steady_clock::now();
    t.submit("g", Tier::P1, 60);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 60, 20000);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(took >= 2.5, qPrintable(QString("60 requests at 20/s took %1 s").arg(took)));
    QCOMPARE(t.collected.ok.load(), 60);
    const auto perSecond = steadyOkPerSecond(t.sim().stats()["groups"]["g"]["history"]);
    for (int v : perSecond) QVERIFY2(v <= 22, qPrintable(QString("per second: %1").arg(describe(perSecond))));
    t.engine().setRateCeiling("g", {});
    const auto lifted = std::chrono::steady_clock::now();
    t.submit("g", Tier::P1, 60, "after");
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 120, 20000);
    QVERIFY(std::chrono::steady_clock::now() - lifted < std::chrono::milliseconds(2000));
    std::lock_guard lock(t.collected.mutex);
    QVERIFY(std::any_of(t.collected.events.begin(), t.collected.events.end(), [](const Event& e) {
      return e.kind == EventKind::OperatorAction && e.detail.value("action", std::string()) == "set_rate_ceiling";
    }));
  }

  // A cold start on a token bucket that another client has just spent, stated as OpenAI states it (remaining 0,
  // reset = until full, a whole-second Retry-After): 64 sent at once are nearly all refused, and each refusal is
  // the stated quota's. The breaker must not open on them (it did: 5 s with nothing sent, on top of the wait
  // the quota stated), and everything gets through as the bucket refills (64 x 20 tokens at 1,000/s).
  void spentTokenQuotaAtAColdStartLeavesTheBreakerClosed() {
    EngineUnderTest t(simConfig("openai", {{"g", {{"algorithm", "token-bucket"}, {"limit", 100000}, {"window_s", 60},
                                                  {"tokens_per_window", 60000}, {"tokens_start_spent", true}}}}),
                      engineConfig(64));
    t.submit("g", Tier::P1, 64);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 64, 20000);
    QCOMPARE(t.collected.ok.load(), 64);
    const int r429 = t.sim().stats()["totals"]["r429"].get<int>();
    QVERIFY2(r429 >= 20, qPrintable(QString("429s %1: the bucket did not start spent").arg(r429)));
    QCOMPARE(t.collected.countEvents(EventKind::BreakerTransition, "-> open"), 0);
  }

  void goodputNearQuotaWithFew429s() {
    // 100 requests/s token bucket; 900 requests arrive at once (9x the quota per second).
    EngineUnderTest t(simConfig("openai", {{"g", {{"algorithm", "token-bucket"}, {"limit", 100}, {"window_s", 1}}}}),
                      engineConfig(32));
    t.submit("g", Tier::P1, 900);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 900, 30000);
    QCOMPARE(t.collected.ok.load(), 900);
    const json s = t.sim().stats();
    const double attempts = s["totals"]["requests"].get<double>();
    const double r429 = s["totals"]["r429"].get<double>();
    QVERIFY2(r429 / attempts < 0.01, qPrintable(QString("429s %1 of %2 attempts").arg(r429).arg(attempts)));
    const auto perSecond = steadyOkPerSecond(s["groups"]["g"]["history"]);
    QVERIFY2(perSecond.size() >= 4, qPrintable(describe(perSecond)));
    double sum = 0;
    for (int v : perSecond) sum += v;
    const double goodput = sum / static_cast<double>(perSecond.size());
    QVERIFY2(goodput >= 95.0, qPrintable(QString("goodput %1/s of 100/s; per second: %2").arg(goodput).arg(describe(perSecond))));
    QVERIFY2(goodput <= 101.0, qPrintable(describe(perSecond)));
    // Token reservations are settled from the responses' usage (the simulator reports total_tokens).
    std::int64_t tokens = 0;
    {
      std::lock_guard lock(t.collected.mutex);
      for (const auto& r : t.collected.results) {
        QVERIFY2(r.tokensUsed > 0 && r.tokensUsed <= 4 + 16, qPrintable(QString::number(r.tokensUsed)));
        tokens += r.tokensUsed;
      }
    }
    QCOMPARE(tokens, s["totals"]["tokens"].get<std::int64_t>());
  }

  void noRequestArrivesBeforeRetryAfter() {
    // The engine knows nothing at first and sends 16 at once into a 5-per-2-s window: the 429s carry
    // Retry-After, and the simulator counts any request that arrives before it ran out.
    EngineUnderTest t(simConfig("x-ratelimit", {{"g", {{"algorithm", "fixed-window"}, {"limit", 5}, {"window_s", 2}}}}),
                      engineConfig(16));
    t.submit("g", Tier::P1, 30);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 30, 30000);
    QCOMPARE(t.collected.ok.load(), 30);
    const json s = t.sim().stats();
    QVERIFY2(s["totals"]["r429"].get<int>() > 0, "the first burst should have met 429s");
    QCOMPARE(s["totals"]["early"].get<int>(), 0);
    QVERIFY(t.collected.countEvents(EventKind::Burst429Start) >= 1);
  }

  void quotaHalvingIsFollowedWithinTwoWindows() {
    EngineUnderTest t(simConfig("openai", {{"g", {{"algorithm", "token-bucket"}, {"limit", 80}, {"window_s", 1}}}}),
                      engineConfig(32));
    t.submit("g", Tier::P1, 1000);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done >= 300, 20000);
    t.sim().scaleQuota("*", 0.5);
    const json before = t.sim().stats();
    const int r429Before = before["totals"]["r429"].get<int>();
    const int reqBefore = before["totals"]["requests"].get<int>();
    const double changedAt = before["uptime_s"].get<double>();
    QTRY_VERIFY_WITH_TIMEOUT(t.sim().stats()["uptime_s"].get<double>() > changedAt + 5, 10000);
    const json after = t.sim().stats();
    // Seconds from two windows after the change on: at most the new quota (40/s) plus rounding.
    std::vector<int> late;
    for (const auto& sec : after["groups"]["g"]["history"])
      if (sec["t"].get<double>() >= std::ceil(changedAt) + 2 && sec["t"].get<double>() < after["uptime_s"].get<double>() - 1)
        late.push_back(sec["ok"].get<int>());
    QVERIFY2(late.size() >= 2, qPrintable(describe(late)));
    for (int v : late) QVERIFY2(v <= 44 && v >= 30, qPrintable(describe(late)));
    const int r429 = after["totals"]["r429"].get<int>() - r429Before;
    const int reqs = after["totals"]["requests"].get<int>() - reqBefore;
    QVERIFY2(r429 <= std::max(5, reqs / 20), qPrintable(QString("%1 429s in %2 requests after the drop").arg(r429).arg(reqs)));
    QVERIFY(t.collected.countEvents(EventKind::QuotaChange) >= 1);
    t.engine().drainGroup("g");
  }

  void pausingP2StopsP2WhileP0Flows() {
    EngineUnderTest t(simConfig("x-ratelimit", {{"g", {{"algorithm", "token-bucket"}, {"limit", 1000}, {"window_s", 1}}}},
                                {{"latency_ms", {{"distribution", "fixed"}, {"mean", 10}}}}),
                      engineConfig(4));
    t.engine().setTierPaused(Tier::P2, true, "g");
    t.submit("g", Tier::P2, 60, "low");
    t.submit("g", Tier::P0, 60, "high");
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.ok == 60, 15000);
    json s = t.sim().stats();
    QCOMPARE(s["groups"]["g"]["tiers"]["P0"]["requests"].get<int>(), 60);
    QCOMPARE(s["groups"]["g"]["tiers"]["P2"]["requests"].get<int>(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(t.group("g") && t.group("g")->queueDepth[2] == 60, 5000);
    QVERIFY(t.group("g")->tierPaused[2]);
    QTRY_VERIFY2_WITH_TIMEOUT(t.group("g")->waitReason.find("P2 paused") != std::string::npos,
                              t.group("g")->waitReason.c_str(), 5000);
    t.engine().setTierPaused(Tier::P2, false, "g");
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.ok == 120, 15000);
    QCOMPARE(t.sim().stats()["groups"]["g"]["tiers"]["P2"]["requests"].get<int>(), 60);
    QCOMPARE(t.collected.countEvents(EventKind::OperatorAction, "pause_tier"), 1);
    QCOMPARE(t.collected.countEvents(EventKind::OperatorAction, "resume_tier"), 1);
  }

  void concurrencyChangeShowsInInFlight() {
    EngineUnderTest t(simConfig("none", {{"g", {{"algorithm", "token-bucket"}, {"limit", 0}, {"window_s", 1}}}},
                                {{"latency_ms", {{"distribution", "fixed"}, {"mean", 300}}}}),
                      engineConfig(2, {{"adaptive", false}}));
    t.submit("g", Tier::P1, 200);
    QTRY_VERIFY_WITH_TIMEOUT(t.group("g") && t.group("g")->inFlight == 2, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(t.sim().stats()["groups"]["g"]["max_concurrent"].get<int>(), 2, 5000);
    t.engine().setGroupConcurrency("g", 9);
    QTRY_VERIFY_WITH_TIMEOUT(t.group("g")->inFlight == 9 && t.group("g")->concurrencyCeiling == 9, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(t.sim().stats()["groups"]["g"]["max_concurrent"].get<int>(), 9, 5000);
    t.engine().drainGroup("g");
  }

  // An upstream that limits requests in flight (4 at once, 100 ms each), not a rate, answering bare 429s. The
  // first 32 sent at once meet 28 refusals; those read as an in-flight limit: the group's concurrency limit
  // becomes 4 and stays there, the breaker does not open on them, and the rest go through without refusals
  // but the one every 5 s that tries a fifth.
  void concurrencyOnlyLimitCapsConcurrency() { expectInFlightCapOf4(false); }

  // The same upstream refusing at once, as a limiter in front of the work does: the 28 refusals are read about
  // 100 ms before the 4 acceptances that show the limit is one of concurrency. They wait for them (the engine
  // holds a refusal briefly while its group's evidence is thin and earlier sends are unanswered); judged on
  // nothing they would read as a rate limit and open the breaker.
  void concurrencyOnlyLimitRefusingAtOnceCapsConcurrency() { expectInFlightCapOf4(true); }

  void breakerOpensAndRecovers() {
    // Everything fails with 503 for the first 1.5 s, then the upstream is healthy again.
    json schedule = json::array({{{"at_s", 0}, {"action", "errors"}, {"status", 503}, {"share", 1.0}, {"duration_s", 1.5}}});
    EngineUnderTest t(simConfig("x-ratelimit", {{"g", {{"algorithm", "token-bucket"}, {"limit", 0}, {"window_s", 1}}}},
                                {{"schedule", schedule}}),
                      engineConfig(8, {{"breaker", {{"window_s", 5}, {"min_calls", 10}, {"failure_share", 0.5},
                                                     {"open_s", 1}, {"half_open_probes", 3}}}},
                                   {{"retry", {{"max_attempts", 10}, {"budget_ratio", 1.0}, {"base_backoff_s", 0.05}}}}));
    t.submit("g", Tier::P1, 150);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.countEvents(EventKind::BreakerTransition, "-> open") >= 1, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.countEvents(EventKind::BreakerTransition, "half-open -> closed") >= 1, 15000);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 150, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(t.group("g")->breaker == BreakerState::Closed, 5000);
    // While open, requests waited in their queue instead of failing.
    QVERIFY2(t.collected.ok >= 140, qPrintable(QString::number(t.collected.ok.load())));
  }

  void deadlinesShedWithAReason() {
    EngineUnderTest t(simConfig("x-ratelimit", {{"g", {{"algorithm", "fixed-window"}, {"limit", 2}, {"window_s", 60}}}}),
                      engineConfig(4, json::object(), {{"tiers", {{"P2", {{"max_wait_s", 0.5}}}}}}));
    t.submit("g", Tier::P2, 10);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 10, 10000);
    int shed = 0;
    {
      std::lock_guard lock(t.collected.mutex);
      for (const auto& r : t.collected.results) {
        if (r.error != ErrorKind::Shed) continue;
        ++shed;
        QVERIFY2(r.errorMessage.find("deadline passed") != std::string::npos, r.errorMessage.c_str());
      }
    }
    QVERIFY2(shed >= 7, qPrintable(QString::number(shed)));
    QTRY_COMPARE_WITH_TIMEOUT(t.group("g")->counters.shed, static_cast<std::uint64_t>(shed), 5000);
    QVERIFY(t.collected.countEvents(EventKind::RequestShed) >= 1);
  }

  void unknownGroupFailsClearly() {
    EngineUnderTest t(simConfig("x-ratelimit", {{"g", {{"limit", 0}}}}), engineConfig(2));
    t.submit("nope", Tier::P1, 1);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 1, 5000);
    std::lock_guard lock(t.collected.mutex);
    QCOMPARE(t.collected.results[0].error, ErrorKind::Config);
    QVERIFY(t.collected.results[0].errorMessage.find("nope") != std::string::npos);
  }

  void keysAreSpreadAndNeverLeak() {
    // Two keys, each with its own 10/s quota on the simulator: both carry load.
    json simJson = simConfig("openai", {{"g", {{"algorithm", "token-bucket"}, {"limit", 10}, {"window_s", 1}, {"per_key", true}}}});
    json ej = engineConfig(8);
    ej["groups"][0]["keys"] = json::array({{{"name", "alpha"}}, {{"name", "beta"}}});
    EngineUnderTest t(simJson, ej);
    t.submit("g", Tier::P1, 60);
    QTRY_VERIFY_WITH_TIMEOUT(t.collected.done == 60, 20000);
    const json keys = t.sim().stats()["groups"]["g"]["keys"];
    QCOMPARE(static_cast<int>(keys.size()), 2);
    for (auto it = keys.begin(); it != keys.end(); ++it) {
      QVERIFY2(it.value()["ok"].get<int>() >= 20, it.value().dump().c_str());
      QVERIFY(it.key().find("sim-") == std::string::npos);  // the simulator shows fingerprints only
    }
    std::lock_guard lock(t.collected.mutex);
    for (const auto& e : t.collected.events) {
      const std::string all = e.message + e.detail.dump();
      QVERIFY2(all.find("sim-alpha") == std::string::npos && all.find("sim-beta") == std::string::npos, all.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestEngineSim)
#include "test_engine_sim.moc"
