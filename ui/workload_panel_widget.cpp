#include "workload_panel_widget.h"

#include "display_text.h"
#include "workload_controller.h"

#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

namespace tg::ui {

namespace {

QString eta(double s) {
  if (std::isnan(s) || s < 0) return QObject::tr("ETA –");
  return QObject::tr("ETA %1").arg(durationText(s));
}

}  // namespace

WorkloadPanelWidget::WorkloadPanelWidget(QWidget* parent)
    : QWidget(parent), profiles_(new QComboBox(this)), start_(new QPushButton(tr("&Start"), this)),
      open_(new QPushButton(tr("&Open JSONL…"), this)), pause_(new QPushButton(tr("Pa&use"), this)),
      cancel_(new QPushButton(tr("Cance&l"), this)), bar_(new QProgressBar(this)), details_(new QLabel(this)),
      poll_(new QTimer(this)) {
  chooseFile_ = [](QWidget* parent) {
    return QFileDialog::getOpenFileName(parent, tr("Open workload"), QString(),
                                        tr("JSON lines (*.jsonl *.ndjson);;All files (*)"));
  };
  profiles_->setObjectName(QStringLiteral("workloadProfile"));
  bar_->setObjectName(QStringLiteral("workloadProgress"));
  details_->setObjectName(QStringLiteral("workloadDetails"));
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setWordWrap(true);
  pause_->setCheckable(true);

  // Open sits on the second row: beside the profile and Start it was cut short in a dock of the default width.
  auto* row = new QHBoxLayout;
  row->addWidget(profiles_, 1);
  row->addWidget(start_);
  auto* row2 = new QHBoxLayout;
  row2->addWidget(open_);
  row2->addStretch(1);
  row2->addWidget(pause_);
  row2->addWidget(cancel_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(row);
  layout->addLayout(row2);
  layout->addWidget(bar_);
  layout->addWidget(details_);
  layout->addStretch(1);

  connect(start_, &QPushButton::clicked, this, [this] {
    if (controller_ && profiles_->count() > 0) controller_->startProfile(profiles_->currentText());
    refresh();
  });
  connect(open_, &QPushButton::clicked, this, [this] {
    if (!controller_) return;
    const QString path = chooseFile_(this);
    if (!path.isEmpty()) controller_->startFile(path);
    refresh();
  });
  connect(pause_, &QPushButton::clicked, this, [this](bool on) {
    if (controller_) controller_->setPaused(on);
    refresh();
  });
  connect(cancel_, &QPushButton::clicked, this, [this] {
    if (controller_) controller_->cancel();
    refresh();
  });
  connect(poll_, &QTimer::timeout, this, &WorkloadPanelWidget::refresh);
  setVisible(false);
}

void WorkloadPanelWidget::setFileChooser(std::function<QString(QWidget*)> chooser) {
  chooseFile_ = std::move(chooser);
}

void WorkloadPanelWidget::setController(WorkloadController* controller) {
  if (controller_) disconnect(controller_, nullptr, this, nullptr);
  controller_ = controller;
  setVisible(controller_ != nullptr);
  if (!controller_) {
    poll_->stop();
    return;
  }
  connect(controller_, &WorkloadController::progressChanged, this, &WorkloadPanelWidget::refresh);
  connect(controller_, &QObject::destroyed, this, [this] { setController(nullptr); });
  profiles_->clear();
  profiles_->addItems(controller_->profiles());
  poll_->start(1000);
  refresh();
}

QString WorkloadPanelWidget::progressText() const { return details_->text(); }

void WorkloadPanelWidget::refresh() {
  if (!controller_) return;
  const WorkloadProgress p = controller_->progress();
  start_->setEnabled(!p.running && profiles_->count() > 0);
  open_->setEnabled(!p.running);
  pause_->setEnabled(p.running);
  cancel_->setEnabled(p.running);
  pause_->setChecked(p.paused);
  pause_->setText(p.paused ? tr("Res&ume") : tr("Pa&use"));
  if (p.total > 0) {
    bar_->setRange(0, 1000);
    bar_->setValue(int(1000.0 * double(p.done) / double(p.total)));
    bar_->setFormat(tr("%1 / %2").arg(p.done).arg(p.total));
  } else {
    bar_->setRange(0, p.running ? 0 : 1);  // busy indicator for open-ended work
    bar_->setValue(0);
    bar_->setFormat(tr("%1 done").arg(p.done));
  }
  QStringList parts;
  if (!p.name.isEmpty()) parts << p.name + (p.paused ? tr(" (paused)") : QString());
  parts << tr("%1 ok, %2 failed").arg(p.ok).arg(p.failed);
  parts << tr("%1/s").arg(p.ratePerS, 0, 'f', 1);
  parts << eta(p.etaS);
  QString text = parts.join(QStringLiteral(" · "));
  if (!p.resultsPath.isEmpty()) text += QLatin1Char('\n') + tr("results: %1").arg(p.resultsPath);
  if (!p.error.isEmpty()) text += QLatin1Char('\n') + tr("error: %1").arg(p.error);
  details_->setText(text);
}

}  // namespace tg::ui
