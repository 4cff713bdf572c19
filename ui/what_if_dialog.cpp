#include "what_if_dialog.h"

#include "chart_frame_builder.h"
#include "chart_panel_widget.h"
#include "history_sample_source.h"
#include "static_sample_source.h"
#include "thread_mailbox.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace tg::ui {

namespace {

enum GroupColumn { kName = 0, kConcurrency, kBucket, kFailureShare, kMinCalls, kGroupColumns };

QString num(double v, int prec = 0) { return known(v) ? QString::number(v, 'f', prec) : QStringLiteral("–"); }

}  // namespace

WhatIfDialog::WhatIfDialog(HistorySampleSource* source, EpochMs fromMs, EpochMs toMs, QWidget* parent)
    : QDialog(parent), speed_(new QDoubleSpinBox(this)), global_(new QSpinBox(this)), scale_(new QDoubleSpinBox(this)),
      groups_(new QTableWidget(this)), runButton_(new QPushButton(tr("Run"), this)), bar_(new QProgressBar(this)),
      status_(new QLabel(this)), headline_(new QTableWidget(this)), charts_(new ChartPanelWidget(this)),
      compare_(new StaticSampleSource(this)), key_(new QLabel(this)), mailbox_(new ThreadMailbox(this)) {
  setObjectName(QStringLiteral("whatIfDialog"));
  setWindowTitle(tr("What-if re-drive"));
  std::string err;
  scenario_ = ReplayScenario::fromHistory(source->reader(), fromMs, toMs, &err);
  if (scenario_) {
    for (const auto& i : source->incidents())
      if (i.startMs >= fromMs && i.endMs <= toMs) {
        scenario_->incident = i;
        scenario_->incidentId = i.id;
      }
  }

  speed_->setRange(1, 600);
  speed_->setValue(10);
  speed_->setSuffix(QStringLiteral("×"));
  speed_->setToolTip(tr("Time compression: the re-drive runs this many times faster than the recording"));
  global_->setRange(0, 100000);
  global_->setSpecialValueText(tr("as recorded"));
  scale_->setRange(0.05, 10);
  scale_->setSingleStep(0.25);
  scale_->setValue(1.0);
  scale_->setObjectName(QStringLiteral("concurrencyScale"));
  auto* tiers = new QHBoxLayout;
  for (int t = 0; t < kTierCount; ++t) {
    paused_[t] = new QCheckBox(QString::fromLatin1(tierName(Tier(t)).data()), this);
    paused_[t]->setAccessibleDescription(tr("Paused tiers"));  // the row's label is not a checkbox's buddy
    tiers->addWidget(paused_[t]);
  }
  tiers->addStretch(1);
  groups_->setColumnCount(kGroupColumns);
  groups_->setHorizontalHeaderLabels({tr("Group"), tr("Concurrency"), tr("Bucket fraction"), tr("Breaker share"),
                                      tr("Breaker min calls")});
  groups_->verticalHeader()->setVisible(false);
  groups_->setTabKeyNavigation(false);  // Tab leaves the table (it trapped the keyboard); arrows move in it
  groups_->setAccessibleName(tr("Groups"));
  groups_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  if (scenario_) {
    groups_->setRowCount(int(scenario_->groups.size()));
    for (int r = 0; r < groups_->rowCount(); ++r) {
      const auto& g = scenario_->groups[std::size_t(r)];
      auto* name = new QTableWidgetItem(QString::fromStdString(g.name));
      name->setFlags(name->flags() & ~Qt::ItemIsEditable);
      groups_->setItem(r, kName, name);
      // A cell's editor has no label of its own: named by its column and group for a screen reader.
      const QString group = QString::fromStdString(g.name);
      auto named = [&](QWidget* w, int column) {
        w->setAccessibleName(tr("%1, %2").arg(groups_->horizontalHeaderItem(column)->text(), group));
      };
      auto* conc = new QSpinBox(groups_);
      named(conc, kConcurrency);
      conc->setRange(1, 100000);
      conc->setValue(g.concurrency);
      conc->setProperty("shown", conc->value());
      groups_->setCellWidget(r, kConcurrency, conc);
      auto* bucket = new QDoubleSpinBox(groups_);
      named(bucket, kBucket);
      bucket->setRange(0.05, 1.0);
      bucket->setSingleStep(0.05);
      bucket->setValue(GroupConfig{}.bucketFraction);
      bucket->setProperty("shown", bucket->value());
      groups_->setCellWidget(r, kBucket, bucket);
      auto* share = new QDoubleSpinBox(groups_);
      named(share, kFailureShare);
      share->setRange(0.01, 1.0);
      share->setSingleStep(0.05);
      share->setValue(BreakerConfig{}.failureShare);
      share->setProperty("shown", share->value());
      groups_->setCellWidget(r, kFailureShare, share);
      auto* calls = new QSpinBox(groups_);
      named(calls, kMinCalls);
      calls->setRange(1, 1000000);
      calls->setValue(BreakerConfig{}.minCalls);
      calls->setProperty("shown", calls->value());
      groups_->setCellWidget(r, kMinCalls, calls);
    }
  } else {
    runButton_->setEnabled(false);
    status_->setText(tr("Cannot read the range: %1").arg(QString::fromStdString(err)));
  }
  groups_->setMaximumHeight(160);

  auto* form = new QFormLayout;
  form->addRow(tr("Speed"), speed_);
  form->addRow(tr("Global concurrency"), global_);
  form->addRow(tr("Concurrency × (all groups)"), scale_);
  form->addRow(tr("Paused tiers"), tiers);
  auto* runRow = new QHBoxLayout;
  runRow->addWidget(runButton_);
  auto* cancelButton = new QPushButton(tr("Cancel run"), this);
  runRow->addWidget(cancelButton);
  runRow->addWidget(bar_, 1);
  runRow->addWidget(status_, 2);
  bar_->setRange(0, 1000);
  bar_->setValue(0);

  headline_->setObjectName(QStringLiteral("headlineTable"));
  headline_->setColumnCount(11);
  headline_->setHorizontalHeaderLabels({tr("Group"), tr("429s rec."), tr("429s what-if"), tr("Shed rec."),
                                        tr("Shed what-if"), tr("Done rec. (s)"), tr("Done what-if (s)"),
                                        tr("P0 p50 rec."), tr("P0 p50 what-if"), tr("P0 p95 rec."),
                                        tr("P0 p95 what-if")});
  headline_->verticalHeader()->setVisible(false);
  headline_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  headline_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  headline_->setTabKeyNavigation(false);
  headline_->setAccessibleName(tr("Recorded and what-if"));
  headline_->setMaximumHeight(130);
  charts_->setSource(compare_);
  // Aggregate charts (queues, responses) would add recorded and re-driven together: per-group charts only.
  for (ChartKind k : {ChartKind::Breaker, ChartKind::QueueDepth, ChartKind::Throughput})
    charts_->setChartVisible(k, false);
  key_->setObjectName(QStringLiteral("whatIfKey"));
  key_->setTextFormat(Qt::RichText);

  auto* outer = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  top->addLayout(form);
  top->addWidget(groups_, 1);
  outer->addLayout(top);
  outer->addLayout(runRow);
  outer->addWidget(headline_);
  outer->addWidget(key_);
  outer->addWidget(charts_, 1);
  // 1200x850 at most, within the screen: on a 1366x768 laptop the bottom was off the screen.
  QSize size(1200, 850);
  if (const QScreen* screen = parent ? parent->screen() : QGuiApplication::primaryScreen())
    size = size.boundedTo(screen->availableSize() * 0.95);
  resize(size);

  connect(runButton_, &QPushButton::clicked, this, &WhatIfDialog::run);
  connect(cancelButton, &QPushButton::clicked, this, &WhatIfDialog::cancel);
  connect(this, &WhatIfDialog::progress, this, [this](double f) { bar_->setValue(int(f * 1000)); });
}

