// HistoryStore + HistoryReader against real SQLite files in a temporary directory.
#include "history_reader.h"
#include "history_store.h"
#include "secret.h"

#include <sqlite3.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <cmath>

using namespace tg;

namespace {

namespace history_test {
constexpr int kCurrentSchema = 4;
}

constexpr EpochMs kT0 = 1'796'000'000'000;  // 2026-11-29T..., any fixed wall-clock time works

Sample makeSample(const std::string& group, EpochMs ts, int sends = 10, int r429 = 0) {
  Sample s;
  s.tsMs = ts;
  s.group = group;
  s.sends = sends;
  s.ok = sends - r429;
  s.r429 = r429;
  s.reqRemaining = 500;
  s.reqLimit = 1000;
  s.inFlight = 2;
  s.concurrencyLimit = 8;
  s.p50Ms = 100;
  s.p95Ms = 200;
  return s;
}

HistoryOptions quietOptions() {
  HistoryOptions o;
  o.flushIntervalMs = 50;
  o.maintenanceIntervalMs = 3'600'000;  // tests run retention and detection explicitly
  o.incidentIntervalMs = 3'600'000;
  o.now = [] { return kT0; };
  return o;
}

QByteArray fileHash(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

// Runs SQL on a file with the plain C API (the test's own connection, not the store's).
void rawExec(const QString& path, const std::string& sql) {
  sqlite3* db = nullptr;
  QCOMPARE(sqlite3_open(path.toStdString().c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const QString msg = err ? err : "";
  sqlite3_free(err);
  QCOMPARE(sqlite3_close(db), SQLITE_OK);
  QVERIFY2(rc == SQLITE_OK, qPrintable(msg));
}

std::unique_ptr<HistoryStore> openStore(const QString& path, HistoryOptions o = quietOptions()) {
  std::string error;
  auto s = HistoryStore::open(path.toStdString(), std::move(o), &error);
  if (!s) qWarning("open failed: %s", error.c_str());
  return s;
}

std::unique_ptr<HistoryReader> openReader(const QString& path, bool strict = false) {
  std::string error;
  HistoryReaderOptions o;
  o.strict = strict;
  auto r = HistoryReader::open(path.toStdString(), o, &error);
  if (!r) qWarning("reader open failed: %s", error.c_str());
  return r;
}

bool sameDouble(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

class TestHistoryStore : public QObject {
  Q_OBJECT

 private slots:
  void roundTripSamplesAndEvents();
  void requestTableAggregatesPerMinute();
  void migratesV1File();
  void migratesV3FileRowsReadBackEqual();
  void compactEncodingRoundTrip();
  void retentionRollupsKeepSpikes();
  void downsamplingBoundsPointsKeepsMinMax();
  void incidentsDetectedMergedAndPersisted();
  void survivesKill9();
  void diskFullIsReportedAndRecovered();
  void refusesWithoutTouching_data();
  void refusesWithoutTouching();
  void readerLeavesFileUnchanged();
  void secretsNeverReachTheFile();

 private:
  QTemporaryDir dir_;
  QString file(const char* name) const { return dir_.filePath(name); }
};

void TestHistoryStore::roundTripSamplesAndEvents() {
  const QString path = file("roundtrip.db");
  std::vector<Sample> in;
  for (int i = 0; i < 50; ++i) {
    Sample s = makeSample(i % 2 ? "batch" : "interactive", kT0 + (i / 2) * 1000, 10 + i, i % 3);
    s.queueDepth = {i, 2 * i, 3 * i};
    s.arrivals = {i + 1, 0, 7};
    s.breaker = i % 5 == 0 ? BreakerState::Open : BreakerState::Closed;
    s.resetAtMs = kT0 + 60'000;
    s.tokLimit = 90'000.5;
    if (i % 4 == 0) {  // unknowns: stored as NULL, read back as NaN
      s.reqRemaining = kUnknown;
      s.p95Ms = kUnknown;
      s.tokRemaining = kUnknown;
    }
    in.push_back(s);
  }
  Event op;
  op.tsMs = kT0 + 5'000;
  op.kind = EventKind::OperatorAction;
  op.group = "interactive";
  op.message = "concurrency 8 -> 4";
  op.detail = {{"action", "set_concurrency"}, {"target", "interactive"}, {"before", 8}, {"after", 4},
               {"actor", "alice"}, {"instance", "host-a"}};
  Event burst;
  burst.tsMs = kT0 + 6'000;
  burst.kind = EventKind::Burst429Start;
  burst.severity = Severity::Warn;
  burst.group = "batch";
  burst.message = "429 burst";
  burst.detail = {{"peak_per_s", 12.5}};
  {
    auto store = openStore(path);
    QVERIFY(store);
    store->append(in);
    store->append(op);
    store->append(burst);
    QVERIFY(store->flush());
    const auto st = store->status();
    QVERIFY2(st.ok, st.lastError.c_str());
    QCOMPARE(st.rowsWritten, std::uint64_t(52));
    QCOMPARE(st.rowsPending, std::uint64_t(0));
    QVERIFY(st.fileBytes > 0);
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  QCOMPARE(reader->schemaVersion(), history_test::kCurrentSchema);
  auto groups = reader->groups();
  QVERIFY(groups.ok());
  QCOMPARE(groups.value, (std::vector<std::string>{"batch", "interactive"}));
  auto out = reader->rawSamples(kT0, kT0 + 3'600'000, {});
  QVERIFY2(out.ok(), out.error.c_str());
  QCOMPARE(out.value.size(), in.size());
  for (const Sample& a : in) {
    auto it = std::find_if(out.value.begin(), out.value.end(),
                           [&](const Sample& b) { return b.group == a.group && b.tsMs == a.tsMs; });
    QVERIFY(it != out.value.end());
    const Sample& b = *it;
    QVERIFY(sameDouble(a.reqRemaining, b.reqRemaining));
    QVERIFY(sameDouble(a.p95Ms, b.p95Ms));
    QVERIFY(sameDouble(a.tokRemaining, b.tokRemaining));
    QCOMPARE(b.tokLimit, a.tokLimit);
    QCOMPARE(b.queueDepth, a.queueDepth);
    QCOMPARE(b.arrivals, a.arrivals);
    QCOMPARE(b.sends, a.sends);
    QCOMPARE(b.r429, a.r429);
    QCOMPARE(b.breaker, a.breaker);
    QCOMPARE(b.resetAtMs, a.resetAtMs);
    QCOMPARE(b.intervalS, a.intervalS);
  }
  auto events = reader->events(kT0, kT0 + 10'000, {}, {});
  QVERIFY(events.ok());
  QCOMPARE(events.value.size(), std::size_t(2));
  QCOMPARE(events.value[0].kind, EventKind::OperatorAction);
  QCOMPARE(events.value[0].detail, op.detail);
  QCOMPARE(events.value[0].message, op.message);
  QCOMPARE(events.value[1].severity, Severity::Warn);
  QCOMPARE(events.value[1].detail["peak_per_s"].get<double>(), 12.5);
  auto onlyOps = reader->events(kT0, kT0 + 10'000, {"batch"}, {EventKind::OperatorAction});
  QVERIFY(onlyOps.ok());
  QCOMPARE(onlyOps.value.size(), std::size_t(0));  // operator action was on "interactive"
  auto range = reader->timeRange();
  QVERIFY(range.ok());
  QVERIFY(!range.value.empty);
  QCOMPARE(range.value.fromMs, kT0);
  QCOMPARE(range.value.toMs, kT0 + 24'000);
}

void TestHistoryStore::requestTableAggregatesPerMinute() {
  const QString path = file("requests.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    const EpochMs minute = kT0 - kT0 % 60'000;
    for (int i = 0; i < 100; ++i) {
      AttemptRecord a;
      a.tsMs = minute + i * 100;  // all within one minute
      a.group = "interactive";
      a.keyFingerprint = "k:0000aaaa";
      a.endpoint = "/v1/chat";
      a.status = i < 10 ? 429 : (i < 15 ? 503 : (i < 17 ? 0 : 200));
      a.rateLimited = a.status == 429;  // as the engine's verdict says; a 503 here has no Retry-After
      a.latencyMs = i + 1;  // 1..100
      a.retry = i % 10 == 0;
      store->append(a);
    }
    AttemptRecord other;
    other.tsMs = minute + 61'000;
    other.group = "batch";
    other.keyFingerprint = "k:0000bbbb";
    other.endpoint = "/v1/embed";
    other.status = 200;
    other.latencyMs = 40;
    store->append(other);
    QVERIFY(store->flush());
    // A later flush rewrites the still-open minute rather than adding to it.
    AttemptRecord late = other;
    late.tsMs += 1000;
    late.latencyMs = 60;
    store->append(late);
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  auto rows = reader->requestTable(kT0 - 120'000, kT0 + 600'000, true);
  QVERIFY2(rows.ok(), rows.error.c_str());
  QCOMPARE(rows.value.size(), std::size_t(2));
  const RequestRow& r = rows.value[0];
  QCOMPARE(r.group, std::string("interactive"));
  QCOMPARE(r.requests, std::int64_t(100));
  QCOMPARE(r.r429, std::int64_t(10));
  QCOMPARE(r.r5xx, std::int64_t(5));
  QCOMPARE(r.netErrors, std::int64_t(2));
  QCOMPARE(r.retries, std::int64_t(10));
  QCOMPARE(r.avgLatencyMs, 50.5);
  QVERIFY2(r.p95LatencyMs >= 94 && r.p95LatencyMs <= 96, qPrintable(QString::number(r.p95LatencyMs)));
  QCOMPARE(rows.value[1].requests, std::int64_t(2));
  QCOMPARE(rows.value[1].avgLatencyMs, 50.0);
  auto totals = reader->requestTable(kT0 - 120'000, kT0 + 600'000, false);
  QVERIFY(totals.ok());
  QCOMPARE(totals.value.size(), std::size_t(2));
  QCOMPARE(totals.value[0].requests, std::int64_t(100));  // busiest first
}

void TestHistoryStore::migratesV1File() {
  const QString path = file("v1.db");
  QFile fixture(HISTORY_FIXTURES "/history_v1.sql");
  QVERIFY(fixture.open(QIODevice::ReadOnly));
  rawExec(path, fixture.readAll().toStdString());

  // The reader reads a v1 file as it is, without migrating or touching it.
  const QByteArray before = fileHash(path);
  {
    auto reader = openReader(path);
    QVERIFY(reader);
    QCOMPARE(reader->schemaVersion(), 1);
    auto rows = reader->requestTable(0, kT0 + 3'600'000);
    QVERIFY2(rows.ok(), rows.error.c_str());
    QCOMPARE(rows.value.size(), std::size_t(1));
    QVERIFY(std::isnan(rows.value[0].p95LatencyMs));  // v1 kept no p95
    auto inc = reader->incidents();
    QVERIFY(inc.ok());
    QVERIFY(inc.value.empty());
  }
  QCOMPARE(fileHash(path), before);

  {
    auto store = openStore(path);
    QVERIFY(store);
    QCOMPARE(store->status().schemaVersion, history_test::kCurrentSchema);
    AttemptRecord a;
    a.tsMs = kT0 + 120'000;
    a.group = "interactive";
    a.keyFingerprint = "k:0badf00d";
    a.endpoint = "/v1/chat";
    a.status = 200;
    a.latencyMs = 10;
    store->append(a);
    store->append(std::vector<Sample>{makeSample("interactive", kT0 + 120'000)});
    QVERIFY(store->flush());
    QVERIFY(store->detectIncidents());  // the v2 incidents table exists and works
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  QCOMPARE(reader->schemaVersion(), history_test::kCurrentSchema);
  auto samples = reader->rawSamples(0, kT0 + 3'600'000, {"interactive"});
  QVERIFY(samples.ok());
  QCOMPARE(samples.value.size(), std::size_t(3));  // two from v1, one new
  QCOMPARE(samples.value[0].p95Ms, 340.25);
  QCOMPARE(samples.value[0].arrivals, (std::array<int, kTierCount>{0, 0, 0}));  // not recorded before v3
  QVERIFY(std::isnan(samples.value[1].p95Ms));
  auto rows = reader->requestTable(0, kT0 + 3'600'000, true);
  QVERIFY(rows.ok());
  QCOMPARE(rows.value.size(), std::size_t(2));
  QVERIFY(std::isnan(rows.value[0].p95LatencyMs));  // migrated row: unknown, not invented
  QCOMPARE(rows.value[0].requests, std::int64_t(22));
  QCOMPARE(rows.value[1].p95LatencyMs, 10.0);
  auto events = reader->events(0, kT0 + 3'600'000, {}, {EventKind::OperatorAction});
  QVERIFY(events.ok());
  QCOMPARE(events.value.size(), std::size_t(1));
  QCOMPARE(events.value[0].detail["actor"].get<std::string>(), std::string("ops"));
  auto check = reader->integrityCheck();
  QVERIFY(check.ok());
  QCOMPARE(check.value, std::vector<std::string>{"ok"});
}

// A v3 file (REAL latencies in ms, absolute reset_at_ms, REAL rollup averages; written by the v3 build)
// migrates to the compact v4 encoding: raw rows and chart buckets read back equal, latencies to 1 us.
void TestHistoryStore::migratesV3FileRowsReadBackEqual() {
  const QString path = file("v3.db");
  QFile fixture(HISTORY_FIXTURES "/history_v3.sql");
  QVERIFY(fixture.open(QIODevice::ReadOnly));
  rawExec(path, fixture.readAll().toStdString());
  constexpr EpochMs from = 1'795'999'980'000 - 2 * 86'400'000LL, to = 1'796'000'200'000;
  auto close = [](double a, double b, double tol) {
    return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) <= tol;
  };
  std::vector<Sample> before;
  std::vector<std::vector<SampleSeries>> seriesBefore;
  const std::vector<int> points{1, 7, 25, 2000};
  const std::vector<std::pair<EpochMs, EpochMs>> spans{{from, to}, {1'795'999'980'000, to}, {1'795'999'980'000 + 3'000, 1'795'999'980'000 + 97'000}};
  {
    auto reader = openReader(path);
    QVERIFY(reader);
    QCOMPARE(reader->schemaVersion(), 3);
    auto raw = reader->rawSamples(from, to, {});
    QVERIFY2(raw.ok(), raw.error.c_str());
    before = raw.value;
    for (const auto& [f, t] : spans)
      for (int p : points) {
        auto s = reader->samples(f, t, {}, p);
        QVERIFY2(s.ok(), s.error.c_str());
        seriesBefore.push_back(s.value);
      }
  }
  QCOMPARE(before.size(), std::size_t(300));
  {
    auto store = openStore(path);
    QVERIFY(store);
    QCOMPARE(store->status().schemaVersion, history_test::kCurrentSchema);
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  QCOMPARE(reader->schemaVersion(), history_test::kCurrentSchema);
  auto raw = reader->rawSamples(from, to, {});
  QVERIFY2(raw.ok(), raw.error.c_str());
  QCOMPARE(raw.value.size(), before.size());
  int nullP95 = 0, zeroReset = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const Sample &a = before[i], &b = raw.value[i];
    QCOMPARE(b.group, a.group);
    QCOMPARE(b.tsMs, a.tsMs);
    QVERIFY(sameDouble(b.reqRemaining, a.reqRemaining));
    QVERIFY(sameDouble(b.reqLimit, a.reqLimit));
    QVERIFY(sameDouble(b.tokRemaining, a.tokRemaining));
    QVERIFY(sameDouble(b.tokLimit, a.tokLimit));
    QCOMPARE(b.resetAtMs, a.resetAtMs);
    QCOMPARE(b.inFlight, a.inFlight);
    QCOMPARE(b.concurrencyLimit, a.concurrencyLimit);
    QCOMPARE(b.queueDepth, a.queueDepth);
    QCOMPARE(b.sends, a.sends);
    QCOMPARE(b.ok, a.ok);
    QCOMPARE(b.r429, a.r429);
    QCOMPARE(b.r5xx, a.r5xx);
    QCOMPARE(b.retries, a.retries);
    QCOMPARE(b.shed, a.shed);
    QCOMPARE(b.arrivals, a.arrivals);
    QCOMPARE(b.breaker, a.breaker);
    QCOMPARE(b.intervalS, a.intervalS);
    QVERIFY2(close(b.p50Ms, a.p50Ms, 0.0005 + 1e-9), qPrintable(QString::number(a.p50Ms) + " " + QString::number(b.p50Ms)));
    QVERIFY(close(b.p95Ms, a.p95Ms, 0.0005 + 1e-9));
    nullP95 += std::isnan(a.p95Ms);
    zeroReset += a.resetAtMs == 0;
  }
  QVERIFY(nullP95 > 0);  // the fixture covers unknowns
  QVERIFY(zeroReset > 0);
  std::size_t k = 0;
  for (const auto& [f, t] : spans)
    for (int p : points) {
      auto s = reader->samples(f, t, {}, p);
      QVERIFY2(s.ok(), s.error.c_str());
      const auto& old = seriesBefore[k++];
      QCOMPARE(s.value.size(), old.size());
      for (std::size_t g = 0; g < old.size(); ++g) {
        QCOMPARE(s.value[g].group, old[g].group);
        QCOMPARE(s.value[g].bucketMs, old[g].bucketMs);
        QCOMPARE(s.value[g].buckets.size(), old[g].buckets.size());
        for (std::size_t i = 0; i < old[g].buckets.size(); ++i) {
          const auto &x = old[g].buckets[i], &y = s.value[g].buckets[i];
          QCOMPARE(y.startMs, x.startMs);
          QCOMPARE(y.firstTsMs, x.firstTsMs);
          QCOMPARE(y.lastTsMs, x.lastTsMs);
          QCOMPARE(y.rows, x.rows);
          QCOMPARE(y.fromRollup, x.fromRollup);
          for (int m = 0; m < kMetricCount; ++m) {
            const double tol = (m == static_cast<int>(Metric::P50Ms) || m == static_cast<int>(Metric::P95Ms)) ? 0.0005 + 1e-9 : 1e-9;
            QVERIFY2(close(y.m[m].min, x.m[m].min, tol) && close(y.m[m].max, x.m[m].max, tol) &&
                         close(y.m[m].avg, x.m[m].avg, std::max(tol, 1e-9 * std::abs(x.m[m].avg))),
                     qPrintable(QString("p=%1 metric %2: %3/%4/%5 vs %6/%7/%8")
                                    .arg(p)
                                    .arg(QString::fromStdString(std::string(metricName(static_cast<Metric>(m)))))
                                    .arg(x.m[m].min).arg(x.m[m].max).arg(x.m[m].avg)
                                    .arg(y.m[m].min).arg(y.m[m].max).arg(y.m[m].avg)));
          }
        }
      }
    }
  auto check = reader->integrityCheck();
  QVERIFY(check.ok());
  QCOMPARE(check.value, std::vector<std::string>{"ok"});
}

// What the v4 encoding must not lose: unknown vs zero, negative reset offsets, fractional limits, latency
// to 1 us, huge counts; and rollup sums stay exact.
void TestHistoryStore::compactEncodingRoundTrip() {
  const QString path = file("compact.db");
  std::vector<Sample> in;
  for (int i = 0; i < 120; ++i) {
    Sample s = makeSample("g", kT0 - kT0 % 60'000 + i * 1000, 7 + i % 3, i % 2);
    s.p50Ms = i % 10 == 0 ? kUnknown : 0.001 * i + 12.5;
    s.p95Ms = i == 5 ? 0.0 : 3'600'000.123;  // an hour: larger than 3 bytes of us
    s.resetAtMs = i % 3 == 0 ? 0 : s.tsMs + (i % 2 ? -1500 : 59'000);
    s.tokLimit = 1234.75;
    s.tokRemaining = i % 4 == 0 ? kUnknown : 0;
    s.sends = i == 77 ? 2'000'000'000 : s.sends;
    s.intervalS = i == 9 ? 1.25 : 1.0;
    in.push_back(s);
  }
  {
    auto store = openStore(path);
    QVERIFY(store);
    store->append(in);
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  auto out = reader->rawSamples(0, kT0 + 3'600'000, {});
  QVERIFY(out.ok());
  QCOMPARE(out.value.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Sample &a = in[i], &b = out.value[i];
    QCOMPARE(b.resetAtMs, a.resetAtMs);
    QVERIFY(sameDouble(b.tokRemaining, a.tokRemaining));
    QCOMPARE(b.tokLimit, a.tokLimit);
    QCOMPARE(b.sends, a.sends);
    QCOMPARE(b.intervalS, a.intervalS);
    QVERIFY(std::isnan(a.p50Ms) ? std::isnan(b.p50Ms) : std::abs(a.p50Ms - b.p50Ms) < 1e-9);
    QVERIFY(std::abs(a.p95Ms - b.p95Ms) <= 0.0005 + 1e-9);
  }
  // One bucket per minute from the minute tier: exact sums, latency averages over known values.
  auto series = reader->samples(in.front().tsMs, in.front().tsMs + 120'000, {}, 2);
  QVERIFY(series.ok());
  QCOMPARE(series.value.size(), std::size_t(1));
  const auto& buckets = series.value[0].buckets;
  QCOMPARE(buckets.size(), std::size_t(2));
  double sends = 0, p50Sum = 0;
  int p50Known = 0;
  for (int i = 0; i < 60; ++i) {
    sends += in[static_cast<std::size_t>(i)].sends;
    if (!std::isnan(in[static_cast<std::size_t>(i)].p50Ms)) {
      p50Sum += in[static_cast<std::size_t>(i)].p50Ms;
      ++p50Known;
    }
  }
  QVERIFY(std::abs(buckets[0][Metric::Sends].avg * 60 - sends) < 1e-6);
  QCOMPARE(buckets[1][Metric::Sends].max, 2'000'000'000.0);
  QVERIFY(std::abs(buckets[0][Metric::P50Ms].avg - p50Sum / p50Known) <= 0.0005 + 1e-9);
  QCOMPARE(buckets[0][Metric::P95Ms].min, 0.0);
}

void TestHistoryStore::retentionRollupsKeepSpikes() {
  const QString path = file("retention.db");
  HistoryOptions o = quietOptions();
  o.fullResolutionMs = 3'600'000;   // 1 h full resolution
  o.retainMs = 24 * 3'600'000LL;    // 1 day in all
  auto store = openStore(path, o);
  QVERIFY(store);
  const EpochMs start = kT0 - kT0 % 60'000;
  std::vector<Sample> rows;
  for (int i = 0; i < 3 * 3600; ++i) {  // 3 hours at 1 s
    Sample s = makeSample("g", start + i * 1000, 10, 0);
    s.inFlight = 2;
    if (i == 1234) {  // a one-second spike in the first hour
      s.r429 = 977;
      s.inFlight = 64;
    }
    if (i == 1300) s.reqRemaining = 3;  // a dip
    rows.push_back(s);
  }
  store->append(rows);
  Event old;
  old.tsMs = start + 10'000;
  old.kind = EventKind::ConfigReload;
  store->append(old);
  QVERIFY(store->flush());

  // Now = start + 3 h: the first 2 h leave full resolution.
  QVERIFY(store->runRetention(start + 3 * 3'600'000));
  auto reader = openReader(path);
  QVERIFY(reader);
  auto raw = reader->rawSamples(start, start + 3 * 3'600'000, {});
  QVERIFY(raw.ok());
  QCOMPARE(raw.value.size(), std::size_t(3600));  // only the last hour is left at 1 s
  QCOMPARE(raw.value.front().tsMs, start + 2 * 3'600'000);

  auto series = reader->samples(start, start + 3 * 3'600'000, {"g"}, 30);
  QVERIFY2(series.ok(), series.error.c_str());
  QCOMPARE(series.value.size(), std::size_t(1));
  const auto& buckets = series.value[0].buckets;
  QVERIFY(buckets.size() <= 30);
  double maxR429 = 0, maxInFlight = 0, minRemaining = 1e9;
  std::int64_t rowsSeen = 0;
  bool anyRollup = false;
  for (const auto& b : buckets) {
    maxR429 = std::max(maxR429, b[Metric::R429].max);
    maxInFlight = std::max(maxInFlight, b[Metric::InFlight].max);
    minRemaining = std::min(minRemaining, b[Metric::ReqRemaining].min);
    rowsSeen += b.rows;
    anyRollup = anyRollup || b.fromRollup;
  }
  QVERIFY(anyRollup);
  QCOMPARE(maxR429, 977.0);  // the spike survives the rollup
  QCOMPARE(maxInFlight, 64.0);
  QCOMPARE(minRemaining, 3.0);
  QCOMPARE(rowsSeen, std::int64_t(3 * 3600));
  // The average over the rolled-up hour is still right: (3599 * 0 + 977) / 3600.
  double sum429 = 0;
  for (const auto& b : buckets)
    if (b.startMs < start + 3'600'000) sum429 += b[Metric::R429].avg * static_cast<double>(b.rows);
  QVERIFY(std::abs(sum429 - 977) < 1e-6);

  // A late sample for the expired span (a clock jump, a backlog) is merged into the minute rollups.
  Sample lateSpike = makeSample("g", start + 600'500, 10, 0);
  lateSpike.inFlight = 99;
  store->append(std::vector<Sample>{lateSpike});
  QVERIFY(store->flush());
  auto lateRaw = reader->rawSamples(start, start + 3'600'000, {});
  QVERIFY(lateRaw.ok());
  QVERIFY(lateRaw.value.empty());
  auto withLate = reader->samples(start, start + 3 * 3'600'000, {"g"}, 30);
  QVERIFY(withLate.ok());
  double lateMax = 0;
  std::int64_t lateRows = 0;
  for (const auto& b : withLate.value[0].buckets) {
    lateMax = std::max(lateMax, b[Metric::InFlight].max);
    lateRows += b.rows;
  }
  QCOMPARE(lateMax, 99.0);
  QCOMPARE(lateRows, std::int64_t(3 * 3600 + 1));

  // Retention twice is harmless, then everything expires.
  QVERIFY(store->runRetention(start + 3 * 3'600'000));
  QVERIFY(store->runRetention(start + 30 * 3'600'000));
  auto gone = reader->samples(start, start + 3 * 3'600'000, {"g"}, 30);
  QVERIFY(gone.ok());
  QVERIFY(gone.value.empty() || gone.value[0].buckets.empty());
  auto events = reader->events(0, start + 30 * 3'600'000, {}, {});
  QVERIFY(events.ok());
  QVERIFY(events.value.empty());
  QVERIFY(store->status().fileBytes > 0);
}

void TestHistoryStore::downsamplingBoundsPointsKeepsMinMax() {
  const QString path = file("downsample.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    std::vector<Sample> rows;
    for (int i = 0; i < 20'000; ++i) {
      Sample s = makeSample(i % 2 ? "a" : "b", kT0 + (i / 2) * 1000);
      s.sends = 50 + static_cast<int>(40 * std::sin(i / 300.0));
      s.p95Ms = (i / 2 >= 5000 && i / 2 < 5300) ? kUnknown : 100.0 + i % 7;  // a 300 s gap in p95
      if (i == 7777) s.sends = 5000;
      if (i == 8888) s.sends = -3;
      rows.push_back(s);
    }
    store->append(rows);
    QVERIFY(store->flush());
  }
  auto reader = openReader(path);
  QVERIFY(reader);
  for (int maxPoints : {1, 7, 100, 2000, 50'000}) {
    auto series = reader->samples(kT0, kT0 + 10'000'000, {}, maxPoints);
    QVERIFY2(series.ok(), series.error.c_str());
    QCOMPARE(series.value.size(), std::size_t(2));
    for (const auto& s : series.value) {
      QVERIFY2(s.buckets.size() <= static_cast<std::size_t>(maxPoints),
               qPrintable(QString("%1 buckets for maxPoints %2").arg(s.buckets.size()).arg(maxPoints)));
      double mx = -1e9, mn = 1e9;
      std::int64_t n = 0;
      for (const auto& b : s.buckets) {
        mx = std::max(mx, b[Metric::Sends].max);
        mn = std::min(mn, b[Metric::Sends].min);
        n += b.rows;
        QVERIFY(b[Metric::Sends].min <= b[Metric::Sends].avg && b[Metric::Sends].avg <= b[Metric::Sends].max);
      }
      QCOMPARE(n, std::int64_t(10'000));
      if (s.group == "a") QCOMPARE(mx, 5000.0);
      if (s.group == "b") QCOMPARE(mn, -3.0);
    }
  }
  // Inside the p95 gap every bucket reads NaN: a gap, not a zero.
  auto fine = reader->samples(kT0 + 5'000'000, kT0 + 5'300'000, {"a"}, 30);
  QVERIFY(fine.ok());
  QCOMPARE(fine.value[0].buckets.size(), std::size_t(30));
  for (const auto& b : fine.value[0].buckets) QVERIFY(std::isnan(b[Metric::P95Ms].avg) && std::isnan(b[Metric::P95Ms].max));
}

void TestHistoryStore::incidentsDetectedMergedAndPersisted() {
  const QString path = file("incidents.db");
  auto store = openStore(path);
  QVERIFY(store);
  // One hour, two groups, 1 s samples. Trouble (50% 429s in "a") at 600-630 s and 660-680 s: 30 s apart,
  // so one incident; again at 3550-3580 s in "b": far apart, a second incident.
  std::vector<Sample> rows;
  for (int t = 1; t <= 3600; ++t) {
    for (const char* g : {"a", "b"}) {
      const bool hotA = std::string(g) == "a" && ((t > 600 && t <= 630) || (t > 660 && t <= 680));
      const bool hotB = std::string(g) == "b" && t > 3550 && t <= 3580;
      rows.push_back(makeSample(g, kT0 + t * 1000, 20, hotA || hotB ? 10 : 0));
    }
  }
  store->append(rows);
  Event op;
  op.tsMs = kT0 + 640'000;
  op.kind = EventKind::OperatorAction;
  op.group = "a";
  op.message = "concurrency 8 -> 2";
  op.detail = {{"action", "set_concurrency"}, {"target", "a"}, {"before", 8}, {"after", 2}, {"actor", "bob"},
               {"instance", "host-b"}};
  store->append(op);
  QVERIFY(store->detectIncidents());
  QVERIFY(store->detectIncidents());  // idempotent

  auto reader = openReader(path);
  QVERIFY(reader);
  auto list = reader->incidents();
  QVERIFY2(list.ok(), list.error.c_str());
  QCOMPARE(list.value.size(), std::size_t(2));
  const Incident& first = list.value[0];
  QVERIFY(first.startMs >= kT0 + 600'000 && first.startMs <= kT0 + 610'000);
  QCOMPARE(first.endMs, kT0 + 680'000);
  QCOMPARE(first.groups, std::vector<std::string>{"a"});
  QCOMPARE(first.peak429PerS, 10.0);
  QCOMPARE(first.total429, std::int64_t(500));
  QCOMPARE(first.operatorActions.size(), std::size_t(1));
  QCOMPARE(first.operatorActions[0].detail["actor"].get<std::string>(), std::string("bob"));
  const Incident& second = list.value[1];
  QCOMPARE(second.groups, std::vector<std::string>{"b"});
  QCOMPARE(second.total429, std::int64_t(300));
  QCOMPARE(second.operatorActions.size(), std::size_t(0));

  auto one = reader->incident(second.id);
  QVERIFY(one.ok());
  QVERIFY(one.value.has_value());
  QCOMPARE(one.value->startMs, second.startMs);
  auto none = reader->incident(9999);
  QVERIFY(none.ok());
  QVERIFY(!none.value.has_value());

  // The second incident grows when more trouble arrives within the merge gap; it keeps its id.
  std::vector<Sample> more;
  for (int t = 3601; t <= 3700; ++t) more.push_back(makeSample("b", kT0 + t * 1000, 20, t > 3620 && t <= 3640 ? 10 : 0));
  store->append(more);
  QVERIFY(store->detectIncidents());
  auto again = reader->incidents();
  QVERIFY(again.ok());
  QCOMPARE(again.value.size(), std::size_t(2));
  QCOMPARE(again.value[0].id, first.id);
  QCOMPARE(again.value[1].id, second.id);
  QCOMPARE(again.value[1].endMs, kT0 + 3'640'000);
  QCOMPARE(again.value[1].total429, std::int64_t(500));
}

void TestHistoryStore::survivesKill9() {
  const QString path = file("crash.db");
  QProcess child;
  child.start(HISTORY_CRASH_WRITER, {path});
  QVERIFY(child.waitForStarted(5000));
  QByteArray output;
  int flushes = 0;
  QElapsedTimer timer;
  timer.start();
  while (flushes < 8 && timer.elapsed() < 15'000) {
    child.waitForReadyRead(200);
    output += child.readAllStandardOutput();
    flushes = static_cast<int>(output.count("flushed"));
  }
  QVERIFY2(flushes >= 8, child.readAllStandardError().constData());
  child.kill();  // SIGKILL, mid-write
  QVERIFY(child.waitForFinished(5000));
  output += child.readAllStandardOutput();
  const auto lines = output.trimmed().split('\n');
  qint64 confirmed = 0;
  for (const auto& l : lines)
    if (l.startsWith("flushed ")) confirmed = std::max(confirmed, l.mid(8).toLongLong());
  QVERIFY(confirmed > 0);

  {
    auto reader = openReader(path);
    QVERIFY(reader);
    auto check = reader->integrityCheck();
    QVERIFY2(check.ok(), check.error.c_str());
    QCOMPARE(check.value, std::vector<std::string>{"ok"});
    auto rows = reader->rawSamples(0, 1LL << 40, {"g"});
    QVERIFY(rows.ok());
    const auto n = static_cast<qint64>(rows.value.size());
    // Everything confirmed is there, and what is there is a gap-free prefix (whole transactions only).
    QVERIFY2(n >= confirmed, qPrintable(QString("%1 rows, %2 confirmed").arg(n).arg(confirmed)));
    QCOMPARE(rows.value.back().tsMs, n);
    // At most the batches appended after the last confirmed flush (10 x 500) plus one flush are missing.
    qInfo("kill -9: %lld rows confirmed before the kill, %lld rows in the file", confirmed, n);
  }
  auto store = openStore(path);  // and the writer carries on
  QVERIFY(store);
  store->append(std::vector<Sample>{makeSample("g", 1LL << 39)});
  QVERIFY(store->flush());
}

void TestHistoryStore::diskFullIsReportedAndRecovered() {
  const QString path = file("full.db");
  HistoryOptions o = quietOptions();
  o.maxFileBytes = 160 * 1024;  // PRAGMA max_page_count: 40 pages
  o.maxPendingSamples = 2000;
  auto store = openStore(path, o);
  QVERIFY(store);
  std::vector<Sample> early;
  for (int i = 0; i < 100; ++i) early.push_back(makeSample("g", kT0 + i * 1000));
  store->append(early);
  QVERIFY(store->flush());

  // Fill the file; the engine side keeps appending and must never wait for the writer.
  std::int64_t worstAppendUs = 0;
  bool failed = false;
  for (int batch = 0; batch < 100 && !failed; ++batch) {
    std::vector<Sample> rows;
    for (int i = 0; i < 100; ++i) rows.push_back(makeSample("g", kT0 + 100'000 + (batch * 100 + i) * 1000));
    const auto t0 = std::chrono::steady_clock::now();
    store->append(std::move(rows));
    worstAppendUs = std::max<std::int64_t>(
        worstAppendUs, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    if (batch % 10 == 9) failed = !store->flush();
  }
  QVERIFY(failed);
  // Keep appending while it is failing.
  for (int batch = 0; batch < 30; ++batch) {
    std::vector<Sample> rows;
    for (int i = 0; i < 100; ++i) rows.push_back(makeSample("g", kT0 + 20'000'000 + (batch * 100 + i) * 1000));
    const auto t0 = std::chrono::steady_clock::now();
    store->append(std::move(rows));
    worstAppendUs = std::max<std::int64_t>(
        worstAppendUs, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  QVERIFY(!store->flush());
  auto st = store->status();
  QVERIFY(!st.ok);
  QVERIFY2(st.lastError.find("full") != std::string::npos, st.lastError.c_str());
  QVERIFY(st.rowsDropped > 0);
  QVERIFY(st.rowsPending > 0 && st.rowsPending <= o.maxPendingSamples);
  QVERIFY2(worstAppendUs < 20'000, qPrintable(QString("append took %1 us").arg(worstAppendUs)));
  qInfo("disk full: '%s', %llu dropped, %llu pending, worst append %lld us", st.lastError.c_str(),
        static_cast<unsigned long long>(st.rowsDropped), static_cast<unsigned long long>(st.rowsPending),
        static_cast<long long>(worstAppendUs));

  store->setMaxFileBytes(0);  // room again
  QVERIFY(store->flush());
  st = store->status();
  QVERIFY2(st.ok, st.lastError.c_str());
  QCOMPARE(st.rowsPending, std::uint64_t(0));

  auto reader = openReader(path);
  QVERIFY(reader);
  auto gaps = reader->events(0, 1LL << 50, {}, {EventKind::HistoryGap});
  QVERIFY(gaps.ok());
  QCOMPARE(gaps.value.size(), std::size_t(1));
  const auto& gap = gaps.value[0].detail;
  QVERIFY(gap["from_ms"].get<EpochMs>() >= kT0 + 100'000);
  QVERIFY(gap["to_ms"].get<EpochMs>() >= gap["from_ms"].get<EpochMs>());
  QCOMPARE(gap["rows"].get<std::uint64_t>(), st.rowsDropped);
  auto rows = reader->rawSamples(kT0, kT0 + 100'000, {"g"});
  QVERIFY(rows.ok());
  QCOMPARE(rows.value.size(), std::size_t(100));  // earlier rows intact
  auto late = reader->rawSamples(kT0 + 20'000'000, 1LL << 50, {"g"});
  QVERIFY(late.ok());
  // The buffer kept the newest rows (its bound), and they were written once there was room.
  QCOMPARE(late.value.size(), o.maxPendingSamples);
  QCOMPARE(late.value.back().tsMs, kT0 + 20'000'000 + 2999 * 1000);
  auto check = reader->integrityCheck();
  QVERIFY(check.ok());
  QCOMPARE(check.value, std::vector<std::string>{"ok"});
}

void TestHistoryStore::refusesWithoutTouching_data() {
  QTest::addColumn<QString>("kind");
  QTest::addColumn<QString>("expected");
  QTest::newRow("newer schema") << "newer" << "newer than this build";
  QTest::newRow("corrupt") << "corrupt" << "corrupt";
  QTest::newRow("not sqlite") << "text" << "not a SQLite database";
  QTest::newRow("other application") << "foreign" << "not a Tollgate history file";
}

void TestHistoryStore::refusesWithoutTouching() {
  QFETCH(QString, kind);
  QFETCH(QString, expected);
  const QString path = dir_.filePath("refuse-" + kind + ".db");
  if (kind == "text") {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("ts,group\n1,a\nthis is a CSV export, not a database\n");
  } else if (kind == "foreign") {
    rawExec(path, "CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES('x');");
  } else {
    {
      auto store = openStore(path);
      QVERIFY(store);
      std::vector<Sample> rows;
      for (int i = 0; i < 5000; ++i) rows.push_back(makeSample("g", kT0 + i * 1000));
      store->append(rows);
      QVERIFY(store->flush());
    }
    if (kind == "newer") {
      rawExec(path, "PRAGMA user_version = 99;");
    } else {
      QFile f(path);
      QVERIFY(f.open(QIODevice::ReadWrite));
      QVERIFY(f.size() > 16 * 4096);
      QVERIFY(f.seek(4 * 4096));
      f.write(QByteArray(8 * 4096, '\x5a'));  // pages 5..12: b-tree pages turned to garbage
    }
  }
  QFile::remove(path + "-wal");
  QFile::remove(path + "-shm");
  const QByteArray before = fileHash(path);
  QVERIFY(!before.isEmpty());

  std::string error;
  auto store = HistoryStore::open(path.toStdString(), quietOptions(), &error);
  QVERIFY(!store);
  QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
  QVERIFY2(QString::fromStdString(error).contains(path), error.c_str());  // names the file
  HistoryReaderOptions ro;
  ro.quickCheck = true;
  auto reader = HistoryReader::open(path.toStdString(), ro, &error);
  QVERIFY(!reader);
  QCOMPARE(fileHash(path), before);
  QVERIFY(!QFile::exists(path + "-wal") || QFileInfo(path + "-wal").size() == 0);
}

void TestHistoryStore::readerLeavesFileUnchanged() {
  const QString path = file("readonly.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    std::vector<Sample> rows;
    for (int i = 0; i < 1000; ++i) rows.push_back(makeSample("g", kT0 + i * 1000));
    store->append(rows);
    QVERIFY(store->detectIncidents());
  }
  QVERIFY(!QFile::exists(path + "-wal"));  // the writer checkpointed on close
  const QByteArray before = fileHash(path);
  const QDateTime mtime = QFileInfo(path).lastModified();
  for (bool strict : {true, false}) {
    auto reader = openReader(path, strict);
    QVERIFY(reader);
    QVERIFY(reader->samples(kT0, kT0 + 1'000'000, {}, 100).ok());
    QVERIFY(reader->rawSamples(kT0, kT0 + 1'000'000, {}).ok());
    QVERIFY(reader->events(kT0, kT0 + 1'000'000, {}, {}).ok());
    QVERIFY(reader->requestTable(kT0, kT0 + 1'000'000).ok());
    QVERIFY(reader->incidents().ok());
    QVERIFY(reader->integrityCheck().ok());
    if (strict) {  // immutable: nothing at all next to the file
      QVERIFY(!QFile::exists(path + "-wal"));
      QVERIFY(!QFile::exists(path + "-shm"));
    }
    reader.reset();
    QCOMPARE(fileHash(path), before);
    QCOMPARE(QFileInfo(path).lastModified(), mtime);
  }
  // A read-only file on disk: reading works, writing is refused with a clear message.
  QFile::remove(path + "-wal");
  QFile::remove(path + "-shm");
  QVERIFY(QFile::setPermissions(path, QFile::ReadOwner));
  if (QFileInfo(path).isWritable()) QSKIP("running as root: permissions are not enforced");
  auto strictReader = openReader(path, true);
  QVERIFY(strictReader);
  QVERIFY(strictReader->rawSamples(kT0, kT0 + 1'000'000, {}).ok());
  std::string error;
  QVERIFY(!HistoryStore::open(path.toStdString(), quietOptions(), &error));
  QVERIFY2(QString::fromStdString(error).contains("read-only") || QString::fromStdString(error).contains("readonly"),
           error.c_str());
  QCOMPARE(fileHash(path), before);
}

void TestHistoryStore::secretsNeverReachTheFile() {
  const std::string secret = "sk-live-TOLLGATE-TEST-4f9b2c7d1e";
  SecretRegistry::add(secret);
  const QString path = file("secrets.db");
  {
    auto store = openStore(path);
    QVERIFY(store);
    AttemptRecord good;
    good.tsMs = kT0;
    good.group = "g";
    good.keyFingerprint = keyFingerprint(secret);
    good.endpoint = "/v1/chat";
    good.status = 200;
    store->append(good);
    AttemptRecord careless = good;  // a caller that passed the key itself
    careless.keyFingerprint = secret;
    careless.endpoint = "/v1/chat/" + secret;
    store->append(careless);
    Event e;
    e.tsMs = kT0;
    e.kind = EventKind::RequestFailed;
    e.group = "g";
    e.message = "401 for key " + secret;
    e.detail = {{"header", "Authorization: Bearer " + secret}};
    store->append(e);
    QVERIFY(store->flush());
  }
  // No text value in any table holds the secret...
  sqlite3* db = nullptr;
  QCOMPARE(sqlite3_open_v2(path.toStdString().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::vector<std::string> tables;
  {
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table'", -1, &st, nullptr), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    QCOMPARE(sqlite3_finalize(st), SQLITE_OK);
  }
  QVERIFY(tables.size() >= 7);
  int fingerprints = 0;
  for (const auto& t : tables) {
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(db, ("SELECT * FROM " + t).c_str(), -1, &st, nullptr), SQLITE_OK);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        if (sqlite3_column_type(st, c) != SQLITE_TEXT) continue;
        const std::string v(reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
        QVERIFY2(v.find(secret) == std::string::npos, (t + ": " + v).c_str());
        if (v.find(keyFingerprint(secret)) != std::string::npos) ++fingerprints;
      }
    }
    QCOMPARE(rc, SQLITE_DONE);
    QCOMPARE(sqlite3_finalize(st), SQLITE_OK);
  }
  QCOMPARE(sqlite3_close(db), SQLITE_OK);
  QVERIFY(fingerprints >= 3);  // the key is still identifiable by its fingerprint
  // ...and neither do the raw bytes (free pages, WAL).
  for (const QString& f : {path, path + "-wal"}) {
    QFile in(f);
    if (!in.open(QIODevice::ReadOnly)) continue;
    QVERIFY(!in.readAll().contains(QByteArray::fromStdString(secret)));
  }
}

QTEST_GUILESS_MAIN(TestHistoryStore)
#include "test_history_store.moc"
