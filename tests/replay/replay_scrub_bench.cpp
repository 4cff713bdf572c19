// Measures replay scrubbing: a synthetic 24 h history of 10 groups (1 Hz samples), then the dashboard's
// charts redrawn from a HistorySampleSource at many playhead positions, per window size. Prints the time per
// position (read + frame build + chart update). Usage: replay_scrub_bench [DB] (the file is created if absent).
#include "chart_panel_widget.h"
#include "history_sample_source.h"
#include "history_store.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace tg;

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const QString db = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral("replay-scrub-24h.db");
  const EpochMs t0 = 1'700'000'000'000;
  const int seconds = 24 * 3600, groups = 10;
  if (!QFile::exists(db)) {
    HistoryOptions ho;
    ho.now = [t0, seconds] { return t0 + EpochMs(seconds) * 1000; };
    ho.checkOnOpen = false;
    std::string err;
    auto store = HistoryStore::open(db.toStdString(), ho, &err);
    if (!store) return std::fprintf(stderr, "%s\n", err.c_str()), 1;
    QElapsedTimer w;
    w.start();
    for (int s = 0; s < seconds; ++s) {
      std::vector<Sample> rows;
      for (int g = 0; g < groups; ++g) {
        Sample x;
        x.tsMs = t0 + EpochMs(s + 1) * 1000;
        x.group = "group" + std::to_string(g);
        x.reqLimit = 100;
        x.reqRemaining = 100 - (s * 7 + g * 13) % 100;
        x.sends = 20 + (s + g) % 10;
        x.ok = x.sends - (s % 600 < 30 ? 5 : 0);
        x.r429 = x.sends - x.ok;
        x.inFlight = (s + g) % 16;
        x.concurrencyLimit = 16;
        x.arrivals = {5, 10, 5};
        x.p50Ms = 40 + g;
        x.p95Ms = 90 + (s % 50);
        rows.push_back(std::move(x));
      }
      store->append(std::move(rows));
      if (s % 3600 == 0) store->flush();
    }
    store->flush();
    std::printf("wrote 24 h x %d groups in %.1f s\n", groups, w.elapsed() / 1000.0);
  }
  QString err;
  HistoryReaderOptions ro;
  ro.strict = true;
  auto* source = ui::HistorySampleSource::open(db, ro, &err);
  if (!source) return std::fprintf(stderr, "%s\n", qPrintable(err)), 1;
  ui::ChartPanelWidget charts;
  charts.resize(1400, 800);
  charts.setRefreshIntervalMs(0);
  charts.show();
  charts.setSource(source);
  const TimeRange r = source->fileRange();
  source->setRange(r.fromMs, r.toMs);
  source->setPointBudget(1200);
  for (qint64 window : ui::ChartPanelWidget::kWindowsMs) {
    charts.setWindowMs(window);
    std::vector<double> ms;
    const int positions = 40;
    for (int i = 0; i < positions; ++i) {
      const EpochMs at = r.fromMs + window + (r.toMs - r.fromMs - window) * i / (positions - 1);
      QElapsedTimer t;
      t.start();
      source->setPlayhead(at);
      charts.refresh();
      QApplication::processEvents();
      ms.push_back(t.nsecsElapsed() / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("window %5lld min: per position median %.1f ms, p95 %.1f ms, max %.1f ms\n",
                (long long)window / 60'000, ms[ms.size() / 2], ms[ms.size() * 95 / 100], ms.back());
  }
  return 0;
}
