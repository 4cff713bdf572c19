// The operator dashboard: charts in the middle, group cards on the left, controls and workload on the
// right, the event log at the bottom, status bar below. Reads a SampleSource (live or history); operator
// controls go through OperatorCommands. Geometry, dock layout, chart selection and time window persist in
// QSettings (group "dashboard"). UI thread only.
#pragma once

#include "controls_widget.h"
#include "snapshot.h"

#include <QElapsedTimer>
#include <QMainWindow>

#include <functional>
#include <map>

class QLabel;
class QMenu;
class QTimer;
class QVBoxLayout;

namespace tg::ui {

class AlertTray;
class ChartPanelWidget;
class EventLogModel;
class EventLogWidget;
class FleetWidget;
class GroupCardWidget;
class SampleSource;
class WorkloadController;
class WorkloadPanelWidget;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  struct HistoryInfo {
    QString path;      // empty = no history
    qint64 bytes = -1; // -1 = unknown
  };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Not owned; must outlive the window (or be replaced first). Resets charts, cards and the event log.
  // In replay mode it is kept and shown again when the mode goes back to live.
  void setSource(SampleSource* source);
  // Not owned; null = read-only dashboard (replay).
  void setCommands(OperatorCommands* commands);
  // Replay mode: the dashboard shows `source` (history) read-only and docks `panel` (transport, incidents)
  // at the top; live mode restores the live source and commands. Neither is owned by the caller's contract
  // beyond outliving the window; `panel` is reparented into a dock.
  void setReplay(SampleSource* source, QWidget* panel);
  void setReplayMode(bool on);
  bool replayMode() const { return replayMode_; }
  // Not owned; null hides the workload panel.
  void setWorkloadController(WorkloadController* controller);
  void setUpstreamName(const QString& name);
  // Called about once per second on the UI thread; keep it cheap (a file size, not a query).
  void setHistoryInfoProvider(std::function<HistoryInfo()> provider);
  // The local gateway's line in the status bar ("Gateway: http://127.0.0.1:8088 · 2 connections · svc-a 120"),
  // polled about once per second like the history's; empty text hides the field.
  void setGatewayInfoProvider(std::function<QString()> provider);
  // Replaces the QMessageBox confirmation of risky actions (pausing P0, draining).
  void setConfirm(ControlsWidget::ConfirmFn confirm);

  ChartPanelWidget* charts() const { return charts_; }
  ControlsWidget* controls() const { return controls_; }
  EventLogModel* eventLog() const { return eventModel_; }
  EventLogWidget* eventLogWidget() const { return eventWidget_; }
  WorkloadPanelWidget* workloadPanel() const { return workload_; }
  FleetWidget* fleetPanel() const { return fleet_; }
  GroupCardWidget* card(const QString& group) const;
  AlertTray* alerts() const { return alerts_; }
  // Raises the window in live mode at `tsMs` (0 = now): the charts widened to hold that moment and marked
  // there (ChartPanelWidget::showMoment), the event at that time selected in the event log.
  void showAt(qint64 tsMs, const QString& group);
  QString statusText() const;  // the status bar's fields joined by " | "

  void saveSettings() const;
  void restoreSettings();

 signals:
  void replayModeChanged(bool on);

 public slots:
  // Cards, controls and status from the source's newest snapshot. Runs on a 4 Hz timer.
  void refresh();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void rebuildCards(const std::vector<std::string>& groups);
  void reloadEvents();
  void updateStatus();
  void showSource(SampleSource* source);
  void addControlsMenu();
  void addNotificationsMenu(QMenu* view);
  void showAlertLevel();

  SampleSource* source_ = nullptr;
  SampleSource* liveSource_ = nullptr;
  OperatorCommands* liveCommands_ = nullptr;
  SampleSource* replaySource_ = nullptr;
  QDockWidget* replayDock_ = nullptr;
  QAction* liveAction_ = nullptr;
  QMenu* controlsMenu_ = nullptr;
  QAction* replayAction_ = nullptr;
  bool replayMode_ = false;
  ChartPanelWidget* charts_;
  ControlsWidget* controls_;
  EventLogModel* eventModel_;
  EventLogWidget* eventWidget_;
  WorkloadPanelWidget* workload_;
  QDockWidget* workloadDock_ = nullptr;
  FleetWidget* fleet_;
  QDockWidget* fleetDock_ = nullptr;
  QWidget* cardsHost_;
  QVBoxLayout* cardsLayout_;
  std::map<QString, GroupCardWidget*> cards_;
  std::vector<std::string> cardGroups_;
  AlertTray* alerts_;
  QLabel* alertIcon_;
  QLabel* alertLabel_;
  QLabel* upstreamLabel_;
  QLabel* stateLabel_;
  QLabel* historyLabel_;
  QLabel* gatewayLabel_;
  QLabel* sharedLabel_;
  QLabel* ageLabel_;
  QTimer* timer_;
  std::function<HistoryInfo()> historyInfo_;
  std::function<QString()> gatewayInfo_;
  SnapshotPtr shownSnapshot_;
  QElapsedTimer sinceSnapshot_;
  QElapsedTimer sinceHistoryPoll_;
};

}  // namespace tg::ui
