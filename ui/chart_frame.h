// What one dashboard chart shows for a time range, independent of Qt Charts: lines of raw points
// (x = ms since epoch, y = value, NaN = no data), breaker bands and event markers.
#pragma once

#include "types.h"

#include <QColor>
#include <QPointF>
#include <QString>
#include <QStringList>

#include <array>
#include <vector>

namespace tg::ui {

enum class ChartKind : int {
  Remaining = 0,
  Rate429,
  Breaker,
  QueueDepth,
  Throughput,
  Latency,
  Concurrency,
};
inline constexpr int kChartKindCount = 7;
QString chartTitle(ChartKind kind);
QString chartShortTitle(ChartKind kind);  // for toggle buttons
QString chartDescription(ChartKind kind);  // one line, used as the chart's tooltip
QString chartKey(ChartKind kind);          // stable identifier for settings

struct LineData {
  QString name;      // shown in tooltips and, if inLegend, the legend
  QString group;     // empty for aggregates
  QColor color;
  Qt::PenStyle style = Qt::SolidLine;
  bool inLegend = true;
  bool rightAxis = false;  // drawn against the secondary (right) value axis
  std::vector<QPointF> points;
};

// A run of one breaker state for one group: [fromMs, toMs).
struct BandSpan {
  double fromMs = 0, toMs = 0;
  BreakerState state = BreakerState::Closed;
};

struct BandRow {
  QString group;
  std::vector<BandSpan> spans;
};

struct Marker {
  EpochMs tsMs = 0;
  QColor color;
  QString label;  // one line
  // A full-height line on every chart: operator actions and incidents (a breaker opening, a quota exhausted).
  // Otherwise (a 429 burst starting) a small tick in a thin lane at the top of the 429 chart only.
  bool lane = false;
  bool breakerOpen = false;  // a breaker opening: a lane tick on the breaker chart too when they crowd (build())
};

struct ChartFrame {
  ChartKind kind = ChartKind::Remaining;
  std::vector<LineData> lines;
  std::vector<BandRow> bands;  // Breaker chart only
  std::vector<Marker> markers;
  QString leftTitle, rightTitle;
};

using ChartFrames = std::array<ChartFrame, kChartKindCount>;

}  // namespace tg::ui
