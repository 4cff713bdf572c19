#include "replay_panel_widget.h"

#include "chart_panel_widget.h"
#include "display_text.h"
#include "history_sample_source.h"
#include "replay_exporter.h"
#include "replay_scrub_widget.h"
#include "time_chart_widget.h"
#include "time_text.h"
#include "what_if_dialog.h"

#include <QComboBox>
#include <QDateTime>
#include <QDateTimeEdit>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QStyle>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tg::ui {

namespace {

// Local time, as the charts under the panel and the event log show it (the fields and the playhead were UTC, the
// charts right under them local). The playhead's label names the zone, for a file recorded elsewhere.
QString localText(EpochMs ms) {
  return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}
QString playheadText(EpochMs ms) {
  const QDateTime t = QDateTime::fromMSecsSinceEpoch(ms);
  return t.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss ")) + t.timeZoneAbbreviation();
}

QString duration(std::int64_t ms) { return durationText(static_cast<double>(ms) / 1000); }

QToolButton* tool(QWidget* parent, QStyle::StandardPixmap icon, const QString& tip, const char* name) {
  auto* b = new QToolButton(parent);
  b->setIcon(parent->style()->standardIcon(icon));
  b->setToolTip(tip);
  b->setAccessibleName(tip);  // icon only: a screen reader read an unnamed button
  b->setObjectName(QLatin1String(name));
  return b;
}

}  // namespace

