#include "flow_layout.h"

#include <QWidget>

#include <algorithm>

namespace tg::ui {

FlowLayout::FlowLayout(QWidget* parent, int hSpacing, int vSpacing)
    : QLayout(parent), hSpacing_(hSpacing), vSpacing_(vSpacing) {}

FlowLayout::~FlowLayout() {
  while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowLayout::addItem(QLayoutItem* item) { items_.append(item); }
int FlowLayout::count() const { return static_cast<int>(items_.size()); }
QLayoutItem* FlowLayout::itemAt(int index) const { return index >= 0 && index < items_.size() ? items_[index] : nullptr; }
QLayoutItem* FlowLayout::takeAt(int index) {
  return index >= 0 && index < items_.size() ? items_.takeAt(index) : nullptr;
}
Qt::Orientations FlowLayout::expandingDirections() const { return {}; }
bool FlowLayout::hasHeightForWidth() const { return true; }
int FlowLayout::heightForWidth(int width) const { return place(QRect(0, 0, width, 0), false); }

QSize FlowLayout::minimumSize() const {
  QSize s;
  for (const QLayoutItem* item : items_) s = s.expandedTo(item->minimumSize());
  const QMargins m = contentsMargins();
  return s + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const {
  int w = 0, h = 0, n = 0;
  for (const QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    const QSize s = item->sizeHint();
    w += s.width() + (n++ ? hSpacing_ : 0);
    h = std::max(h, s.height());
  }
  const QMargins m = contentsMargins();
  return {w + m.left() + m.right(), h + m.top() + m.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
  QLayout::setGeometry(rect);
  place(rect, true);
}

int FlowLayout::place(const QRect& rect, bool apply) const {
  const QRect area = rect.marginsRemoved(contentsMargins());
  int x = area.x(), y = area.y(), lineHeight = 0;
  // A row's items share its height and are centred in it (a combo box beside tool buttons).
  QList<QPair<QLayoutItem*, QPoint>> row;
  auto flush = [&] {
    if (apply)
      for (const auto& [item, at] : row) {
        const QSize s = item->sizeHint();
        item->setGeometry(QRect(QPoint(at.x(), at.y() + (lineHeight - s.height()) / 2), s));
      }
    row.clear();
  };
  for (QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    const QSize s = item->sizeHint();
    if (x > area.x() && x + s.width() > area.right() + 1) {  // wrap
      flush();
      x = area.x();
      y += lineHeight + vSpacing_;
      lineHeight = 0;
    }
    row.append({item, QPoint(x, y)});
    x += s.width() + hSpacing_;
    lineHeight = std::max(lineHeight, s.height());
  }
  flush();
  const QMargins m = contentsMargins();
  return y + lineHeight - rect.y() + m.bottom();
}

}  // namespace tg::ui
