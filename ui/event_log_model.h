// The event log: newest event on row 0, at most `capacity` rows (the oldest fall off). UI thread only.
#pragma once

#include "meta_types.h"

#include <QAbstractTableModel>

#include <deque>

namespace tg::ui {

class EventLogModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Time = 0, Severity, Kind, Group, Classification, Message, ColumnCount };
  enum Role { KindRole = Qt::UserRole + 1, SeverityRole, GroupRole, TimeMsRole };
  static constexpr int kDefaultCapacity = 5000;

  explicit EventLogModel(QObject* parent = nullptr, int capacity = kDefaultCapacity);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  const Event& event(int row) const { return rows_[std::size_t(row)]; }
  int capacity() const { return capacity_; }

  // "quota exhausted", "burst" or "other error" for 429 events, from detail "classification"; else empty.
  static QString classification(const Event& e);

 public slots:
  void addEvent(const tg::Event& event);
  void setEvents(const std::vector<tg::Event>& oldestFirst);  // replaces everything (replay)
  void clear();

 private:
  std::deque<Event> rows_;  // front = newest
  int capacity_;
};

}  // namespace tg::ui
