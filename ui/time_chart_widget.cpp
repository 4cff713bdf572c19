#include "time_chart_widget.h"

#include "chart_frame_builder.h"
#include "display_text.h"
#include "min_max_decimator.h"
#include "redraw_stats.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QGraphicsLayout>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QKeyEvent>
#include <QFocusEvent>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace tg::ui {

namespace {

constexpr std::size_t kMaxSegments = 256;  // beyond this, the rest of a line is drawn as one segment
constexpr double kBandLow = 0.15, kBandHigh = 0.85;
constexpr double kLanePx = 6;  // height of the lane where 429 bursts are ticked
constexpr double kMomentHalfWidthPx = 6;  // the shaded band around a moment pointed out (setMomentMs)

// Ticks at round steps on a niceCeiling range: six (five steps) on 1, 2.5 and 5 x 10^n, five on 2 x 10^n
// (five ticks on 2.5 gave 0.625 and 1.875).
int niceTicks(double ceiling) {
  if (!(ceiling > 0)) return 5;
  const double m = ceiling / std::pow(10.0, std::floor(std::log10(ceiling)));
  return std::fabs(m - 2.0) < 1e-9 ? 5 : 6;
}

double niceCeiling(double v) {
  if (!(v > 0)) return 1;
  const double mag = std::pow(10.0, std::floor(std::log10(v)));
  for (double step : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (step * mag >= v) return step * mag;
  return 10 * mag;
}

QString formatValue(double v) {
  if (std::isnan(v)) return QStringLiteral("–");
  if (std::fabs(v) >= 100 || v == std::floor(v)) return QString::number(v, 'f', 0);
  return QString::number(v, 'f', 1);
}

}  // namespace

TimeChartWidget::TimeChartWidget(ChartKind kind, QWidget* parent)
    // The chart goes in through the constructor: QChartView(parent) makes a default chart of its own, and a
    // later setChart() releases that one without deleting it.
    : QChartView(new QChart, parent), kind_(kind), chart_(chart()), xAxis_(new QDateTimeAxis) {
  setObjectName(QStringLiteral("chart_") + chartKey(kind));
  setRenderHint(QPainter::Antialiasing, true);
  setMouseTracking(true);
  setMinimumSize(200, 150);
  setToolTip(chartDescription(kind));
  // Reachable by Tab, with a readout in time (keyPressEvent): the values were in hover tooltips only.
  setFocusPolicy(Qt::TabFocus);
  setAccessibleName(chartTitle(kind));
  setAccessibleDescription(chartDescription(kind));

  chart_->setTitle(chartTitle(kind));
  QFont titleFont = font();
  titleFont.setBold(true);
  chart_->setTitleFont(titleFont);
  chart_->setMargins(QMargins(4, 2, 4, 2));
  chart_->layout()->setContentsMargins(0, 0, 0, 0);
  chart_->setBackgroundRoundness(0);
  chart_->legend()->setAlignment(Qt::AlignTop);
  QFont small = font();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1));
  chart_->legend()->setFont(small);
  chart_->legend()->hide();

  xAxis_->setFormat(QStringLiteral("hh:mm:ss"));
  xAxis_->setTickCount(6);
  xAxis_->setLabelsFont(small);
  chart_->addAxis(xAxis_, Qt::AlignBottom);
  if (kind == ChartKind::Breaker) {
    yBands_ = new QCategoryAxis;
    yBands_->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    yBands_->setLabelsFont(small);
    yBands_->setRange(0, 1);
    chart_->addAxis(yBands_, Qt::AlignLeft);
  } else {
    yAxis_ = new QValueAxis;
    yAxis_->setLabelFormat(QStringLiteral("%g"));
    yAxis_->setTickCount(5);
    yAxis_->setLabelsFont(small);
    yAxis_->setRange(0, 1);
    chart_->addAxis(yAxis_, Qt::AlignLeft);
    yRight_ = new QValueAxis;
    yRight_->setLabelFormat(QStringLiteral("%g"));
    yRight_->setTickCount(5);
    yRight_->setLabelsFont(small);
    yRight_->setGridLineVisible(false);
    yRight_->setRange(0, 1);
    chart_->addAxis(yRight_, Qt::AlignRight);
    yRight_->hide();
  }
  applyPalette();
}

