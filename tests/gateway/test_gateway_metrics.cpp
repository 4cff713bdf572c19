// GatewayMetrics: a hand-built engine snapshot plus the gateway's own counts, rendered, then read back by a
// strict parser of the Prometheus text format 0.0.4 (below), so every assertion is about what a scraper sees.
#include "gateway_metrics.h"
#include "secret.h"

#include <QtTest>

#include <atomic>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <thread>
#include <vector>

using namespace tg;
using tg::gateway::GatewayMetrics;

namespace {

using LabelMap = std::map<std::string, std::string>;

struct Sample {
  std::string name;
  LabelMap labels;
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> help;  // by family name
  std::map<std::string, std::string> type;
  std::vector<Sample> samples;
  std::string error;  // first malformed line, empty when the text parsed

  std::optional<double> value(const std::string& name, const LabelMap& labels) const {
    for (const auto& s : samples)
      if (s.name == name && s.labels == labels) return s.value;
    return std::nullopt;
  }
  std::vector<Sample> named(const std::string& name) const {
    std::vector<Sample> out;
    for (const auto& s : samples)
      if (s.name == name) out.push_back(s);
    return out;
  }
};

bool isNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool isNameChar(char c) { return isNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

std::optional<double> parseValue(const std::string& v) {
  if (v == "+Inf") return INFINITY;
  if (v == "-Inf") return -INFINITY;
  if (v == "NaN") return NAN;
  double d = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return d;
}

// The family a sample belongs to: histogram series carry _bucket/_sum/_count after the family name.
std::string familyOf(const Exposition& e, const std::string& sample) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string sfx = suffix;
    if (sample.size() > sfx.size() && sample.compare(sample.size() - sfx.size(), sfx.size(), sfx) == 0) {
      const std::string base = sample.substr(0, sample.size() - sfx.size());
      auto t = e.type.find(base);
      if (t != e.type.end() && t->second == "histogram") return base;
    }
  }
  return sample;
}

// Strict: names, label syntax and escapes (\\ \" \n only), one HELP and one TYPE per family, TYPE before
// the family's first sample, a value that parses. Anything else is reported with its line number.
Exposition parseExposition(const std::string& text) {
  Exposition e;
  std::size_t lineNo = 0, pos = 0;
  auto fail = [&](const std::string& why, const std::string& line) {
    if (e.error.empty()) e.error = "line " + std::to_string(lineNo) + ": " + why + ": " + line;
  };
  if (!text.empty() && text.back() != '\n') e.error = "text does not end with a newline";
  while (pos < text.size() && e.error.empty()) {
    const auto nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++lineNo;
    if (line.empty()) continue;
    if (line[0] == '#') {
      for (const std::string kw : {"HELP", "TYPE"}) {
        const std::string prefix = "# " + kw + " ";
        if (line.rfind(prefix, 0) != 0) continue;
        const std::string rest = line.substr(prefix.size());
        const auto sp = rest.find(' ');
        const std::string name = rest.substr(0, sp);
        const std::string arg = sp == std::string::npos ? "" : rest.substr(sp + 1);
        auto& map = kw == "HELP" ? e.help : e.type;
        if (map.count(name)) fail("second " + kw + " for " + name, line);
        if (kw == "TYPE" && arg != "counter" && arg != "gauge" && arg != "histogram" && arg != "summary" &&
            arg != "untyped")
          fail("unknown type", line);
        if (kw == "TYPE")
          for (const auto& s : e.samples)
            if (familyOf(e, s.name) == name) fail("TYPE after the family's samples", line);
        map[name] = arg;
      }
      continue;
    }
    Sample s;
    std::size_t i = 0;
    if (!isNameStart(line[0])) { fail("bad metric name", line); break; }
    while (i < line.size() && isNameChar(line[i])) s.name += line[i++];
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::string ln, lv;
        while (i < line.size() && isNameChar(line[i])) ln += line[i++];
        if (ln.empty() || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') { fail("bad label", line); break; }
        i += 2;
        bool closed = false;
        while (i < line.size()) {
          const char c = line[i++];
          if (c == '"') { closed = true; break; }
          if (c != '\\') { lv += c; continue; }
          if (i >= line.size()) break;
          const char esc = line[i++];
          if (esc == '\\') lv += '\\';
          else if (esc == '"') lv += '"';
          else if (esc == 'n') lv += '\n';
          else { fail("bad escape", line); break; }
        }
        if (!closed) { fail("unterminated label value", line); break; }
        if (s.labels.count(ln)) { fail("label repeated", line); break; }
        s.labels[ln] = lv;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size() || line[i] != '}') { fail("unterminated label set", line); break; }
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') { fail("no space before the value", line); break; }
    std::string rest = line.substr(i + 1);
    const auto sp = rest.find(' ');  // an optional timestamp follows
    const auto v = parseValue(rest.substr(0, sp));
    if (!v) { fail("bad value", line); break; }
    s.value = *v;
    if (!e.type.count(familyOf(e, s.name))) { fail("sample before its TYPE", line); break; }
    e.samples.push_back(std::move(s));
  }
  return e;
}

