// chart_bench: dashboard chart redraw time for 10 groups x 1 h of per-second samples (36,000 samples).
//   1. The dashboard's ChartPanelWidget (ui/) on a 1 h window: refresh() after a 1 px resize, which always
//      rebuilds every chart's frame (min/max decimated, series replaced), then grab() (paint of all charts).
//   2. For reference, a bare QChart with 10 QLineSeries x 3,600 points: replace() + grab(), no decimation.
// Offscreen (QT_QPA_PLATFORM=offscreen is set when unset).
//
//   chart_bench [--rounds 10] [--width 1600] [--height 1000] [--json FILE]
#include "bench_support.h"
#include "stats.h"
#include "chart_panel_widget.h"
#include "sample_source.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QValueAxis>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

using namespace tgbench;

namespace {

constexpr int kGroups = 10;
constexpr int kSeconds = 3600;
constexpr tg::EpochMs kStart = 1'800'000'000'000;

// A fixed set of per-second samples; bump() changes the revision so the panel rebuilds its frames.
class StaticSampleSource : public tg::ui::SampleSource {
 public:
  StaticSampleSource() {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0, 1);
    for (int g = 0; g < kGroups; ++g) {
      const std::string name = "group-" + std::to_string(g);
      groups_.push_back(name);
      auto& v = samples_[name];
      for (int s = 1; s <= kSeconds; ++s) {
        tg::Sample x;
        x.tsMs = kStart + s * 1000LL;
        x.group = name;
        x.sends = static_cast<int>(20 + 15 * std::sin(s / 300.0 + g) + 5 * u(rng));
        x.r429 = u(rng) < 0.02 ? static_cast<int>(u(rng) * 20) : 0;
        x.ok = std::max(0, x.sends - x.r429);
        x.reqLimit = 3000;
        x.reqRemaining = std::floor(3000 * u(rng));
        x.tokLimit = 90000;
        x.tokRemaining = std::floor(90000 * u(rng));
        x.inFlight = static_cast<int>(8 * u(rng));
        x.concurrencyLimit = 8;
        x.queueDepth = {static_cast<int>(3 * u(rng)), static_cast<int>(10 * u(rng)), static_cast<int>(40 * u(rng))};
        x.p50Ms = 200 + 50 * u(rng);
        x.p95Ms = 600 + 300 * u(rng);
        v.push_back(x);
      }
    }
  }
  std::vector<std::string> groups() const override { return groups_; }
  void forEachSample(const std::string& group, tg::EpochMs fromMs, tg::EpochMs toMs,
                     const std::function<void(const tg::Sample&)>& fn) const override {
    for (const auto& s : samples_.at(group))
      if (s.tsMs >= fromMs && s.tsMs <= toMs) fn(s);
  }
  std::vector<tg::Event> events(tg::EpochMs, tg::EpochMs) const override { return {}; }
  tg::EpochMs endMs() const override { return kStart + kSeconds * 1000LL; }
  tg::SnapshotPtr latestSnapshot() const override { return nullptr; }
  std::uint64_t revision() const override { return revision_; }
  void bump() { ++revision_; }

