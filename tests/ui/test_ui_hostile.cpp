// The dashboard shown bytes from upstream: an event whose message and detail carry text that is not UTF-8
// (an X-RateLimit-Resource header of \xff\xfe) used to abort on the event log's tooltip.
#include "event_log_model.h"
#include "time_chart_widget.h"

#include <QApplication>
#include <QTest>

#include <QChart>

#include <mutex>
#include <set>

// Qt's hook table for debugging tools (qhooks_p.h, exported by QtCore): entries 3 and 4 are called with every
// QObject as it is constructed and destroyed.
extern Q_DECL_IMPORT quintptr qtHookData[];

using namespace tg;
using namespace tg::ui;

namespace {

constexpr int kHookAddQObject = 3;
constexpr int kHookRemoveQObject = 4;
using ObjectHook = void (*)(QObject*);

// Every QObject constructed while it exists and not yet destroyed. One at a time.
class ObjectTracker {
 public:
  ObjectTracker() {
    current_ = this;
    prevAdd_ = qtHookData[kHookAddQObject];
    prevRemove_ = qtHookData[kHookRemoveQObject];
    qtHookData[kHookAddQObject] = reinterpret_cast<quintptr>(&added);
    qtHookData[kHookRemoveQObject] = reinterpret_cast<quintptr>(&removed);
  }
  ~ObjectTracker() {
    qtHookData[kHookAddQObject] = prevAdd_;
    qtHookData[kHookRemoveQObject] = prevRemove_;
    current_ = nullptr;
  }
  ObjectTracker(const ObjectTracker&) = delete;
  ObjectTracker& operator=(const ObjectTracker&) = delete;

  // Objects still alive are fully constructed, so their type can be asked.
  int liveCharts() {
    std::lock_guard lock(mutex_);
    int n = 0;
    for (QObject* o : live_) n += qobject_cast<QChart*>(o) != nullptr;
    return n;
  }

 private:
  static void added(QObject* o) {
    if (ObjectTracker* t = current_) {
      std::lock_guard lock(t->mutex_);
      t->live_.insert(o);
      if (t->prevAdd_) reinterpret_cast<ObjectHook>(t->prevAdd_)(o);
    }
  }
  static void removed(QObject* o) {
    if (ObjectTracker* t = current_) {
      std::lock_guard lock(t->mutex_);
      t->live_.erase(o);
      if (t->prevRemove_) reinterpret_cast<ObjectHook>(t->prevRemove_)(o);
    }
  }
  static inline ObjectTracker* current_ = nullptr;
  quintptr prevAdd_ = 0, prevRemove_ = 0;
  std::mutex mutex_;
  std::set<QObject*> live_;
};

}  // namespace

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
    // The words come from the classification; the detail below them keeps its bytes as replacement characters.
    QVERIFY2(tip.startsWith(QStringLiteral("429 burst")) && tip.contains(QStringLiteral("resource")), qPrintable(tip));
    QVERIFY(tip.contains(QChar(0xFFFD)));
    // Without a classification the message is shown as core wrote it, its bytes replaced the same way.
    e.detail = {{"resource", "\xFF\xFE"}};
    model.addEvent(e);
    const QString raw = model.data(model.index(0, EventLogModel::Message)).toString();
    QVERIFY2(raw.startsWith(QStringLiteral("429 burst on")) && raw.contains(QChar(0xFFFD)), qPrintable(raw));
  }

  // Exactly one QChart per view, and none left once the view is gone. QChartView(parent) makes a default chart
  // of its own, and a later setChart() only releases it: that chart, with its legend and layout, leaked once
  // per widget. QObject creation and destruction are observed through Qt's object hooks (qtHookData), so the
  // released chart is counted although nothing points to it any more.
  void chartsOwnEverythingTheyMake() {
    for (ChartKind kind : {ChartKind::Throughput, ChartKind::Breaker}) {
      ObjectTracker tracker;
      auto* w = new TimeChartWidget(kind);
      QVERIFY(w->chart());
      QCOMPARE(w->chart()->scene(), w->scene());
      QCOMPARE(tracker.liveCharts(), 1);
      delete w;
      QCOMPARE(tracker.liveCharts(), 0);
    }
  }
};

QTEST_MAIN(TestUiHostile)
#include "test_ui_hostile.moc"