// Fill the fields the engine is gaining (per-key quota, sheds by reason) only where they exist, the same
// way the metrics read them, so this test covers whichever snapshot it is built against.
template <class G>
void addKey(G& g, const std::string& fingerprint, double limit, double remaining) {
  if constexpr (gateway::detail::kHasKeyStates<G>) {
    auto& k = g.keyStates.emplace_back();
    k.fingerprint = fingerprint;
    k.dims[int(Dimension::Requests)].limit = limit;
    k.dims[int(Dimension::Requests)].remaining = remaining;
  }
}
template <class C>
void setSheds(C& c, std::uint64_t deadline, std::uint64_t queueFull) {
  c.shed = deadline + queueFull;
  if constexpr (gateway::detail::kHasShedByReason<C>) {
    c.shedByReason[int(ShedReason::Deadline)] = deadline;
    c.shedByReason[int(ShedReason::QueueFull)] = queueFull;
  }
}
constexpr bool kPerKey = gateway::detail::kHasKeyStates<GroupSnapshot>;
constexpr bool kPerReason = gateway::detail::kHasShedByReason<GroupCounters>;

EngineSnapshot twoGroups() {
  EngineSnapshot s;
  s.state = EngineState::Running;
  GroupSnapshot a;
  a.group = "openai";
  a.dims[int(Dimension::Requests)].limit = 500;
  a.dims[int(Dimension::Requests)].remaining = 123;
  a.dims[int(Dimension::Tokens)].limit = 30000;  // remaining never reported: stays NaN
  addKey(a, "k:aaaa1111", 250, 100);
  addKey(a, "k:bbbb2222", 250, 23);
  a.queueDepth = {1, 2, 3};
  a.inFlight = 4;
  a.concurrencyLimit = 6;
  a.concurrencyCeiling = 8;
  a.counters.r429 = 7;
  setSheds(a.counters, 5, 4);
  a.breaker = BreakerState::Open;
  s.groups.push_back(a);
  GroupSnapshot b;  // knows nothing about its quota yet
  b.group = "kimi";
  b.breaker = BreakerState::HalfOpen;
  s.groups.push_back(b);
  return s;
}

#define PARSED(e) QVERIFY2((e).error.empty(), (e).error.c_str())

}  // namespace