void TimeChartWidget::applyPalette() {
  const QPalette pal = palette();
  setBackgroundBrush(pal.brush(QPalette::Window));
  chart_->setBackgroundBrush(pal.brush(QPalette::Base));
  chart_->setBackgroundPen(QPen(pal.color(QPalette::Mid), 1));
  chart_->setTitleBrush(pal.brush(QPalette::WindowText));
  chart_->legend()->setLabelColor(pal.color(QPalette::Text));
  QColor grid = pal.color(QPalette::Text);
  grid.setAlpha(40);
  for (QAbstractAxis* axis : chart_->axes()) {
    axis->setLabelsBrush(pal.brush(QPalette::Text));
    axis->setTitleBrush(pal.brush(QPalette::Text));
    axis->setGridLineColor(grid);
    axis->setLinePenColor(pal.color(QPalette::Mid));
  }
}

void TimeChartWidget::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) applyPalette();
  QChartView::changeEvent(event);
}

int TimeChartWidget::plotWidthPx() const {
  const int w = int(chart_->plotArea().width());
  return w > 10 ? w : std::max(100, width() - 80);
}

QLineSeries* TimeChartWidget::newSegmentSeries(const LineData& spec, bool showInLegend) {
  auto* s = new QLineSeries;
  s->setName(spec.name);
  // Width 1 keeps the raster engine on its fast cosmetic stroker; wider or scaled pens cost ~5x per point.
  QPen pen(spec.color, 1.0, spec.style);
  pen.setCosmetic(true);
  s->setPen(pen);
  chart_->addSeries(s);  // the chart owns the series
  s->attachAxis(xAxis_);
  s->attachAxis(spec.rightAxis ? yRight_ : yAxis_);
  for (QLegendMarker* m : chart_->legend()->markers(s)) m->setVisible(showInLegend);
  return s;
}

QColor TimeChartWidget::lineColor(const QString& name) const {
  auto it = pools_.find(name);
  return it == pools_.end() || it->second.series.empty() ? QColor() : it->second.series.front()->pen().color();
}

void TimeChartWidget::setTimeRange(EpochMs fromMs, EpochMs toMs) {
  if (toMs <= fromMs) toMs = fromMs + 1000;
  fromMs_ = fromMs;
  toMs_ = toMs;
  xAxis_->setFormat(toMs - fromMs > 5 * 60 * 1000 ? QStringLiteral("hh:mm") : QStringLiteral("hh:mm:ss"));
  // About one label per 90 px, so labels never elide on a narrow chart.
  const int ticks = std::clamp(plotWidthPx() / 90 + 1, 2, 8);
  if (xAxis_->tickCount() != ticks) xAxis_->setTickCount(ticks);
  xAxis_->setRange(QDateTime::fromMSecsSinceEpoch(fromMs), QDateTime::fromMSecsSinceEpoch(toMs));
}

void TimeChartWidget::setMomentMs(EpochMs tsMs) {
  if (momentMs_ == tsMs) return;
  momentMs_ = tsMs;
  viewport()->update();
}

