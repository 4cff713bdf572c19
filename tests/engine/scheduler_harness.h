// A Scheduler driven by hand for the scheduler tests: a one-group config, the sends it made, the answers it
// gave (counted per id, so a second answer shows) and the events it emitted. Time is whatever a test passes.
#pragma once

#include "scheduler.h"

#include <QtTest>

#include <algorithm>
#include <map>

namespace tgtest {

using namespace tg;
using namespace std::chrono_literals;

inline const TimePoint t0 = TimePoint{} + 100000s;
constexpr EpochMs kEpoch0 = 1'800'000'000'000;

inline EpochMs epochAt(TimePoint t) { return kEpoch0 + std::chrono::duration_cast<std::chrono::milliseconds>(t - t0).count(); }

inline EngineConfig config() {
  EngineConfig c;
  GroupConfig g;
  g.name = "g";
  g.baseUrl = "http://127.0.0.1:9";
  g.keys.push_back(KeyConfig{"k", "", "", "Authorization", "Bearer "});
  g.concurrency = 1;
  g.minConcurrency = 1;
  g.adaptive = false;
  g.breaker.minCalls = 1000;  // off unless a test turns it on
  c.groups.push_back(g);
  c.tiers[1].capacity = 2;
  c.retry.maxAttempts = 3;
  c.retry.budgetRatio = 0;
  c.retry.budgetMinRetries = 1;
  c.retry.baseBackoffS = 0.5;
  c.retry.maxBackoffS = 1;
  c.retry.maxServerWaitS = 120;
  return c;
}

// A scheduler, what it sent and what it answered.
// config() with a breaker that opens after 2 failures in 10 s for 5 s, and no retries.
inline EngineConfig breakerConfig() {
  EngineConfig c = config();
  c.groups[0].breaker = BreakerConfig{10, 2, 0.5, 5, 1};
  c.retry.maxAttempts = 1;
  return c;
}

struct Harness {
  explicit Harness(EngineConfig c = config()) : s(std::move(c), listeners, t0, 7u) {
    listeners.addEvent([this](const Event& e) { events.push_back(e); });
  }

  void admit(const std::string& id, Tier tier = Tier::P1, double deadlineS = 0, TimePoint at = t0,
             std::string group = "g", std::string url = "/v1/x", std::string ownKey = {}) {
    auto p = std::make_unique<Pending>();
    p->req.id = id;
    p->req.group = std::move(group);
    p->req.tier = tier;
    p->req.url = std::move(url);
    p->req.body = "{}";
    p->req.deadlineS = deadlineS;
    if (!ownKey.empty()) p->req.headers.emplace_back("Authorization", "Bearer " + ownKey);  // as the gateway forwards it
    p->req.ownKey = std::move(ownKey);
    p->req.client = client;
    p->req.maxTokens = maxTokens;
    p->submittedAt = at;
    p->handle = ++lastHandle;
    handles[id] = p->handle;
    p->done = [this](const Result& r) {
      results[r.id] = r;
      ++answers[r.id];
    };
    s.admit(std::move(p), at);
  }

  // Dispatches at `at`; returns how many sends started.
  int dispatch(TimePoint at) {
    const std::size_t before = sent.size();
    wake = s.dispatch(at, epochAt(at), [this](const Dispatch& d) -> std::optional<SendError> {
      sent.push_back(d);
      return std::nullopt;
    });
    return static_cast<int>(sent.size() - before);
  }

  // Answers the last send (or `ticket`).
  void respond(int status, HeaderList headers, TimePoint at, ErrorKind error = ErrorKind::None, Ticket ticket = 0) {
    QVERIFY(!sent.empty());
    Response r;
    r.ticket = ticket ? ticket : sent.back().ticket;
    r.status = status;
    r.error = error == ErrorKind::None ? errorKindForStatus(status) : error;
    r.headers = std::move(headers);
    s.complete(std::move(r), at, epochAt(at));
  }

  GroupSnapshot group(TimePoint at) {
    EngineSnapshot snap;
    s.fillSnapshot(snap, at);
    return snap.groups.at(0);
  }

  // A request carrying the client's own key (pass-through), at `at`.
  void admitOwn(const std::string& id, const std::string& key, TimePoint at = t0) {
    admit(id, Tier::P1, 0, at, "g", "/v1/x", key);
  }
  std::string client;  // Request::client of the next admit
  int maxTokens = 0;   // Request::maxTokens of the next admit

  int count(EventKind k) const {
    return static_cast<int>(std::count_if(events.begin(), events.end(), [k](const Event& e) { return e.kind == k; }));
  }

  // Two requests "a" and "b" sent at `at` and answered 500: a config from breakerConfig() opens the breaker
  // (until at + 5 s).
  void failTwice(TimePoint at) {
    for (const char* id : {"a", "b"}) {
      admit(id);
      QCOMPARE(dispatch(at), 1);
      respond(500, {}, at);
      QCOMPARE(results.at(id).error, ErrorKind::Http);
    }
  }

  EngineListeners listeners;
  Scheduler s;
  std::vector<Dispatch> sent;
  std::vector<Event> events;
  std::map<std::string, Result> results;
  std::map<std::string, int> answers;
  std::map<std::string, RequestHandle> handles;
  RequestHandle lastHandle = 0;
  TimePoint wake{};
};

}  // namespace tgtest