class TestGatewayMetrics : public QObject {
  Q_OBJECT
 private slots:
  void snapshotValues() {
    // Which snapshot this build has: after the engine's per-key/per-reason fields land both must say "yes".
    qInfo("per-key quota (GroupSnapshot::keyStates): %s; sheds by reason (GroupCounters::shedByReason): %s",
          kPerKey ? "yes" : "no", kPerReason ? "yes" : "no");
    GatewayMetrics m;
    const std::string text = m.render(twoGroups(), 5);
    const auto e = parseExposition(text);
    PARSED(e);

    if (kPerKey) {
      QCOMPARE(e.value("tollgate_quota_remaining", {{"group", "openai"}, {"key", "k:aaaa1111"}, {"dimension", "requests"}}), 100.0);
      QCOMPARE(e.value("tollgate_quota_limit", {{"group", "openai"}, {"key", "k:bbbb2222"}, {"dimension", "requests"}}), 250.0);
      QVERIFY(!e.value("tollgate_quota_remaining", {{"group", "openai"}, {"key", "all"}, {"dimension", "requests"}}));
    } else {
      QCOMPARE(e.value("tollgate_quota_remaining", {{"group", "openai"}, {"key", "all"}, {"dimension", "requests"}}), 123.0);
      QCOMPARE(e.value("tollgate_quota_limit", {{"group", "openai"}, {"key", "all"}, {"dimension", "requests"}}), 500.0);
      QCOMPARE(e.value("tollgate_quota_limit", {{"group", "openai"}, {"key", "all"}, {"dimension", "tokens"}}), 30000.0);
    }
    // Unknown is absent, not NaN: no tokens-remaining series, nothing at all for the group that knows nothing.
    for (const auto& sm : e.named("tollgate_quota_remaining")) QVERIFY(sm.labels.at("dimension") != "tokens");
    for (const auto& sm : e.samples)
      if (sm.name.rfind("tollgate_quota_", 0) == 0) QCOMPARE(sm.labels.at("group"), std::string("openai"));
    for (const auto& sm : e.samples) QVERIFY2(!std::isnan(sm.value), sm.name.c_str());
    QVERIFY(text.find("NaN") == std::string::npos && text.find("Nan") == std::string::npos);

    QCOMPARE(e.value("tollgate_queue_depth", {{"group", "openai"}, {"tier", "P0"}}), 1.0);
    QCOMPARE(e.value("tollgate_queue_depth", {{"group", "openai"}, {"tier", "P2"}}), 3.0);
    QCOMPARE(e.value("tollgate_queue_depth", {{"group", "kimi"}, {"tier", "P1"}}), 0.0);
    QCOMPARE(e.value("tollgate_in_flight", {{"group", "openai"}}), 4.0);
    QCOMPARE(e.value("tollgate_concurrency_limit", {{"group", "openai"}}), 6.0);
    QCOMPARE(e.value("tollgate_concurrency_ceiling", {{"group", "openai"}}), 8.0);
    QCOMPARE(e.value("tollgate_rate_limited_total", {{"group", "openai"}}), 7.0);
    QCOMPARE(e.value("tollgate_breaker_state", {{"group", "openai"}, {"state", "open"}}), 1.0);
    QCOMPARE(e.value("tollgate_breaker_state", {{"group", "kimi"}, {"state", "half-open"}}), 2.0);
    QCOMPARE(e.named("tollgate_breaker_state").size(), std::size_t(2));  // one series per group
    if (kPerReason) {
      QCOMPARE(e.value("tollgate_shed_total", {{"group", "openai"}, {"reason", "deadline"}}), 5.0);
      QCOMPARE(e.value("tollgate_shed_total", {{"group", "openai"}, {"reason", "queue_full"}}), 4.0);
      QCOMPARE(e.value("tollgate_shed_total", {{"group", "openai"}, {"reason", "draining"}}), 0.0);
      QVERIFY(!e.value("tollgate_shed_total", {{"group", "openai"}, {"reason", "none"}}));
    } else {
      QCOMPARE(e.value("tollgate_shed_total", {{"group", "openai"}, {"reason", "all"}}), 9.0);
      QCOMPARE(e.value("tollgate_shed_total", {{"group", "kimi"}, {"reason", "all"}}), 0.0);
    }
    QCOMPARE(e.value("tollgate_gateway_open_connections", {}), 5.0);
  }