void TimeChartWidget::setFrame(const ChartFrame& frame, EpochMs fromMs, EpochMs toMs) {
  setTimeRange(fromMs, toMs);
  markers_ = frame.markers;
  if (hasFocus()) cursorMs_ = cursorFollows_ ? toMs_ : std::clamp(cursorMs_, fromMs_, toMs_);
  const double bucketMs = double(toMs_ - fromMs_) / std::max(1, plotWidthPx());

  if (kind_ == ChartKind::Breaker) {
    setBands(frame.bands);
    if (hasFocus()) announceCursor(false);  // a screen reader hears the values as they are now
    viewport()->update();
    return;
  }

  double leftMax = 0, rightMax = 0;
  bool anyRight = false;
  int legendEntries = 0;
  std::vector<QString> seen;
  for (const LineData& line : frame.lines) {
    auto [it, inserted] = pools_.try_emplace(line.name);
    LinePool& pool = it->second;
    if (inserted) {
      poolOrder_.push_back(line.name);
      pool.spec = line;
      pool.spec.points.clear();
    } else if (pool.spec.color != line.color || pool.spec.style != line.style) {
      // A line kept its first pen: after Live -> Replay (groups in another order) the charts kept the live
      // colours while the cards took the replay's.
      pool.spec.color = line.color;
      pool.spec.style = line.style;
      for (QLineSeries* series : pool.series) {
        QPen pen = series->pen();
        pen.setColor(line.color);
        pen.setStyle(line.style);
        series->setPen(pen);
      }
    }
    seen.push_back(line.name);
    pool.drawn = MinMaxDecimator::decimate(line.points, bucketMs);
    auto segs = MinMaxDecimator::splitAtGaps(pool.drawn, 0);  // gaps are NaN points
    if (segs.size() > kMaxSegments) {
      for (std::size_t i = kMaxSegments; i < segs.size(); ++i)
        segs[kMaxSegments - 1].insert(segs[kMaxSegments - 1].end(), segs[i].begin(), segs[i].end());
      segs.resize(kMaxSegments);
    }
    while (pool.series.size() < std::max<std::size_t>(segs.size(), 1))
      pool.series.push_back(newSegmentSeries(pool.spec, pool.series.empty() && pool.spec.inLegend));
    for (std::size_t i = 0; i < pool.series.size(); ++i) {
      if (i < segs.size())
        pool.series[i]->replace(QList<QPointF>(segs[i].begin(), segs[i].end()));
      else if (pool.series[i]->count() > 0)
        pool.series[i]->clear();
    }
    double& m = line.rightAxis ? rightMax : leftMax;
    for (const auto& seg : segs)
      for (const QPointF& p : seg) m = std::max(m, p.y());
    anyRight = anyRight || (line.rightAxis && !segs.empty());
    if (line.inLegend) ++legendEntries;
  }
  for (auto& [name, pool] : pools_) {
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    pool.drawn.clear();
    for (QLineSeries* s : pool.series)
      if (s->count() > 0) s->clear();
  }
  yAxis_->setRange(0, niceCeiling(leftMax * 1.05));
  yAxis_->setTickCount(niceTicks(yAxis_->max()));
  yAxis_->setTitleText(frame.leftTitle);
  yRight_->setVisible(anyRight);
  if (anyRight) {
    yRight_->setRange(0, niceCeiling(rightMax * 1.05));
    yRight_->setTickCount(niceTicks(yRight_->max()));
    yRight_->setTitleText(frame.rightTitle);
  }
  // Per-group charts take their colors from the group cards; a legend of ten groups would crowd the plot.
  const bool aggregate = kind_ == ChartKind::QueueDepth || kind_ == ChartKind::Throughput;
  chart_->legend()->setVisible(aggregate || (legendEntries > 0 && legendEntries <= 4));
  if (hasFocus()) announceCursor(false);  // a screen reader hears the values as they are now
  viewport()->update();
}

