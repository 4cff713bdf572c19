#include "chart_frame_builder.h"

#include "display_text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tg::ui {

namespace {

constexpr double kMaxSampleGapMs = 3500;  // > 3 missed 1 Hz samples is a gap

double perSecond(int count, const Sample& s) { return s.intervalS > 0 ? count / s.intervalS : count; }

LineData makeLine(const QString& name, const QString& group, const QColor& color,
                  Qt::PenStyle style = Qt::SolidLine, bool inLegend = true, bool rightAxis = false) {
  LineData l;
  l.name = name;
  l.group = group;
  l.color = color;
  l.style = style;
  l.inLegend = inLegend;
  l.rightAxis = rightAxis;
  return l;
}

}  // namespace

QString chartTitle(ChartKind kind) {
  switch (kind) {
    case ChartKind::Remaining: return QObject::tr("Remaining quota");
    case ChartKind::Rate429: return QObject::tr("429 per second");
    case ChartKind::Breaker: return QObject::tr("Breaker state");
    case ChartKind::QueueDepth: return QObject::tr("Queue depth per tier");
    case ChartKind::Throughput: return QObject::tr("Responses per second");
    case ChartKind::Latency: return QObject::tr("Latency p50 / p95 (ms)");
    case ChartKind::Concurrency: return QObject::tr("In flight vs concurrency limit");
  }
  return {};
}

QString chartShortTitle(ChartKind kind) {
  switch (kind) {
    case ChartKind::Remaining: return QObject::tr("Remaining");
    case ChartKind::Rate429: return QObject::tr("429/s");
    case ChartKind::Breaker: return QObject::tr("Breaker");
    case ChartKind::QueueDepth: return QObject::tr("Queues");
    case ChartKind::Throughput: return QObject::tr("Responses");
    case ChartKind::Latency: return QObject::tr("Latency");
    case ChartKind::Concurrency: return QObject::tr("In flight");
  }
  return {};
}

QString chartDescription(ChartKind kind) {
  switch (kind) {
    case ChartKind::Remaining:
      return QObject::tr("Requests left in the upstream window per group (solid); limit dashed; tokens dotted, right axis");
    case ChartKind::Rate429: return QObject::tr("429 responses per second, per group");
    case ChartKind::Breaker: return QObject::tr("Circuit breaker per group: green closed, amber half-open, red open");
    case ChartKind::QueueDepth: return QObject::tr("Requests waiting in each tier's queue, all groups");
    case ChartKind::Throughput: return QObject::tr("Responses per second, all groups: 2xx, 429, 5xx");
    case ChartKind::Latency: return QObject::tr("Response latency per group: p95 solid, p50 dotted");
    case ChartKind::Concurrency: return QObject::tr("Requests in flight per group (solid) against its effective limit (dashed)");
  }
  return {};
}

QString chartKey(ChartKind kind) {
  static const char* keys[] = {"remaining", "rate429", "breaker", "queue", "throughput", "latency",
                               "concurrency"};
  return QString::fromLatin1(keys[static_cast<int>(kind)]);
}

QColor ChartFrameBuilder::groupColor(int index) {
  // Tableau 10: distinguishable on light and dark backgrounds.
  static const QColor colors[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59),
                                  QColor(0x76, 0xb7, 0xb2), QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48),
                                  QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
                                  QColor(0xba, 0xb0, 0xac)};
  if (index >= 0 && index < 10) return colors[index];
  // Past ten, hues a golden angle apart at two other saturations and values than Tableau's, so the eleventh group
  // is not the first's colour again (with 40 groups every colour was used by four).
  const int i = std::abs(index) - 10;
  const int hue = static_cast<int>(std::fmod(15.0 + i * 137.508, 360.0));
  return QColor::fromHsv(hue, i % 2 ? 120 : 220, i % 2 ? 230 : 170);
}

QColor ChartFrameBuilder::breakerColor(BreakerState state) {
  switch (state) {
    case BreakerState::Closed: return QColor(0x59, 0xa1, 0x4f);
    case BreakerState::HalfOpen: return QColor(0xf2, 0x8e, 0x2b);
    case BreakerState::Open: return QColor(0xd6, 0x27, 0x28);
  }
  return Qt::gray;
}

namespace {

// As ChartFrameBuilder::bandSpans, with the gap decision made per sample by the caller (`gapBefore`), so
// downsampled samples tens of seconds apart join into one span instead of thousands of empty ones.
struct BandSample {
  double t;
  BreakerState state;
  bool gapBefore;
};

std::vector<BandSpan> joinBands(const std::vector<BandSample>& states, double lastDurationMs) {
  std::vector<BandSpan> spans;
  for (const auto& [t, st, gap] : states) {
    if (!spans.empty() && spans.back().state == st && !gap) {
      spans.back().toMs = t;
    } else {
      if (!spans.empty() && !gap) spans.back().toMs = t;  // close up to here
      spans.push_back({t, t, st});
    }
  }
  if (!spans.empty()) spans.back().toMs += lastDurationMs;
  return spans;
}

}  // namespace

