// The dashboard driving a real engine against an in-process simulator on loopback: operator controls
// reach the engine, their effect shows in snapshots, the simulator and the event log.
#include "config_loader.h"
#include "engine.h"
#include "engine_commands.h"
#include "event_log_model.h"
#include "group_card_widget.h"
#include "history_reader.h"
#include "history_store.h"
#include "live_sample_source.h"
#include "main_window.h"
#include "sim_server.h"
#include "snapshot_bridge.h"

#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace tg;
using namespace tg::ui;
using nlohmann::json;

namespace {

json simConfig() {
  return {{"dialect", "x-ratelimit"},
          {"group_by", "header"},
          {"default_group", "g"},
          {"latency_ms", {{"distribution", "fixed"}, {"mean", 40}}},
          {"groups", {{"g", {{"limit", 0}}}, {"h", {{"limit", 0}}}}}};
}

json engineConfig(const json& sim) {
  auto group = [](const char* name) {
    return json{{"name", name}, {"base_url", "sim"}, {"concurrency", 8}, {"adaptive", false},
                {"keys", json::array({{{"name", "k1"}}})}};
  };
  return {{"name", "ui-test"},
          {"global_concurrency", 64},
          {"groups", json::array({group("g"), group("h")})},
          {"simulator", sim}};
}

// Engine + simulator + dashboard, wired the way app/main.cpp wires them.
struct Rig {
  QTemporaryDir historyDir;
  std::unique_ptr<HistoryStore> history;  // the audit trail, fed like app/session.cpp feeds it
  std::unique_ptr<SimServer> sim;
  std::unique_ptr<Engine> engine;
  LiveSampleSource source;
  SnapshotBridge bridge;
  std::unique_ptr<EngineCommands> commands;
  std::unique_ptr<MainWindow> window;

  Rig() {
    const json simJson = simConfig();
    sim = std::make_unique<SimServer>(SimConfig::fromJson(simJson, "(ui test sim)"));
    const int port = sim->start("127.0.0.1", 0);
    TollgateConfig c = ConfigLoader::fromJson(engineConfig(simJson), "(ui test config)");
    ConfigLoader::bindSimulator(c, "http://127.0.0.1:" + std::to_string(port));
    engine = std::make_unique<Engine>(c.engine);
    bridge.connectTo(&source);
    std::string err;
    history = HistoryStore::open(historyPath(), HistoryOptions{}, &err);
    QVERIFY2(history, err.c_str());
    engine->onSnapshot([this](SnapshotPtr s) { bridge.publishSnapshot(std::move(s)); });
    engine->onEvent([this](const Event& e) {
      history->append(e);
      bridge.publishEvent(e);
    });
    commands = std::make_unique<EngineCommands>(*engine);
    window = std::make_unique<MainWindow>();
    window->setSource(&source);
    window->setCommands(commands.get());
    window->setConfirm([](QWidget*, const QString&, const QString&) { return true; });
    window->controls()->setCommitDelayMs(50);
    engine->start();
    window->show();
  }
  std::string historyPath() const { return historyDir.filePath("history.db").toStdString(); }
  ~Rig() {
    engine->stop();  // before the bridge goes: its listeners run on the engine thread
    sim->stop();
  }

  void submit(const std::string& group, Tier tier, int n) {
    for (int i = 0; i < n; ++i) {
      Request r;
      r.id = group + std::to_string(i);
      r.group = group;
      r.tier = tier;
      r.url = "/v1/chat/completions";
      r.body = R"({"max_tokens":16})";
      r.deadlineS = 600;
      engine->submit(std::move(r), [](const Result&) {});
    }
  }

  double simRequests(const std::string& group, const char* tier) const {
    const json s = sim->stats();
    return s["groups"][group]["tiers"][tier]["requests"].get<double>();
  }

  const GroupSnapshot* group(const std::string& name) {
    snap_ = source.latestSnapshot();
    return snap_ ? snap_->find(name) : nullptr;
  }

 private:
  SnapshotPtr snap_;
};

bool logHasOperatorAction(const EventLogModel* model, const QString& needle) {
  for (int r = 0; r < model->rowCount(); ++r) {
    const Event& e = model->event(r);
    if (e.kind == EventKind::OperatorAction && QString::fromStdString(e.message + e.detail.dump()).contains(needle))
      return true;
  }
  return false;
}

}  // namespace

