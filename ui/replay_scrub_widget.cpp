#include "replay_scrub_widget.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QStyleOptionFocusRect>

#include <algorithm>

namespace tg::ui {

namespace {
constexpr int kMargin = 6;
}

ReplayScrubWidget::ReplayScrubWidget(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("replayScrub"));
  setMouseTracking(false);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Playhead: click or drag, or arrow keys (a second; Page Up/Down a tenth; Home/End). Red: "
                "incidents; blue: operator actions"));
  // The keyboard had only the panel's 5-s steps: a bar that took no focus could not be moved from it.
  setFocusPolicy(Qt::StrongFocus);
  setAccessibleName(tr("Playhead"));
}

void ReplayScrubWidget::keyPressEvent(QKeyEvent* e) {
  const EpochMs span = to_ - from_;
  EpochMs to = playhead_;
  switch (e->key()) {
    case Qt::Key_Left: to -= 1000; break;
    case Qt::Key_Right: to += 1000; break;
    case Qt::Key_PageUp: to -= std::max<EpochMs>(1000, span / 10); break;
    case Qt::Key_PageDown: to += std::max<EpochMs>(1000, span / 10); break;
    case Qt::Key_Home: to = from_; break;
    case Qt::Key_End: to = to_; break;
    default: QWidget::keyPressEvent(e); return;
  }
  to = std::clamp(to, from_, to_);
  if (to != playhead_) {
    playhead_ = to;
    update();
    emit scrubbed(playhead_);
  }
  e->accept();
}

void ReplayScrubWidget::setRange(EpochMs fromMs, EpochMs toMs) {
  from_ = fromMs;
  to_ = std::max(toMs, fromMs + 1);
  update();
}

void ReplayScrubWidget::setSpans(std::vector<std::pair<EpochMs, EpochMs>> spans) {
  spans_ = std::move(spans);
  update();
}

void ReplayScrubWidget::setMarks(std::vector<EpochMs> marks) {
  marks_ = std::move(marks);
  update();
}

void ReplayScrubWidget::setPlayhead(EpochMs tsMs) {
  if (tsMs == playhead_) return;
  playhead_ = tsMs;
  update();
}

int ReplayScrubWidget::xAt(EpochMs ts) const {
  const int w = std::max(1, width() - 2 * kMargin);
  return kMargin + int(double(ts - from_) / double(to_ - from_) * w);
}

EpochMs ReplayScrubWidget::timeAt(int x) const {
  const int w = std::max(1, width() - 2 * kMargin);
  const double f = std::clamp(double(x - kMargin) / w, 0.0, 1.0);
  return from_ + EpochMs(f * double(to_ - from_));
}

void ReplayScrubWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QRect track(kMargin, height() / 2 - 5, width() - 2 * kMargin, 10);
  p.fillRect(track, palette().color(QPalette::Mid));
  for (const auto& [a, b] : spans_) {
    if (b < from_ || a > to_) continue;
    const int x0 = xAt(std::max(a, from_)), x1 = std::max(x0 + 2, xAt(std::min(b, to_)));
    p.fillRect(QRect(x0, track.top(), x1 - x0, track.height()), QColor(0xe1, 0x57, 0x59, 200));
  }
  p.setPen(QPen(QColor(0x2b, 0x6c, 0xd6), 2));
  for (EpochMs m : marks_)
    if (m >= from_ && m <= to_) p.drawLine(xAt(m), track.top() - 5, xAt(m), track.bottom() + 5);
  const int x = xAt(std::clamp(playhead_, from_, to_));
  p.setPen(QPen(palette().color(QPalette::Text), 2));
  p.drawLine(x, 1, x, height() - 2);
  p.setBrush(palette().color(QPalette::Text));
  p.drawPolygon(QPolygon({QPoint(x - 5, 0), QPoint(x + 5, 0), QPoint(x, 6)}));
  if (hasFocus()) {  // where the keyboard is, as the style draws it for its own widgets
    QStyleOptionFocusRect focus;
    focus.initFrom(this);
    focus.rect = rect().adjusted(1, 1, -1, -1);
    style()->drawPrimitive(QStyle::PE_FrameFocusRect, &focus, &p, this);
  }
}

void ReplayScrubWidget::mousePressEvent(QMouseEvent* e) {
  playhead_ = timeAt(int(e->position().x()));
  update();
  emit scrubbed(playhead_);
}

void ReplayScrubWidget::mouseMoveEvent(QMouseEvent* e) {
  if (!(e->buttons() & Qt::LeftButton)) return;
  mousePressEvent(e);
}

}  // namespace tg::ui
