#include "event_log_model.h"

#include "display_text.h"
#include "json_text.h"

#include <QApplication>
#include <QDateTime>
#include <QStyle>

namespace tg::ui {

EventLogModel::EventLogModel(QObject* parent, int capacity)
    : QAbstractTableModel(parent), capacity_(capacity > 0 ? capacity : 1) {}

int EventLogModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}

int EventLogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString EventLogModel::classification(const Event& e) {
  const bool is429 = e.kind == EventKind::Burst429Start || e.kind == EventKind::Burst429End ||
                     e.kind == EventKind::QuotaExhausted;
  if (!is429) return {};
  if (e.kind == EventKind::QuotaExhausted) return tr("quota exhausted");
  const auto it = e.detail.find("classification");
  if (it == e.detail.end() || !it->is_string()) return {};
  const std::string c = it->get<std::string>();
  if (c == "quota_exhausted" || c == "quota exhausted" || c == "quota") return tr("quota exhausted");
  if (c == "burst") return tr("burst");
  return tr("other error");
}

QVariant EventLogModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(rows_.size())) return {};
  const Event& e = rows_[std::size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Time: return QDateTime::fromMSecsSinceEpoch(e.tsMs).toString(QStringLiteral("HH:mm:ss.zzz"));
        case Severity: return severityText(e.severity);
        case Kind: return eventKindText(e.kind);
        case Group: return QString::fromStdString(e.group);
        case Classification: return classification(e);
        case Message: return eventMessageText(e);
      }
      return {};
    case Qt::ToolTipRole:
      // The words of the Message column, then the detail as recorded (names and numbers, as the files hold it).
      return e.detail.empty() ? eventMessageText(e)
                              : eventMessageText(e) + QLatin1Char('\n') + QString::fromStdString(tg::dumpJson(e.detail, 2));
    case Qt::DecorationRole:
      if (index.column() != Severity || e.severity == tg::Severity::Info) return {};
      return QApplication::style()->standardIcon(e.severity == tg::Severity::Error
                                                     ? QStyle::SP_MessageBoxCritical
                                                     : QStyle::SP_MessageBoxWarning);
    case KindRole: return int(e.kind);
    case SeverityRole: return int(e.severity);
    case GroupRole: return QString::fromStdString(e.group);
    case TimeMsRole: return qint64(e.tsMs);
  }
  return {};
}

QVariant EventLogModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Time: return tr("Time");
    case Severity: return tr("Severity");
    case Kind: return tr("Kind");
    case Group: return tr("Group");
    case Classification: return tr("429 class");
    case Message: return tr("Message");
  }
  return {};
}

void EventLogModel::addEvent(const Event& event) {
  beginInsertRows({}, 0, 0);
  rows_.push_front(event);
  endInsertRows();
  if (int(rows_.size()) > capacity_) {
    beginRemoveRows({}, capacity_, int(rows_.size()) - 1);
    rows_.resize(std::size_t(capacity_));
    endRemoveRows();
  }
}

void EventLogModel::setEvents(const std::vector<Event>& oldestFirst) {
  beginResetModel();
  rows_.clear();
  for (auto it = oldestFirst.rbegin(); it != oldestFirst.rend() && int(rows_.size()) < capacity_; ++it)
    rows_.push_back(*it);
  endResetModel();
}

void EventLogModel::clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

}  // namespace tg::ui
