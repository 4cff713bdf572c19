// One group at a glance: remaining vs limit, time to reset, 429/s and share, breaker badge, req/s, p95,
// in-flight vs limit, queue per tier and the engine's own words for why the group waits. UI thread only.
#pragma once

#include "sample.h"
#include "snapshot.h"

#include <QFrame>

class QGridLayout;
class QLabel;
class QProgressBar;

namespace tg::ui {

class GroupCardWidget : public QFrame {
  Q_OBJECT
 public:
  GroupCardWidget(const QString& group, const QColor& color, QWidget* parent = nullptr);

  const QString& group() const { return group_; }
  // `last` is the group's newest per-second Sample (rates); null when none yet.
  void setState(const GroupSnapshot& g, const Sample* last, EpochMs snapshotMs);

  // The text shown in a field: "remaining", "reset", "rate429", "breaker", "reqRate", "p95", "inFlight",
  // "queue", "tokens", "waitReason", "flags". Empty string for an unknown field.
  QString fieldText(const QString& field) const;
  BreakerState breaker() const { return breaker_; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void addField(QGridLayout* grid, const QString& name, const QString& caption, int row, int col, int colSpan = 1);

  QString group_;
  QProgressBar* gauge_;
  QLabel* breakerBadge_;
  BreakerState breaker_ = BreakerState::Closed;
};

}  // namespace tg::ui