void TimeChartWidget::setBands(const std::vector<BandRow>& rows) {
  bool rowsChanged = rows.size() != bandRows_.size();
  for (std::size_t i = 0; !rowsChanged && i < rows.size(); ++i)
    rowsChanged = rows[i].group != bandRows_[i].group;
  if (rowsChanged) {
    for (const QString& label : yBands_->categoriesLabels()) yBands_->remove(label);
    for (std::size_t r = 0; r < rows.size(); ++r) yBands_->append(rows[r].group, double(r + 1));
    yBands_->setRange(0, std::max<double>(1, double(rows.size())));
  }
  bandRows_ = rows;
  fitBandLabels();  // on the rows just set (on the old ones, 40 groups' first frame showed 40 "..." labels)

  static const BreakerState states[] = {BreakerState::Closed, BreakerState::HalfOpen, BreakerState::Open};
  std::vector<std::pair<QString, int>> used;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double lo = double(r) + kBandLow, hi = double(r) + kBandHigh;
    for (BreakerState st : states) {
      const auto key = std::make_pair(rows[r].group, int(st));
      used.push_back(key);
      BandSeries& b = bands_[key];
      if (!b.area) {
        b.upper = new QLineSeries(this);
        b.lower = new QLineSeries(this);
        b.area = new QAreaSeries(b.upper, b.lower);
        b.area->setName(breakerStateText(st));
        QColor fill = ChartFrameBuilder::breakerColor(st);
        b.area->setBrush(fill);
        b.area->setPen(Qt::NoPen);
        chart_->addSeries(b.area);
        b.area->attachAxis(xAxis_);
        b.area->attachAxis(yBands_);
        for (QLegendMarker* m : chart_->legend()->markers(b.area)) m->setVisible(r == 0);
      }
      QList<QPointF> up, down;
      for (const BandSpan& span : rows[r].spans) {
        if (span.state != st) continue;
        up << QPointF(span.fromMs, lo) << QPointF(span.fromMs, hi) << QPointF(span.toMs, hi)
           << QPointF(span.toMs, lo);
        down << QPointF(span.fromMs, lo) << QPointF(span.fromMs, lo) << QPointF(span.toMs, lo)
             << QPointF(span.toMs, lo);
      }
      b.upper->replace(up);
      b.lower->replace(down);
    }
  }
  for (auto& [key, b] : bands_) {
    if (std::find(used.begin(), used.end(), key) != used.end()) continue;
    b.upper->clear();
    b.lower->clear();
  }
  chart_->legend()->setVisible(!rows.empty());
}

std::vector<std::vector<QPointF>> TimeChartWidget::segments(const QString& name) const {
  std::vector<std::vector<QPointF>> out;
  auto it = pools_.find(name);
  if (it == pools_.end()) return out;
  for (QLineSeries* s : it->second.series) {
    if (s->count() == 0) continue;
    const auto pts = s->points();
    out.emplace_back(pts.begin(), pts.end());
  }
  return out;
}

std::vector<std::pair<double, double>> TimeChartWidget::bandSpans(const QString& group,
                                                                  BreakerState state) const {
  std::vector<std::pair<double, double>> out;
  for (const BandRow& row : bandRows_)
    if (row.group == group)
      for (const BandSpan& s : row.spans)
        if (s.state == state) out.emplace_back(s.fromMs, s.toMs);
  return out;
}

QString TimeChartWidget::valuesAt(EpochMs tsMs) const {
  QStringList parts;
  parts << QDateTime::fromMSecsSinceEpoch(tsMs).toString(QStringLiteral("hh:mm:ss"));
  constexpr int kMaxEntries = 8;
  if (kind_ == ChartKind::Breaker) {
    // The groups whose breaker is not closed first (what the operator looks for among 40), then the closed ones
    // counted: the list stopped at the eighth group, in config order, with no sign of the rest.
    QStringList notClosed;
    int closed = 0, unknown = 0;
    for (const BandRow& row : bandRows_) {
      const BandSpan* at = nullptr;
      for (const BandSpan& s : row.spans)
        if (s.fromMs <= tsMs && tsMs < s.toMs) at = &s;
      if (!at) ++unknown;
      else if (at->state == BreakerState::Closed) ++closed;
      else notClosed << row.group + QLatin1Char(' ') + breakerStateText(at->state);
    }
    const int shown = std::min<int>(kMaxEntries, static_cast<int>(notClosed.size()));
    parts << notClosed.mid(0, shown);
    if (notClosed.size() > shown)
      parts << tr("%n more not closed", nullptr, static_cast<int>(notClosed.size()) - shown);
    if (closed > 0) parts << tr("%n closed", nullptr, closed);
    if (unknown > 0) parts << tr("%n without data", nullptr, unknown);
  } else {
    // The largest values first, so the tooltip of a chart with 40 groups names the ones that matter; the list
    // stopped at the eighth in config order.
    const double tolerance = std::max(2000.0, 2.0 * double(toMs_ - fromMs_) / std::max(1, plotWidthPx()));
    std::vector<std::pair<double, QString>> values;
    for (const QString& name : poolOrder_) {
      const LinePool& pool = pools_.at(name);
      if (!pool.spec.inLegend || pool.drawn.empty()) continue;
      auto it = std::lower_bound(pool.drawn.begin(), pool.drawn.end(), double(tsMs),
                                 [](const QPointF& p, double t) { return p.x() < t; });
      if (it == pool.drawn.end() || (it != pool.drawn.begin() && tsMs - (it - 1)->x() < it->x() - tsMs))
        --it;
      const double v = std::fabs(it->x() - tsMs) <= tolerance ? it->y() : std::nan("");
      values.emplace_back(v, name);
    }
    if (values.size() > std::size_t(kMaxEntries))
      std::stable_sort(values.begin(), values.end(), [](const auto& a, const auto& b) {
        if (std::isnan(a.first) != std::isnan(b.first)) return std::isnan(b.first);  // no value last
        return a.first > b.first;
      });
    for (std::size_t i = 0; i < values.size() && i < std::size_t(kMaxEntries); ++i)
      parts << values[i].second + QLatin1Char(' ') + formatValue(values[i].first);
    if (values.size() > std::size_t(kMaxEntries))
      parts << tr("%n more", nullptr, static_cast<int>(values.size()) - kMaxEntries);
  }
  return parts.join(QStringLiteral(" · "));
}