  void helpAndTypeForEveryFamily() {
    GatewayMetrics m;
    m.countRequest("svc-a", "/openai", 200);
    m.observeWait("openai", Tier::P1, 0.2);
    m.observeUpstream("openai", 1.5);
    const auto e = parseExposition(m.render(twoGroups(), 0));
    PARSED(e);
    const std::map<std::string, std::string> expected{
        {"tollgate_quota_remaining", "gauge"},     {"tollgate_quota_limit", "gauge"},
        {"tollgate_queue_depth", "gauge"},         {"tollgate_in_flight", "gauge"},
        {"tollgate_concurrency_limit", "gauge"},   {"tollgate_concurrency_ceiling", "gauge"},
        {"tollgate_rate_limited_total", "counter"}, {"tollgate_shed_total", "counter"},
        {"tollgate_upstream_responses_total", "counter"}, {"tollgate_retries_total", "counter"},
        {"tollgate_tokens_used_total", "counter"}, {"tollgate_breaker_opens_total", "counter"},
        {"tollgate_breaker_state", "gauge"},       {"tollgate_gateway_requests_total", "counter"},
        {"tollgate_wait_seconds", "histogram"},    {"tollgate_upstream_seconds", "histogram"},    {"tollgate_gateway_open_connections", "gauge"}};
    QCOMPARE(e.type, expected);
    for (const auto& [name, type] : expected) {
      QVERIFY2(e.help.count(name) && !e.help.at(name).empty(), name.c_str());
      QVERIFY2(!e.named(type == "histogram" ? name + "_count" : name).empty(), name.c_str());
    }
  }

  void gatewayRequestsPerClientRouteStatus() {
    GatewayMetrics m;
    for (int i = 0; i < 3; ++i) m.countRequest("svc-a", "/openai", 200);
    m.countRequest("svc-a", "/openai", 429);
    m.countRequest("anonymous", "", 404);
    const auto e = parseExposition(m.render(EngineSnapshot{}, 1));
    PARSED(e);
    const std::string n = "tollgate_gateway_requests_total";
    QCOMPARE(e.value(n, {{"client", "svc-a"}, {"route", "/openai"}, {"status", "200"}}), 3.0);
    QCOMPARE(e.value(n, {{"client", "svc-a"}, {"route", "/openai"}, {"status", "429"}}), 1.0);
    QCOMPARE(e.value(n, {{"client", "anonymous"}, {"route", ""}, {"status", "404"}}), 1.0);
    QCOMPARE(e.named(n).size(), std::size_t(3));
  }

