// One dashboard chart: a QChartView over a date-time axis that draws a ChartFrame. Lines are decimated
// to min/max per pixel column and split at gaps (NaN or missing samples) into pooled QLineSeries that
// share a pen, so a gap stays a gap instead of a line to zero. Event markers are vertical lines painted
// over the plot area. UI thread only.
#pragma once

#include "chart_frame.h"

#include <QChartView>

#include <map>

class QAreaSeries;
class QCategoryAxis;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace tg::ui {

class RedrawStats;

class TimeChartWidget : public QChartView {
  Q_OBJECT
 public:
  explicit TimeChartWidget(ChartKind kind, QWidget* parent = nullptr);

  ChartKind kind() const { return kind_; }
  // Replaces the data. Points outside [fromMs, toMs] are kept so a scrolling window stays filled.
  void setFrame(const ChartFrame& frame, EpochMs fromMs, EpochMs toMs);
  // Moves the time axis (cheap; called on every dashboard tick).
  void setTimeRange(EpochMs fromMs, EpochMs toMs);
  void setStats(RedrawStats* stats) { stats_ = stats; }  // not owned; may be null
  // A moment to point out (an event a notification told of): a shaded band and a line; 0 = none.
  void setMomentMs(EpochMs tsMs);
  EpochMs momentMs() const { return momentMs_; }

  // Inspection for tests and tooltips.
  // Drawn segments (non-empty series) of the line named `name`, in time order.
  std::vector<std::vector<QPointF>> segments(const QString& name) const;
  QColor lineColor(const QString& name) const;  // the pen of the line named `name`; invalid when none
  // Spans drawn for `group` in `state` on the breaker chart.
  std::vector<std::pair<double, double>> bandSpans(const QString& group, BreakerState state) const;
  const std::vector<Marker>& markers() const { return markers_; }
  EpochMs fromMs() const { return fromMs_; }  // the time axis as last set
  EpochMs toMs() const { return toMs_; }
  QString valuesAt(EpochMs tsMs) const;  // the one-line hover tooltip at a time
  int plotWidthPx() const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void changeEvent(QEvent* event) override;
  // The keyboard's readout: Tab to a chart, Left/Right (Page Up/Down, Home/End) move a cursor in time, and the
  // values there show as the tooltip does and are the chart's accessible description.
  void focusInEvent(QFocusEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  void fitBandLabels();  // the breaker chart's row labels only where each row is a line of text high
  struct LinePool {
    std::vector<QLineSeries*> series;
    LineData spec;                 // without points
    std::vector<QPointF> drawn;    // decimated points, for tooltips
  };
  struct BandSeries {
    QAreaSeries* area = nullptr;
    QLineSeries* upper = nullptr;
    QLineSeries* lower = nullptr;
  };

  void applyPalette();
  void announceCursor(bool showTip);
  QLineSeries* newSegmentSeries(const LineData& spec, bool showInLegend);
  void setBands(const std::vector<BandRow>& rows);

  ChartKind kind_;
  QChart* chart_;
  QDateTimeAxis* xAxis_;
  QValueAxis* yAxis_ = nullptr;
  QValueAxis* yRight_ = nullptr;
  QCategoryAxis* yBands_ = nullptr;
  std::map<QString, LinePool> pools_;
  std::vector<QString> poolOrder_;
  std::map<std::pair<QString, int>, BandSeries> bands_;
  std::vector<BandRow> bandRows_;
  std::vector<Marker> markers_;
  RedrawStats* stats_ = nullptr;
  EpochMs fromMs_ = 0, toMs_ = 0;
  EpochMs momentMs_ = 0;
  EpochMs cursorMs_ = 0;      // the keyboard's readout time, while focused
  bool cursorFollows_ = true;  // at the newest time: follows it as the live window moves
};

}  // namespace tg::ui