void TimeChartWidget::fitBandLabels() {
  if (kind_ != ChartKind::Breaker) return;
  // A label a row while each row is at least a line of text high; past that (12 groups on a chart 150 px high)
  // every label came out "…" and took a third of the plot's width: none then, the tooltip names the rows.
  const double rowPx = chart_->plotArea().height() / std::max<double>(1, double(bandRows_.size()));
  const bool fit = bandRows_.empty() || rowPx >= fontMetrics().height();
  if (yBands_->labelsVisible() != fit) yBands_->setLabelsVisible(fit);
}

void TimeChartWidget::resizeEvent(QResizeEvent* event) {
  QChartView::resizeEvent(event);
  fitBandLabels();
}

void TimeChartWidget::paintEvent(QPaintEvent* event) {
  const auto start = RedrawStats::nowNs();
  QChartView::paintEvent(event);
  if (stats_) stats_->addWork(start, RedrawStats::nowNs() - start);
}

void TimeChartWidget::drawForeground(QPainter* painter, const QRectF& rect) {
  QChartView::drawForeground(painter, rect);
  if ((markers_.empty() && !momentMs_ && !hasFocus()) || toMs_ <= fromMs_) return;
  const QRectF plot = chart_->mapRectToScene(chart_->plotArea());
  painter->save();
  if (hasFocus()) {  // where the keyboard is: a frame round the plot and the readout's time
    painter->setPen(QPen(palette().color(QPalette::Highlight), 2));
    painter->setBrush(Qt::NoBrush);
    painter->drawRect(plot.adjusted(-1, -1, 1, 1));
    const double x = plot.left() + double(std::clamp(cursorMs_, fromMs_, toMs_) - fromMs_) /
                                       double(toMs_ - fromMs_) * plot.width();
    painter->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DotLine));
    painter->drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
  }
  painter->setClipRect(plot);
  if (momentMs_ >= fromMs_ && momentMs_ <= toMs_) {
    // Under the event markers: a band in the highlight colour a few pixels either side, and a solid line.
    const double x = plot.left() + double(momentMs_ - fromMs_) / double(toMs_ - fromMs_) * plot.width();
    QColor band = palette().color(QPalette::Highlight);
    band.setAlphaF(0.22);
    painter->fillRect(QRectF(x - kMomentHalfWidthPx, plot.top(), 2 * kMomentHalfWidthPx, plot.height()), band);
    painter->setPen(QPen(palette().color(QPalette::Highlight), 2));
    painter->drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
  }
  for (const Marker& m : markers_) {
    if (m.tsMs < fromMs_ || m.tsMs > toMs_) continue;
    const double x = plot.left() + double(m.tsMs - fromMs_) / double(toMs_ - fromMs_) * plot.width();
    if (m.lane) {  // a tick in the top lane: the event is in the log, the plot stays clear
      painter->setPen(QPen(m.color, 2));
      painter->drawLine(QPointF(x, plot.top()), QPointF(x, plot.top() + kLanePx));
      continue;
    }
    painter->setPen(QPen(m.color, 1.5, Qt::DashLine));
    painter->drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    painter->setPen(Qt::NoPen);
    painter->setBrush(m.color);
    const QPointF tri[] = {{x - 4, plot.top()}, {x + 4, plot.top()}, {x, plot.top() + 6}};
    painter->drawPolygon(tri, 3);
  }
  painter->restore();
}

