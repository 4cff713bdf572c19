#include "chart_panel_widget.h"

#include "chart_frame_builder.h"
#include "flow_layout.h"
#include "sample_source.h"
#include "time_chart_widget.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <cstdlib>

namespace tg::ui {

namespace {

// Room left of a moment shown (showMoment), so its mark is not on the axis' edge.
qint64 momentMarginMs(qint64 windowMs) { return windowMs / 20; }

}  // namespace

EpochMs ChartPanelWidget::axisFromMs(EpochMs startMs, EpochMs endMs, qint64 windowMs) {
  const EpochMs windowStart = endMs - windowMs;
  if (startMs <= windowStart) return windowStart;
  return std::max(windowStart, std::min<EpochMs>(startMs, endMs - kMinSpanMs));
}

ChartPanelWidget::ChartPanelWidget(QWidget* parent)
    : QWidget(parent), windowCombo_(new QComboBox(this)), grid_(new QGridLayout), statsLabel_(new QLabel(this)),
      timer_(new QTimer(this)) {
  // Wraps when narrow: one row was wider than the room between the docks at 1480 px in English.
  auto* topBar = new QWidget(this);
  auto* top = new FlowLayout(topBar, 4, 2);
  top->setContentsMargins(0, 0, 0, 0);
  auto* windowLabel = new QLabel(tr("&Window:"), this);
  windowLabel->setBuddy(windowCombo_);
  windowCombo_->setObjectName(QStringLiteral("timeWindow"));
  windowCombo_->addItem(tr("5 min"), kWindowsMs[0]);
  windowCombo_->addItem(tr("15 min"), kWindowsMs[1]);
  windowCombo_->addItem(tr("1 h"), kWindowsMs[2]);
  windowCombo_->addItem(tr("6 h"), kWindowsMs[3]);
  windowCombo_->setCurrentIndex(1);
  top->addWidget(windowLabel);
  top->addWidget(windowCombo_);
  auto* chartsLabel = new QLabel(tr("Charts:"), this);
  chartsLabel->setContentsMargins(6, 0, 0, 0);
  top->addWidget(chartsLabel);

  for (int k = 0; k < kChartKindCount; ++k) {
    const auto kind = static_cast<ChartKind>(k);
    charts_[k] = new TimeChartWidget(kind, this);
    charts_[k]->setStats(&stats_);
    auto* t = new QToolButton(this);
    t->setObjectName(QStringLiteral("toggle_") + chartKey(kind));
    t->setText(chartShortTitle(kind));
    t->setToolTip(tr("Show or hide: %1").arg(chartTitle(kind)));
    t->setCheckable(true);
    t->setChecked(true);
    t->setFocusPolicy(Qt::StrongFocus);
    toggles_[k] = t;
    top->addWidget(t);
    connect(t, &QToolButton::toggled, this, [this, kind](bool on) { setChartVisible(kind, on); });
  }
  statsLabel_->setObjectName(QStringLiteral("redrawStats"));
  statsLabel_->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxInformation).pixmap(16, 16));
  statsLabel_->setToolTip(tr("Dashboard cost: not measured yet"));
  top->addWidget(statsLabel_);

  grid_->setSpacing(4);
  grid_->setContentsMargins(0, 0, 0, 0);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(4, 4, 4, 4);
  QSizePolicy topPolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  topPolicy.setHeightForWidth(true);
  topBar->setSizePolicy(topPolicy);
  outer->addWidget(topBar);
  outer->addLayout(grid_, 1);
  relayout();

  connect(windowCombo_, &QComboBox::currentIndexChanged, this, [this](int i) {
    setWindowMs(windowCombo_->itemData(i).toLongLong());
  });
  // Not while nobody can see them: minimized, the chart timer still took 11% of a core with 40 groups. The first
  // tick after the window is back rebuilds (new data since).
  connect(timer_, &QTimer::timeout, this, [this] {
    if (isVisible() && !window()->isMinimized()) refresh();
  });
  timer_->start(250);
}

void ChartPanelWidget::setSource(SampleSource* source) {
  source_ = source;
  builtRevision_ = ~0ull;
  refresh();
}

void ChartPanelWidget::setWindowMs(qint64 ms) {
  if (momentMs_) {
    momentMs_ = 0;
    for (auto* c : charts_) c->setMomentMs(0);
    builtRevision_ = ~0ull;
  }
  qint64 best = kWindowsMs[0];
  for (qint64 w : kWindowsMs)
    if (std::llabs(w - ms) < std::llabs(best - ms)) best = w;
  const int idx = windowCombo_->findData(best);
  if (windowCombo_->currentIndex() != idx) windowCombo_->setCurrentIndex(idx);  // re-enters via signal
  if (windowMs_ == best) return;
  windowMs_ = best;
  emit windowMsChanged(best);
  refresh();
}

