// The fleet sharing quota through Redis (config shared_quota): which mode the shared quota is in, and each
// instance's share of the successes, requests in flight and 429s, as their heartbeats last told. Hidden
// (by its dock) when the quota is not shared. UI thread only.
#pragma once

#include "snapshot.h"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace tg::ui {

class FleetWidget : public QWidget {
  Q_OBJECT
 public:
  explicit FleetWidget(QWidget* parent = nullptr);
  void setState(const SharedQuotaSnapshot& s);
  QString headline() const;  // the mode line, also shown in the status bar

 private:
  QLabel* mode_;
  QTableWidget* table_;
};

}  // namespace tg::ui
