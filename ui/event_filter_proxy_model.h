// Filters the event log by group, kind and minimum severity. UI thread only.
#pragma once

#include "event.h"

#include <QSortFilterProxyModel>

#include <optional>

namespace tg::ui {

class EventFilterProxyModel : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;

  void setGroupFilter(const QString& group);  // empty = all groups
  void setKindFilter(std::optional<EventKind> kind);
  void setMinSeverity(Severity severity);

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  QString group_;
  std::optional<EventKind> kind_;
  Severity minSeverity_ = Severity::Info;
};

}  // namespace tg::ui
