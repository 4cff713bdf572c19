#include "controls_widget.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include <vector>

namespace tg::ui {

namespace {

QString tierLabel(int t) { return QStringLiteral("P%1").arg(t); }

void linkSliderAndSpin(QSlider* slider, QSpinBox* spin) {
  QObject::connect(slider, &QSlider::valueChanged, spin, &QSpinBox::setValue);
  QObject::connect(spin, &QSpinBox::valueChanged, slider, &QSlider::setValue);
}

void setRangeFor(QSlider* slider, QSpinBox* spin, int value, int floorMax) {
  const int max = std::max(floorMax, value * 2);
  if (slider->maximum() < max || slider->maximum() > 4 * max) {
    const QSignalBlocker a(slider), b(spin);
    slider->setRange(1, max);
    spin->setRange(1, 100000);
  }
}

}  // namespace

ControlsWidget::ControlsWidget(QWidget* parent)
    : QWidget(parent), globalSlider_(new QSlider(Qt::Horizontal, this)), globalSpin_(new QSpinBox(this)),
      groupSlider_(new QSlider(Qt::Horizontal, this)), groupSpin_(new QSpinBox(this)),
      groupCombo_(new QComboBox(this)), pauseGroup_(new QPushButton(tr("Pause &group"), this)),
      drain_(new QPushButton(tr("&Drain queue…"), this)), globalCommit_(new QTimer(this)),
      groupCommit_(new QTimer(this)) {
  confirm_ = [](QWidget* parent, const QString& title, const QString& text) {
    // Yes / No: a "Cancel" button beside "drop every queued request?" read as the action itself.
    return QMessageBox::question(parent, title, text, QMessageBox::Yes | QMessageBox::No, QMessageBox::No) ==
           QMessageBox::Yes;
  };
  for (QTimer* t : {globalCommit_, groupCommit_}) {
    t->setSingleShot(true);
    t->setInterval(400);
  }

  globalSlider_->setObjectName(QStringLiteral("globalConcurrencySlider"));
  globalSpin_->setObjectName(QStringLiteral("globalConcurrency"));
  groupSlider_->setObjectName(QStringLiteral("groupConcurrencySlider"));
  groupSpin_->setObjectName(QStringLiteral("groupConcurrency"));
  groupCombo_->setObjectName(QStringLiteral("controlGroup"));
  pauseGroup_->setObjectName(QStringLiteral("pauseGroup"));
  drain_->setObjectName(QStringLiteral("drainGroup"));
  for (QSlider* s : {globalSlider_, groupSlider_}) {
    s->setRange(1, 256);
    s->setFocusPolicy(Qt::StrongFocus);
  }
  globalSpin_->setRange(1, 100000);
  groupSpin_->setRange(1, 100000);
  globalSpin_->setAccessibleName(tr("Global concurrency"));
  groupSpin_->setAccessibleName(tr("Group concurrency"));
  globalSlider_->setAccessibleName(tr("Global concurrency"));  // read as "All groups", its box's title
  groupSlider_->setAccessibleName(tr("Group concurrency"));
  linkSliderAndSpin(globalSlider_, globalSpin_);
  linkSliderAndSpin(groupSlider_, groupSpin_);

  auto* globalBox = new QGroupBox(tr("All groups"), this);
  auto* globalForm = new QFormLayout(globalBox);
  auto* globalRow = new QHBoxLayout;
  globalRow->addWidget(globalSlider_, 1);
  globalRow->addWidget(globalSpin_);
  auto* globalLabel = new QLabel(tr("Concurrenc&y"), globalBox);
  globalLabel->setBuddy(globalSpin_);
  globalForm->addRow(globalLabel, globalRow);
  auto* globalCeilingLabel = new QLabel(tr("Rate ce&iling"), globalBox);
  globalForm->addRow(globalCeilingLabel, makeCeilingEditor(global_, QStringLiteral("global"), globalBox));
  globalCeilingLabel->setBuddy(global_.rps);
  auto* globalPauseRow = new QHBoxLayout;
  for (int t = 0; t < kTierCount; ++t) {
    auto* b = new QPushButton(tr("Pause %1").arg(tierLabel(t)), globalBox);
    b->setObjectName(QStringLiteral("pauseGlobal_P%1").arg(t));
    b->setCheckable(true);
    b->setToolTip(tr("Hold every group's %1 queue; requests wait until resumed").arg(tierLabel(t)));
    b->setAccessibleDescription(tr("all groups"));  // the one-group buttons have the same words
    globalPause_[t] = b;
    globalPauseRow->addWidget(b);
    connect(b, &QPushButton::clicked, this, [this, t, b](bool on) { pauseTier(Tier(t), on, {}, b); });
  }
  globalForm->addRow(tr("Tiers"), globalPauseRow);

  auto* groupBox = new QGroupBox(tr("One group"), this);
  auto* groupForm = new QFormLayout(groupBox);
  auto* groupLabel = new QLabel(tr("G&roup"), groupBox);
  groupLabel->setBuddy(groupCombo_);
  groupForm->addRow(groupLabel, groupCombo_);
  auto* groupRow = new QHBoxLayout;
  groupRow->addWidget(groupSlider_, 1);
  groupRow->addWidget(groupSpin_);
  auto* groupConcLabel = new QLabel(tr("Co&ncurrency"), groupBox);
  groupConcLabel->setBuddy(groupSpin_);
  groupForm->addRow(groupConcLabel, groupRow);
  auto* groupCeilingLabel = new QLabel(tr("R&ate ceiling"), groupBox);
  groupForm->addRow(groupCeilingLabel, makeCeilingEditor(group_, QStringLiteral("group"), groupBox));
  groupCeilingLabel->setBuddy(group_.rps);
  auto* groupPauseRow = new QHBoxLayout;
  for (int t = 0; t < kTierCount; ++t) {
    auto* b = new QPushButton(tr("Pause %1").arg(tierLabel(t)), groupBox);
    b->setObjectName(QStringLiteral("pauseGroup_P%1").arg(t));
    b->setCheckable(true);
    b->setAccessibleDescription(tr("the selected group"));
    groupTierPause_[t] = b;
    groupPauseRow->addWidget(b);
    connect(b, &QPushButton::clicked, this,
            [this, t, b](bool on) { pauseTier(Tier(t), on, selectedGroup().toStdString(), b); });
  }
  groupForm->addRow(tr("Tiers"), groupPauseRow);
  auto* groupActions = new QHBoxLayout;
  pauseGroup_->setCheckable(true);
  groupActions->addWidget(pauseGroup_);
  groupActions->addWidget(drain_);
  groupForm->addRow(QString(), groupActions);

  // Tab as the dock reads, top to bottom (made in another order, it reached a group's concurrency before the group,
  // and both rate ceilings after every pause button).
  std::vector<QWidget*> order{globalSlider_, globalSpin_, global_.rps, global_.tpm};
  order.insert(order.end(), globalPause_.begin(), globalPause_.end());
  order.insert(order.end(), {groupCombo_, groupSlider_, groupSpin_, group_.rps, group_.tpm});
  order.insert(order.end(), groupTierPause_.begin(), groupTierPause_.end());
  order.insert(order.end(), {pauseGroup_, drain_});
  for (std::size_t i = 1; i < order.size(); ++i) setTabOrder(order[i - 1], order[i]);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(globalBox);
  layout->addWidget(groupBox);
  layout->addStretch(1);

  // Any change restarts the quiet timer; Enter in the spin box commits at once. What is typed counts only at
  // Enter or when the field loses focus (no keyboard tracking): typing "120" with a pause after the "1" set
  // every group's concurrency to 1 for a second, audited as such.
  for (QAbstractSpinBox* s : std::initializer_list<QAbstractSpinBox*>{globalSpin_, groupSpin_})
    s->setKeyboardTracking(false);
  connect(globalSpin_, &QSpinBox::valueChanged, this, [this] { globalCommit_->start(); });
  connect(groupSpin_, &QSpinBox::valueChanged, this, [this] { groupCommit_->start(); });
  connect(globalSpin_, &QSpinBox::editingFinished, this, &ControlsWidget::commitGlobal);
  connect(groupSpin_, &QSpinBox::editingFinished, this, &ControlsWidget::commitGroup);
  connect(globalCommit_, &QTimer::timeout, this, &ControlsWidget::commitGlobal);
  connect(groupCommit_, &QTimer::timeout, this, &ControlsWidget::commitGroup);

  connect(groupCombo_, &QComboBox::currentIndexChanged, this, [this] {
    groupCommit_->stop();
    group_.commit->stop();
    if (lastSnapshot_) setSnapshot(lastSnapshot_);
  });
  connect(pauseGroup_, &QPushButton::clicked, this, [this](bool on) {
    if (commands_ && !selectedGroup().isEmpty()) commands_->setGroupPaused(selectedGroup().toStdString(), on);
  });
  connect(drain_, &QPushButton::clicked, this, [this] {
    const QString g = selectedGroup();
    if (!commands_ || g.isEmpty()) return;
    if (!confirm_(this, tr("Drain %1").arg(g),
                  tr("Drop every request queued for %1? Requests in flight finish.").arg(g)))
      return;
    commands_->drainGroup(g.toStdString());
  });
  syncEnabled();
}

QHBoxLayout* ControlsWidget::makeCeilingEditor(CeilingEditor& e, const QString& name, QWidget* parent) {
  e.rps = new QDoubleSpinBox(parent);
  e.tpm = new QSpinBox(parent);
  e.commit = new QTimer(this);
  e.commit->setSingleShot(true);
  e.commit->setInterval(globalCommit_->interval());
  e.rps->setObjectName(name + QStringLiteral("RateCeilingRps"));
  e.tpm->setObjectName(name + QStringLiteral("RateCeilingTpm"));
  e.rps->setRange(0, 1e6);
  e.rps->setDecimals(1);
  e.rps->setSuffix(tr(" req/s"));
  e.tpm->setRange(0, 1'000'000'000);
  e.tpm->setSingleStep(1000);
  e.tpm->setSuffix(tr(" tokens/min"));
  e.rps->setSpecialValueText(tr("req/s: none"));
  e.tpm->setSpecialValueText(tr("tokens/min: none"));
  for (QAbstractSpinBox* s : std::initializer_list<QAbstractSpinBox*>{e.rps, e.tpm}) {
    s->setKeyboardTracking(false);  // as the concurrency fields: what is typed counts at Enter or focus out
    s->setToolTip(tr("Sends are paced to this rate, beneath what the quota allows; 0 = no ceiling"));
  }
  e.rps->setAccessibleName(tr("Rate ceiling, requests per second"));
  e.tpm->setAccessibleName(tr("Rate ceiling, tokens per minute"));
  const bool global = &e == &global_;
  connect(e.rps, &QDoubleSpinBox::valueChanged, this, [t = e.commit] { t->start(); });
  connect(e.tpm, &QSpinBox::valueChanged, this, [t = e.commit] { t->start(); });
  connect(e.rps, &QDoubleSpinBox::editingFinished, this, [this, global] { commitCeiling(global); });
  connect(e.tpm, &QSpinBox::editingFinished, this, [this, global] { commitCeiling(global); });
  connect(e.commit, &QTimer::timeout, this, [this, global] { commitCeiling(global); });
  auto* row = new QHBoxLayout;
  row->addWidget(e.rps, 1);
  row->addWidget(e.tpm, 1);
  return row;
}

bool ControlsWidget::CeilingEditor::editing() const {
  return commit->isActive() || rps->hasFocus() || tpm->hasFocus();
}

RateCeilingConfig ControlsWidget::CeilingEditor::value() const {
  return RateCeilingConfig{rps->value(), double(tpm->value())};
}

void ControlsWidget::CeilingEditor::show(const RateCeilingConfig& c) {
  if (editing()) return;
  const QSignalBlocker a(rps), b(tpm);
  rps->setValue(c.requestsPerS);
  tpm->setValue(int(std::min(c.tokensPerMin, double(tpm->maximum()))));
}

void ControlsWidget::commitCeiling(bool global) {
  CeilingEditor& e = global ? global_ : group_;
  e.commit->stop();
  const std::string g = global ? std::string() : selectedGroup().toStdString();
  if (!commands_ || (!global && g.empty())) return;
  RateCeilingConfig& shown = global ? globalCeilingShown_ : groupCeilingShown_[g];
  if (e.value() == shown) return;
  shown = e.value();
  commands_->setRateCeiling(g, shown);
}

void ControlsWidget::setCommands(OperatorCommands* commands) {
  commands_ = commands;
  syncEnabled();
}

void ControlsWidget::setConfirm(ConfirmFn confirm) { confirm_ = std::move(confirm); }

void ControlsWidget::setCommitDelayMs(int ms) {
  for (QTimer* t : {globalCommit_, groupCommit_, global_.commit, group_.commit}) t->setInterval(ms);
}

void ControlsWidget::syncEnabled() {
  const bool on = commands_ != nullptr;
  for (QWidget* w : findChildren<QWidget*>()) {
    if (qobject_cast<QSlider*>(w) || qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QPushButton*>(w))
      w->setEnabled(on);
  }
  if (!on) setToolTip(tr("Read-only: no engine attached"));
  else setToolTip(QString());
}

QString ControlsWidget::selectedGroup() const { return groupCombo_->currentText(); }

void ControlsWidget::selectGroup(const QString& group) {
  const int i = groupCombo_->findText(group);
  if (i >= 0) groupCombo_->setCurrentIndex(i);
}

void ControlsWidget::pauseTier(Tier tier, bool paused, const std::string& group, QPushButton* button) {
  if (!commands_) return;
  if (paused && tier == Tier::P0) {
    // Two sentences, not "every group" put into the one for a name: in Chinese the name's spaces stood around
    // "所有组" too.
    const QString question =
        group.empty() ? tr("Pause the highest-priority tier (P0) for every group? Interactive traffic will wait.")
                      : tr("Pause the highest-priority tier (P0) for %1? Interactive traffic will wait.")
                            .arg(QString::fromStdString(group));
    if (!confirm_(this, tr("Pause P0"), question)) {
      button->setChecked(false);
      return;
    }
  }
  commands_->setTierPaused(tier, paused, group);
  button->setText(paused ? tr("Resume %1").arg(tierLabel(int(tier))) : tr("Pause %1").arg(tierLabel(int(tier))));
}

void ControlsWidget::commitGlobal() {
  globalCommit_->stop();
  if (!commands_ || globalSpin_->value() == globalShown_) return;
  globalShown_ = globalSpin_->value();
  commands_->setGlobalConcurrency(globalSpin_->value());
}

void ControlsWidget::commitGroup() {
  groupCommit_->stop();
  const std::string g = selectedGroup().toStdString();
  if (!commands_ || g.empty()) return;
  auto it = groupShown_.find(g);
  if (it != groupShown_.end() && it->second == groupSpin_->value()) return;
  groupShown_[g] = groupSpin_->value();
  commands_->setGroupConcurrency(g, groupSpin_->value());
}

void ControlsWidget::setSnapshot(const SnapshotPtr& ptr) {
  if (!ptr) return;
  lastSnapshot_ = ptr;
  const EngineSnapshot& snapshot = *ptr;

  // Groups
  QStringList names;
  for (const auto& g : snapshot.groups) names << QString::fromStdString(g.group);
  QStringList existing;
  for (int i = 0; i < groupCombo_->count(); ++i) existing << groupCombo_->itemText(i);
  if (names != existing) {
    const QString current = selectedGroup();
    const QSignalBlocker block(groupCombo_);
    groupCombo_->clear();
    groupCombo_->addItems(names);
    const int i = groupCombo_->findText(current);
    groupCombo_->setCurrentIndex(i < 0 ? 0 : i);
  }

  auto showValue = [](QSlider* slider, QSpinBox* spin, QTimer* pending, int value, int floorMax) {
    if (pending->isActive() || spin->hasFocus() || slider->isSliderDown()) return;
    setRangeFor(slider, spin, value, floorMax);
    const QSignalBlocker a(slider), b(spin);
    spin->setValue(value);
    slider->setValue(value);
  };
  if (!globalCommit_->isActive() && !globalSpin_->hasFocus()) globalShown_ = snapshot.globalConcurrencyLimit;
  showValue(globalSlider_, globalSpin_, globalCommit_, snapshot.globalConcurrencyLimit, 256);
  if (!global_.editing()) globalCeilingShown_ = snapshot.globalRateCeiling;
  global_.show(snapshot.globalRateCeiling);

  for (int t = 0; t < kTierCount; ++t) {
    globalPause_[t]->setChecked(snapshot.tierPaused[t]);
    globalPause_[t]->setText(snapshot.tierPaused[t] ? tr("Resume %1").arg(tierLabel(t))
                                                    : tr("Pause %1").arg(tierLabel(t)));
  }

  const GroupSnapshot* g = snapshot.find(selectedGroup().toStdString());
  for (QWidget* w : std::initializer_list<QWidget*>{groupSlider_, groupSpin_, group_.rps, group_.tpm, pauseGroup_, drain_})
    w->setEnabled(commands_ && g);
  for (auto* b : groupTierPause_) b->setEnabled(commands_ && g);
  if (!g) return;
  if (!groupCommit_->isActive() && !groupSpin_->hasFocus()) groupShown_[g->group] = g->concurrencyCeiling;
  showValue(groupSlider_, groupSpin_, groupCommit_, g->concurrencyCeiling, 64);
  if (!group_.editing()) groupCeilingShown_[g->group] = g->rateCeiling;
  group_.show(g->rateCeiling);
  for (int t = 0; t < kTierCount; ++t) {
    groupTierPause_[t]->setChecked(g->tierPaused[t]);
    groupTierPause_[t]->setText(g->tierPaused[t] ? tr("Resume %1").arg(tierLabel(t))
                                                 : tr("Pause %1").arg(tierLabel(t)));
    // Paused on all groups, the tier stays paused whatever this group says: its "Resume" did nothing, yet was
    // audited as done ("Resumed P2 on interactive").
    const bool everywhere = snapshot.tierPaused[t];
    groupTierPause_[t]->setEnabled(commands_ && !everywhere);
    const QString why =
        everywhere ? tr("%1 is paused on all groups: resume it under All groups").arg(tierLabel(t)) : QString();
    groupTierPause_[t]->setToolTip(why);
    // A disabled button takes no focus, so a keyboard never shows its tooltip: a screen reader reads this.
    groupTierPause_[t]->setAccessibleDescription(why);
  }
  pauseGroup_->setChecked(g->paused);
  pauseGroup_->setText(g->paused ? tr("Resume &group") : tr("Pause &group"));
}

}  // namespace tg::ui
