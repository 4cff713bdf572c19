// The dashboard shown bytes from upstream: an event whose message and detail carry text that is not UTF-8
// (an X-RateLimit-Resource header of \xff\xfe) used to abort on the event log's tooltip.
#include "event_log_model.h"
#include "time_chart_widget.h"

#include <QApplication>
#include <QTest>

using namespace tg;
using namespace tg::ui;

class TestUiHostile : public QObject {
  Q_OBJECT
 private slots:
  void tooltipOfAnEventWithBytesThatAreNotUtf8() {
    EventLogModel model;
    Event e;
    e.tsMs = 1'796'000'000'000;
    e.kind = EventKind::Burst429Start;
    e.severity = Severity::Warn;
    e.group = "g";
    e.message = "429 burst on \xFF\xFE";
    e.detail = {{"resource", "\xFF\xFE"}, {"classification", "burst"}};
    model.addEvent(e);
    const QString tip = model.data(model.index(0, EventLogModel::Message), Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("429 burst on")) && tip.contains(QStringLiteral("resource")), qPrintable(tip));
    QVERIFY(tip.contains(QChar(0xFFFD)));
  }

  // The chart is the view's own, in the view's scene. (The QChart leak this replaced, a default chart made by
  // QChartView(parent) and released by setChart(), shows under LeakSanitizer in test_ui_dashboard.)
  void chartsOwnEverythingTheyMake() {
    for (ChartKind kind : {ChartKind::Throughput, ChartKind::Breaker}) {
      auto* w = new TimeChartWidget(kind);
      QVERIFY(w->chart());
      QCOMPARE(w->chart()->scene(), w->scene());
      delete w;
    }
  }
};

QTEST_MAIN(TestUiHostile)
#include "test_ui_hostile.moc"
