// What-if re-drive end to end: an incident recorded on purpose (engine + simulator + quota drop) is found,
// rebuilt as a workload and an upstream schedule, and re-driven: unedited it pays about the recording's 429s,
// with halved concurrency fewer than the recording; the report names the incident and holds its events; the
// Markdown report lists the timeline.
#include "incident_report.h"
#include "replay_recording.h"
#include "what_if_runner.h"

#include <QCryptographicHash>
#include <cmath>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace tg;

class TestReplayWhatIf : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString db_;
  Incident incident_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath("history.db");
    const std::string err = tgtest::recordIncident(db_.toStdString());
    QVERIFY2(err.empty(), err.c_str());
  }

  void incidentIsDetectedAndListed() {
    std::string err;
    auto reader = HistoryReader::open(db_.toStdString(), {}, &err);
    QVERIFY2(reader, err.c_str());
    auto list = reader->incidents();
    QVERIFY2(list.ok(), list.error.c_str());
    QVERIFY(!list.value.empty());
    incident_ = list.value.front();
    qInfo("incident %lld: %lld s, 429s %lld, peak %.1f/s, groups %zu", (long long)incident_.id,
          (long long)incident_.durationMs() / 1000, (long long)incident_.total429, incident_.peak429PerS,
          incident_.groups.size());
    QVERIFY(incident_.total429 > 0);
  }

  void scenarioRebuildsWorkloadAndQuotaDrop() {
    std::string err;
    auto reader = HistoryReader::open(db_.toStdString(), {}, &err);
    auto sc = ReplayScenario::fromIncident(*reader, incident_.id, 10'000, &err);
    QVERIFY2(sc, err.c_str());
    QVERIFY(sc->arrivalsKnown);
    const ScenarioGroup* chat = nullptr;
    for (const auto& g : sc->groups)
      if (g.name == "chat") chat = &g;
    QVERIFY(chat);
    QVERIFY2(chat->totalArrivals() > 100, std::to_string(chat->totalArrivals()).c_str());
    const auto sim = sc->simConfigJson(10);
    bool dropTo8 = false;
    for (const auto& a : sim["schedule"]) dropTo8 = dropTo8 || (a["group"] == "chat" && a["limit"] == 8);
    QVERIFY2(dropTo8, sim.dump().c_str());
  }

  // The re-drive runs the recorded engine's settings (EngineStart's "config"), on the compressed clock: on defaults
  // (queues of 100,000, 600 s deadlines, 6 attempts) a recording that shed 361 was re-driven with none.
  void redriveTakesTheRecordedEngineSettings() {
    std::string err;
    auto reader = HistoryReader::open(db_.toStdString(), {}, &err);
    auto sc = ReplayScenario::fromIncident(*reader, incident_.id, 10'000, &err);
    QVERIFY2(sc, err.c_str());
    QVERIFY2(sc->engineConfig.is_object(), sc->engineConfig.dump().c_str());
    QCOMPARE(sc->engineConfig["retry"]["max_attempts"].get<int>(), 3);  // recordIncident's
    QVERIFY(sc->engineConfig.dump().find("k1") == std::string::npos);  // no key names, let alone keys
    sc->engineConfig["tiers"][1]["max_wait_s"] = 8;
    sc->engineConfig["tiers"][2]["capacity"] = 50;
    sc->engineConfig["global_concurrency"] = 20;
    sc->engineConfig["groups"]["chat"]["rate_ceiling"]["requests_per_s"] = 30;
    const EngineConfig c = WhatIfRunner::baseConfig(*sc, 4);
    QCOMPARE(c.retry.maxAttempts, 3);
    QCOMPARE(c.tiers[1].maxWaitS, 2.0);  // 8 s at 4x
    QCOMPARE(c.tiers[2].capacity, 50);
    QCOMPARE(c.globalConcurrency, 20);
    for (const auto& g : c.groups)
      if (g.name == "chat") QCOMPARE(g.rateCeiling.requestsPerS, 120.0);  // 30/s at 4x
  }

  // A recording made before the engine's settings were recorded says so in the result and the report: it looked
  // exactly like a faithful re-drive.
  void aRecordingWithoutSettingsSaysItRanOnDefaults() {
    std::string err;
    auto reader = HistoryReader::open(db_.toStdString(), {}, &err);
    auto sc = ReplayScenario::fromIncident(*reader, incident_.id, 10'000, &err);
    QVERIFY2(sc, err.c_str());
    sc->arrivalsKnown = false;  // stops the run before the re-drive itself: the flag is what is under test
    QVERIFY(sc->engineConfig.is_object());
    const WhatIfResult with = WhatIfRunner::run(*sc, WhatIfOverrides{}, WhatIfOptions{});
    QVERIFY(!with.ok && with.recordedSettings);  // the same path says true when the settings are there
    sc->engineConfig = nullptr;
    const WhatIfResult r = WhatIfRunner::run(*sc, WhatIfOverrides{}, WhatIfOptions{});
    QVERIFY(!r.ok);
    QVERIFY(!r.recordedSettings);
    QVERIFY(!r.toJson(*sc)["recorded_settings"].get<bool>());
  }

  void redriveReproducesTheRecordingAndTakesOverrides() {
    std::string err;
    auto reader = HistoryReader::open(db_.toStdString(), {}, &err);
    auto sc = ReplayScenario::fromIncident(*reader, incident_.id, 10'000, &err);
    QVERIFY2(sc, err.c_str());
    WhatIfOverrides ov = WhatIfOverrides::fromJson({{"concurrency_scale", 0.5}}, "(test)");
    WhatIfOptions opts;
    if (qEnvironmentVariableIsSet("TG_REPLAY_SPEED")) opts.speed = qEnvironmentVariable("TG_REPLAY_SPEED").toDouble();
    opts.drainCapS = 20;
    QElapsedTimer t;
    t.start();
    const WhatIfResult r = WhatIfRunner::run(*sc, ov, opts);
    QVERIFY2(r.ok, r.error.c_str());
    QVERIFY(r.recordedSettings);
    QVERIFY(r.toJson(*sc)["recorded_settings"].get<bool>());
    qInfo("re-drive of %.0f s at %.0fx: %.1f s wall; 429s recorded %lld, re-driven %lld; arrivals %lld vs %lld",
          sc->durationS(), r.speed, r.wallS, (long long)r.recorded.total.r429, (long long)r.redriven.total.r429,
          (long long)r.recorded.total.arrivals, (long long)r.redriven.total.arrivals);
    // The same re-drive without edits, for the record: how close compression comes to the recording.
    const WhatIfResult base = WhatIfRunner::run(*sc, WhatIfOverrides{}, opts);
    QVERIFY2(base.ok, base.error.c_str());
    qInfo("re-drive as recorded: 429s %lld (recording %lld); %.1f s wall", (long long)base.redriven.total.r429,
          (long long)base.recorded.total.r429, base.wallS);
    if (qEnvironmentVariableIsSet("TG_REPLAY_DEBUG")) {
      auto dump = [&](const char* what, const std::vector<Sample>& ss) {
        std::string line = what;
        for (const auto& s : ss)
          if (s.group == "chat") line += " " + std::to_string(s.r429) + "/" + std::to_string(s.sends) + "/" + std::to_string(s.concurrencyLimit);
        qInfo("%s", line.c_str());
      };
      dump("recorded", sc->groups.empty() ? std::vector<Sample>{} : reader->rawSamples(sc->fromMs, sc->toMs, {}).value);
      dump("unedited", base.samples);
      dump("halved  ", r.samples);
    }
    QVERIFY(r.recorded.total.r429 > 0);
    QVERIFY(base.redriven.total.r429 > 0);
    // Fidelity: re-driving the recorded arrivals against the rebuilt upstream, settings unchanged, pays
    // about the recording's 429s (recorded 41-46, re-driven 38-52 at 10x with both cores busy). At a quota
    // drop the requests in flight meet the lower limit, so the count follows concurrency, and the engine's
    // own time constants must run as fast as the replay (EngineConfig::timeScale): before they did, a second
    // cut of concurrency one recorded second after the first was blocked as "the same burst" (a real second)
    // and re-drives paid 50-74.
    // Under a sanitizer (scripts/check sets TOLLGATE_SANITIZER) the engine runs 5-15x slower than the compressed
    // schedule assumes, so more requests meet the lower limit: within 2x there (63 vs 41 seen under TSan).
    const double rec = static_cast<double>(r.recorded.total.r429);
    const double band = qEnvironmentVariableIsSet("TOLLGATE_SANITIZER") ? 1.0 : 0.4;
    QVERIFY2(std::abs(static_cast<double>(base.redriven.total.r429) - rec) <= std::max(5.0, band * rec),
             qPrintable(QString("unedited re-drive %1 vs recorded %2").arg(base.redriven.total.r429).arg(rec)));
    // The what-if: halved concurrency pays fewer 429s than the recording, and clearly fewer than the same
    // re-drive unedited, so the difference is the setting, not the re-drive. Run alone on 2 cores: 24 vs 39-43
    // unedited (0.56-0.62x). With other work on the machine (a benchmark beside `./scripts/test`; ctest runs
    // this test alone) the 10x-compressed schedule runs late and both counts rise: 26 vs 33 and 33 vs 41
    // (0.79-0.80x), which a bound of 3/4 failed. 0.85x keeps a margin under load and still fails a setting that
    // changes nothing (the unedited re-drive against itself varies by ~10%).
    QVERIFY2(r.redriven.total.r429 < r.recorded.total.r429,
             qPrintable(QString("halved %1, recorded %2").arg(r.redriven.total.r429).arg(rec)));
    QVERIFY2(r.redriven.total.r429 * 20 <= base.redriven.total.r429 * 17,
             qPrintable(QString("halved %1, unedited %2").arg(r.redriven.total.r429).arg(base.redriven.total.r429)));
    QVERIFY(r.redriven.total.arrivals > r.recorded.total.arrivals * 8 / 10);

    const QString reportPath = dir_.filePath("report.json");
    QFile f(reportPath);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(r.toJson(*sc).dump(2)));
    f.close();
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto j = nlohmann::json::parse(f.readAll().toStdString());
    QCOMPARE(j["incident"]["id"].get<std::int64_t>(), incident_.id);
    QVERIFY(!j["events"].empty());
    QVERIFY(j["groups"].contains("chat"));
    QVERIFY(j["groups"]["chat"].contains("recorded") && j["groups"]["chat"].contains("redriven"));
  }

  // An upstream that states no quota: the scenario estimates its limit from what it accepted while it
  // refused and re-drives it headerless, so the engine learns the rate from refusals as it did live; the
  // 429s then follow the concurrency (what is sent before a refusal comes back), and halving it pays fewer.
  void headerlessIncidentWhatIfHalvedConcurrency() {
    const QString db = dir_.filePath("headerless.db");
    const std::string rec = tgtest::recordIncident(db.toStdString(), 14, 0, true);
    QVERIFY2(rec.empty(), rec.c_str());
    std::string err;
    auto reader = HistoryReader::open(db.toStdString(), {}, &err);
    QVERIFY2(reader, err.c_str());
    auto list = reader->incidents();
    QVERIFY2(list.ok() && !list.value.empty(), "no incident recorded against the headerless upstream");
    auto sc = ReplayScenario::fromIncident(*reader, list.value.front().id, 10'000, &err);
    QVERIFY2(sc, err.c_str());
    const ScenarioGroup* chat = nullptr;
    for (const auto& g : sc->groups)
      if (g.name == "chat") chat = &g;
    QVERIFY(chat);
    qInfo("headerless: estimated limit %.0f/s (hidden 40/s)", chat->initialLimit);
    if (qEnvironmentVariableIsSet("TG_REPLAY_DEBUG")) {
      std::string line = "recorded chat ok/429:";
      for (const auto& s : sc->recorded)
        if (s.group == "chat") line += " " + std::to_string(s.ok) + "/" + std::to_string(s.r429);
      qInfo("%s", line.c_str());
    }
    QVERIFY(chat->headerless);
    QVERIFY2(chat->initialLimit >= 34 && chat->initialLimit <= 46, std::to_string(chat->initialLimit).c_str());
    QCOMPARE(sc->simConfigJson(10)["dialect"].get<std::string>(), std::string("none"));

    WhatIfOptions opts;
    opts.drainCapS = 20;
    const WhatIfResult base = WhatIfRunner::run(*sc, WhatIfOverrides{}, opts);
    const WhatIfResult half = WhatIfRunner::run(*sc, WhatIfOverrides::fromJson({{"concurrency_scale", 0.5}}, "(t)"), opts);
    QVERIFY2(base.ok && half.ok, (base.error + half.error).c_str());
    qInfo("headerless: 429s recorded %lld, re-driven %lld, halved concurrency %lld; ok %lld / %lld / %lld",
          (long long)base.recorded.total.r429, (long long)base.redriven.total.r429, (long long)half.redriven.total.r429,
          (long long)base.recorded.total.ok, (long long)base.redriven.total.ok, (long long)half.redriven.total.ok);
    QVERIFY(base.recorded.total.r429 > 0);
    QVERIFY2(half.redriven.total.r429 < base.recorded.total.r429,
             qPrintable(QString("halved %1, recorded %2").arg(half.redriven.total.r429).arg(base.recorded.total.r429)));
    QVERIFY2(half.redriven.total.r429 < base.redriven.total.r429,
             qPrintable(QString("halved %1, unedited %2").arg(half.redriven.total.r429).arg(base.redriven.total.r429)));
  }

  void overridesRejectUnknownKeys() {
    QVERIFY_THROWS_EXCEPTION(ConfigError, WhatIfOverrides::fromJson({{"concurency", 2}}, "(test)"));
    QVERIFY_THROWS_EXCEPTION(ConfigError, WhatIfOverrides::fromJson({{"groups", {{"chat", {{"bucket_fraction", 3}}}}}}, "(test)"));
    const auto o = WhatIfOverrides::fromJson({{"paused_tiers", {"P2"}}, {"groups", {{"chat", {{"concurrency", 4}}}}}}, "(t)");
    QVERIFY(o.pausedTiers[2]);
    QCOMPARE(*o.groups.at("chat").concurrency, 4);
  }

  void markdownHasTimeline() {
    std::string err;
    auto reader = HistoryReader::open(db_.toStdString(), {}, &err);
    IncidentReport rep;
    rep.title = "Incident " + std::to_string(incident_.id);
    rep.incident = incident_;
    rep.fromMs = incident_.startMs;
    rep.toMs = incident_.endMs;
    rep.events = reader->events(incident_.startMs, incident_.endMs, {}, {}).value;
    rep.images = {{"429/s", "incident-rate429.png"}};
    const std::string md = rep.markdown();
    QVERIFY(md.find("# Incident ") == 0);
    QVERIFY(md.find("## Timeline") != std::string::npos);
    QVERIFY(md.find("(incident-rate429.png)") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestReplayWhatIf)
#include "test_replay_whatif.moc"
