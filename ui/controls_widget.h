// Operator controls: global and per-group concurrency ceilings (slider + spin box) and rate ceilings
// (requests/s, tokens/min; 0 = none), pause/resume of tiers
// globally and per group, pause of a whole group, drain of a group's queues. Each control calls
// OperatorCommands; the state shown follows the next snapshot. UI thread only.
#pragma once

#include "operator_commands.h"
#include "snapshot.h"

#include <QWidget>

#include <array>
#include <functional>
#include <map>

class QComboBox;
class QHBoxLayout;
class QDoubleSpinBox;
class QPushButton;
class QSlider;
class QSpinBox;
class QTimer;

namespace tg::ui {

class ControlsWidget : public QWidget {
  Q_OBJECT
 public:
  // Asks the operator to confirm a risky action; returns true to go ahead.
  using ConfirmFn = std::function<bool(QWidget* parent, const QString& title, const QString& text)>;

  explicit ControlsWidget(QWidget* parent = nullptr);

  void setCommands(OperatorCommands* commands);  // not owned; null disables every control
  void setConfirm(ConfirmFn confirm);             // default: QMessageBox::question
  // Values typed or dragged are sent after this quiet time (so a drag is one command, not fifty).
  void setCommitDelayMs(int ms);
  // Shows the engine's state: ceilings, pauses. A control the operator is editing is left alone.
  void setSnapshot(const SnapshotPtr& snapshot);

  QString selectedGroup() const;
  void selectGroup(const QString& group);

  // For tests and shortcuts.
  QPushButton* globalPauseButton(Tier tier) const { return globalPause_[int(tier)]; }
  QPushButton* groupPauseButton(Tier tier) const { return groupTierPause_[int(tier)]; }
  QPushButton* pauseGroupButton() const { return pauseGroup_; }
  QPushButton* drainButton() const { return drain_; }
  QSpinBox* globalConcurrencySpin() const { return globalSpin_; }
  QSpinBox* groupConcurrencySpin() const { return groupSpin_; }
  QDoubleSpinBox* globalRpsSpin() const { return global_.rps; }
  QSpinBox* globalTpmSpin() const { return global_.tpm; }
  QDoubleSpinBox* groupRpsSpin() const { return group_.rps; }
  QSpinBox* groupTpmSpin() const { return group_.tpm; }

 private:
  void pauseTier(Tier tier, bool paused, const std::string& group, QPushButton* button);
  void commitGlobal();
  void commitGroup();
  // A rate ceiling's two spin boxes, sent together after the same quiet time as the concurrency.
  struct CeilingEditor {
    QDoubleSpinBox* rps = nullptr;
    QSpinBox* tpm = nullptr;
    QTimer* commit = nullptr;
    bool editing() const;
    RateCeilingConfig value() const;
    void show(const RateCeilingConfig& c);
  };
  QHBoxLayout* makeCeilingEditor(CeilingEditor& e, const QString& name, QWidget* parent);
  void commitCeiling(bool global);
  void syncEnabled();

  OperatorCommands* commands_ = nullptr;
  ConfirmFn confirm_;
  QSlider* globalSlider_;
  QSpinBox* globalSpin_;
  QSlider* groupSlider_;
  QSpinBox* groupSpin_;
  QComboBox* groupCombo_;
  std::array<QPushButton*, kTierCount> globalPause_{};
  std::array<QPushButton*, kTierCount> groupTierPause_{};
  QPushButton* pauseGroup_;
  QPushButton* drain_;
  QTimer* globalCommit_;
  QTimer* groupCommit_;
  int globalShown_ = -1;             // the engine's value last shown
  std::map<std::string, int> groupShown_;
  CeilingEditor global_;
  CeilingEditor group_;
  RateCeilingConfig globalCeilingShown_;
  std::map<std::string, RateCeilingConfig> groupCeilingShown_;
  SnapshotPtr lastSnapshot_;
};

}  // namespace tg::ui