class TestUiEngine : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir settingsDir_;

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName(QStringLiteral("TollgateTest"));
    QCoreApplication::setApplicationName(QStringLiteral("test_ui_engine"));
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir_.path());
  }

  void pauseP2StopsP2WhileP0Continues() {
    Rig rig;
    rig.submit("g", Tier::P2, 3000);
    QTRY_VERIFY_WITH_TIMEOUT(rig.simRequests("g", "P2") > 20, 15000);

    QPushButton* pause = rig.window->controls()->globalPauseButton(Tier::P2);
    QVERIFY(pause->isEnabled());
    QTest::mouseClick(pause, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(rig.source.latestSnapshot() && rig.source.latestSnapshot()->tierPaused[2], 5000);
    QTRY_VERIFY(rig.group("g") && rig.group("g")->tierPaused[2]);
    QTRY_COMPARE(pause->text(), QStringLiteral("Resume P2"));  // the next snapshot shows it
    // Everything sent before the pause took effect has arrived once the engine says nothing is in flight
    // for P2; from here on P2 must stay flat while P0 keeps going.
    const double p2At = rig.simRequests("g", "P2");
    rig.submit("g", Tier::P0, 200);
    QTRY_VERIFY_WITH_TIMEOUT(rig.simRequests("g", "P0") >= 200, 20000);
    const double p2Late = rig.simRequests("g", "P2") - p2At;
    QVERIFY2(p2Late <= 8, qPrintable(QStringLiteral("%1 P2 requests arrived after the pause").arg(p2Late)));
    QVERIFY(rig.group("g")->queueDepth[2] > 0);  // still queued, not dropped

    QTest::mouseClick(pause, Qt::LeftButton);  // resume
    const double p2Resumed = rig.simRequests("g", "P2");
    QTRY_VERIFY_WITH_TIMEOUT(rig.simRequests("g", "P2") > p2Resumed + 20, 15000);
  }

  void groupConcurrencyChangesInFlight() {
    Rig rig;
    rig.submit("h", Tier::P1, 4000);
    QTRY_VERIFY_WITH_TIMEOUT(rig.group("h") && rig.group("h")->inFlight >= 6, 15000);
    QTRY_VERIFY(rig.window->card(QStringLiteral("h")) != nullptr);
    ControlsWidget* controls = rig.window->controls();
    controls->selectGroup(QStringLiteral("h"));
    QSpinBox* spin = controls->groupConcurrencySpin();
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, QStringLiteral("2"));
    QTest::keyClick(spin, Qt::Key_Return);
    spin->clearFocus();
    QTRY_VERIFY_WITH_TIMEOUT(rig.group("h")->concurrencyCeiling == 2, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(rig.group("h")->inFlight <= 2 && rig.group("h")->inFlight > 0, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        rig.window->card(QStringLiteral("h"))->fieldText("inFlight").endsWith(QStringLiteral(" / 2")), 5000);
    // The other group is untouched.
    QCOMPARE(rig.group("g")->concurrencyCeiling, 8);
  }

  void operatorActionAppearsInEventLog() {
    Rig rig;
    QTRY_VERIFY_WITH_TIMEOUT(rig.window->card(QStringLiteral("g")) != nullptr, 5000);
    rig.window->controls()->selectGroup(QStringLiteral("g"));
    QTest::mouseClick(rig.window->controls()->pauseGroupButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(logHasOperatorAction(rig.window->eventLog(), QStringLiteral("operator")), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(rig.group("g") && rig.group("g")->paused, 5000);
    QTRY_VERIFY(rig.window->card(QStringLiteral("g"))->fieldText("flags").contains(QStringLiteral("group paused")));
    // And it is a marker on the charts' time axis.
    QTRY_VERIFY_WITH_TIMEOUT(!rig.source.events(0, std::numeric_limits<EpochMs>::max()).empty(), 5000);
    // And it is in history, as an audit record: what, before, after, who.
    QVERIFY(rig.history->flush());
    std::string err;
    auto reader = HistoryReader::open(rig.historyPath(), HistoryReaderOptions{}, &err);
    QVERIFY2(reader, err.c_str());
    auto events = reader->events(0, std::numeric_limits<EpochMs>::max(), {}, {EventKind::OperatorAction});
    QVERIFY2(events.ok(), events.error.c_str());
    bool found = false;
    for (const auto& e : events.value) {
      if (e.detail.value("action", "") != "pause_group") continue;
      found = true;
      QCOMPARE(e.group, std::string("g"));
      QCOMPARE(e.detail.value("actor", ""), std::string("operator"));
      QCOMPARE(e.detail["before"].get<bool>(), false);
      QCOMPARE(e.detail["after"].get<bool>(), true);
    }
    QVERIFY2(found, "pause_group not in history");
  }
};

QTEST_MAIN(TestUiEngine)
#include "test_ui_engine.moc"
