// The demo's groups (resources/demo.json), each alone: the real Scheduler configured as the demo configures it,
// against the simulator's own limiters and headers (SimResponder, the demo's simulator section without its
// schedule), in virtual time: four minutes of arrivals over the quota run in a second. Answers come back after the
// simulator's latency and are judged in the order they were sent, as the engine loop does.
// Issue 14's third case is the embeddings group: a sliding window of 300 per 60 s (the weighted two-window counter
// gateways use), told in the openai dialect, with a Retry-After of a few seconds. The engine once waited the whole
// 60-s reset with the queue growing to 480, then sent ~280 requests in 3 s, then stalled another minute. At 8/s
// its first window is spent by 38 s and the counter refuses until it turns at 60 s (Retry-After says 23 s); the
// reset, read as the time until full, then tells a refill of (limit - remaining) / reset, which the counter (giving
// back the previous window's count as it fades) passes. Before 694ab40 each refusal's 0.27-s hold on that refill
// ended in another (72 refusals by 60 s; the holds now double: 14), and from 120 s the told refill paced 2.5/s,
// then 1.4/s, with up to 210 of 300 left and 900 queued (now 4.88/s).
#include "config_loader.h"
#include "scheduler_harness.h"
#include "sim_config.h"
#include "sim_responder.h"

#include <QtTest>

#include <fstream>
#include <map>
#include <sstream>

using namespace tgtest;

