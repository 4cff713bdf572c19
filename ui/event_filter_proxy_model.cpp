#include "event_filter_proxy_model.h"

#include "event_log_model.h"

namespace tg::ui {

void EventFilterProxyModel::setGroupFilter(const QString& group) {
  if (group_ == group) return;
  group_ = group;
  invalidateFilter();
}

void EventFilterProxyModel::setKindFilter(std::optional<EventKind> kind) {
  if (kind_ == kind) return;
  kind_ = kind;
  invalidateFilter();
}

void EventFilterProxyModel::setMinSeverity(Severity severity) {
  if (minSeverity_ == severity) return;
  minSeverity_ = severity;
  invalidateFilter();
}

bool EventFilterProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  const QModelIndex idx = sourceModel()->index(sourceRow, 0, sourceParent);
  if (!group_.isEmpty() && idx.data(EventLogModel::GroupRole).toString() != group_) return false;
  if (kind_ && idx.data(EventLogModel::KindRole).toInt() != int(*kind_)) return false;
  return idx.data(EventLogModel::SeverityRole).toInt() >= int(minSeverity_);
}

}  // namespace tg::ui