void TimeChartWidget::focusInEvent(QFocusEvent* event) {
  QChartView::focusInEvent(event);
  cursorFollows_ = true;
  cursorMs_ = toMs_;
  announceCursor(true);
}

void TimeChartWidget::focusOutEvent(QFocusEvent* event) {
  QChartView::focusOutEvent(event);
  QToolTip::hideText();
  setAccessibleDescription(chartDescription(kind_));
  viewport()->update();
}

void TimeChartWidget::keyPressEvent(QKeyEvent* event) {
  const EpochMs span = std::max<EpochMs>(1, toMs_ - fromMs_);
  const EpochMs step = std::max<EpochMs>(1000, span / 60), page = std::max<EpochMs>(1000, span / 6);
  EpochMs to = cursorMs_;
  switch (event->key()) {
    case Qt::Key_Left: to -= step; break;
    case Qt::Key_Right: to += step; break;
    case Qt::Key_PageUp: to -= page; break;
    case Qt::Key_PageDown: to += page; break;
    case Qt::Key_Home: to = fromMs_; break;
    case Qt::Key_End: to = toMs_; break;
    default: QChartView::keyPressEvent(event); return;
  }
  cursorMs_ = std::clamp(to, fromMs_, toMs_);
  cursorFollows_ = cursorMs_ >= toMs_;
  announceCursor(true);
  event->accept();
}

void TimeChartWidget::announceCursor(bool showTip) {
  if (toMs_ <= fromMs_) return;
  QString text = valuesAt(cursorMs_);
  const EpochMs near = std::max<EpochMs>(500, (toMs_ - fromMs_) / 120);
  for (const Marker& m : markers_)
    if (std::llabs(m.tsMs - cursorMs_) <= near) text += QStringLiteral("\n") + m.label;
  setAccessibleDescription(text);
  if (showTip) {
    const QRectF plot = chart_->mapRectToScene(chart_->plotArea());
    const double x = plot.left() + double(cursorMs_ - fromMs_) / double(toMs_ - fromMs_) * plot.width();
    QToolTip::showText(viewport()->mapToGlobal(mapFromScene(QPointF(x, plot.top()))), text, this);
  }
  viewport()->update();
}

void TimeChartWidget::mouseMoveEvent(QMouseEvent* event) {
  QChartView::mouseMoveEvent(event);
  const QPointF scenePos = mapToScene(event->position().toPoint());
  const QRectF plot = chart_->mapRectToScene(chart_->plotArea());
  if (!plot.contains(scenePos) || toMs_ <= fromMs_) {
    QToolTip::showText(event->globalPosition().toPoint(), chartDescription(kind_), this);
    return;
  }
  const EpochMs t = fromMs_ + EpochMs((scenePos.x() - plot.left()) / plot.width() * double(toMs_ - fromMs_));
  QString text = valuesAt(t);
  // A marker under the cursor names the event instead.
  for (const Marker& m : markers_) {
    const double x = plot.left() + double(m.tsMs - fromMs_) / double(toMs_ - fromMs_) * plot.width();
    if (std::fabs(x - scenePos.x()) <= 4) {
      text = m.label;
      break;
    }
  }
  QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

}  // namespace tg::ui