  void waitHistogramBucketsAreCumulative() {
    GatewayMetrics m;
    // NaN and negative count as 0 s; 5000 s (past the hour) lands only in +Inf, 100 s in 120 and up.
    for (double v : {0.001, 0.02, 0.02, 0.3, 7.0, 5000.0, double(NAN), -1.0}) m.observeWait("openai", Tier::P0, v);
    m.observeWait("openai", Tier::P1, 100);
    m.observeWait("openai", Tier::P2, 45);
    const auto e = parseExposition(m.render(EngineSnapshot{}, 0));
    PARSED(e);

    const std::map<std::string, double> expectedP0{
        {"0.005", 3}, {"0.01", 3}, {"0.025", 5}, {"0.05", 5}, {"0.1", 5}, {"0.25", 5}, {"0.5", 6},
        {"1", 6},     {"2.5", 6},  {"5", 6},     {"10", 7},   {"30", 7},  {"60", 7},   {"120", 7},
        {"300", 7},   {"600", 7},  {"1800", 7},  {"3600", 7}, {"+Inf", 8}};
    std::vector<std::pair<double, double>> p0;  // (upper bound, cumulative count)
    for (const auto& s : e.named("tollgate_wait_seconds_bucket")) {
      if (s.labels.at("tier") != "P0") continue;
      QCOMPARE(s.labels.at("group"), std::string("openai"));
      const auto le = s.labels.at("le");
      QVERIFY2(expectedP0.count(le), le.c_str());
      QCOMPARE(s.value, expectedP0.at(le));
      p0.emplace_back(*parseValue(le), s.value);
    }
    QCOMPARE(p0.size(), std::size(GatewayMetrics::kWaitBuckets) + 1);
    std::sort(p0.begin(), p0.end());
    for (std::size_t i = 1; i < p0.size(); ++i) QVERIFY(p0[i].second >= p0[i - 1].second);
    QCOMPARE(e.value("tollgate_wait_seconds_count", {{"group", "openai"}, {"tier", "P0"}}), 8.0);
    QVERIFY(std::abs(*e.value("tollgate_wait_seconds_sum", {{"group", "openai"}, {"tier", "P0"}}) - 5007.341) < 1e-9);

    QCOMPARE(e.value("tollgate_wait_seconds_bucket", {{"group", "openai"}, {"tier", "P2"}, {"le", "30"}}), 0.0);
    QCOMPARE(e.value("tollgate_wait_seconds_bucket", {{"group", "openai"}, {"tier", "P2"}, {"le", "60"}}), 1.0);
    QCOMPARE(e.value("tollgate_wait_seconds_count", {{"group", "openai"}, {"tier", "P2"}}), 1.0);
    // A wait of minutes is a bucket of its own (all of them fell in +Inf past 60 s).
    QCOMPARE(e.value("tollgate_wait_seconds_bucket", {{"group", "openai"}, {"tier", "P1"}, {"le", "60"}}), 0.0);
    QCOMPARE(e.value("tollgate_wait_seconds_bucket", {{"group", "openai"}, {"tier", "P1"}, {"le", "120"}}), 1.0);
    // The upstream's own time, by group: a 45-s LLM answer is in the 60-s bucket, not only in +Inf.
    m.observeUpstream("openai", 45);
    m.observeUpstream("openai", 0.3);
    const auto u = parseExposition(m.render(EngineSnapshot{}, 0));
    PARSED(u);
    QCOMPARE(u.value("tollgate_upstream_seconds_bucket", {{"group", "openai"}, {"le", "0.5"}}), 1.0);
    QCOMPARE(u.value("tollgate_upstream_seconds_bucket", {{"group", "openai"}, {"le", "30"}}), 1.0);
    QCOMPARE(u.value("tollgate_upstream_seconds_bucket", {{"group", "openai"}, {"le", "60"}}), 2.0);
    QCOMPARE(u.value("tollgate_upstream_seconds_count", {{"group", "openai"}}), 2.0);
  }

  void labelValuesAreEscaped() {
    const std::string odd = "svc \"quoted\" back\\slash new\nline";
    GatewayMetrics m;
    m.countRequest(odd, "/openai", 200);
    EngineSnapshot s;
    GroupSnapshot g;
    g.group = odd;
    s.groups.push_back(g);
    const std::string text = m.render(s, 0);
    const std::string escaped = R"(svc \"quoted\" back\\slash new\nline)";
    QVERIFY2(text.find("client=\"" + escaped + "\"") != std::string::npos, text.c_str());
    QVERIFY2(text.find("group=\"" + escaped + "\"") != std::string::npos, text.c_str());
    const auto e = parseExposition(text);
    PARSED(e);  // a raw newline in a label would have split a sample line
    QCOMPARE(e.value("tollgate_gateway_requests_total", {{"client", odd}, {"route", "/openai"}, {"status", "200"}}), 1.0);
    QCOMPARE(e.value("tollgate_in_flight", {{"group", odd}}), 0.0);
  }

  void tokenNeverInTheOutput() {
    const std::string token = "tgw-metrics-test-token-5f1e0c9a";
    SecretRegistry::add(token);  // as loadGatewayConfig does for every client token
    GatewayMetrics m;
    m.countRequest("svc-a", "/openai", 200);
    std::string text = m.render(twoGroups(), 1);
    QVERIFY(text.find("svc-a") != std::string::npos);
    QVERIFY(text.find(token) == std::string::npos);

    // A caller that passes the token where the client name belongs still does not publish it.
    m.countRequest(token, "/openai", 200);
    text = m.render(twoGroups(), 1);
    QVERIFY2(text.find(token) == std::string::npos, text.c_str());
    QVERIFY2(text.find(keyFingerprint(token)) != std::string::npos, text.c_str());
  }