WhatIfDialog::~WhatIfDialog() {
  cancel_->store(true);
  join();
}

void WhatIfDialog::join() {
  if (worker_.joinable()) worker_.join();
}

void WhatIfDialog::setSpeed(double speed) { speed_->setValue(speed); }

WhatIfOverrides WhatIfDialog::overrides() const {
  WhatIfOverrides o;
  if (global_->value() > 0) o.globalConcurrency = global_->value();
  o.concurrencyScale = scale_->value();
  for (int t = 0; t < kTierCount; ++t) o.pausedTiers[t] = paused_[t]->isChecked();
  // Only what the operator changed: a value left as shown is the recording's (every row set every group's
  // concurrency, so the recorded concurrency changes were never re-driven).
  for (int r = 0; r < groups_->rowCount(); ++r) {
    auto* conc = static_cast<QSpinBox*>(groups_->cellWidget(r, kConcurrency));
    auto* bucket = static_cast<QDoubleSpinBox*>(groups_->cellWidget(r, kBucket));
    auto* share = static_cast<QDoubleSpinBox*>(groups_->cellWidget(r, kFailureShare));
    auto* calls = static_cast<QSpinBox*>(groups_->cellWidget(r, kMinCalls));
    GroupOverride g;
    if (conc->value() != conc->property("shown").toInt()) g.concurrency = conc->value();
    if (bucket->value() != bucket->property("shown").toDouble()) g.bucketFraction = bucket->value();
    if (share->value() != share->property("shown").toDouble() || calls->value() != calls->property("shown").toInt()) {
      BreakerConfig b;
      b.failureShare = share->value();
      b.minCalls = calls->value();
      g.breaker = b;
    }
    if (g.concurrency || g.bucketFraction || g.breaker) o.groups[groups_->item(r, kName)->text().toStdString()] = g;
  }
  return o;
}