ReplayPanelWidget::ReplayPanelWidget(HistorySampleSource* source, ChartPanelWidget* charts, QWidget* parent)
    : QWidget(parent), source_(source), charts_(charts), table_(new QTableWidget(this)),
      fromEdit_(new QDateTimeEdit(this)), toEdit_(new QDateTimeEdit(this)), speedCombo_(new QComboBox(this)),
      scrub_(new ReplayScrubWidget(this)), timeLabel_(new QLabel(this)), timer_(new QTimer(this)) {
  setObjectName(QStringLiteral("replayPanel"));
  table_->setObjectName(QStringLiteral("incidentTable"));
  table_->setColumnCount(8);
  table_->setHorizontalHeaderLabels({tr("#"), tr("Start"), tr("Duration"), tr("Groups"), tr("Peak 429/s"),
                                     tr("429s"), tr("Shed"), tr("Operator actions")});
  table_->verticalHeader()->setVisible(false);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setMaximumHeight(120);
  table_->setTabKeyNavigation(false);  // Tab leaves the table; arrows move between incidents
  table_->setAccessibleName(tr("Incidents"));

  for (auto* e : {fromEdit_, toEdit_}) {
    e->setTimeSpec(Qt::LocalTime);
    e->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
  }
  auto* showRangeButton = new QPushButton(tr("Show range"), this);
  auto* wholeButton = new QPushButton(tr("Whole file"), this);
  auto* prev = tool(this, QStyle::SP_MediaSkipBackward, tr("Previous incident"), "prevIncident");
  auto* back = tool(this, QStyle::SP_MediaSeekBackward, tr("Step back 5 s"), "stepBack");
  playButton_ = tool(this, QStyle::SP_MediaPlay, tr("Play / pause"), "playPause");
  auto* fwd = tool(this, QStyle::SP_MediaSeekForward, tr("Step forward 5 s"), "stepForward");
  auto* next = tool(this, QStyle::SP_MediaSkipForward, tr("Next incident"), "nextIncident");
  speedCombo_->setObjectName(QStringLiteral("replaySpeed"));
  speedCombo_->setAccessibleName(tr("Replay speed"));
  fromEdit_->setAccessibleName(tr("From"));
  toEdit_->setAccessibleName(tr("To"));
  for (double s : kSpeeds) speedCombo_->addItem(QStringLiteral("%1×").arg(s), s);
  speedCombo_->setCurrentIndex(2);
  timeLabel_->setObjectName(QStringLiteral("playheadLabel"));
  timeLabel_->setMinimumWidth(150);
  auto* exportPng = new QPushButton(tr("PNG…"), this);
  auto* exportCsvButton = new QPushButton(tr("CSV…"), this);
  auto* exportMd = new QPushButton(tr("Report…"), this);
  auto* whatIf = new QPushButton(tr("What-if…"), this);
  whatIf->setObjectName(QStringLiteral("whatIfButton"));
  whatIf->setToolTip(tr("Re-drive this stretch's workload against its upstream with other settings"));

  auto* rangeRow = new QHBoxLayout;
  auto* fromLabel = new QLabel(tr("From"), this);
  auto* toLabel = new QLabel(tr("to"), this);
  fromLabel->setBuddy(fromEdit_);
  toLabel->setBuddy(toEdit_);
  rangeRow->addWidget(fromLabel);
  rangeRow->addWidget(fromEdit_);
  rangeRow->addWidget(toLabel);
  rangeRow->addWidget(toEdit_);
  rangeRow->addWidget(showRangeButton);
  rangeRow->addWidget(wholeButton);
  rangeRow->addStretch(1);
  rangeRow->addWidget(new QLabel(tr("Export:"), this));
  rangeRow->addWidget(exportPng);
  rangeRow->addWidget(exportCsvButton);
  rangeRow->addWidget(exportMd);
  rangeRow->addSpacing(8);
  rangeRow->addWidget(whatIf);

  auto* transport = new QHBoxLayout;
  for (QWidget* w : std::initializer_list<QWidget*>{prev, back, playButton_, fwd, next, speedCombo_})
    transport->addWidget(w);
  transport->addWidget(scrub_, 1);
  transport->addWidget(timeLabel_);

  // Tab in the order the panel reads (the speed box, made first, came before the range row).
  QWidget* order[] = {table_, fromEdit_, toEdit_, showRangeButton, wholeButton, exportPng, exportCsvButton,
                      exportMd, whatIf, prev, back, playButton_, fwd, next, speedCombo_, scrub_};
  for (std::size_t i = 1; i < std::size(order); ++i) setTabOrder(order[i - 1], order[i]);

  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(4, 2, 4, 2);
  outer->addWidget(table_);
  outer->addLayout(rangeRow);
  outer->addLayout(transport);

  connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
    const auto rows = table_->selectionModel()->selectedRows();
    if (rows.isEmpty()) return;
    const auto id = table_->item(rows.front().row(), 0)->data(Qt::UserRole).toLongLong();
    if (!current_ || current_->id != id) selectIncident(id);
  });
  connect(showRangeButton, &QPushButton::clicked, this, [this] {
    showRange(fromEdit_->dateTime().toMSecsSinceEpoch(), toEdit_->dateTime().toMSecsSinceEpoch());
  });
  connect(wholeButton, &QPushButton::clicked, this, [this] {
    const TimeRange r = source_->fileRange();
    if (!r.empty) showRange(r.fromMs, r.toMs);
  });
  connect(prev, &QToolButton::clicked, this, &ReplayPanelWidget::previousIncident);
  connect(next, &QToolButton::clicked, this, &ReplayPanelWidget::nextIncident);
  connect(back, &QToolButton::clicked, this, [this] { step(-1); });
  connect(fwd, &QToolButton::clicked, this, [this] { step(+1); });
  connect(playButton_, &QToolButton::clicked, this, [this] { isPlaying() ? pause() : play(); });
  connect(speedCombo_, &QComboBox::currentIndexChanged, this,
          [this](int i) { speed_ = speedCombo_->itemData(i).toDouble(); });
  connect(scrub_, &ReplayScrubWidget::scrubbed, this, [this](qint64 ts) {
    updateBudget();
    source_->setPlayhead(ts);
  });
  connect(source_, &HistorySampleSource::playheadChanged, this, [this](qint64 ts) {
    scrub_->setPlayhead(ts);
    timeLabel_->setText(playheadText(ts));
  });
  connect(source_, &HistorySampleSource::rangeChanged, this, [this] { syncFromSource(); });
  connect(exportPng, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export charts to"));
    QString err;
    if (!dir.isEmpty() && exportPngs(dir, &err).isEmpty() && !err.isEmpty()) QMessageBox::warning(this, tr("Export"), err);
  });
  connect(exportCsvButton, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export data"), QStringLiteral("replay.csv"), tr("CSV (*.csv)"));
    QString err;
    if (!f.isEmpty() && !exportCsv(f, &err)) QMessageBox::warning(this, tr("Export"), err);
  });
  connect(exportMd, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export report"), QStringLiteral("incident.md"),
                                                   tr("Markdown (*.md)"));
    QString err;
    if (!f.isEmpty() && !exportReport(f, &err)) QMessageBox::warning(this, tr("Export"), err);
  });
  connect(whatIf, &QPushButton::clicked, this, [this] {
    openWhatIf();
    emit whatIfRequested();
  });
  connect(timer_, &QTimer::timeout, this, &ReplayPanelWidget::tick);

  fillIncidents();
  syncFromSource();
  scrub_->setPlayhead(source_->playheadMs());
  timeLabel_->setText(playheadText(source_->playheadMs()));
}

