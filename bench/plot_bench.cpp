// plot_bench: renders the per-second series of goodput_bench / quota_drop_bench JSON into a PNG (QtCharts,
// offscreen): goodput per strategy on top, 429s per strategy below (log scale).
//
//   plot_bench --in goodput_bench.json --out docs/bench-goodput.png [--title TEXT] [--quota-line 100]
#include "bench_support.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QPixmap>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QWidget>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace tgbench;

namespace {

const std::vector<QColor> kColors{QColor("#1b9e77"), QColor("#d95f02"), QColor("#7570b3"), QColor("#e7298a")};

QChartView* makeChart(const nlohmann::json& runs, const char* field, const QString& title, bool logScale,
                      const nlohmann::json& quotaLine) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignRight);
  auto* x = new QValueAxis;
  x->setTitleText("seconds");
  x->setLabelFormat("%d");
  chart->addAxis(x, Qt::AlignBottom);
  QAbstractAxis* y;
  if (logScale) {
    auto* l = new QLogValueAxis;
    l->setBase(10);
    l->setLabelFormat("%g");
    l->setMin(0.5);
    y = l;
  } else {
    auto* v = new QValueAxis;
    v->setLabelFormat("%d");
    v->setMin(0);
    y = v;
  }
  y->setTitleText(logScale ? "per second (log; 0 drawn at 0.5)" : "per second");
  chart->addAxis(y, Qt::AlignLeft);
  double maxY = 1, maxX = 1;
  std::size_t i = 0;
  for (const auto& run : runs) {
    if (run.contains("flood") && !run["flood"].get<bool>()) continue;
    auto* s = new QLineSeries;
    s->setName(QString::fromStdString(run["strategy"].get<std::string>()));
    QPen pen(kColors[i++ % kColors.size()]);
    pen.setWidthF(2);
    s->setPen(pen);
    const auto& v = run["per_second"][field];
    for (std::size_t t = 0; t < v.size(); ++t) {
      const double val = v[t].get<double>();
      s->append(static_cast<double>(t) + 0.5, logScale ? std::max(0.5, val) : val);
      maxY = std::max(maxY, val);
    }
    maxX = std::max(maxX, static_cast<double>(v.size()));
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  if (!quotaLine.is_null()) {
    auto* q = new QLineSeries;
    q->setName("quota");
    QPen pen(Qt::black);
    pen.setStyle(Qt::DashLine);
    q->setPen(pen);
    for (const auto& p : quotaLine) q->append(p[0].get<double>(), p[1].get<double>());
    chart->addSeries(q);
    q->attachAxis(x);
    q->attachAxis(y);
  }
  x->setRange(0, maxX);
  if (logScale) static_cast<QLogValueAxis*>(y)->setMax(maxY * 2);
  else static_cast<QValueAxis*>(y)->setRange(0, maxY * 1.1);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  return view;
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);
  const Args args(argc, argv);
  const std::string in = args.text("in", "build/bench-results/goodput_bench.json");
  const std::string out = args.text("out", "docs/bench-goodput.png");
  std::ifstream f(in);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", in.c_str());
    return 1;
  }
  const nlohmann::json j = nlohmann::json::parse(f);
  const nlohmann::json& runs = j["runs"];
  nlohmann::json quota = nullptr;
  const double secs = j["seconds"].get<double>();
  if (j.contains("quota_per_s_after")) {
    const double d = j["drop_at_s"].get<double>();
    quota = {{0, j["quota_per_s_before"]}, {d, j["quota_per_s_before"]}, {d, j["quota_per_s_after"]},
             {secs, j["quota_per_s_after"]}};
  } else if (j.contains("quota_per_s")) {
    quota = {{0, j["quota_per_s"]}, {secs, j["quota_per_s"]}};
  } else if (j.contains("hidden_limit_per_s")) {
    quota = {{0, j["hidden_limit_per_s"]}, {secs, j["hidden_limit_per_s"]}};
  }
  const QString title = QString::fromStdString(args.text("title", j["bench"].get<std::string>()));

  QWidget w;
  auto* layout = new QVBoxLayout(&w);
  layout->addWidget(makeChart(runs, "ok", title + ": goodput (2xx) per second", false, quota));
  layout->addWidget(makeChart(runs, "r429", title + ": 429s per second", true, nullptr));
  w.resize(1100, 800);
  w.show();
  QApplication::processEvents();
  if (!w.grab().save(QString::fromStdString(out))) {
    std::fprintf(stderr, "cannot write %s\n", out.c_str());
    return 1;
  }
  std::printf("wrote %s\n", out.c_str());
  return 0;
}
