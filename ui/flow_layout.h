// A layout that lays its items out in a row and wraps onto the next line when the row is too narrow: the charts'
// top row (window, seven chart toggles, the cost icon) was wider than the room a window of 1480 px left between
// the docks in English, and the chart panel scrolled sideways with its right column cut off.
#pragma once

#include <QLayout>
#include <QList>

namespace tg::ui {

class FlowLayout : public QLayout {
 public:
  explicit FlowLayout(QWidget* parent = nullptr, int hSpacing = 6, int vSpacing = 4);
  ~FlowLayout() override;

  void addItem(QLayoutItem* item) override;
  int count() const override;
  QLayoutItem* itemAt(int index) const override;
  QLayoutItem* takeAt(int index) override;
  Qt::Orientations expandingDirections() const override;
  bool hasHeightForWidth() const override;
  int heightForWidth(int width) const override;
  QSize minimumSize() const override;  // the widest single item: anything wider wraps
  QSize sizeHint() const override;     // everything on one row
  void setGeometry(const QRect& rect) override;

 private:
  int place(const QRect& rect, bool apply) const;  // the height used

  QList<QLayoutItem*> items_;
  int hSpacing_, vSpacing_;
};

}  // namespace tg::ui
