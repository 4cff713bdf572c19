// The replay mode's controls over a HistorySampleSource: the incident list (with each incident's summary),
// a free time range, transport (play/pause at 1x–600x, step, previous/next incident), the scrub bar with
// incident spans and operator actions, export (PNG, CSV, Markdown report) and the what-if dialog.
// Drives the chart panel's time window so the selected stretch fits. UI thread only.
#pragma once

#include "history_types.h"

#include <QElapsedTimer>
#include <QWidget>

#include <optional>

class QComboBox;
class QDateTimeEdit;
class QLabel;
class QTableWidget;
class QTimer;
class QToolButton;

namespace tg::ui {

class ChartPanelWidget;
class HistorySampleSource;
class ReplayScrubWidget;

class ReplayPanelWidget : public QWidget {
  Q_OBJECT
 public:
  static constexpr std::int64_t kIncidentPadMs = 60'000;
  static constexpr std::array<double, 6> kSpeeds = {1, 10, 60, 120, 300, 600};

  // Neither is owned; both must outlive the panel.
  ReplayPanelWidget(HistorySampleSource* source, ChartPanelWidget* charts, QWidget* parent = nullptr);

  HistorySampleSource* source() const { return source_; }
  QTableWidget* incidentTable() const { return table_; }
  ReplayScrubWidget* scrub() const { return scrub_; }

  // Re-reads the file's incidents and range (a live file grows), keeping the current range.
  void reload();
  void selectIncident(std::int64_t id);  // shows the incident with kIncidentPadMs either side
  void showRange(EpochMs fromMs, EpochMs toMs);
  std::optional<Incident> currentIncident() const { return current_; }
  void setSpeed(double factor);  // snapped to kSpeeds
  double speed() const { return speed_; }
  bool isPlaying() const;
  void play();   // from the range start when the playhead is at the end
  void pause();
  void step(int direction);  // one step of 5 s (history time) back (-1) or forward (+1)
  // One playback step for `wallMs` of wall time at the current speed (the timer's tick passes the time
  // since the last tick; tests pass it by hand). Pauses and emits finished() at the range end.
  void advance(qint64 wallMs);
  void nextIncident();
  void previousIncident();

  bool exportReport(const QString& mdPath, QString* error);
  bool exportCsv(const QString& path, QString* error);
  QStringList exportPngs(const QString& dir, QString* error);
  // Opens the what-if dialog for the current range (deleted when closed); returns it.
  class WhatIfDialog* openWhatIf();

 signals:
  void playingChanged(bool playing);
  void finished();  // the playhead reached the range end
  void whatIfRequested();

 private:
  void fillIncidents();
  void tick();
  void syncFromSource();
  void updateBudget();

  HistorySampleSource* source_;
  ChartPanelWidget* charts_;
  QTableWidget* table_;
  QDateTimeEdit* fromEdit_;
  QDateTimeEdit* toEdit_;
  QToolButton* playButton_;
  QComboBox* speedCombo_;
  ReplayScrubWidget* scrub_;
  QLabel* timeLabel_;
  QTimer* timer_;
  QElapsedTimer sinceTick_;
  double speed_ = 60;
  double carryMs_ = 0;
  std::optional<Incident> current_;
};

}  // namespace tg::ui
