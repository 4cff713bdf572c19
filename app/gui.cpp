// The dashboard: Session (simulator + engine + history + workload) under the MainWindow.
#include "cli.h"

#include "command_line.h"
#include "engine_commands.h"
#include "history_sample_source.h"
#include "live_sample_source.h"
#include "log.h"
#include "main_window.h"
#include "replay_panel_widget.h"
#include "session.h"
#include "session_workload_controller.h"
#include "snapshot_bridge.h"
#include "translation_loader.h"

#include <QApplication>
#include <QFileDialog>
#include <QIcon>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QFileInfo>
#include <QMessageBox>
#include <QTimer>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace tg::cli {

namespace {

// The longest --screenshot-after or --pause-tier delay: a day, far inside QTimer's int milliseconds.
constexpr double kMaxDelayS = 86400;

// --pause-tier TIER@S: pause TIER on every group S seconds into the run, as an operator would from the
// Controls menu (audited, marked on the charts). For the README's screenshots and for trying the dashboard.
struct TierPause {
  Tier tier;
  double afterS;
};

std::optional<TierPause> parseTierPause(const std::string& word, std::string* error) {
  const std::size_t at = word.find('@');
  const std::optional<Tier> tier = at == std::string::npos ? std::nullopt : parseTier(word.substr(0, at));
  const std::optional<double> s = at == std::string::npos ? std::nullopt : CommandLine::parseNumber(word.substr(at + 1));
  if (!tier || !s || *s > kMaxDelayS) {
    *error = "--pause-tier: expected TIER@SECONDS (P0, P1 or P2 and 0 to 86400 seconds, e.g. P2@100), got \"" +
             word + "\"";
    return std::nullopt;
  }
  return TierPause{*tier, *s};
}

// The options that carry over to the restarted window.
struct Carried {
  std::optional<std::string> history;
  std::optional<std::string> lang;
};

// File > Switch upstream: validate the chosen config first (a bad one is reported with file, JSON path and
// expectation, and the current session keeps running), then restart on it. A restart rather than an
// in-place swap: the old session stops cleanly (history flushed, every request answered) and the new one
// gets its own engine, simulator and keys; the window layout and chart choices carry over (settings).
void restartWith(const std::optional<std::string>& config, const Carried& carried) {
  QStringList args;
  if (config) args << QStringLiteral("--config") << QString::fromStdString(*config);
  if (carried.history) args << QStringLiteral("--history") << QString::fromStdString(*carried.history);
  if (carried.lang) args << QStringLiteral("--lang") << QString::fromStdString(*carried.lang);
  if (!QProcess::startDetached(QCoreApplication::applicationFilePath(), args)) {
    QMessageBox::warning(nullptr, QObject::tr("Switch upstream"), QObject::tr("Could not start Tollgate again."));
    return;
  }
  QApplication::quit();
}

QMenu* addFileMenu(ui::MainWindow& window) {
  QMenu* file = new QMenu(QObject::tr("&File"), &window);
  window.menuBar()->insertMenu(window.menuBar()->actions().value(0), file);
  return file;
}

void addQuit(ui::MainWindow& window, QMenu* file) {
  QAction* quit = file->addAction(QObject::tr("&Quit"));
  quit->setShortcut(QKeySequence::Quit);
  QObject::connect(quit, &QAction::triggered, &window, &QWidget::close);
}

void addUpstreamMenu(ui::MainWindow& window, const Carried& carried) {
  QMenu* file = addFileMenu(window);
  QAction* open = file->addAction(QObject::tr("Switch &upstream config..."));
  open->setToolTip(QObject::tr("Run on another config: the simulator, or a real provider whose key comes from an environment variable"));
  QObject::connect(open, &QAction::triggered, &window, [&window, carried] {
    const QString path = QFileDialog::getOpenFileName(&window, QObject::tr("Upstream config"), QString(),
                                                      QObject::tr("Tollgate config (*.json)"));
    if (path.isEmpty()) return;
    try {
      (void)loadConfig(path.toStdString());  // validates groups, keys (environment), simulator, workload
    } catch (const std::exception& e) {
      QMessageBox::warning(&window, QObject::tr("Switch upstream"), QString::fromStdString(e.what()));
      return;
    }
    if (QMessageBox::question(&window, QObject::tr("Switch upstream"),
                              QObject::tr("Stop this session and run on %1?").arg(path)) != QMessageBox::Yes)
      return;
    restartWith(path.toStdString(), carried);
  });
  QAction* demo = file->addAction(QObject::tr("Switch to the built-in &simulator demo"));
  QObject::connect(demo, &QAction::triggered, &window, [&window, carried] {
    if (QMessageBox::question(&window, QObject::tr("Switch upstream"),
                              QObject::tr("Stop this session and run the built-in simulator demo?")) == QMessageBox::Yes)
      restartWith(std::nullopt, carried);
  });
  file->addSeparator();
  addQuit(window, file);
}

// --screenshot: grab the window `afterS` seconds from now and quit; exit 1 when the file cannot be written (it
// exited 0, and a script taking the picture went on without it).
void grabThenQuit(QWidget& window, const QString& path, double afterS) {
  QTimer::singleShot(static_cast<int>(afterS * 1000), &window, [&window, path] {
    if (window.grab().save(path)) {
      QApplication::quit();
      return;
    }
    std::fprintf(stderr, "tollgate: cannot write %s\n", qPrintable(path));
    QApplication::exit(kExitFailed);
  });
}

}  // namespace

