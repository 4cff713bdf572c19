// The dashboard's charts: one TimeChartWidget per ChartKind in a two-column grid, sharing one time window
// (5 min / 15 min / 1 h / 6 h) that ends at the source's newest data. A 4 Hz timer checks the source; axes
// move when the window has advanced a pixel, data is rebuilt when new samples arrived (at most once a
// second or once per pixel column), and always when the window or plot width changed. UI thread only.
#pragma once

#include "chart_frame.h"
#include "redraw_stats.h"

#include <QWidget>

#include <array>

class QComboBox;
class QGridLayout;
class QLabel;
class QTimer;
class QToolButton;

namespace tg::ui {

class SampleSource;
class TimeChartWidget;

class ChartPanelWidget : public QWidget {
  Q_OBJECT
 public:
  static constexpr std::array<qint64, 4> kWindowsMs = {5 * 60'000, 15 * 60'000, 60 * 60'000, 6 * 3600'000};

  explicit ChartPanelWidget(QWidget* parent = nullptr);

  // Where the time axis starts for data from `startMs` (0 = unknown) to `endMs`: the window's start once the
  // window is full, before that the start of the data, so a young run fills the charts instead of their right
  // edge; never less than kMinSpanMs (a first sample alone still has an axis).
  static constexpr qint64 kMinSpanMs = 10'000;
  static EpochMs axisFromMs(EpochMs startMs, EpochMs endMs, qint64 windowMs);

  void setSource(SampleSource* source);  // not owned; must outlive this widget or be reset to null
  qint64 windowMs() const { return windowMs_; }
  void setWindowMs(qint64 ms);  // snapped to the nearest of kWindowsMs; ends showMoment()
  // Keeps `tsMs` (an event a notification told of) on the charts, marked: the smallest window that holds it
  // (never a smaller one than now), and when even the widest does not reach back that far, an axis that
  // starts just before it. Until the operator chooses a window, or showMoment(0).
  void showMoment(EpochMs tsMs);
  EpochMs momentMs() const { return momentMs_; }
  bool isChartVisible(ChartKind kind) const;
  void setChartVisible(ChartKind kind, bool visible);
  TimeChartWidget* chart(ChartKind kind) const { return charts_[int(kind)]; }
  RedrawStats& stats() { return stats_; }
  void setRefreshIntervalMs(int ms);
  // Smooth lines cost UI-thread time; on by default.
  void setAntialiasing(bool on);  // 250 by default; 0 stops the timer (tests call refresh())

 public slots:
  void refresh();

 signals:
  void windowMsChanged(qint64 ms);
  void chartVisibilityChanged();

 protected:
  // Watches the scroll area's viewport it is shown in (MainWindow installs it): one column of charts when two do
  // not fit its width, where the panel scrolled sideways with half a column in view.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void relayout();
  int columns_ = 2;

  SampleSource* source_ = nullptr;
  std::array<TimeChartWidget*, kChartKindCount> charts_{};
  std::array<QToolButton*, kChartKindCount> toggles_{};
  QComboBox* windowCombo_;
  QGridLayout* grid_;
  QLabel* statsLabel_;
  QTimer* timer_;
  qint64 windowMs_ = 15 * 60'000;
  EpochMs momentMs_ = 0;
  std::uint64_t builtRevision_ = ~0ull;
  qint64 builtWindowMs_ = 0;
  int builtWidth_ = 0;
  EpochMs builtEndMs_ = 0;
  EpochMs axisEndMs_ = 0;
  RedrawStats stats_;
};

}  // namespace tg::ui