void WhatIfDialog::setOverrides(const WhatIfOverrides& o) {
  global_->setValue(o.globalConcurrency.value_or(0));
  scale_->setValue(o.concurrencyScale);
  for (int t = 0; t < kTierCount; ++t) paused_[t]->setChecked(o.pausedTiers[t]);
  for (int r = 0; r < groups_->rowCount(); ++r) {
    auto it = o.groups.find(groups_->item(r, kName)->text().toStdString());
    if (it == o.groups.end()) continue;
    if (it->second.concurrency) static_cast<QSpinBox*>(groups_->cellWidget(r, kConcurrency))->setValue(*it->second.concurrency);
    if (it->second.bucketFraction)
      static_cast<QDoubleSpinBox*>(groups_->cellWidget(r, kBucket))->setValue(*it->second.bucketFraction);
    if (it->second.breaker) {
      static_cast<QDoubleSpinBox*>(groups_->cellWidget(r, kFailureShare))->setValue(it->second.breaker->failureShare);
      static_cast<QSpinBox*>(groups_->cellWidget(r, kMinCalls))->setValue(it->second.breaker->minCalls);
    }
  }
}

void WhatIfDialog::run() {
  if (running_ || !scenario_) return;
  join();
  running_ = true;
  runButton_->setEnabled(false);
  status_->setText(tr("Re-driving %1 s of history at %2×…").arg(scenario_->durationS(), 0, 'f', 0).arg(speed_->value()));
  cancel_->store(false);
  WhatIfOptions opts;
  opts.speed = speed_->value();
  opts.cancel = cancel_.get();
  opts.progress = [this](double f) { mailbox_->post([this, f] { emit progress(f); }); };
  // The worker gets copies; the cancel flag is shared so it outlives the dialog if it must.
  worker_ = std::thread([this, sc = *scenario_, ov = overrides(), opts, keep = cancel_]() mutable {
    auto r = std::make_shared<WhatIfResult>(WhatIfRunner::run(sc, ov, opts));
    mailbox_->post([this, r] { showResult(std::move(*r)); });
  });
}

void WhatIfDialog::cancel() { cancel_->store(true); }

void WhatIfDialog::showResult(WhatIfResult r) {
  join();
  running_ = false;
  runButton_->setEnabled(true);
  if (!r.ok) {
    status_->setText(tr("Failed: %1").arg(QString::fromStdString(r.error)));
    result_ = std::move(r);
    emit finished(false);
    return;
  }
  status_->setText(tr("Done in %1 s wall at %2×%3").arg(r.wallS, 0, 'f', 1).arg(r.speed).arg(r.cancelled ? tr(" (cancelled)") : QString()));
  if (!r.recordedSettings)  // a recording older than its settings looked exactly like a faithful re-drive
    status_->setText(status_->text() + QStringLiteral(" — ") +
                     tr("this recording predates recorded engine settings: re-driven on the defaults"));
  compare_->clear();
  std::map<std::string, std::vector<Sample>> rec, red;
  for (const auto& s : scenario_->recorded) rec[s.group].push_back(s);
  for (const auto& s : r.samples)
    if (s.tsMs <= scenario_->toMs) red[s.group].push_back(s);
  for (auto& [g, v] : rec) compare_->addSeries(tr("%1 · recorded").arg(QString::fromStdString(g)).toStdString(), std::move(v));
  for (auto& [g, v] : red) compare_->addSeries(tr("%1 · what-if").arg(QString::fromStdString(g)).toStdString(), std::move(v));
  compare_->setEvents(scenario_->events);
  QStringList key;
  const auto series = compare_->groups();
  for (std::size_t i = 0; i < series.size(); ++i)
    key << QStringLiteral("<span style='color:%1'>&#9632;</span> %2")
               .arg(ChartFrameBuilder::groupColor(int(i)).name(), QString::fromStdString(series[i]).toHtmlEscaped());
  key_->setText(tr("Lines: %1").arg(key.join(QStringLiteral("&nbsp;&nbsp; "))));
  qint64 window = ChartPanelWidget::kWindowsMs.back();
  for (qint64 w : ChartPanelWidget::kWindowsMs)
    if (w >= scenario_->toMs - scenario_->fromMs) {
      window = w;
      break;
    }
  charts_->setWindowMs(window);
  charts_->refresh();

  std::vector<std::string> names;
  for (const auto& [g, h] : r.recorded.groups) names.push_back(g);
  names.push_back("total");
  headline_->setRowCount(int(names.size()));
  for (int row = 0; row < int(names.size()); ++row) {
    const bool total = names[std::size_t(row)] == "total";
    const Headline a = total ? r.recorded.total : r.recorded.groups[names[std::size_t(row)]];
    const Headline b = total ? r.redriven.total : r.redriven.groups[names[std::size_t(row)]];
    const QStringList cells = {total ? tr("total") : QString::fromStdString(names[std::size_t(row)]), QString::number(a.r429),
                               QString::number(b.r429), QString::number(a.shed), QString::number(b.shed),
                               num(a.completionS, 1), num(b.completionS, 1), num(a.p0P50Ms), num(b.p0P50Ms),
                               num(a.p0P95Ms), num(b.p0P95Ms)};
    for (int c = 0; c < cells.size(); ++c) headline_->setItem(row, c, new QTableWidgetItem(cells[c]));
  }
  result_ = std::move(r);
  emit finished(true);
}

}  // namespace tg::ui