int guiCommand(int argc, char** argv, const std::vector<std::string>& argvRest) {
  CommandLine a(kUsage, {{"--config", "FILE", "upstream config (default: the embedded simulator demo)"},
                         {"--history", "FILE|off", "history file (default: the config's or the user's)"},
                         {"--replay", "HISTORY.db", "open a history file read-only, no engine"},
                         {"--screenshot", "FILE", "grab the window to FILE after --screenshot-after seconds, then quit"},
                         {"--screenshot-after", "S", "seconds before the screenshot, 0..86400 (default: 30; 3 with --replay)"},
                         {"--lang", "LANG", "language of the window: en, zh_CN or system (default: the setting, else system)"},
                         {"--pause-tier", "TIER@S",
                          "pause TIER (P0, P1, P2) on all groups S seconds into the run, as the operator (repeatable)",
                          true},
                         {"--version", "", "print the version"}});
  if (auto answered = a.parseOrAnswer(argvRest, "tollgate", std::cout, std::cerr)) return *answered;
  if (a.isSet("--version")) {
    std::printf("%s\n", versionText());
    return kExitOk;
  }
  // --screenshot-after goes to QTimer as int milliseconds: checked here, before any window, so a value beyond
  // the cap is a usage error instead of an int overflow.
  std::string afterError;
  const std::optional<double> screenshotAfter = a.number("--screenshot-after", &afterError);
  if (!afterError.empty() || (screenshotAfter && *screenshotAfter > kMaxDelayS)) {
    std::fprintf(stderr, "tollgate: %s\n",
                 afterError.empty() ? "--screenshot-after: expected seconds from 0 to 86400" : afterError.c_str());
    return kExitUsage;
  }
  std::vector<TierPause> pauses;
  for (const std::string& word : a.values("--pause-tier")) {
    std::string error;
    if (auto p = parseTierPause(word, &error)) {
      pauses.push_back(*p);
      continue;
    }
    std::fprintf(stderr, "tollgate: %s\n", error.c_str());
    return kExitUsage;
  }
  if (!pauses.empty() && a.isSet("--replay")) {
    std::fprintf(stderr, "tollgate: --pause-tier: a replay has no engine to pause\n");
    return kExitUsage;
  }
  const std::optional<std::string> lang = a.value("--lang");
  if (lang && !ui::TranslationLoader::isChoice(QString::fromStdString(*lang))) {
    std::fprintf(stderr, "tollgate: --lang: expected %s, got \"%s\"\n",
                 qPrintable(ui::TranslationLoader::choices().join(QStringLiteral(", "))), lang->c_str());
    return kExitUsage;
  }
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName("Tollgate");
  QCoreApplication::setApplicationName("tollgate");
  QGuiApplication::setDesktopFileName(QStringLiteral("io.github.tollgate.Tollgate"));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/tollgate/io.github.tollgate.Tollgate-256.png")));
  ui::TranslationLoader translations;
  translations.install(lang ? QString::fromStdString(*lang) : ui::TranslationLoader::savedChoice());

  // --replay FILE: a history file (e.g. copied from another machine) opened strictly read-only, no engine.
  // Strictly (immutable) unless a -wal file holds rows not yet in it, as a killed or still running writer leaves
  // them: an immutable read ignores the -wal, and such a file read as "empty" or ended at its last checkpoint.
  // SQLite's read-only mode reads the -wal (it may create the -shm index beside it).
  if (auto file = a.value("--replay")) {
    QString err;
    HistoryReaderOptions ro;
    std::error_code walError;
    const std::string wal = *file + "-wal";
    ro.strict = !(std::filesystem::exists(wal, walError) && std::filesystem::file_size(wal, walError) > 0);
    if (!ro.strict)
      std::fprintf(stderr, "tollgate: %s holds rows not yet in %s (its writer was killed, or is still writing): "
                   "reading both, read-only\n", wal.c_str(), file->c_str());
    ui::MainWindow window;
    auto* source = ui::HistorySampleSource::open(QString::fromStdString(*file), ro, &err, &window);
    if (!source && !ro.strict) {  // read-only media: SQLite's read-only mode could not make the -shm index
      std::fprintf(stderr, "tollgate: %s: %s; reading it without the -wal\n", file->c_str(), qPrintable(err));
      ro.strict = true;
      source = ui::HistorySampleSource::open(QString::fromStdString(*file), ro, &err, &window);
    }
    if (!source) {
      std::fprintf(stderr, "tollgate: %s: %s\n", file->c_str(), qPrintable(err));
      return kExitFailed;
    }
    window.setReplay(source, new ui::ReplayPanelWidget(source, window.charts()));
    window.setReplayMode(true);
    addQuit(window, addFileMenu(window));  // File > Quit (Ctrl+Q), as in the live window
    // A file that opened but is damaged inside (a page of samples overwritten): what can be read is shown, and
    // the damage is said, on stderr and in the status bar, rather than an empty range that looks like calm.
    const QString damage = source->lastError();
    if (!damage.isEmpty())
      std::fprintf(stderr, "tollgate: %s: not all of it could be read: %s\n", file->c_str(), qPrintable(damage));
    window.setUpstreamName(QString::fromStdString(*file) + QObject::tr(" (replay, read-only)") +
                           (damage.isEmpty() ? QString() : QStringLiteral(" – ") + damage));
    window.show();
    if (auto shot = a.value("--screenshot")) {
      const double after = screenshotAfter.value_or(3.0);
      grabThenQuit(window, QString::fromStdString(*shot), after);
    }
    return app.exec();
  }

  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(loadConfig(a.value("--config")));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: %s\n", e.what());
    return kExitUsage;
  }
  applyHistoryFlag(*session, a.value("--history"));

  // Declared before the session starts the engine; the session is stopped before they go away.
  ui::LiveSampleSource source;
  ui::SnapshotBridge bridge;
  bridge.connectTo(&source);
  session->addSnapshotListener([&bridge](SnapshotPtr s) { bridge.publishSnapshot(std::move(s)); });
  session->addEventListener([&bridge](const Event& e) { bridge.publishEvent(e); });
  try {
    // The window shows after this: a file another tollgate is upgrading is waited for 5 s, not 60 (the status
    // bar then says history is off and why).
    session->setHistoryUpgradeWaitMs(5000);
    session->start();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: %s\n", e.what());
    return kExitFailed;
  }

  ui::EngineCommands commands(session->engine());
  ui::SessionWorkloadController workload(*session);
  ui::MainWindow window;
  window.setSource(&source);
  window.setCommands(&commands);
  window.setWorkloadController(&workload);
  const QString engineName = QString::fromStdString(session->config().engine.name);
  const QString upstream = session->simulatorUrl().empty()
                               ? engineName
                               : QObject::tr("%1 (simulator %2)").arg(engineName, QString::fromStdString(session->simulatorUrl()));
  window.setUpstreamName(upstream);
  Session* s = session.get();
  window.setHistoryInfoProvider([s] {
    if (!s->history()) return ui::MainWindow::HistoryInfo{s->historyError().empty() ? QString() : QObject::tr("off: %1").arg(QString::fromStdString(s->historyError())), -1};
    const QString p = QString::fromStdString(s->history()->path());
    // Main file plus WAL: what the history really occupies on disk right now.
    return ui::MainWindow::HistoryInfo{p, static_cast<qint64>(s->history()->status().fileBytes)};
  });
  window.setGatewayInfoProvider([s]() -> QString {
    if (!s->hasGatewayConfig()) return {};
    if (!s->gateway()) return QObject::tr("Gateway: off (%1)").arg(QString::fromStdString(s->gatewayError()));
    QStringList clients;
    for (const auto& [name, n] : s->gateway()->requestsByClient())
      clients << QStringLiteral("%1 %2").arg(QString::fromStdString(name)).arg(n);
    const int open = s->gateway()->openConnections();
    const QString address = QString::fromStdString(s->gateway()->listenAddress());
    QString text = open == 1 ? QObject::tr("Gateway: http://%1 · 1 connection").arg(address)
                             : QObject::tr("Gateway: http://%1 · %2 connections").arg(address).arg(open);
    if (!clients.isEmpty()) text += QStringLiteral(" · ") + clients.join(QStringLiteral(", "));
    return text;
  });
  // Replay of this session's own history file, beside live (the writer keeps writing; reads are short).
  if (s->history()) {
    QString err;
    if (auto* source = ui::HistorySampleSource::open(QString::fromStdString(s->history()->path()), {}, &err, &window)) {
      auto* panel = new ui::ReplayPanelWidget(source, window.charts());
      window.setReplay(source, panel);
      QObject::connect(&window, &ui::MainWindow::replayModeChanged, panel, [panel](bool on) {
        if (on) panel->reload();
      });
    }
  }
  addUpstreamMenu(window, Carried{a.value("--history"), lang});
  window.show();
  for (const TierPause& p : pauses)
    QTimer::singleShot(static_cast<int>(p.afterS * 1000), &window,
                       [&commands, tier = p.tier] { commands.setTierPaused(tier, true, {}); });
  // --screenshot FILE [--screenshot-after S]: grab the window after S seconds (default 30) and quit;
  // used for the README picture and to look at the app as an operator sees it.
  if (auto shot = a.value("--screenshot")) {
    const double after = screenshotAfter.value_or(30.0);
    grabThenQuit(window, QString::fromStdString(*shot), after);
  }
  const int rc = app.exec();
  session->stop();
  return rc;
}

}  // namespace tg::cli