std::vector<BandSpan> ChartFrameBuilder::bandSpans(
    const std::vector<std::pair<double, BreakerState>>& states, double maxGapMs, double lastDurationMs) {
  std::vector<BandSpan> spans;
  for (std::size_t i = 0; i < states.size(); ++i) {
    const auto [t, st] = states[i];
    if (!spans.empty() && spans.back().state == st && t - spans.back().toMs <= maxGapMs) {
      spans.back().toMs = t;
    } else {
      if (!spans.empty() && t - spans.back().toMs <= maxGapMs) spans.back().toMs = t;  // close up to here
      spans.push_back({t, t, st});
    }
  }
  // A sample stands for the interval that ends at its time stamp; extend the newest run to "now".
  if (!spans.empty()) spans.back().toMs += lastDurationMs;
  return spans;
}

std::vector<Marker> ChartFrameBuilder::markers(const std::vector<Event>& events) {
  std::vector<Marker> out;
  for (const auto& e : events) {
    QColor color;
    bool lane = false;
    switch (e.kind) {
      case EventKind::OperatorAction: color = QColor(0x3d, 0x7e, 0xdb); break;
      case EventKind::Burst429Start:
        color = QColor(0xe1, 0x57, 0x59);
        lane = true;
        break;
      case EventKind::QuotaExhausted: color = QColor(0xb0, 0x7a, 0xa1); break;
      case EventKind::BreakerTransition:
        if (e.detail.value("to", std::string()) != "open") continue;
        color = QColor(0xd6, 0x27, 0x28);
        break;
      default: continue;
    }
    QString label = eventKindText(e.kind);
    if (!e.group.empty()) label += QStringLiteral(" [%1]").arg(QString::fromStdString(e.group));
    if (const QString text = eventMessageText(e); !text.isEmpty()) label += QStringLiteral(": ") + text;
    out.push_back({e.tsMs, color, label, lane, e.kind == EventKind::BreakerTransition});
  }
  return out;
}

