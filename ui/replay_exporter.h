// Exports what the replay shows: each visible chart as PNG, the window's samples as CSV (full resolution),
// and a Markdown incident report with the charts' pictures as PNG files next to it. UI thread only.
#pragma once

#include "history_types.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace tg::ui {

class ChartPanelWidget;
class HistorySampleSource;

class ReplayExporter {
 public:
  // Writes <dir>/<stem>-<chart>.png for every visible chart; returns the file names written (not paths).
  static QStringList exportChartsPng(ChartPanelWidget& charts, const QString& dir, const QString& stem,
                                     QString* error);
  // Full-resolution samples of [fromMs, toMs] for every group.
  static bool exportCsv(HistorySampleSource& source, EpochMs fromMs, EpochMs toMs, const QString& path,
                        QString* error);
  // The .md plus its PNGs (same stem) next to it.
  static bool exportReport(HistorySampleSource& source, ChartPanelWidget& charts, EpochMs fromMs, EpochMs toMs,
                           const std::optional<Incident>& incident, const QString& mdPath, QString* error);
};

}  // namespace tg::ui
