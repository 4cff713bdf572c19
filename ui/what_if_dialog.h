// The what-if dialog: the operator edits settings for a recorded stretch (per group concurrency,
// bucket_fraction, breaker thresholds, tier pauses, global concurrency, time compression), runs the
// re-drive on a worker thread with progress, then sees the recorded and re-driven series on the same axes
// (one chart panel, "· recorded" and "· what-if" lines) and the headline table. UI thread only; the worker
// touches no widget and is cancelled and joined when the dialog goes.
#pragma once

#include "what_if_runner.h"

#include <QDialog>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace tg::ui {

class ChartPanelWidget;
class HistorySampleSource;
class StaticSampleSource;
class ThreadMailbox;

class WhatIfDialog : public QDialog {
  Q_OBJECT
 public:
  // Reads the scenario for [fromMs, toMs] through `source`'s reader (UI thread, short reads). Not owned.
  WhatIfDialog(HistorySampleSource* source, EpochMs fromMs, EpochMs toMs, QWidget* parent = nullptr);
  ~WhatIfDialog() override;

  WhatIfOverrides overrides() const;           // from the form
  void setOverrides(const WhatIfOverrides& o);  // into the form
  void setSpeed(double speed);
  bool isRunning() const { return running_; }
  const std::optional<WhatIfResult>& result() const { return result_; }
  const std::optional<ReplayScenario>& scenario() const { return scenario_; }
  QTableWidget* headlineTable() const { return headline_; }
  ChartPanelWidget* charts() const { return charts_; }

 public slots:
  void run();
  void cancel();

 signals:
  void progress(double fraction);
  void finished(bool ok);

 private:
  void showResult(WhatIfResult r);
  void join();

  std::optional<ReplayScenario> scenario_;
  std::optional<WhatIfResult> result_;
  QDoubleSpinBox* speed_;
  QSpinBox* global_;
  QDoubleSpinBox* scale_;
  std::array<QCheckBox*, kTierCount> paused_{};
  QTableWidget* groups_;
  QPushButton* runButton_;
  QProgressBar* bar_;
  QLabel* status_;
  QTableWidget* headline_;
  ChartPanelWidget* charts_;
  StaticSampleSource* compare_;
  QLabel* key_;
  ThreadMailbox* mailbox_;  // child: the worker's progress and result reach the UI thread through it
  std::thread worker_;  // joined before the dialog goes, so it never outlives `this` or mailbox_
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  bool running_ = false;
};

}  // namespace tg::ui
