// Builds every chart's ChartFrame for [fromMs, toMs] in one pass over the source's samples.
#pragma once

#include "chart_frame.h"
#include "sample_source.h"

namespace tg::ui {

class ChartFrameBuilder {
 public:
  // Group colors: stable by position in the source's group list.
  static QColor groupColor(int index);
  static QColor breakerColor(BreakerState state);

  static ChartFrames build(const SampleSource& source, EpochMs fromMs, EpochMs toMs);

  // Events worth a vertical mark: operator actions, 429 bursts, breaker trips, exhausted quota.
  static std::vector<Marker> markers(const std::vector<Event>& events);

  // Collapses a sequence of (time, state) into spans; `maxGapMs` splits where samples are missing.
  static std::vector<BandSpan> bandSpans(const std::vector<std::pair<double, BreakerState>>& states,
                                         double maxGapMs, double lastDurationMs);
};

}  // namespace tg::ui
