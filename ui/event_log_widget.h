// The event log table with its filters (group, kind, minimum severity). UI thread only.
#pragma once

#include <QWidget>

class QComboBox;
class QTableView;

namespace tg::ui {

class EventFilterProxyModel;
class EventLogModel;

class EventLogWidget : public QWidget {
  Q_OBJECT
 public:
  explicit EventLogWidget(EventLogModel* model, QWidget* parent = nullptr);  // model not owned

  void setGroups(const QStringList& groups);
  // Selects and scrolls to the newest event at `tsMs` (of `group` when one is given), clearing the filters
  // when they hide it. False when the log has no such event.
  bool selectEvent(qint64 tsMs, const QString& group);
  EventFilterProxyModel* proxy() const { return proxy_; }
  QTableView* view() const { return view_; }
  QComboBox* groupCombo() const { return groupCombo_; }
  QComboBox* kindCombo() const { return kindCombo_; }
  QComboBox* severityCombo() const { return severityCombo_; }

 private:
  EventLogModel* model_;
  EventFilterProxyModel* proxy_;
  QTableView* view_;
  QComboBox* groupCombo_;
  QComboBox* kindCombo_;
  QComboBox* severityCombo_;
};

}  // namespace tg::ui