void ChartPanelWidget::showMoment(EpochMs tsMs) {
  const EpochMs end = source_ ? source_->endMs() : 0;
  if (tsMs > 0 && end > 0) {
    qint64 window = kWindowsMs.back();
    for (qint64 w : kWindowsMs)
      if (w >= windowMs_ && tsMs - momentMarginMs(w) >= end - w) {
        window = w;
        break;
      }
    setWindowMs(std::max(window, windowMs_));  // clears any earlier moment
  }
  momentMs_ = tsMs > 0 ? tsMs : 0;
  for (auto* c : charts_) c->setMomentMs(momentMs_);
  builtRevision_ = ~0ull;
  refresh();
}

bool ChartPanelWidget::isChartVisible(ChartKind kind) const { return toggles_[int(kind)]->isChecked(); }

void ChartPanelWidget::setChartVisible(ChartKind kind, bool visible) {
  if (toggles_[int(kind)]->isChecked() != visible) {
    toggles_[int(kind)]->setChecked(visible);  // re-enters via toggled
    return;
  }
  relayout();
  builtRevision_ = ~0ull;  // a chart shown again has stale data
  emit chartVisibilityChanged();
}

void ChartPanelWidget::relayout() {
  for (auto* c : charts_) grid_->removeWidget(c);
  int n = 0;
  for (int k = 0; k < kChartKindCount; ++k) {
    const bool on = toggles_[k]->isChecked();
    charts_[k]->setVisible(on);
    if (!on) continue;
    grid_->addWidget(charts_[k], n / columns_, n % columns_);
    ++n;
  }
  // An odd chart out takes the whole last row.
  if (columns_ == 2 && n % 2 == 1)
    for (int k = kChartKindCount - 1; k >= 0; --k)
      if (toggles_[k]->isChecked()) {
        grid_->removeWidget(charts_[k]);
        grid_->addWidget(charts_[k], (n - 1) / 2, 0, 1, 2);
        break;
      }
  for (int r = 0; r < 8; ++r) grid_->setRowStretch(r, r < (n + columns_ - 1) / columns_ ? 1 : 0);
}

bool ChartPanelWidget::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize) {
    const int width = static_cast<QResizeEvent*>(event)->size().width();
    const QMargins m = layout()->contentsMargins();
    const int two = 2 * charts_[0]->minimumWidth() + grid_->horizontalSpacing() + m.left() + m.right();
    const int columns = width >= two ? 2 : 1;
    if (columns != columns_) {
      columns_ = columns;
      for (int c = 0; c < 2; ++c) grid_->setColumnStretch(c, c < columns ? 1 : 0);
      relayout();
    }
  }
  return QWidget::eventFilter(watched, event);
}

void ChartPanelWidget::setAntialiasing(bool on) {
  for (auto* c : charts_) c->setRenderHint(QPainter::Antialiasing, on);
}

void ChartPanelWidget::setRefreshIntervalMs(int ms) {
  if (ms <= 0)
    timer_->stop();
  else
    timer_->start(ms);
}

void ChartPanelWidget::refresh() {
  const auto start = RedrawStats::nowNs();
  stats_.addRedraw(start);
  if (!source_) return;
  const EpochMs end = source_->endMs();
  if (end <= 0) return;
  EpochMs from = axisFromMs(source_->startMs(), end, windowMs_);
  if (momentMs_ > 0) from = std::min<EpochMs>(from, momentMs_ - momentMarginMs(windowMs_));
  int width = 0;
  for (auto* c : charts_)
    if (isChartVisible(c->kind())) width = std::max(width, c->plotWidthPx());

  // Work only when something visible changes: a pixel column's worth of time, new data (at most once a
  // second, or once a column when columns are wider), a new window or width. A 1 h window moves 0.07 px
  // per 250 ms tick, so most ticks cost nothing.
  const double msPerPx = double(end - from) / std::max(1, width);
  const bool layoutChanged = windowMs_ != builtWindowMs_ || width != builtWidth_ || builtRevision_ == ~0ull;
  const bool jumped = end < axisEndMs_ || end - builtEndMs_ > windowMs_ / 10;
  const bool newData = source_->revision() != builtRevision_ &&
                       double(end - builtEndMs_) >= std::max(1000.0, msPerPx);
  if (layoutChanged || jumped || newData) {
    const ChartFrames frames = ChartFrameBuilder::build(*source_, from, end);
    for (int k = 0; k < kChartKindCount; ++k)
      if (isChartVisible(ChartKind(k))) charts_[k]->setFrame(frames[k], from, end);
    builtRevision_ = source_->revision();
    builtWindowMs_ = windowMs_;
    builtWidth_ = width;
    builtEndMs_ = end;
    axisEndMs_ = end;
  } else if (double(end - axisEndMs_) >= msPerPx) {
    for (auto* c : charts_)
      if (isChartVisible(c->kind())) c->setTimeRange(from, end);
    axisEndMs_ = end;
  }
  const auto now = RedrawStats::nowNs();
  stats_.addWork(start, now - start);
  statsLabel_->setToolTip(tr("Dashboard cost: %1").arg(stats_.summary(now)));
}

}  // namespace tg::ui
