// The dashboard: Session (simulator + engine + history + workload) under the MainWindow.
#include "cli.h"

#include "engine_commands.h"
#include "live_sample_source.h"
#include "log.h"
#include "main_window.h"
#include "session.h"
#include "session_workload_controller.h"
#include "snapshot_bridge.h"

#include <QApplication>
#include <QFileInfo>
#include <QMessageBox>
#include <QTimer>

namespace tg::cli {

int guiCommand(int argc, char** argv, const std::vector<std::string>& argvRest) {
  Args a(argvRest, {"--config", "--history", "--screenshot", "--screenshot-after"}, {});
  if (!a.ok()) {
    std::fprintf(stderr, "tollgate: %s\n%s", a.error().c_str(), kUsage);
    return 2;
  }
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName("Tollgate");
  QCoreApplication::setApplicationName("tollgate");

  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(loadConfig(a.value("--config")));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: %s\n", e.what());
    return 2;
  }
  applyHistoryFlag(*session, a.value("--history"));

  // Declared before the session starts the engine; the session is stopped before they go away.
  ui::LiveSampleSource source;
  ui::SnapshotBridge bridge;
  bridge.connectTo(&source);
  session->addSnapshotListener([&bridge](SnapshotPtr s) { bridge.publishSnapshot(std::move(s)); });
  session->addEventListener([&bridge](const Event& e) { bridge.publishEvent(e); });
  try {
    session->start();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: %s\n", e.what());
    return 1;
  }

  ui::EngineCommands commands(session->engine());
  ui::SessionWorkloadController workload(*session);
  ui::MainWindow window;
  window.setSource(&source);
  window.setCommands(&commands);
  window.setWorkloadController(&workload);
  const std::string upstream = session->simulatorUrl().empty()
                                   ? session->config().engine.name
                                   : session->config().engine.name + " (simulator " + session->simulatorUrl() + ")";
  window.setUpstreamName(QString::fromStdString(upstream));
  Session* s = session.get();
  window.setHistoryInfoProvider([s] {
    if (!s->history()) return ui::MainWindow::HistoryInfo{s->historyError().empty() ? QString() : QStringLiteral("off: ") + QString::fromStdString(s->historyError()), -1};
    const QString p = QString::fromStdString(s->history()->path());
    return ui::MainWindow::HistoryInfo{p, QFileInfo(p).size()};
  });
  window.show();
  // --screenshot FILE [--screenshot-after S]: grab the window after S seconds (default 30) and quit;
  // used for the README picture and to look at the app as an operator sees it.
  if (auto shot = a.value("--screenshot")) {
    std::string err;
    const double after = a.number("--screenshot-after", &err).value_or(30.0);
    QTimer::singleShot(static_cast<int>(after * 1000), &window, [&window, path = QString::fromStdString(*shot)] {
      if (!window.grab().save(path)) std::fprintf(stderr, "tollgate: cannot write %s\n", qPrintable(path));
      QApplication::quit();
    });
  }
  const int rc = app.exec();
  session->stop();
  return rc;
}

}  // namespace tg::cli
