// The scheduler with time driven by hand (including time going backwards) and no HTTP: admission, tier
// order, deadlines, retries and the retry budget, Retry-After (0 included), the breaker and the quota picture.
#include "group_state.h"
#include "log.h"
#include "scheduler_harness.h"
#include "secret.h"

using namespace tgtest;

class TestScheduler : public QObject {
  Q_OBJECT
 private slots:
  void higherTierGoesFirst() {
    Harness h;
    h.admit("low", Tier::P2);
    h.admit("mid", Tier::P1);
    h.admit("high", Tier::P0);
    QCOMPARE(h.dispatch(t0), 1);  // concurrency 1
    QCOMPARE(h.sent.back().url, std::string("http://127.0.0.1:9/v1/x"));
    h.respond(200, {}, t0 + 10ms);
    QCOMPARE(h.results.at("high").status, 200);
    QCOMPARE(h.dispatch(t0 + 10ms), 1);
    h.respond(200, {}, t0 + 20ms);
    QVERIFY(h.results.count("mid"));
    QVERIFY(!h.results.count("low"));
    QCOMPARE(h.dispatch(t0 + 20ms), 1);
    h.respond(200, {}, t0 + 30ms);
    QCOMPARE(h.results.at("low").error, ErrorKind::None);
    QCOMPARE(h.group(t0 + 30ms).counters.completed, std::uint64_t{3});
  }

  void headersCarryTierGroupAndAuth() {
    EngineConfig c = config();
    c.groups[0].keys[0].secret = "sk-test-secret";
    Harness h(c);
    h.admit("a", Tier::P0);
    QCOMPARE(h.dispatch(t0), 1);
    const auto& lines = *h.sent.back().headerLines;
    QVERIFY(std::find(lines.begin(), lines.end(), "Authorization: Bearer sk-test-secret") != lines.end());
    QVERIFY(std::find(lines.begin(), lines.end(), "X-Tollgate-Tier: P0") != lines.end());
    QVERIFY(std::find(lines.begin(), lines.end(), "X-RateLimit-Group: g") != lines.end());
    QVERIFY(h.sent.back().cacheableHeaders);
  }

