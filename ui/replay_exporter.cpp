#include "replay_exporter.h"

#include "chart_panel_widget.h"
#include "history_sample_source.h"
#include "incident_report.h"
#include "json_text.h"
#include "time_chart_widget.h"
#include "time_text.h"

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextStream>

#include <cmath>

namespace tg::ui {

QStringList ReplayExporter::exportChartsPng(ChartPanelWidget& charts, const QString& dir, const QString& stem,
                                            QString* error) {
  QStringList files;
  for (int k = 0; k < kChartKindCount; ++k) {
    const auto kind = ChartKind(k);
    if (!charts.isChartVisible(kind)) continue;
    const QString name = stem + QLatin1Char('-') + chartKey(kind) + QStringLiteral(".png");
    if (!charts.chart(kind)->grab().save(QDir(dir).filePath(name))) {
      if (error) *error = QObject::tr("cannot write %1").arg(QDir(dir).filePath(name));
      return {};
    }
    files << name;
  }
  return files;
}

bool ReplayExporter::exportCsv(HistorySampleSource& source, EpochMs fromMs, EpochMs toMs, const QString& path,
                               QString* error) {
  auto rows = source.reader().rawSamples(fromMs, toMs + 1, {});
  if (!rows.ok()) {
    if (error) *error = QString::fromStdString(rows.error);
    return false;
  }
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = f.errorString();
    return false;
  }
  QTextStream out(&f);
  auto num = [](double v) { return known(v) ? QString::number(v, 'g', 10) : QString(); };
  out << "ts_ms,group,req_remaining,req_limit,tok_remaining,tok_limit,reset_at_ms,in_flight,concurrency_limit,"
         "queue_p0,queue_p1,queue_p2,sends,ok,r429,r5xx,retries,shed,arrivals_p0,arrivals_p1,arrivals_p2,p50_ms,"
         "p95_ms,breaker,interval_s\n";
  for (const auto& s : rows.value) {
    out << s.tsMs << ',' << QString::fromStdString(csvCell(s.group)) << ',' << num(s.reqRemaining) << ',' << num(s.reqLimit)
        << ',' << num(s.tokRemaining) << ',' << num(s.tokLimit) << ',' << s.resetAtMs << ',' << s.inFlight << ','
        << s.concurrencyLimit << ',' << s.queueDepth[0] << ',' << s.queueDepth[1] << ',' << s.queueDepth[2] << ','
        << s.sends << ',' << s.ok << ',' << s.r429 << ',' << s.r5xx << ',' << s.retries << ',' << s.shed << ','
        << s.arrivals[0] << ',' << s.arrivals[1] << ',' << s.arrivals[2] << ',' << num(s.p50Ms) << ','
        << num(s.p95Ms) << ',' << QString::fromLatin1(breakerStateName(s.breaker).data()) << ',' << s.intervalS
        << '\n';
  }
  out.flush();
  if (!f.commit()) {
    if (error) *error = f.errorString();
    return false;
  }
  return true;
}

bool ReplayExporter::exportReport(HistorySampleSource& source, ChartPanelWidget& charts, EpochMs fromMs,
                                  EpochMs toMs, const std::optional<Incident>& incident, const QString& mdPath,
                                  QString* error) {
  const QFileInfo info(mdPath);
  const QStringList pngs = exportChartsPng(charts, info.absolutePath(), info.completeBaseName(), error);
  if (pngs.isEmpty() && error && !error->isEmpty()) return false;
  IncidentReport rep;
  rep.title = incident ? "Incident " + std::to_string(incident->id)
                       : "History " + formatUtc(fromMs, UtcStyle::DateTime) + " – " + formatUtc(toMs, UtcStyle::DateTime);
  rep.fromMs = fromMs;
  rep.toMs = toMs;
  rep.incident = incident;
  rep.events = source.events(fromMs, toMs);
  rep.source = source.path().toStdString();
  for (const QString& png : pngs) {
    const QString key = png.mid(info.completeBaseName().size() + 1).chopped(4);
    QString caption = key;
    for (int k = 0; k < kChartKindCount; ++k)
      if (chartKey(ChartKind(k)) == key) caption = chartTitle(ChartKind(k));
    rep.images.emplace_back(caption.toStdString(), png.toStdString());
  }
  QSaveFile f(mdPath);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = f.errorString();
    return false;
  }
  f.write(QByteArray::fromStdString(rep.markdown()));
  if (!f.commit()) {
    if (error) *error = f.errorString();
    return false;
  }
  return true;
}

}  // namespace tg::ui