ChartFrames ChartFrameBuilder::build(const SampleSource& source, EpochMs fromMs, EpochMs toMs) {
  ChartFrames frames;
  for (int k = 0; k < kChartKindCount; ++k) frames[k].kind = static_cast<ChartKind>(k);
  auto& remaining = frames[int(ChartKind::Remaining)];
  auto& rate429 = frames[int(ChartKind::Rate429)];
  auto& breaker = frames[int(ChartKind::Breaker)];
  auto& queue = frames[int(ChartKind::QueueDepth)];
  auto& throughput = frames[int(ChartKind::Throughput)];
  auto& latency = frames[int(ChartKind::Latency)];
  auto& concurrency = frames[int(ChartKind::Concurrency)];
  remaining.leftTitle = QObject::tr("requests");
  rate429.leftTitle = QObject::tr("429/s");
  queue.leftTitle = QObject::tr("queued");
  throughput.leftTitle = QObject::tr("per s");
  latency.leftTitle = QObject::tr("ms");
  concurrency.leftTitle = QObject::tr("requests");

  // Aggregates are keyed by sample time: every group's sample of one pass shares the snapshot's time.
  std::map<EpochMs, std::array<double, 3>> queueByTs, throughputByTs;
  std::set<EpochMs> gapAt;  // aggregates break where any group's samples break

  const auto groups = source.groups();
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const QString g = QString::fromStdString(groups[gi]);
    const QColor c = groupColor(int(gi));
    LineData reqRem = makeLine(g, g, c);
    LineData reqLim = makeLine(QObject::tr("%1 limit").arg(g), g, c, Qt::DashLine, false);
    LineData tokRem = makeLine(QObject::tr("%1 tokens").arg(g), g, c, Qt::DotLine, false, true);
    LineData tokLim = makeLine(QObject::tr("%1 token limit").arg(g), g, c, Qt::DashDotLine, false, true);
    LineData r429 = makeLine(g, g, c);
    LineData p95 = makeLine(QObject::tr("%1 p95").arg(g), g, c);
    LineData p50 = makeLine(QObject::tr("%1 p50").arg(g), g, c, Qt::DotLine, false);
    LineData inFlight = makeLine(g, g, c);
    LineData limit = makeLine(QObject::tr("%1 limit").arg(g), g, c, Qt::DashLine, false);
    std::vector<BandSample> states;
    bool anyTokens = false;
    double lastInterval = 1000;

    double prevT = 0, prevIntervalMs = 1000;
    source.forEachSample(groups[gi], fromMs, toMs, [&](const Sample& s) {
      const double t = double(s.tsMs);
      // Missing samples (engine restart, history gap) are a gap in every line, not a straight bridge.
      // The first sample after a gap spans the gap, so the expected spacing is the previous sample's.
      const bool gap = prevT > 0 && t - prevT > std::max(kMaxSampleGapMs, 2.5 * prevIntervalMs);
      if (gap) {
        const double gapT = prevT + 1;
        for (LineData* l : {&reqRem, &reqLim, &tokRem, &tokLim, &r429, &p95, &p50, &inFlight, &limit})
          l->points.emplace_back(gapT, kUnknown);
        gapAt.insert(s.tsMs);
      }
      prevT = t;
      prevIntervalMs = s.intervalS * 1000;
      reqRem.points.emplace_back(t, s.reqRemaining);
      reqLim.points.emplace_back(t, s.reqLimit);
      tokRem.points.emplace_back(t, s.tokRemaining);
      tokLim.points.emplace_back(t, s.tokLimit);
      anyTokens = anyTokens || known(s.tokRemaining) || known(s.tokLimit);
      r429.points.emplace_back(t, perSecond(s.r429, s));
      p95.points.emplace_back(t, s.p95Ms);
      p50.points.emplace_back(t, s.p50Ms);
      inFlight.points.emplace_back(t, s.inFlight);
      limit.points.emplace_back(t, s.concurrencyLimit);
      states.push_back({t, s.breaker, gap});
      lastInterval = s.intervalS * 1000;
      auto& q = queueByTs[s.tsMs];
      for (int tier = 0; tier < kTierCount; ++tier) q[tier] += s.queueDepth[tier];
      auto& th = throughputByTs[s.tsMs];
      th[0] += perSecond(s.ok, s);
      th[1] += perSecond(s.r429, s);
      th[2] += perSecond(s.r5xx, s);
    });

    remaining.lines.push_back(std::move(reqRem));
    remaining.lines.push_back(std::move(reqLim));
    if (anyTokens) {
      remaining.rightTitle = QObject::tr("tokens");
      remaining.lines.push_back(std::move(tokRem));
      remaining.lines.push_back(std::move(tokLim));
    }
    rate429.lines.push_back(std::move(r429));
    latency.lines.push_back(std::move(p95));
    latency.lines.push_back(std::move(p50));
    concurrency.lines.push_back(std::move(inFlight));
    concurrency.lines.push_back(std::move(limit));
    breaker.bands.push_back({g, joinBands(states, lastInterval)});
  }

  static const QColor tierColors[] = {QColor(0xd6, 0x27, 0x28), QColor(0xf2, 0x8e, 0x2b),
                                      QColor(0x4e, 0x79, 0xa7)};
  for (int tier = 0; tier < kTierCount; ++tier) {
    const auto name = tierName(static_cast<Tier>(tier));
    LineData line = makeLine(QString::fromLatin1(name.data(), int(name.size())), {}, tierColors[tier]);
    for (const auto& [ts, q] : queueByTs) {
      if (gapAt.count(ts)) line.points.emplace_back(double(ts) - 1, kUnknown);
      line.points.emplace_back(double(ts), q[tier]);
    }
    queue.lines.push_back(std::move(line));
  }
  static const char* outcome[] = {"2xx", "429", "5xx"};
  static const QColor outcomeColors[] = {QColor(0x59, 0xa1, 0x4f), QColor(0xe1, 0x57, 0x59),
                                         QColor(0xb0, 0x7a, 0xa1)};
  for (int i = 0; i < 3; ++i) {
    LineData line = makeLine(QString::fromLatin1(outcome[i]), {}, outcomeColors[i]);
    for (const auto& [ts, th] : throughputByTs) {
      if (gapAt.count(ts)) line.points.emplace_back(double(ts) - 1, kUnknown);
      line.points.emplace_back(double(ts), th[i]);
    }
    throughput.lines.push_back(std::move(line));
  }

  auto marks = markers(source.events(fromMs, toMs));
  // Breakers opening across many groups (40 groups, a few flapping) covered every chart in red dashed lines that
  // hid the data: past kMaxBreakerLines in the window they are ticks in the breaker chart's lane (its bands show
  // which group), as 429 bursts are in the 429 chart's.
  constexpr int kMaxBreakerLines = 12;
  const auto breakerLines = std::count_if(marks.begin(), marks.end(), [](const Marker& m) { return m.breakerOpen; });
  if (breakerLines > kMaxBreakerLines)
    for (Marker& m : marks)
      if (m.breakerOpen) m.lane = true;
  for (auto& f : frames)
    for (const Marker& m : marks)
      if (!m.lane || (m.breakerOpen ? f.kind == ChartKind::Breaker : f.kind == ChartKind::Rate429))
        f.markers.push_back(m);
  return frames;
}

}  // namespace tg::ui