namespace {

nlohmann::json demoJson() {
  std::ifstream in(TOLLGATE_SOURCE_DIR "/resources/demo.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

HttpRequest toSimRequest(const Dispatch& d) {
  HttpRequest r;
  r.method = d.method;
  const auto schemeEnd = d.url.find("://");
  const auto pathAt = d.url.find('/', schemeEnd == std::string::npos ? 0 : schemeEnd + 3);
  r.target = pathAt == std::string::npos ? "/" : d.url.substr(pathAt);
  for (const std::string& line : *d.headerLines) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto valueAt = line.find_first_not_of(' ', colon + 1);
    r.headers.emplace_back(name, valueAt == std::string::npos ? "" : line.substr(valueAt));
  }
  r.body = std::string(d.body);
  return r;
}

// The status and header lines of a serialized reply.
Response toResponse(Ticket ticket, const std::string& bytes) {
  Response r;
  r.ticket = ticket;
  r.status = std::stoi(bytes.substr(9, 3));
  r.error = errorKindForStatus(r.status);
  const auto headEnd = bytes.find("\r\n\r\n");
  std::size_t at = bytes.find("\r\n") + 2;
  while (at < headEnd) {
    const auto end = bytes.find("\r\n", at);
    const std::string line = bytes.substr(at, end - at);
    const auto colon = line.find(':');
    if (colon != std::string::npos)
      r.headers.emplace_back(line.substr(0, colon), line.substr(line.find_first_not_of(' ', colon + 1)));
    at = end + 2;
  }
  return r;
}

// One demo group alone against the simulator, as the engine loop runs it, in virtual time (5-ms steps): P1
// arrivals at `arrivalsPerS` for `runS` seconds. Times are seconds from t0.
struct DemoRun {
  std::vector<double> sendS, refusedS, okS;
  double longestRetryAfter = 0;
  long otherGroup = 0;  // answers the simulator gave as another group's (a route gone wrong would measure that one)
};

DemoRun runDemoGroup(const std::string& group, const std::string& path, double arrivalsPerS, double runS) {
  const nlohmann::json demo = demoJson();
  nlohmann::json simJson = demo.at("simulator");
  simJson.erase("schedule");  // the 503 spell and the batch group's quota moves are other stories
  SimResponder sim(SimConfig::fromJson(simJson, "demo.json"), t0);
  EngineConfig c = ConfigLoader::fromJson(demo, "demo.json").engine;
  std::erase_if(c.groups, [&](const GroupConfig& g) { return g.name != group; });
  for (GroupConfig& g : c.groups) g.baseUrl = "http://127.0.0.1:9";  // as the app points "sim" at its simulator
  Harness h(c);
  DemoRun run;
  if (h.s.config().groups.size() != 1) return run;
  constexpr auto kStep = std::chrono::milliseconds(5);
  const TimePoint end = t0 + fromSeconds(runS);
  std::multimap<TimePoint, Response> inFlight;  // answers by the time they come back
  std::size_t dispatched = 0;
  int arrived = 0;
  TimePoint nextSweep = t0;
  for (TimePoint t = t0; t < end; t += kStep) {
    for (; arrived < arrivalsPerS * toSeconds(t - t0); ++arrived)
      h.admit("r" + std::to_string(arrived), Tier::P1, 0, t, group, path);
    std::vector<Response> due;
    while (!inFlight.empty() && inFlight.begin()->first <= t) {
      due.push_back(std::move(inFlight.begin()->second));
      inFlight.erase(inFlight.begin());
    }
    std::sort(due.begin(), due.end(), [](const Response& a, const Response& b) { return a.ticket < b.ticket; });
    for (Response& r : due) {
      if (r.status == 429) run.refusedS.push_back(toSeconds(t - t0));
      for (const auto& [name, value] : r.headers)
        if (name == "Retry-After") run.longestRetryAfter = std::max(run.longestRetryAfter, std::stod(value));
      if (r.status == 200) run.okS.push_back(toSeconds(t - t0));
      h.s.complete(std::move(r), t, epochAt(t));
    }
    if (t >= nextSweep) {
      h.s.sweep(t, epochAt(t));
      nextSweep = t + std::chrono::milliseconds(100);
    }
    h.s.releaseDelayed(t);
    h.dispatch(t);
    for (; dispatched < h.sent.size(); ++dispatched) {
      const Dispatch& d = h.sent[dispatched];
      const SimReply reply = sim.handle(toSimRequest(d), t, static_cast<double>(epochAt(t)) / 1000.0);
      if (reply.bytes.empty()) return run;  // no answer from the simulator: the caller's checks fail
      const TimePoint back = t + fromSeconds(reply.delayS);
      sim.onSent(reply, back);
      Response answer = toResponse(d.ticket, reply.bytes);
      const auto named = std::find_if(answer.headers.begin(), answer.headers.end(),
                                      [](const auto& h) { return h.first == "X-RateLimit-Group"; });
      if (named == answer.headers.end() || named->second != group) ++run.otherGroup;
      inFlight.emplace(back, std::move(answer));
      run.sendS.push_back(toSeconds(t - t0));
    }
  }
  return run;
}

long countFrom(const std::vector<double>& v, double from) {
  return std::count_if(v.begin(), v.end(), [from](double s) { return s >= from; });
}

}  // namespace

class TestDemoGroups : public QObject {
  Q_OBJECT
 private slots:
  void aRefusalIsNotHeldToTheWindowsResetAndReleasesAreSpread();
  void everyDemoGroupGetsItsQuota_data();
  void everyDemoGroupGetsItsQuota();
};

void TestDemoGroups::aRefusalIsNotHeldToTheWindowsResetAndReleasesAreSpread() {
  constexpr double kRunS = 240;
  const DemoRun run = runDemoGroup("embeddings", "/v1/embeddings", 8, kRunS);
  const auto& [sendS, refusedS, okS, longestRetryAfter, otherGroup] = run;
  QCOMPARE(otherGroup, 0L);
  // The window is met: at 8/s its 300 are used in the first 40 s or so, and it refuses.
  QVERIFY2(!refusedS.empty(), "no 429 at all: the window was never reached");
  const double firstRefusal = refusedS.front();
  QVERIFY2(firstRefusal > 20 && firstRefusal < 60, std::to_string(firstRefusal).c_str());
  // Not held to the reset (60-115 s): after the first refusal no gap between two sends is longer than a Retry-After
  // (23 s here: the first window is locked until it turns) and a second.
  double longestGap = 0, worstThreeS = 0;
  for (std::size_t i = 1; i < sendS.size(); ++i)
    if (sendS[i] > firstRefusal) longestGap = std::max(longestGap, sendS[i] - sendS[i - 1]);
  // Spread: no 3-s span after it sends more than twice the window's rate (5/s) would in 3 s; the stall's release
  // was ~280.
  for (std::size_t i = 0, j = 0; i < sendS.size(); ++i) {
    if (sendS[i] < firstRefusal) continue;
    while (sendS[j] < sendS[i] - 3) ++j;
    worstThreeS = std::max(worstThreeS, static_cast<double>(i - j + 1));
  }
  // Over the last three minutes the window's rate gets through, and few refusals are paid for it.
  const double okPerS = static_cast<double>(countFrom(okS, 60)) / (kRunS - 60);
  const long sentLate = countFrom(sendS, 60), refusedLate = countFrom(refusedS, 60);
  const std::string figures = "first 429 at " + std::to_string(firstRefusal) + " s, longest gap " +
                              std::to_string(longestGap) + " s (Retry-After at most " +
                              std::to_string(longestRetryAfter) + " s), " + std::to_string(refusedS.size()) +
                              " refused of " + std::to_string(sendS.size()) + ", most sends in 3 s " +
                              std::to_string(worstThreeS) +
                              ", after 60 s: " + std::to_string(sentLate) + " sent, " + std::to_string(refusedLate) +
                              " refused, " + std::to_string(okPerS) + " ok/s";
  qInfo("%s", figures.c_str());
  QVERIFY2(longestGap <= longestRetryAfter + 1 && longestGap < 60, figures.c_str());
  // The first window refuses until it turns: a few refusals find that out (the holds double), not one every
  // 0.27 s (72). From then on, few.
  QVERIFY2(static_cast<long>(refusedS.size()) - refusedLate <= 20, figures.c_str());
  QVERIFY2(worstThreeS <= 30, figures.c_str());
  QVERIFY2(okPerS > 0.9 * 5, figures.c_str());
  QVERIFY2(static_cast<double>(refusedLate) < 0.05 * static_cast<double>(sentLate), figures.c_str());
}

// Every group of the demo alone at twice its quota: the interactive token bucket (600 requests a minute, burst
// 600, one key), the batch fixed window (900 a minute on each of two keys) and the embeddings window, all stated
// in the openai dialect (reset = until full; a fixed window is full when it turns). Over the last two minutes
// (the bucket's burst is spent by then, and the fixed window turns twice) each gets 90-102% of its quota, with at
// most 2% of its sends refused. The batch window paid 176 of 3776 before 142a841: its probe before the
// reset, sent when our estimate (told less what we sent since) reached nothing though the window had a few left,
// was accepted and taken for a refill, so each refusal held the key 0.25 s instead of until the turn.
void TestDemoGroups::everyDemoGroupGetsItsQuota_data() {
  QTest::addColumn<QString>("group");
  QTest::addColumn<double>("perS");  // the quota, requests per second
  QTest::newRow("interactive: token bucket") << "interactive" << 10.0;
  QTest::newRow("batch: fixed window, two keys") << "batch" << 30.0;
  QTest::newRow("embeddings: sliding window") << "embeddings" << 5.0;
}

void TestDemoGroups::everyDemoGroupGetsItsQuota() {
  QFETCH(QString, group);
  QFETCH(double, perS);
  constexpr double kRunS = 240, kFromS = 120;
  const DemoRun run = runDemoGroup(group.toStdString(), "/v1/chat/completions", 2 * perS, kRunS);
  QCOMPARE(run.otherGroup, 0L);
  const double okPerS = static_cast<double>(countFrom(run.okS, kFromS)) / (kRunS - kFromS);
  const long sent = countFrom(run.sendS, kFromS), refused = countFrom(run.refusedS, kFromS);
  const std::string figures = std::to_string(okPerS) + " ok/s of " + std::to_string(perS) + "; " +
                              std::to_string(refused) + " refused of " + std::to_string(sent) + " sent after " +
                              std::to_string(kFromS) + " s";
  qInfo("%s", figures.c_str());
  QVERIFY2(okPerS >= 0.9 * perS && okPerS <= 1.02 * perS, figures.c_str());
  QVERIFY2(static_cast<double>(refused) <= 0.02 * static_cast<double>(sent), figures.c_str());
}

QTEST_GUILESS_MAIN(TestDemoGroups)
#include "test_demo_groups.moc"
