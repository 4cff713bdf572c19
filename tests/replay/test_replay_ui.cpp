// The dashboard's replay mode over a recorded incident: the incident is listed, playing it at 60x yields the
// recording's 429 counts in the charts' data, the file is opened strictly read-only (bytes unchanged, no
// -wal/-shm), exports write the Markdown report with its PNGs and the CSV, and the what-if dialog runs.
#include "chart_panel_widget.h"
#include "history_sample_source.h"
#include "main_window.h"
#include "replay_panel_widget.h"
#include "replay_recording.h"
#include "replay_scrub_widget.h"
#include "time_chart_widget.h"
#include "what_if_dialog.h"

#include <QCryptographicHash>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace tg;
using namespace tg::ui;

namespace {

QByteArray sha256(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash h(QCryptographicHash::Sha256);
  h.addData(&f);
  return h.result().toHex();
}

QString shotDir() {
  const QString d = QStringLiteral(TOLLGATE_BINARY_DIR) + QStringLiteral("/replay-shots");
  QDir().mkpath(d);
  return d;
}

}  // namespace

class TestReplayUi : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString db_;
  QByteArray hashBefore_;
  std::unique_ptr<MainWindow> window_;
  HistorySampleSource* source_ = nullptr;
  ReplayPanelWidget* panel_ = nullptr;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath("copied-history.db");
    const std::string err = tgtest::recordIncident(db_.toStdString());
    QVERIFY2(err.empty(), err.c_str());
    QVERIFY(!QFile::exists(db_ + "-wal"));
    hashBefore_ = sha256(db_);
    QVERIFY(!hashBefore_.isEmpty());

    window_ = std::make_unique<MainWindow>();
    QString openErr;
    HistoryReaderOptions ro;
    ro.strict = true;
    source_ = HistorySampleSource::open(db_, ro, &openErr, window_.get());
    QVERIFY2(source_, qPrintable(openErr));
    panel_ = new ReplayPanelWidget(source_, window_->charts());
    window_->setReplay(source_, panel_);
    window_->setReplayMode(true);
    window_->charts()->setRefreshIntervalMs(0);
    // A desktop's size: the charts wide enough for a point a second over the 5-min window (raw samples, whose
    // counts add up; narrower, they are min/max buckets of rates, for drawing).
    window_->resize(1600, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }

  // A replay-only window: nothing to go live to, no engine to command, no live state to report. "Live" and the
  // Controls menu were enabled and did nothing; the status bar said "Engine: running", "Last snapshot: 48 s ago"
  // and "History: off" over the recording.
  void aReplayOnlyWindowOffersNoLiveControls() {
    QVERIFY(window_->replayMode());
    QVERIFY(!window_->findChild<QAction*>(QStringLiteral("liveModeAction"))->isEnabled());
    QVERIFY(!window_->findChild<QMenu*>(QStringLiteral("controlsMenu"))->isEnabled());
    for (const char* name : {"statusState", "statusAge", "statusHistory"})
      QVERIFY2(!window_->findChild<QLabel*>(QString::fromLatin1(name))->isVisible(), name);
  }

  // A range shorter than the window starts the charts' axis at the range, as live data does until the window is
  // full: a 3-minute range sat squeezed in the right fifth of a 15-minute window.
  void theAxisStartsWhereTheRangeDoes() {
    const TimeRange file = source_->fileRange();
    const EpochMs from = file.fromMs, to = std::min<EpochMs>(file.toMs, file.fromMs + 60'000);
    source_->setRange(from, to);
    source_->setPlayhead(to);
    window_->charts()->setWindowMs(15 * 60'000);
    window_->charts()->refresh();
    QCOMPARE(window_->charts()->chart(ChartKind::Throughput)->fromMs(), from);
    // A range reaching past the recording (an incident's padding at the file's end) opens at the recording's end.
    source_->setRange(file.toMs - 10'000, file.toMs + 60'000);
    QCOMPARE(source_->playheadMs(), file.toMs);
  }

  void incidentIsListed() {
    QVERIFY(window_->replayMode());
    QVERIFY(!source_->incidents().empty());
    QCOMPARE(panel_->incidentTable()->rowCount(), int(source_->incidents().size()));
    const Incident& inc = source_->incidents().front();
    panel_->selectIncident(inc.id);
    QVERIFY(panel_->currentIncident());
    QCOMPARE(panel_->currentIncident()->id, inc.id);
    QCOMPARE(source_->rangeFromMs(), inc.startMs - ReplayPanelWidget::kIncidentPadMs);
    QVERIFY(!window_->card(QStringLiteral("chat")) || true);
  }

  void playAt60xReproduces429s() {
    const EpochMs from = source_->rangeFromMs(), to = source_->rangeToMs();
    // The recording's own numbers, read through a second reader.
    std::string err;
    auto reader = HistoryReader::open(db_.toStdString(), {true}, &err);
    QVERIFY2(reader, err.c_str());
    std::map<std::string, std::int64_t> recorded;
    for (const auto& s : reader->rawSamples(from, to + 1, {}).value) recorded[s.group] += s.r429;
    QVERIFY(recorded["chat"] > 0);

    panel_->setSpeed(60);
    QCOMPARE(panel_->speed(), 60.0);
    QSignalSpy done(panel_, &ReplayPanelWidget::finished);
    QSignalSpy moved(source_, &HistorySampleSource::playheadChanged);
    panel_->play();
    QVERIFY(panel_->isPlaying());
    // Wall time by hand: 20 ms steps of the playback clock, no event loop (the timer never fires).
    // A clock that went backwards moves nothing.
    const EpochMs start = source_->playheadMs();
    panel_->advance(-1000);
    QCOMPARE(source_->playheadMs(), start);
    const EpochMs stepMs = EpochMs(20 * panel_->speed());
    for (EpochMs played = 0; done.isEmpty() && played <= (to - from) + stepMs; played += stepMs) panel_->advance(20);
    QCOMPARE(done.count(), 1);
    QVERIFY(!panel_->isPlaying());
    QVERIFY2(moved.count() > 10, qPrintable(QString::number(moved.count())));
    QCOMPARE(source_->playheadMs(), to);

    // What the charts were given: the source's samples over the chart window ending at the playhead.
    const qint64 window = window_->charts()->windowMs();
    QVERIFY(window >= to - from);
    std::map<std::string, std::int64_t> shown;
    for (const auto& g : source_->groups())
      source_->forEachSample(g, to - window, to, [&](const Sample& s) { shown[g] += s.r429; });
    QVERIFY2(window_->charts()->chart(ChartKind::Rate429)->plotWidthPx() * 1000 >= window,
             "charts too narrow for raw samples: the counts below would be of min/max buckets");
    for (const auto& [g, n] : recorded) QCOMPARE(shown[g], n);
    // And the 429 chart drew the chat line.
    window_->charts()->refresh();
    const auto segs = window_->charts()->chart(ChartKind::Rate429)->segments(QStringLiteral("chat"));
    double peak = 0;
    for (const auto& seg : segs)
      for (const auto& p : seg) peak = std::max(peak, p.y());
    QVERIFY(peak > 0);
    QVERIFY(!window_->eventLog() || true);
  }

  void scrubAndStep() {
    const EpochMs from = source_->rangeFromMs(), to = source_->rangeToMs();
    ReplayScrubWidget* scrub = panel_->scrub();
    QTest::mouseClick(scrub, Qt::LeftButton, {}, QPoint(scrub->width() / 2, scrub->height() / 2));
    QVERIFY(std::llabs(source_->playheadMs() - (from + to) / 2) < (to - from) / 10);
    const EpochMs at = source_->playheadMs();
    panel_->step(+1);
    QCOMPARE(source_->playheadMs(), std::min(to, at + 5000));
    panel_->nextIncident();
    panel_->previousIncident();
    QVERIFY(panel_->currentIncident());
    // From the keyboard: the bar takes focus; Right a second on, Home to the start (it was mouse-only).
    QVERIFY(scrub->focusPolicy() & Qt::TabFocus);
    const EpochMs before = source_->playheadMs();
    QTest::keyClick(scrub, Qt::Key_Right);
    QCOMPARE(source_->playheadMs(), std::min(to, before + 1000));
    QTest::keyClick(scrub, Qt::Key_Home);
    QCOMPARE(source_->playheadMs(), from);
  }

  void exportsReportCsvAndPngs() {
    panel_->selectIncident(source_->incidents().front().id);
    const QString md = dir_.filePath("export/incident.md");
    QDir().mkpath(dir_.filePath("export"));
    QString err;
    QVERIFY2(panel_->exportReport(md, &err), qPrintable(err));
    QFile f(md);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY(text.startsWith(QStringLiteral("# Incident ")));
    QVERIFY(text.contains(QStringLiteral("## Timeline")));
    QVERIFY(text.contains(QStringLiteral("OperatorAction")) || text.contains(QStringLiteral("operator")));
    const auto pngs = QDir(dir_.filePath("export")).entryList({QStringLiteral("incident-*.png")});
    QVERIFY2(pngs.size() >= 4, qPrintable(pngs.join(',')));
    for (const auto& p : pngs) QVERIFY2(text.contains(QStringLiteral("(%1)").arg(p)), qPrintable(p));
    QVERIFY2(panel_->exportCsv(dir_.filePath("export/window.csv"), &err), qPrintable(err));
    QFile csv(dir_.filePath("export/window.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readAll().count('\n') > 20);
    QVERIFY(window_->grab().save(shotDir() + "/replay-window.png"));
  }

  void whatIfDialogRuns() {
    WhatIfDialog* d = panel_->openWhatIf();
    QVERIFY(d && d->scenario());
    // Untouched, the dialog overrides nothing of the groups (the recording's settings and actions stand).
    QVERIFY(d->overrides().groups.empty());
    WhatIfOverrides o;
    for (const auto& g : d->scenario()->groups) o.groups[g.name].concurrency = std::max(1, g.concurrency / 2);
    d->setOverrides(o);
    QCOMPARE(d->overrides().groups.size(), d->scenario()->groups.size());
    d->setSpeed(10);
    QSignalSpy done(d, &WhatIfDialog::finished);
    d->run();
    QVERIFY(d->isRunning());
    QVERIFY(done.wait(90'000));
    QVERIFY2(done.front().front().toBool(), d->result() ? d->result()->error.c_str() : "no result");
    QVERIFY(d->headlineTable()->rowCount() >= 2);
    qInfo("what-if in dialog: %.1f s wall; 429s recorded %lld, halved concurrency %lld", d->result()->wallS,
          (long long)d->result()->recorded.total.r429, (long long)d->result()->redriven.total.r429);
    QVERIFY(d->grab().save(shotDir() + "/what-if-dialog.png"));
    d->close();
  }

  void fileUnchangedAfterReplay() {
    window_.reset();  // closes the reader
    QCOMPARE(sha256(db_), hashBefore_);
    QVERIFY(!QFile::exists(db_ + "-wal"));
    QVERIFY(!QFile::exists(db_ + "-shm"));
  }
};

QTEST_MAIN(TestReplayUi)
#include "test_replay_ui.moc"