 private:
  std::vector<std::string> groups_;
  std::map<std::string, std::vector<tg::Sample>> samples_;
  std::uint64_t revision_ = 1;
};

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);
  const Args args(argc, argv);
  const int rounds = static_cast<int>(args.number("rounds", 10));
  const int width = static_cast<int>(args.number("width", 1600));
  const int height = static_cast<int>(args.number("height", 1000));
  const std::string jsonPath = args.text("json", "build/bench-results/chart_bench.json");

  // 1. The dashboard panel.
  StaticSampleSource source;
  tg::ui::ChartPanelWidget panel;
  panel.setRefreshIntervalMs(0);
  panel.resize(width, height);
  panel.setWindowMs(60 * 60'000);
  panel.setSource(&source);
  panel.show();
  QApplication::processEvents();
  panel.refresh();
  (void)panel.grab();  // first layout, not counted
  std::vector<double> refreshMs, paintMs, totalMs;
  for (int i = 0; i < rounds; ++i) {
    // New data alone is rebuilt at most once a second; a changed plot width always is.
    source.bump();
    panel.resize(width + (i % 2 == 0 ? 1 : 0), height);
    QApplication::processEvents();
    const auto t0 = std::chrono::steady_clock::now();
    panel.refresh();
    const double r = msSince(t0);
    const auto t1 = std::chrono::steady_clock::now();
    (void)panel.grab();
    const double p = msSince(t1);
    refreshMs.push_back(r);
    paintMs.push_back(p);
    totalMs.push_back(r + p);
  }

  // 2. A bare QChart, all points.
  QChartView view;
  auto* chart = new QChart;  // owned by the view
  view.setChart(chart);
  view.resize(width / 2, height / 3);  // about one dashboard chart's size
  auto* x = new QDateTimeAxis;
  auto* y = new QValueAxis;
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  std::vector<QLineSeries*> series;
  for (int g = 0; g < kGroups; ++g) {
    auto* s = new QLineSeries;
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
    series.push_back(s);
  }
  x->setRange(QDateTime::fromMSecsSinceEpoch(kStart), QDateTime::fromMSecsSinceEpoch(kStart + kSeconds * 1000LL));
  y->setRange(0, 60);
  view.show();
  std::vector<double> rawMs;
  for (int i = 0; i <= rounds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int g = 0; g < kGroups; ++g) {
      QList<QPointF> pts;
      pts.reserve(kSeconds);
      source.forEachSample("group-" + std::to_string(g), 0, INT64_MAX, [&](const tg::Sample& s) {
        pts.append(QPointF(static_cast<double>(s.tsMs), s.sends + i % 2));
      });
      series[static_cast<std::size_t>(g)]->replace(pts);
    }
    (void)view.grab();
    if (i > 0) rawMs.push_back(msSince(t0));  // the first includes the first layout
  }

  const double panelMed = tg::percentile(totalMs, 0.5), rawMed = tg::percentile(rawMs, 0.5);
  std::printf("\nChart redraw: 10 groups x 1 h of per-second samples, %dx%d offscreen, %d rounds\n\n", width, height,
              rounds);
  TablePrinter t({"what", "median ms", "p95 ms", "note"});
  t.row({"ChartPanelWidget refresh() (7 charts, data rebuilt)", fmt(tg::percentile(refreshMs, 0.5)),
         fmt(tg::percentile(refreshMs, 0.95)), "frames built, decimated, series replaced"});
  t.row({"ChartPanelWidget grab() (layout + paint)", fmt(tg::percentile(paintMs, 0.5)), fmt(tg::percentile(paintMs, 0.95)), ""});
  t.row({"ChartPanelWidget total", fmt(panelMed), fmt(tg::percentile(totalMs, 0.95)), "one full redraw of the dashboard"});
  t.row({"bare QChart, 10 series x 3600 points, replace()+grab()", fmt(rawMed), fmt(tg::percentile(rawMs, 0.95)),
         "one chart, no decimation (reference)"});
  t.print();
  std::printf("\ndashboard (7 charts) / one bare chart: %.2f\n", panelMed / rawMed);
  writeJson(jsonPath, {{"bench", "chart"},
                       {"machine", machineJson()},
                       {"groups", kGroups},
                       {"seconds", kSeconds},
                       {"width", width},
                       {"height", height},
                       {"panel_refresh_ms", refreshMs},
                       {"panel_grab_ms", paintMs},
                       {"panel_total_median_ms", panelMed},
                       {"raw_qchart_ms", rawMs},
                       {"raw_qchart_median_ms", rawMed},
                       {"ratio_panel_to_raw", panelMed / rawMed},
                       {"redraw_stats", panel.stats().summary(tg::ui::RedrawStats::nowNs()).toStdString()}});
  return 0;
}