void ReplayPanelWidget::reload() {
  source_->reload();
  fillIncidents();
  if (source_->rangeToMs() == 0 && !source_->fileRange().empty)
    showRange(std::max(source_->fileRange().fromMs, source_->fileRange().toMs - 15 * 60'000), source_->fileRange().toMs);
  syncFromSource();
}

void ReplayPanelWidget::fillIncidents() {
  const auto& list = source_->incidents();
  table_->setRowCount(int(list.size()));
  for (int r = 0; r < int(list.size()); ++r) {
    const Incident& i = list[std::size_t(r)];
    QStringList groups;
    for (const auto& g : i.groups) groups << QString::fromStdString(g);
    const QStringList cells = {QString::number(i.id), localText(i.startMs), duration(i.durationMs()), groups.join(", "),
                               QString::number(i.peak429PerS, 'f', 1), QString::number(i.total429),
                               QString::number(i.shed), QString::number(i.operatorActions.size())};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setData(Qt::UserRole, qlonglong(i.id));
      if (c == 3) {
        QStringList reasons;
        for (const auto& x : i.reasons) reasons << incidentReasonText(x);
        item->setToolTip(tr("Reasons: %1").arg(reasons.join(", ")));
      }
      table_->setItem(r, c, item);
    }
  }
}

void ReplayPanelWidget::syncFromSource() {
  const EpochMs from = source_->rangeFromMs(), to = source_->rangeToMs();
  scrub_->setRange(from, to);
  std::vector<std::pair<EpochMs, EpochMs>> spans;
  for (const auto& i : source_->incidents()) spans.emplace_back(i.startMs, i.endMs);
  scrub_->setSpans(std::move(spans));
  std::vector<EpochMs> marks;
  for (const auto& e : source_->events(from, to))
    if (e.kind == EventKind::OperatorAction) marks.push_back(e.tsMs);
  scrub_->setMarks(std::move(marks));
  fromEdit_->setDateTime(QDateTime::fromMSecsSinceEpoch(from));
  toEdit_->setDateTime(QDateTime::fromMSecsSinceEpoch(to));
}

void ReplayPanelWidget::updateBudget() {
  int width = 0;
  for (int k = 0; k < kChartKindCount; ++k)
    if (charts_->isChartVisible(ChartKind(k))) width = std::max(width, charts_->chart(ChartKind(k))->plotWidthPx());
  source_->setPointBudget(std::max(200, width));
}

void ReplayPanelWidget::showRange(EpochMs fromMs, EpochMs toMs) {
  if (toMs < fromMs) std::swap(fromMs, toMs);
  current_.reset();
  for (const auto& i : source_->incidents())
    if (i.startMs >= fromMs && i.endMs <= toMs && toMs - fromMs <= i.durationMs() + 2 * kIncidentPadMs) current_ = i;
  qint64 window = ChartPanelWidget::kWindowsMs.back();
  for (qint64 w : ChartPanelWidget::kWindowsMs)
    if (w >= toMs - fromMs) {
      window = w;
      break;
    }
  charts_->setWindowMs(window);
  updateBudget();
  source_->setRange(fromMs, toMs);
  source_->setPlayhead(toMs);
  charts_->refresh();
}

void ReplayPanelWidget::selectIncident(std::int64_t id) {
  for (int r = 0; r < table_->rowCount(); ++r) {
    if (table_->item(r, 0)->data(Qt::UserRole).toLongLong() != id) continue;
    const Incident& i = source_->incidents()[std::size_t(r)];
    showRange(i.startMs - kIncidentPadMs, i.endMs + kIncidentPadMs);
    current_ = i;
    QSignalBlocker block(table_);
    table_->selectRow(r);
    return;
  }
}

void ReplayPanelWidget::setSpeed(double factor) {
  int best = 0;
  for (int i = 0; i < int(kSpeeds.size()); ++i)
    if (std::abs(kSpeeds[std::size_t(i)] - factor) < std::abs(kSpeeds[std::size_t(best)] - factor)) best = i;
  speedCombo_->setCurrentIndex(best);
  speed_ = kSpeeds[std::size_t(best)];
}

bool ReplayPanelWidget::isPlaying() const { return timer_->isActive(); }

void ReplayPanelWidget::play() {
  if (isPlaying()) return;
  if (source_->playheadMs() >= source_->rangeToMs()) source_->setPlayhead(source_->rangeFromMs());
  carryMs_ = 0;
  sinceTick_.start();
  timer_->start(50);
  playButton_->setIcon(style()->standardIcon(QStyle::SP_MediaPause));
  playButton_->setAccessibleName(tr("Pause"));
  emit playingChanged(true);
}

void ReplayPanelWidget::pause() {
  if (!isPlaying()) return;
  timer_->stop();
  playButton_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  playButton_->setAccessibleName(tr("Play"));
  emit playingChanged(false);
}

void ReplayPanelWidget::tick() { advance(sinceTick_.restart()); }

void ReplayPanelWidget::advance(qint64 wallMs) {
  carryMs_ += double(std::max<qint64>(0, wallMs)) * speed_;
  const auto advance = EpochMs(carryMs_);
  carryMs_ -= double(advance);
  updateBudget();
  source_->setPlayhead(source_->playheadMs() + advance);
  if (source_->playheadMs() >= source_->rangeToMs()) {
    pause();
    charts_->refresh();
    emit finished();
  }
}

void ReplayPanelWidget::step(int direction) {
  updateBudget();
  source_->setPlayhead(source_->playheadMs() + direction * 5000);
  charts_->refresh();
}

void ReplayPanelWidget::nextIncident() {
  const EpochMs at = current_ ? current_->startMs : source_->playheadMs();
  for (const auto& i : source_->incidents())
    if (i.startMs > at) return selectIncident(i.id);
}

void ReplayPanelWidget::previousIncident() {
  const EpochMs at = current_ ? current_->startMs : source_->playheadMs();
  const auto& list = source_->incidents();
  for (auto it = list.rbegin(); it != list.rend(); ++it)
    if (it->startMs < at) return selectIncident(it->id);
}

QStringList ReplayPanelWidget::exportPngs(const QString& dir, QString* error) {
  return ReplayExporter::exportChartsPng(*charts_, dir, current_ ? QStringLiteral("incident-%1").arg(current_->id)
                                                                 : QStringLiteral("replay"), error);
}

bool ReplayPanelWidget::exportCsv(const QString& path, QString* error) {
  return ReplayExporter::exportCsv(*source_, source_->rangeFromMs(), source_->rangeToMs(), path, error);
}

bool ReplayPanelWidget::exportReport(const QString& mdPath, QString* error) {
  updateBudget();
  source_->setPlayhead(source_->rangeToMs());  // the pictures show the whole window
  charts_->refresh();
  return ReplayExporter::exportReport(*source_, *charts_, source_->rangeFromMs(), source_->rangeToMs(), current_,
                                      mdPath, error);
}

}  // namespace tg::ui

namespace tg::ui {

WhatIfDialog* ReplayPanelWidget::openWhatIf() {
  pause();
  auto* d = new WhatIfDialog(source_, source_->rangeFromMs(), source_->rangeToMs(), this);
  d->setAttribute(Qt::WA_DeleteOnClose);
  d->show();
  return d;
}

}  // namespace tg::ui