  // Pass-through: a request with the client's own key goes with that key alone (no key of the group's beside
  // it), and each own key has a quota picture of its own, shown by fingerprint.
  void ownKeysGoAloneWithAQuotaOfTheirOwn() {
    EngineConfig c = config();
    c.groups[0].keys[0].secret = "sk-group-secret";
    c.groups[0].concurrency = 4;
    c.tiers[1].capacity = 10;
    Harness h(c);
    std::vector<AttemptRecord> attempts;
    h.listeners.addAttempt([&](const AttemptRecord& a) { attempts.push_back(a); });
    h.admitOwn("a", "sk-client-A-0001");
    QCOMPARE(h.dispatch(t0), 1);
    const auto& lines = *h.sent.back().headerLines;
    QCOMPARE(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("Authorization:", 0) == 0; }), 1L);
    QVERIFY(std::find(lines.begin(), lines.end(), "Authorization: Bearer sk-client-A-0001") != lines.end());
    h.respond(429, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "30"}},
              t0 + 10ms);  // client A's key is held for 30 s...
    QVERIFY(!h.results.count("a"));
    h.client = "svc-b";
    h.admitOwn("b", "sk-client-B-0002", t0 + 20ms);  // ...client B's is not
    h.client.clear();
    QCOMPARE(h.dispatch(t0 + 20ms), 1);
    QVERIFY(std::find(h.sent.back().headerLines->begin(), h.sent.back().headerLines->end(),
                      "Authorization: Bearer sk-client-B-0002") != h.sent.back().headerLines->end());
    h.respond(200, {}, t0 + 30ms);
    QCOMPARE(h.results.at("b").status, 200);
    // History names the client's key by fingerprint and the client as the gateway named it.
    QCOMPARE(attempts.size(), std::size_t{2});
    QCOMPARE(attempts[1].keyFingerprint, keyFingerprint("sk-client-B-0002"));
    QCOMPARE(attempts[1].client, std::string("svc-b"));
    h.admit("g1", Tier::P1, 0, t0 + 40ms);  // the group's key is not held either, and carries the group's key
    QCOMPARE(h.dispatch(t0 + 40ms), 1);
    QVERIFY(std::find(h.sent.back().headerLines->begin(), h.sent.back().headerLines->end(),
                      "Authorization: Bearer sk-group-secret") != h.sent.back().headerLines->end());
    h.respond(200, {}, t0 + 50ms);
    h.admitOwn("a2", "sk-client-A-0001", t0 + 60ms);  // client A again: still held
    QCOMPARE(h.dispatch(t0 + 60ms), 0);
    const GroupSnapshot g = h.group(t0 + 60ms);
    QCOMPARE(g.keyStates.size(), std::size_t{3});
    QCOMPARE(g.keyStates[1].fingerprint, keyFingerprint("sk-client-A-0001"));
    QCOMPARE(g.keyStates[2].fingerprint, keyFingerprint("sk-client-B-0002"));
    // After the wait both of A's requests go, with A's key.
    QCOMPARE(h.dispatch(t0 + 31s), 2);
    for (std::size_t i = h.sent.size() - 2; i < h.sent.size(); ++i)
      QVERIFY(std::find(h.sent[i].headerLines->begin(), h.sent[i].headerLines->end(),
                        "Authorization: Bearer sk-client-A-0001") != h.sent[i].headerLines->end());
    // The client's key is redacted while the engine tracks it.
    QVERIFY(SecretRegistry::redact("echo sk-client-A-0001").find("sk-client") == std::string::npos);
  }

  // Own keys are bounded per group: past the limit a new key takes over the slot idle the longest (and its
  // secret is no longer held for redaction); with every slot busy a new key is shed, not tracked.
  void ownKeySlotsAreBoundedAndReused() {
    EngineConfig c = config();
    c.groups[0].concurrency = 1;
    c.tiers[1].capacity = 1000;
    Harness h(c);
    auto key = [](int i) { return "sk-client-" + std::to_string(10000 + i); };
    for (int i = 0; i < GroupState::kMaxOwnKeys; ++i) {
      const TimePoint at = t0 + std::chrono::milliseconds(i);
      h.admitOwn("r" + std::to_string(i), key(i), at);
      QCOMPARE(h.dispatch(at), 1);
      h.respond(200, {}, at);
    }
    QCOMPARE(h.group(t0 + 1s).keyStates.size(), std::size_t{1 + GroupState::kMaxOwnKeys});
    h.admitOwn("new", "sk-client-new-1", t0 + 1s);  // takes over key(0)'s slot, the oldest
    QCOMPARE(h.group(t0 + 1s).keyStates.size(), std::size_t{1 + GroupState::kMaxOwnKeys});
    QCOMPARE(h.group(t0 + 1s).keyStates[1].fingerprint, keyFingerprint("sk-client-new-1"));
    QVERIFY(SecretRegistry::redact(key(0)).find("sk-client") != std::string::npos);  // no longer held
    QVERIFY(SecretRegistry::redact(key(1)).find("sk-client") == std::string::npos);
    // Fill every slot with a queued request (concurrency 1: "new" holds the only send), then one more key.
    for (int i = 1; i < GroupState::kMaxOwnKeys; ++i) h.admitOwn("q" + std::to_string(i), key(i), t0 + 2s);
    h.admitOwn("over", "sk-client-over-1", t0 + 2s);
    QCOMPARE(h.results.at("over").error, ErrorKind::Shed);
    QVERIFY(h.results.at("over").errorMessage.find("own keys") != std::string::npos);
  }

  void refusedRequestsAreAnsweredAtOnce() {
    Harness h;
    h.admit("nogroup", Tier::P1, 0, t0, "nope");
    h.admit("elsewhere", Tier::P1, 0, t0, "g", "http://evil.example/steal");
    h.admit("a", Tier::P1);
    h.admit("b", Tier::P1);
    h.admit("c", Tier::P1);  // P1 capacity is 2
    QCOMPARE(h.results.at("nogroup").error, ErrorKind::Config);
    QCOMPARE(h.results.at("elsewhere").error, ErrorKind::Config);
    QVERIFY(h.results.at("elsewhere").errorMessage.find("evil.example") != std::string::npos);
    QCOMPARE(h.results.at("c").error, ErrorKind::Shed);
    QCOMPARE(h.results.at("c").errorMessage, std::string("queue full (P1 capacity 2)"));
    QVERIFY(!h.results.count("a"));
    QCOMPARE(h.group(t0).queueDepth[1], 2);
  }

  void deadlineShedsByTheTimeGiven() {
    Harness h;
    h.s.setGroupPaused("g", true, "test", kEpoch0);
    h.admit("a", Tier::P1, 1.0);
    QCOMPARE(h.dispatch(t0), 0);
    QCOMPARE(h.group(t0).waitReason, std::string("group paused"));
    QVERIFY(h.group(t0).wait.code == WaitCode::GroupPaused);  // the dashboard's code for the same wait
    h.s.sweep(t0 + 500ms, epochAt(t0 + 500ms));
    QVERIFY(!h.results.count("a"));
    h.s.sweep(t0 - 1h, epochAt(t0 - 1h));  // time going backwards sheds nothing
    QVERIFY(!h.results.count("a"));
    h.s.sweep(t0 + 1500ms, epochAt(t0 + 1500ms));
    QCOMPARE(h.results.at("a").error, ErrorKind::Shed);
    QVERIFY2(h.results.at("a").errorMessage.find("deadline passed after 1.5 s queued (P1): group paused") == 0,
             h.results.at("a").errorMessage.c_str());
    QCOMPARE(h.count(EventKind::RequestShed), 1);
    QCOMPARE(h.events.back().tsMs, epochAt(t0 + 1500ms));  // the sweep's time, not the clock's
    QCOMPARE(h.events.back().detail.value("cause", ""), std::string("tier_paused"));  // a paused group's shed
    // Shedding that goes on is one event per 10 s with its count, not one per sweep (~200 MB of history a day).
    TimePoint at = t0 + 1500ms;
    for (int i = 0; i < 150; ++i) {  // 15 s of sweeps every 100 ms, one shed each
      h.admit("s" + std::to_string(i), Tier::P1, 0.05, at);
      at += 100ms;
      h.s.sweep(at, epochAt(at));
    }
    QCOMPARE(h.count(EventKind::RequestShed), 2);
    QCOMPARE(h.events.back().tsMs, epochAt(t0 + 1500ms + 10s));
    QCOMPARE(h.events.back().detail.value("count", 0), 100);  // the sweeps of 1.6 s to 11.5 s
    h.s.flushShedEvents(epochAt(at));  // the engine stopping: the 50 since are told, not lost
    QCOMPARE(h.count(EventKind::RequestShed), 3);
    QCOMPARE(h.events.back().detail.value("count", 0), 50);
  }

  // A flood of 4xx (a bad key, a client's typo in a path) is one error line a second, the rest counted, and
  // does not silence the 5xx lines the operator is looking for: each class has its own second.
  void aFloodOf4xxIsOneLineASecondAndHidesNo5xx() {
    Harness h;
    std::FILE* f = std::tmpfile();
    QVERIFY(f);
    Log::setSink(f);
    for (int i = 0; i < 30; ++i) {
      const TimePoint at = t0 + i * 10ms;
      h.admit("c" + std::to_string(i), Tier::P1, 0, at);
      QCOMPARE(h.dispatch(at), 1);
      h.respond(404, {}, at);
    }
    h.admit("s", Tier::P1, 0, t0 + 400ms);
    QCOMPARE(h.dispatch(t0 + 400ms), 1);
    h.respond(500, {}, t0 + 400ms);
    h.s.sweep(t0 + 2s, epochAt(t0 + 2s));
    Log::setSink(stderr);
    std::rewind(f);
    std::string text;
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    std::fclose(f);
    auto count = [&](const std::string& needle) {
      int n = 0;
      for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
      return n;
    };
    QVERIFY2(count("HTTP 404") == 1, text.c_str());
    QVERIFY2(count("HTTP 500") == 1, text.c_str());
    QVERIFY2(count("+29 similar errors (4xx, refused requests) suppressed") == 1, text.c_str());
  }

  void transientFailureBacksOffWithinBudget() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(0, {}, t0 + 10ms, ErrorKind::Network);
    QVERIFY(!h.results.count("a"));  // backing off
    const TimePoint retryAt = h.s.nextDelayed();
    QVERIFY(retryAt > t0 + 10ms && retryAt <= t0 + 10ms + 500ms);
    // "b" goes meanwhile; its failure finds the budget (one retry) spent.
    QCOMPARE(h.dispatch(t0 + 10ms), 1);
    h.respond(0, {}, t0 + 20ms, ErrorKind::Timeout);
    QCOMPARE(h.results.at("b").error, ErrorKind::Timeout);
    QVERIFY(h.results.at("b").errorMessage.find("retry budget exhausted") != std::string::npos);
    h.s.releaseDelayed(retryAt - 1ms);
    QCOMPARE(h.dispatch(retryAt - 1ms), 0);
    h.s.releaseDelayed(retryAt);
    QCOMPARE(h.dispatch(retryAt), 1);
    h.respond(200, {}, retryAt + 5ms);
    QCOMPARE(h.results.at("a").attempts, 2);
    QCOMPARE(h.results.at("a").error, ErrorKind::None);
    QCOMPARE(h.group(retryAt).counters.retries, std::uint64_t{1});
  }

  // A Retry-After with no quota headers (nginx, API gateways) is a floor for that request's retry and a rate
  // signal for the key, not a verdict on the whole window: the other requests go on, paced.
  void retryAfterAloneIsAFloorForThatRequest() {
    EngineConfig c = config();
    c.tiers[1].capacity = 100;
    Harness h(c);
    for (int i = 0; i < 20; ++i) {  // 20/s getting through
      const TimePoint at = t0 + std::chrono::milliseconds(50 * i);
      h.admit("ok" + std::to_string(i), Tier::P1, 0, at);
      QCOMPARE(h.dispatch(at), 1);
      h.respond(200, {}, at);
    }
    const TimePoint t = t0 + 1s;
    h.admit("a", Tier::P1, 0, t);
    h.admit("b", Tier::P1, 0, t);
    QCOMPARE(h.dispatch(t), 1);
    h.respond(429, {{"Retry-After", "2"}}, t);
    QVERIFY(!h.results.count("a"));
    QVERIFY(h.s.nextDelayed() >= t + 2s);  // "a" retries no sooner than the upstream asked
    // "b" is not held for it: it waits only a pause (a cap's, 0.25 s: the first refusal of all ends an unpaced
    // start), not the 2 s.
    QCOMPARE(h.dispatch(t + 150ms), 0);
    QVERIFY2(h.group(t + 150ms).waitReason.find("refused: pausing") == 0, h.group(t + 150ms).waitReason.c_str());
    QVERIFY2(h.dispatch(t + 260ms) == 1, h.group(t + 260ms).waitReason.c_str());
    QCOMPARE(h.sent.back().url, std::string("http://127.0.0.1:9/v1/x"));
    h.respond(200, {}, t + 270ms);
    QCOMPARE(h.results.at("b").status, 200);
    QVERIFY(known(h.group(t + 300ms).dims[0].localTokens));  // the key is paced at a learnt rate
    h.s.releaseDelayed(t + 2s);
    QCOMPARE(h.dispatch(t + 2s), 1);
    h.respond(200, {}, t + 2100ms);
    QCOMPARE(h.results.at("a").attempts, 2);
    QCOMPARE(h.group(t + 3s).counters.r429, std::uint64_t{1});
    QCOMPARE(h.count(EventKind::Burst429Start), 1);
  }

  // Retry-After: 0 never hammers: the refused request waits base_backoff_s at least, and when nothing gets
  // through at all (a hard refusal) the whole key is held, doubling.
  void retryAfterZeroStillWaitsTheFloor() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"Retry-After", "0"}}, t0);
    QVERIFY(h.s.nextDelayed() >= t0 + 500ms);  // "a" backs off at least the floor (0.5 s)
    QCOMPARE(h.dispatch(t0 + 300ms), 0);       // a pause of one interval at the learnt rate (1/s from cold)
    QCOMPARE(h.dispatch(t0 + 1s), 1);          // then "b" goes at the learnt rate (nothing said it may not)...
    h.respond(429, {{"Retry-After", "0"}}, t0 + 1010ms);
    // ...and is refused too, with nothing accepted in between: the key is held (a pause's cap first: a window
    // that turns soon is found open).
    h.admit("c", Tier::P1, 0, t0 + 1020ms);
    QCOMPARE(h.dispatch(t0 + 1020ms), 0);
    QVERIFY2(h.group(t0 + 1020ms).waitReason.find("refused, Retry-After: holding 250 ms") == 0,
             h.group(t0 + 1020ms).waitReason.c_str());
    QCOMPARE(h.dispatch(t0 + 1200ms), 0);
    // After the hold one request goes alone, not the backlog at once, and nothing more until it is answered.
    QCOMPARE(h.dispatch(t0 + 1900ms), 1);
    QCOMPARE(h.dispatch(t0 + 4s), 0);
    QCOMPARE(h.sent.size(), std::size_t{3});
  }

  // A leaky bucket or GCRA frees a slot in tens of ms but says "Retry-After: 1" (whole seconds), while its
  // reset says 0.6 s: the key is held until the reset, not the rounded second (which held a halved leaky
  // bucket at 5-6/s of 25); the refused request itself still waits the Retry-After.
  void wholeSecondRetryAfterOverAShorterResetHoldsTheKeyUntilTheReset() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"X-RateLimit-Limit", "50"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "0.6"},
                    {"Retry-After", "1"}}, t0);
    QVERIFY(h.s.nextDelayed() >= t0 + 1s);  // "a" retries no sooner than the upstream asked
    QCOMPARE(h.dispatch(t0 + 550ms), 0);
    QVERIFY2(h.group(t0 + 550ms).waitReason.find("reset at") == 0, h.group(t0 + 550ms).waitReason.c_str());
    QVERIFY2(h.dispatch(t0 + 650ms) == 1, h.group(t0 + 650ms).waitReason.c_str());
    QCOMPARE(h.sent.size(), std::size_t{2});
  }

  // That shorter reset refuted: a request sent after its hold ended is refused too (another client took the slot,
  // or the figure is no refill at all: a sliding window's counter that says when it will have drained). The hold
  // doubles each time, up to the Retry-After, not one refusal a reset (the demo's window paid 72 by its turn), nor
  // the whole Retry-After at the first refutation. A request sent during the hold and accepted ends it.
  void aShorterResetRefutedDoublesItsHoldUpToTheRetryAfter() {
    EngineConfig c = config();
    c.retry.maxAttempts = 1;
    c.retry.baseBackoffS = 0.1;  // the shortest hold: below the reset
    Harness h(c);
    const HeaderList refused{{"X-RateLimit-Limit", "50"}, {"X-RateLimit-Remaining", "0"},
                             {"X-RateLimit-Reset", "0.4"}, {"Retry-After", "3"}};
    TimePoint at = t0;
    // Sent at each hold's end, refused: holds of 0.4, 0.8, 1.6, then 3 s (3.2 is past the Retry-After).
    for (const double holdS : {0.4, 0.8, 1.6, 3.0}) {
      const std::string id = "r" + std::to_string(h.sent.size());
      h.admit(id, Tier::P1, 0, at);
      QVERIFY2(h.dispatch(at) == 1, h.group(at).waitReason.c_str());
      h.respond(429, refused, at);
      QCOMPARE(h.dispatch(at + fromSeconds(holdS - 0.05)), 0);
      at += fromSeconds(holdS + 0.05);
    }
    h.admit("ok", Tier::P1, 0, at);
    QCOMPARE(h.dispatch(at), 1);
    h.respond(200, {{"X-RateLimit-Limit", "50"}, {"X-RateLimit-Remaining", "3"}, {"X-RateLimit-Reset", "0.4"}}, at);
    // Capacity came back: the next refusal's hold is the reset again.
    at += 100ms;
    h.admit("again", Tier::P1, 0, at);
    QCOMPARE(h.dispatch(at), 1);
    h.respond(429, refused, at);
    QCOMPARE(h.dispatch(at + 350ms), 0);
    h.admit("after", Tier::P1, 0, at + 450ms);
    QVERIFY2(h.dispatch(at + 450ms) == 1, h.group(at + 450ms).waitReason.c_str());
  }

  // A token limit stated as OpenAI states it (reset = until full) that a Retry-After well short of that reset
  // showed to refill continuously: a whole-second Retry-After on a refusal of 500 tokens with 100 left holds
  // the key until 400 more have refilled at the stated rate ((60,000 - 100) / 59.9 s = 1,000/s: 0.4 s; the
  // tracker's pacing sends at 0.52 s), not for the whole second. The refused request still waits its Retry-After.
  void wholeSecondRetryAfterOverAContinuousRefill() {
    Harness h;
    h.maxTokens = 500;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"x-ratelimit-limit-tokens", "60000"}, {"x-ratelimit-remaining-tokens", "100"},
                    {"x-ratelimit-reset-tokens", "59.9s"}, {"Retry-After", "1"}}, t0);
    QVERIFY(h.s.nextDelayed() >= t0 + 1s);  // "a" retries no sooner than the upstream asked
    h.admit("b", Tier::P1, 0, t0);
    QCOMPARE(h.dispatch(t0 + 350ms), 0);                // 450 tokens: not yet
    QVERIFY2(h.dispatch(t0 + 600ms) == 1, h.group(t0 + 600ms).waitReason.c_str());  // long before the second
  }

  void exhaustedQuotaFailsFastAndHoldsTheKey() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {{"X-RateLimit-Limit", "100"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "3600"}}, t0);
    QCOMPARE(h.results.at("a").error, ErrorKind::QuotaExhausted);
    QCOMPARE(h.count(EventKind::QuotaExhausted), 1);
    QCOMPARE(h.events.back().kind, EventKind::Burst429Start);
    QCOMPARE(h.events.back().detail.at("classification").get<std::string>(), std::string("quota_exhausted"));
    h.admit("b", Tier::P1, 0, t0 + 1s);
    QCOMPARE(h.dispatch(t0 + 60s), 0);
    QVERIFY2(h.group(t0 + 60s).waitReason.find("quota exhausted until") == 0, h.group(t0 + 60s).waitReason.c_str());
    QCOMPARE(h.dispatch(t0 + 3601s), 1);
  }

  void remainingZeroWaitsForTheReset() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(200, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "5"}}, t0);
    QCOMPARE(h.results.at("a").error, ErrorKind::None);
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    QVERIFY(!h.group(t0 + 1s).waitReason.empty());
    QCOMPARE(h.dispatch(t0 + 5100ms), 1);
  }

  // A bare 429 teaches a rate (the retry is paced by it, the key not held); a second one with nothing
  // accepted in between is a hard refusal: the key is held, doubling.
  void bare429LearnsARateAndHoldsOnlyHardRefusals() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(429, {}, t0);
    QVERIFY(!h.results.count("a"));  // back at the front, paced by the learnt rate
    QVERIFY(known(h.group(t0).dims[0].localTokens));
    QCOMPARE(h.dispatch(t0 + 300ms), 0);  // paused one interval at the learnt rate (1/s from cold), not held
    QCOMPARE(h.dispatch(t0 + 1s), 1);
    h.respond(429, {}, t0 + 1010ms);
    QCOMPARE(h.dispatch(t0 + 1200ms), 0);  // a second episode with nothing accepted: held (a pause's cap first)
    QVERIFY2(h.group(t0 + 1200ms).waitReason.find("bare 429s: backing off 250 ms") == 0,
             h.group(t0 + 1200ms).waitReason.c_str());
    QCOMPARE(h.dispatch(t0 - 5s), 0);  // backwards: still held
    QCOMPARE(h.dispatch(t0 + 3s), 1);
    h.respond(200, {}, t0 + 3s);
    QCOMPARE(h.results.at("a").attempts, 3);
  }

  // An in-flight cap read off a refusal steps up after AdaptiveConcurrency::kCapProbeAccepted acceptances that
  // pressed it. Answers read in a batch free their slots together and one round refills them: every send of a
  // round the limit ended pressed it, though only the last left with cap - 1 others in flight (counted alone,
  // 200 rounds of 8 at 500/s: 4 s for one step).
  void aRoundTheLimitEndsPressesItWithEverySend() {
    EngineConfig c = config();
    c.groups[0].concurrency = 16;
    c.groups[0].adaptive = true;
    c.tiers[1].capacity = 100000;
    Harness h(c);
    for (int i = 0; i < 2000; ++i) h.admit("r" + std::to_string(i));
    TimePoint t = t0;
    QCOMPARE(h.dispatch(t), 16);  // 0..15 others in flight
    t += 20ms;
    for (int i = 0; i < 8; ++i) h.respond(200, {}, t, ErrorKind::None, h.sent[static_cast<std::size_t>(i)].ticket);
    h.respond(429, {}, t, ErrorKind::None, h.sent[8].ticket);  // refused with 8 in flight, accepted below
    for (int i = 9; i < 16; ++i) h.respond(200, {}, t, ErrorKind::None, h.sent[static_cast<std::size_t>(i)].ticket);
    QCOMPARE(h.group(t).concurrencyLimit, 8);
    // Rounds of 8, each answered together and refilled together: 25 of them hold 200 pressing acceptances
    // (one each, counted by in flight alone).
    std::size_t from = h.sent.size();
    int rounds = 0;
    for (; rounds < 40 && h.group(t).concurrencyLimit == 8; ++rounds) {
      QCOMPARE(h.dispatch(t), 8);
      t += 20ms;
      for (std::size_t i = from; i < h.sent.size(); ++i) h.respond(200, {}, t, ErrorKind::None, h.sent[i].ticket);
      from = h.sent.size();
    }
    QCOMPARE(h.group(t).concurrencyLimit, 9);
    QVERIFY2(rounds <= 26, qPrintable(QString::number(rounds)));
  }

  void breakerOpensProbesAndCloses() {
    Harness h(breakerConfig());
    h.failTwice(t0);
    QCOMPARE(h.group(t0).breaker, BreakerState::Open);
    QCOMPARE(h.count(EventKind::BreakerTransition), 1);
    QCOMPARE(h.group(t0).counters.breakerOpens, std::uint64_t(1));
    h.admit("c");
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    QVERIFY(h.group(t0 + 1s).waitReason.find("breaker open until") == 0);
    QCOMPARE(h.wake, t0 + 5s);
    QCOMPARE(h.dispatch(t0 - 1s), 0);  // backwards: still open
    QCOMPARE(h.dispatch(t0 + 5s), 1);  // half-open probe
    QCOMPARE(h.group(t0 + 5s).breaker, BreakerState::HalfOpen);
    h.respond(200, {}, t0 + 5s);
    QCOMPARE(h.group(t0 + 5s).breaker, BreakerState::Closed);
    QCOMPARE(h.count(EventKind::BreakerTransition), 3);
    QCOMPARE(h.group(t0 + 5s).counters.breakerOpens, std::uint64_t(1));  // closing is not an opening
  }

  // A refusal whose headers show the quota at zero, or short of the request's cost, is the quota's (the key
  // waits for its reset): the breaker counts neither way (it would add its open time to that wait). Refusals
  // that say nothing still trip it.
  void breakerLeavesStatedQuotaRefusalsToTheQuota() {
    Harness h(breakerConfig());
    h.maxTokens = 500;  // every request (a refused one goes again first)
    TimePoint t = t0;
    for (const char* id : {"a", "b", "c"}) {
      h.admit(id, Tier::P1, 0, t);
      QCOMPARE(h.dispatch(t), 1);
      h.respond(429, {{"X-RateLimit-Limit", "50"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "0.5"}}, t);
      t += 600ms;
    }
    // Tokens left, but fewer than the request's 500: the stated quota explains it as well.
    for (const char* id : {"a2", "b2", "c2"}) {
      h.admit(id, Tier::P1, 0, t);
      QVERIFY2(h.dispatch(t) == 1, h.group(t).waitReason.c_str());
      h.respond(429, {{"x-ratelimit-limit-tokens", "10000"}, {"x-ratelimit-remaining-tokens", "300"},
                      {"x-ratelimit-reset-tokens", "500ms"}}, t);
      t += 600ms;
    }
    QCOMPARE(h.group(t).breaker, BreakerState::Closed);
    QCOMPARE(h.count(EventKind::BreakerTransition), 0);
    for (const char* id : {"d", "e"}) {
      h.admit(id, Tier::P1, 0, t);
      QVERIFY2(h.dispatch(t) == 1, h.group(t).waitReason.c_str());
      h.respond(429, {}, t);
      t += 2s;
    }
    QCOMPARE(h.group(t).breaker, BreakerState::Open);
  }

  void resendSpendsAttemptsAndBudget() {
    Harness h;
    h.admit("a");
    QCOMPARE(h.dispatch(t0), 1);
    const Ticket t = h.sent.back().ticket;
    QVERIFY(h.s.allowResend(t, t0));   // attempt 2, the one budgeted retry
    QVERIFY(!h.s.allowResend(t, t0));  // budget spent
    QVERIFY(!h.s.allowResend(t + 100, t0));
    h.respond(200, {}, t0);
    QCOMPARE(h.results.at("a").attempts, 2);
  }

  void cancelAnswersEveryRequestOnce() {
    Harness h;
    h.admit("flying");
    h.admit("queued");
    QCOMPARE(h.dispatch(t0), 1);
    h.s.cancelAll("engine stopped", t0);
    h.s.cancelInFlight(h.sent.back().ticket, "engine stopped while in flight", t0);
    h.s.cancelInFlight(h.sent.back().ticket, "again", t0);
    QCOMPARE(h.answers.at("flying"), 1);
    QCOMPARE(h.answers.at("queued"), 1);
    QCOMPARE(h.results.at("flying").errorMessage, std::string("engine stopped while in flight"));
    QCOMPARE(h.results.at("queued").error, ErrorKind::Cancelled);
    QCOMPARE(h.group(t0).inFlight, 0);
  }

  // A probe before a far-off reset (one request, halfway to the soonest the window can turn) that is cancelled
  // (its gateway client went away) proves nothing: the next request may probe in its place. Left pending, it held
  // the key to every reset from then on.
  void aCancelledProbeLeavesTheProbeToTheNextRequest() {
    Harness h;
    h.admit("a");
    h.admit("b");
    QCOMPARE(h.dispatch(t0), 1);
    h.respond(200, {{"X-RateLimit-Limit", "10"}, {"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "4"}}, t0);
    QCOMPARE(h.dispatch(t0 + 1s), 0);
    QVERIFY2(h.dispatch(t0 + 1600ms) == 1, h.group(t0 + 1600ms).waitReason.c_str());  // the probe
    h.s.cancelInFlight(h.sent.back().ticket, "client went away", t0 + 1650ms);
    QCOMPARE(h.results.at("b").error, ErrorKind::Cancelled);
    h.admit("c", Tier::P1, 0, t0 + 1650ms);
    QVERIFY2(h.dispatch(t0 + 1700ms) == 1, h.group(t0 + 1700ms).waitReason.c_str());  // "c" probes in its place
  }

  void failedSendFailsTheRequest() {
    Harness h;
    h.admit("a");
    h.s.dispatch(t0, kEpoch0, [](const Dispatch&) -> std::optional<SendError> {
      return SendError{ErrorKind::Config, "curl_easy_setopt(CURLOPT_URL): bad"};
    });
    QCOMPARE(h.results.at("a").error, ErrorKind::Config);
    QCOMPARE(h.group(t0).inFlight, 0);
    QCOMPARE(h.group(t0).counters.sends, std::uint64_t{0});
  }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