  // A pass-through client's key that is also a word of the exposition ("group") rewrote the label name when the
  // whole text was redacted, and Prometheus refused every scrape: only label values are redacted now. Its own key
  // is not a series either (any client could add one, each with its fingerprint).
  void aClientsKeyNeitherBreaksNorJoinsTheScrape() {
    SecretRegistry::hold("group");
    SecretRegistry::hold("tollgate");
    EngineSnapshot s = twoGroups();
    if constexpr (kPerKey) {
      auto& own = s.groups[0].keyStates.emplace_back();
      own.fingerprint = keyFingerprint("group");
      own.clientsOwn = true;
      own.dims[int(Dimension::Requests)].remaining = 3;
    }
    GatewayMetrics m;
    m.countRequest("svc-a", "/openai", 200);
    const std::string text = m.render(s, 1);
    SecretRegistry::release("group");
    SecretRegistry::release("tollgate");
    const auto e = parseExposition(text);
    PARSED(e);
    QVERIFY(!e.named("tollgate_queue_depth").empty());
    QCOMPARE(e.value("tollgate_queue_depth", {{"group", "openai"}, {"tier", "P2"}}), 3.0);
    for (const auto& sm : e.named("tollgate_quota_remaining"))
      QVERIFY2(sm.labels.at("key") != keyFingerprint("group"), "a client's own key is a series");
  }

  // What the upstream answered, by class, and the retries: the 5xx the engine retried were seen nowhere.
  void upstreamAnswersByClass() {
    EngineSnapshot s = twoGroups();
    s.groups[0].counters.ok = 90;
    s.groups[0].counters.r5xx = 6;
    s.groups[0].counters.netErrors = 2;
    s.groups[0].counters.retries = 8;
    s.groups[0].counters.breakerOpens = 2;
    GatewayMetrics m;
    const auto e = parseExposition(m.render(s, 0));
    PARSED(e);
    QCOMPARE(e.value("tollgate_upstream_responses_total", {{"group", "openai"}, {"class", "2xx"}}), 90.0);
    QCOMPARE(e.value("tollgate_upstream_responses_total", {{"group", "openai"}, {"class", "5xx"}}), 6.0);
    QCOMPARE(e.value("tollgate_upstream_responses_total", {{"group", "openai"}, {"class", "network"}}), 2.0);
    QCOMPARE(e.value("tollgate_upstream_responses_total", {{"group", "openai"}, {"class", "429"}}), 7.0);
    QCOMPARE(e.value("tollgate_retries_total", {{"group", "openai"}}), 8.0);
    QCOMPARE(e.value("tollgate_breaker_opens_total", {{"group", "openai"}}), 2.0);
  }

  void emptySnapshotOnlyGatewayFamilies() {
    GatewayMetrics m;
    const auto e = parseExposition(m.render(EngineSnapshot{}, 0));
    PARSED(e);
    QCOMPARE(e.samples.size(), std::size_t(1));
    QCOMPARE(e.samples[0].name, std::string("tollgate_gateway_open_connections"));
    QCOMPARE(e.samples[0].value, 0.0);
  }

  void countsFromManyThreadsWhileScraping() {
    GatewayMetrics m;
    constexpr int kThreads = 4, kEach = 2000;
    std::atomic<bool> done{false};
    std::thread scraper([&] {
      while (!done) (void)m.render(twoGroups(), 0);
    });
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t)
      workers.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          m.countRequest("svc-" + std::to_string(t % 2), "/openai", 200);
          m.observeWait("openai", Tier(t % kTierCount), 0.01 * i);
        }
      });
    for (auto& w : workers) w.join();
    done = true;
    scraper.join();
    const auto e = parseExposition(m.render(EngineSnapshot{}, 0));
    PARSED(e);
    double requests = 0, waits = 0;
    for (const auto& s : e.named("tollgate_gateway_requests_total")) requests += s.value;
    for (const auto& s : e.named("tollgate_wait_seconds_count")) waits += s.value;
    QCOMPARE(requests, double(kThreads * kEach));
    QCOMPARE(waits, double(kThreads * kEach));
  }
};

QTEST_GUILESS_MAIN(TestGatewayMetrics)
#include "test_gateway_metrics.moc"
