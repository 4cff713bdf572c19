// Tollgate's translations (resources/translations): every string the dashboard shows has a finished Simplified
// Chinese translation that keeps its placeholders and its keyboard accelerator; each .ts holds exactly the
// strings the sources have (lupdate run afresh into a temp dir and compared), so a new tr() string without a
// translation fails here; TranslationLoader installs Tollgate's and Qt's own Chinese; a dashboard built in
// Chinese shows no English words, nor do the waits and events core decides (worded in ui/ from their codes).
#include "chart_panel_widget.h"
#include "display_text.h"
#include "event_log_model.h"
#include "group_card_widget.h"
#include "live_sample_source.h"
#include "main_window.h"
#include "time_chart_widget.h"
#include "translation_loader.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDockWidget>
#include <QGroupBox>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <map>
#include <set>
#include <tuple>

using namespace tg::ui;

namespace {

const QString kTsDir = QStringLiteral(TOLLGATE_SOURCE_DIR "/resources/translations");

struct Message {
  QString context, source, comment;
  QString translation;
  QString type;                // "", "unfinished", "vanished", "obsolete"
  QStringList numerusForms;    // for %n strings
  bool numerus = false;
  auto key() const { return std::tie(context, source, comment); }
  bool operator<(const Message& o) const { return key() < o.key(); }
  QString name() const { return context + QStringLiteral(" / \"") + source + QLatin1Char('"'); }
};

// Every message of a .ts file; an unreadable or malformed file is a failure naming it.
std::vector<Message> readTs(const QString& path, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    *error = path + QStringLiteral(": ") + f.errorString();
    return {};
  }
  std::vector<Message> out;
  QXmlStreamReader xml(&f);
  QString context;
  Message m;
  while (!xml.atEnd()) {
    xml.readNext();
    if (!xml.isStartElement()) continue;
    const auto name = xml.name();
    if (name == QLatin1String("name")) {
      context = xml.readElementText();
    } else if (name == QLatin1String("message")) {
      m = Message{};
      m.context = context;
      m.numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
    } else if (name == QLatin1String("source")) {
      m.source = xml.readElementText();
    } else if (name == QLatin1String("comment")) {
      m.comment = xml.readElementText();
    } else if (name == QLatin1String("translation")) {
      m.type = xml.attributes().value(QLatin1String("type")).toString();
      if (m.numerus) {
        while (xml.readNextStartElement()) m.numerusForms << xml.readElementText();
      } else {
        m.translation = xml.readElementText();
      }
      out.push_back(m);
    }
  }
  if (xml.hasError()) *error = path + QStringLiteral(": ") + xml.errorString();
  return out;
}

// %1..%99 and %n, as a set: a translation may reorder them but must keep every one.
std::set<QString> placeholders(const QString& text) {
  static const QRegularExpression re(QStringLiteral("%(\\d{1,2}|n)"));
  std::set<QString> out;
  for (auto it = re.globalMatch(text); it.hasNext();) out.insert(it.next().captured(0));
  return out;
}

// "&File" marks F as the accelerator; "&&" is a literal ampersand.
bool hasAccelerator(const QString& text) {
  static const QRegularExpression re(QStringLiteral("(^|[^&])&[^&\\s]"));
  return re.match(text).hasMatch();
}

}  // namespace

class TestTranslations : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }  // settings in a test folder

  void chineseIsFinished() {
    QString error;
    const auto messages = readTs(kTsDir + QStringLiteral("/tollgate_zh_CN.ts"), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(messages.size() > 200);
    QStringList problems;
    for (const Message& m : messages) {
      const QStringList forms = m.numerus ? m.numerusForms : QStringList{m.translation};
      if (!m.type.isEmpty()) problems << m.name() + QStringLiteral(": translation is ") + m.type;
      for (const QString& t : forms) {
        if (t.trimmed().isEmpty()) {
          problems << m.name() + QStringLiteral(": no translation");
          continue;
        }
        if (placeholders(t) != placeholders(m.source))
          problems << m.name() + QStringLiteral(": placeholders differ in \"") + t + QLatin1Char('"');
        if (hasAccelerator(m.source) != hasAccelerator(t))
          problems << m.name() + QStringLiteral(": accelerator (&) kept in one and not the other: \"") + t +
                          QLatin1Char('"');
      }
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
  }

  void tsFilesHoldTheSourcesStrings_data() {
    QTest::addColumn<QString>("language");
    QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    QTest::newRow("en") << QStringLiteral("en");
  }

  // lupdate over the same sources and options as the build's update_translations target, into a temp file.
  void tsFilesHoldTheSourcesStrings() {
    QFETCH(QString, language);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString fresh = dir.filePath(QStringLiteral("tollgate_%1.ts").arg(language));
    QProcess lupdate;
    lupdate.setProcessChannelMode(QProcess::MergedChannels);
    lupdate.start(QStringLiteral(TOLLGATE_LUPDATE),
                  {QStringLiteral("-locations"), QStringLiteral("none"), QStringLiteral("-no-obsolete"),
                   QStringLiteral("@" TOLLGATE_BINARY_DIR "/translations/sources.lst"), QStringLiteral("-ts"), fresh});
    QVERIFY2(lupdate.waitForFinished(120000), "lupdate did not finish");
    const QString log = QString::fromUtf8(lupdate.readAll());
    QVERIFY2(lupdate.exitStatus() == QProcess::NormalExit && lupdate.exitCode() == 0, qPrintable(log));
    QVERIFY2(!log.contains(QLatin1String("arning")), qPrintable(QStringLiteral("lupdate warned:\n") + log));

    QString error;
    const auto sources = readTs(fresh, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const auto committed = readTs(kTsDir + QStringLiteral("/tollgate_%1.ts").arg(language), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    std::set<Message> want(sources.begin(), sources.end()), have;
    for (const Message& m : committed)
      if (m.type != QLatin1String("vanished") && m.type != QLatin1String("obsolete")) have.insert(m);
    QStringList diff;
    for (const Message& m : want)
      if (!have.count(m)) diff << QStringLiteral("missing from the .ts: ") + m.name();
    for (const Message& m : have)
      if (!want.count(m)) diff << QStringLiteral("no longer in the sources: ") + m.name();
    QVERIFY2(diff.isEmpty(), qPrintable(diff.join(QLatin1Char('\n')) +
                                        QStringLiteral("\nrun: cmake --build build --target update_translations, "
                                                       "then translate the new strings (linguist)")));
  }

  void choicesAndSetting() {
    QCOMPARE(TranslationLoader::choices(),
             (QStringList{QStringLiteral("system"), QStringLiteral("en"), QStringLiteral("zh_CN")}));
    QVERIFY(!TranslationLoader::isChoice(QStringLiteral("fr")));
    QVERIFY(!TranslationLoader::isChoice(QString()));
    QSettings().remove(QStringLiteral("language"));
    QCOMPARE(TranslationLoader::savedChoice(), QStringLiteral("system"));
    TranslationLoader::saveChoice(QStringLiteral("zh_CN"));
    QCOMPARE(TranslationLoader::savedChoice(), QStringLiteral("zh_CN"));
    TranslationLoader::saveChoice(QStringLiteral("klingon"));  // not a choice: ignored
    QCOMPARE(TranslationLoader::savedChoice(), QStringLiteral("zh_CN"));
    QSettings().setValue(QStringLiteral("language"), QStringLiteral("xx"));  // edited by hand
    QCOMPARE(TranslationLoader::savedChoice(), QStringLiteral("system"));
    QSettings().remove(QStringLiteral("language"));
  }

  void loaderInstallsChineseAndQtsOwn() {
    TranslationLoader loader;
    QCOMPARE(loader.install(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
    QCOMPARE(QCoreApplication::translate("tg::ui::MainWindow", "Groups"), QStringLiteral("分组"));
    QCOMPARE(QCoreApplication::translate("DisplayText", "open", "circuit breaker state"), QStringLiteral("打开"));
    QCOMPARE(QLocale().name(), QStringLiteral("zh_CN"));
    QVERIFY2(loader.qtTranslationLoaded(),
             "qtbase_zh_CN.qm not found in Qt's translations folder: install qt6-translations-l10n");
    QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("取消"));

    QCOMPARE(loader.install(QStringLiteral("en")), QStringLiteral("en"));  // replaces, not adds
    QCOMPARE(QCoreApplication::translate("tg::ui::MainWindow", "Groups"), QStringLiteral("Groups"));
    // English plurals come from tollgate_en ("3 more groups", not "3 more group(s)").
    QCOMPARE(QCoreApplication::translate("tg::ui::AlertTray", "429s on %1 and %n more group(s)", nullptr, 3),
             QStringLiteral("429s on %1 and 3 more groups"));
    QCOMPARE(QCoreApplication::translate("tg::ui::AlertTray", "429s on %1 and %n more group(s)", nullptr, 1),
             QStringLiteral("429s on %1 and 1 more group"));
    QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("Cancel"));
    QVERIFY(!loader.qtTranslationLoaded());
  }

  // A system language with no translation (LANG=C, de_DE): the English plurals ("Engine started (2 group(s))"
  // without them) and English number formats (an English card read "90.000 tokens/min" beside "req/s 0.0").
  void aLanguageWithoutTranslationGetsEnglishWhole() {
    TranslationLoader loader;
    for (const QLocale& l : {QLocale(QLocale::German, QLocale::Germany), QLocale::c()}) {
      QCOMPARE(loader.installFor(l), QStringLiteral("en"));
      QCOMPARE(QCoreApplication::translate("tg::ui::AlertTray", "429s on %1 and %n more group(s)", nullptr, 3),
               QStringLiteral("429s on %1 and 3 more groups"));
      QCOMPARE(QLocale().toString(90000.5, 'f', 1), QStringLiteral("90,000.5"));
      QVERIFY(!loader.qtTranslationLoaded());
    }
  }

  void translatorsGoWithTheLoader() {
    {
      TranslationLoader loader;
      loader.install(QStringLiteral("zh_CN"));
      QCOMPARE(QCoreApplication::translate("tg::ui::MainWindow", "Events"), QStringLiteral("事件"));
    }
    QCOMPARE(QCoreApplication::translate("tg::ui::MainWindow", "Events"), QStringLiteral("Events"));
    QLocale::setDefault(QLocale::c());
  }

  // View > Language keeps the choice for the next start and says so; the running window keeps its language.
  void languageMenuSavesTheChoice() {
    QSettings().remove(QStringLiteral("language"));
    MainWindow w;
    auto* menu = w.findChild<QMenu*>(QStringLiteral("languageMenu"));
    QVERIFY(menu);
    QStringList names;
    QAction* chinese = nullptr;
    for (QAction* a : menu->actions()) {
      names << a->text();
      if (a->data().toString() == QLatin1String("zh_CN")) chinese = a;
      if (a->data().toString() == QLatin1String("system")) QVERIFY(a->isChecked());
    }
    QCOMPARE(names, (QStringList{QStringLiteral("System language"), QStringLiteral("English"), QStringLiteral("简体中文")}));
    QVERIFY(chinese);
    chinese->trigger();
    QVERIFY(chinese->isChecked());
    QCOMPARE(TranslationLoader::savedChoice(), QStringLiteral("zh_CN"));
    QCOMPARE(w.statusBar()->currentMessage(), QStringLiteral("Language: 简体中文 from the next start"));
    QCOMPARE(w.windowTitle(), QStringLiteral("Tollgate"));
    QSettings().remove(QStringLiteral("language"));
  }

  // What core decides and words in English (waits, 429 bursts, breakers, sheds, the fleet, durations) reaches a
  // Chinese window in Chinese: worded in ui/ from the codes and numbers, on the card, in the event log, in the
  // chart markers and in the replay panel's incident reasons.
  void coreWordsShowInChinese() {
    TranslationLoader loader;
    loader.install(QStringLiteral("zh_CN"));
    QStringList texts;
    const auto event = [](tg::EventKind kind, nlohmann::json detail, const std::string& message) {
      tg::Event e;
      e.tsMs = 1'764'000'000'000;
      e.kind = kind;
      e.group = "batch";
      e.message = message;
      e.detail = std::move(detail);
      return e;
    };
    const std::vector<tg::Event> events = {
        event(tg::EventKind::Burst429Start, {{"classification", "quota_exhausted"}, {"reset_in_s", 59.0}},
              "429 quota exhausted: requests exhausted, reset in 59 s"),
        event(tg::EventKind::Burst429Start, {{"classification", "burst"}, {"retry_after_s", 2.0}},
              "429 burst: Retry-After until 12:03:41 UTC"),
        event(tg::EventKind::Burst429End, {{"count", 40}, {"duration_s", 12.4}, {"peak_per_s", 9}},
              "429 burst over: 40 in 12 s, peak 9/s"),
        event(tg::EventKind::BreakerTransition, {{"from", "closed"}, {"to", "open"}}, "breaker closed -> open"),
        event(tg::EventKind::QuotaChange, {{"dimension", "tokens"}, {"before", 90000}, {"after", 60000}},
              "upstream tokens limit changed 90000 -> 60000"),
        event(tg::EventKind::QuotaChange, {{"dimension", "tokens"}, {"before", 90000}, {"after", 60000}, {"key", "k-3f2a"}},
              "upstream tokens limit changed 90000 -> 60000"),
        event(tg::EventKind::QuotaExhausted, {{"until_ms", 1'764'003'600'000}, {"wait_s", 3600}, {"key", "k-3f2a"}},
              "quota exhausted until 16:00:00 (key k-3f2a)"),
        event(tg::EventKind::RequestShed,
              {{"count", 3}, {"reason", "deadline passed after 30.0 s queued (P2): tokens: 3.2 s"}, {"cause", "deadline"}},
              "3 request(s) shed: deadline passed after 30.0 s queued (P2): tokens: 3.2 s"),
        event(tg::EventKind::RequestShed, {{"count", 1}, {"reason", "quota exhausted"}, {"cause", "quota_exhausted"}},
              "1 request(s) shed: quota exhausted beyond the wait cap"),
        event(tg::EventKind::SharedQuota, {{"mode", "fallback"}, {"live", 3}, {"instance", "a"}},
              "shared quota: Redis unreachable, this instance takes 1/3 of each shared limit (Connection refused)"),
        event(tg::EventKind::SharedQuota, {{"mode", "fallback"}, {"live", 3}, {"instance", "a"}, {"why", "WRONGPASS"}},
              "shared quota: Redis unreachable or refusing, this instance takes 1/3 of each shared limit (WRONGPASS)"),
        event(tg::EventKind::SharedQuota,
              {{"key", "k-3f2a"}, {"wait_s", 30}, {"from", "b"}, {"reason", "429 with Retry-After"}},
              "key k-3f2a held until 15:00:30: 429 with Retry-After on instance b"),
        event(tg::EventKind::EngineStart, {{"instance", "demo"}, {"groups", 2}}, "engine started (2 groups)"),
        event(tg::EventKind::EngineStop, {{"instance", "demo"}}, "engine stopped"),
        event(tg::EventKind::HistoryGap, {{"from_ms", 0}, {"to_ms", 1}, {"reason", "write queue overflow"}, {"rows", 7}},
              "history lost 7 rows: write queue overflow"),
        event(tg::EventKind::ConfigReload, {}, "config reloaded"),
    };
    tg::ui::EventLogModel model;
    for (const tg::Event& e : events) {
      const QString words = eventMessageText(e);
      QVERIFY2(words != QString::fromStdString(e.message), qPrintable(words));
      texts << words;
      model.addEvent(e);
    }
    for (int r = 0; r < model.rowCount(); ++r)
      texts << model.data(model.index(r, tg::ui::EventLogModel::Message)).toString();
    QCOMPARE(eventMessageText(events[0]), QStringLiteral("429：配额耗尽，59 秒后重置"));

    using tg::WaitCode;
    using tg::WaitReason;
    const tg::EpochMs clock = (12 * 3600 + 3 * 60 + 41) * 1000;
    const std::vector<WaitReason> waits = {
        {.code = WaitCode::GroupPaused},
        {.code = WaitCode::TierPaused, .tier = tg::Tier::P2},
        {.code = WaitCode::GlobalConcurrency, .used = 64, .limit = 64},
        {.code = WaitCode::Concurrency, .used = 8, .limit = 8},
        {.code = WaitCode::RateCeiling, .dimension = tg::Dimension::Requests, .amount = 10},
        {.code = WaitCode::GlobalRateCeiling, .dimension = tg::Dimension::Tokens, .amount = 90000},
        {.code = WaitCode::BreakerOpen, .untilMs = clock},
        {.code = WaitCode::BreakerProbing},
        {.code = WaitCode::RetryAfter, .untilMs = clock},
        {.code = WaitCode::ServerRetryAfter, .untilMs = clock, .status = 503},
        {.code = WaitCode::ResetAt, .untilMs = clock},
        {.code = WaitCode::QuotaExhausted, .untilMs = clock},
        {.code = WaitCode::RefusedHolding, .seconds = 2},
        {.code = WaitCode::RefusedBackingOff, .seconds = 0.25},
        {.code = WaitCode::RefusedPausing, .seconds = 0.1},
        {.code = WaitCode::ProbeAlone},
        {.code = WaitCode::Refill, .dimension = tg::Dimension::Tokens, .seconds = 3.2},
        {.code = WaitCode::ResetIn, .dimension = tg::Dimension::Requests, .seconds = 59, .probeS = 12},
        {.code = WaitCode::ResetIn, .dimension = tg::Dimension::Requests, .seconds = 250},
        {.code = WaitCode::NoneLeftAnswers, .dimension = tg::Dimension::Requests},
        {.code = WaitCode::NoneLeftNext, .dimension = tg::Dimension::Requests, .seconds = 0.5},
        {.code = WaitCode::Pacing, .dimension = tg::Dimension::Tokens, .seconds = 3.2},
        {.code = WaitCode::FleetHold, .untilMs = clock, .note = "quota exhausted", .from = "b"},
        {.code = WaitCode::SharedShare},
        {.code = WaitCode::SharedNextLease},
        {.code = WaitCode::SharedSpent},
        {.code = WaitCode::SharedLease},
    };
    for (const WaitReason& w : waits) {
      const QString words = waitReasonText(w);
      QVERIFY2(!words.isEmpty() && words != QString::fromStdString(tg::waitText(w)), qPrintable(words));
      texts << words;
    }
    QCOMPARE(waitReasonText(waits[17]), QStringLiteral("请求数已耗尽，59 秒后重置（12 秒后由一个请求试探）"));
    for (double s : {0.85, 8.5, 42.0, 250.0, 3 * 3600.0 + 300, 2 * 86400.0 + 4 * 3600})
      texts << durationText(s);
    QCOMPARE(durationText(59), QStringLiteral("59 秒"));
    for (const char* r : {"429_share", "5xx_share", "breaker_open", "queue_growth", "shed"}) texts << incidentReasonText(r);

    // On the group card and a chart's marker, as the window shows them.
    MainWindow w;
    tg::ui::LiveSampleSource source;
    auto snap = std::make_shared<tg::EngineSnapshot>();
    snap->tsMs = 1'764'000'000'000;
    tg::GroupSnapshot g;
    g.group = "batch";
    g.wait = waits[17];
    g.waitReason = tg::waitText(g.wait);
    snap->groups.push_back(g);
    source.addSnapshot(snap);
    source.addEvent(events[0]);
    source.addEvent(events[3]);
    w.setSource(&source);
    w.charts()->refresh();
    const QString card = w.card(QStringLiteral("batch"))->fieldText(QStringLiteral("waitReason"));
    QVERIFY2(card.contains(QStringLiteral("59 秒后重置")), qPrintable(card));
    texts << card;
    for (const auto& m : w.charts()->chart(tg::ui::ChartKind::Throughput)->markers()) texts << m.label;
    QVERIFY(texts.size() > 60);

    // Names that stay as they are in Chinese text: HTTP's header, Redis and its own words quoted (WRONGPASS),
    // units and tiers (P2), key names.
    static const QRegularExpression english(QStringLiteral("[A-Za-z]{3,}"));
    static const QSet<QString> kept = {QStringLiteral("Retry"), QStringLiteral("After"), QStringLiteral("HTTP"),
                                       QStringLiteral("Redis"), QStringLiteral("WRONGPASS"), QStringLiteral("batch")};
    QStringList english_;
    for (const QString& t : texts)
      for (auto it = english.globalMatch(t); it.hasNext();) {
        const QString word = it.next().captured(0);
        if (!kept.contains(word)) english_ << QStringLiteral("\"%1\" in \"%2\"").arg(word, t);
      }
    QVERIFY2(english_.isEmpty(), qPrintable(english_.join(QLatin1Char('\n'))));
    QLocale::setDefault(QLocale::c());
  }

  // What a Chinese-speaking operator sees first: every caption, button, dock and menu, in Chinese.
  void dashboardInChineseHasNoEnglishWords() {
    TranslationLoader loader;
    loader.install(QStringLiteral("zh_CN"));
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QStringList texts;
    for (auto* l : w.findChildren<QLabel*>())
      if (l->isVisible()) texts << l->text();
    for (auto* b : w.findChildren<QAbstractButton*>())
      if (b->isVisible()) texts << b->text() << b->toolTip();
    for (auto* d : w.findChildren<QDockWidget*>()) texts << d->windowTitle();
    for (auto* g : w.findChildren<QGroupBox*>()) texts << g->title();
    for (QAction* menu : w.menuBar()->actions()) {
      texts << menu->text();
      if (menu->menu())
        for (QAction* a : menu->menu()->actions()) texts << a->text();
    }
    // Names that stay as they are in Chinese text: the product, tiers, percentiles, units, file formats.
    static const QRegularExpression english(QStringLiteral("[A-Za-z]{3,}"));
    static const QSet<QString> kept = {QStringLiteral("Tollgate"), QStringLiteral("English"),
                                       QStringLiteral("JSONL"), QStringLiteral("CSV"), QStringLiteral("PNG"),
                                       QStringLiteral("UTC"), QStringLiteral("Ctrl")};  // Ctrl: a key's name
    QStringList english_;
    for (const QString& t : texts)
      for (auto it = english.globalMatch(t); it.hasNext();) {
        const QString word = it.next().captured(0);
        if (!kept.contains(word)) english_ << QStringLiteral("\"%1\" in \"%2\"").arg(word, t);
      }
    QVERIFY2(texts.size() > 20, qPrintable(texts.join(QLatin1Char('|'))));
    QVERIFY2(english_.isEmpty(), qPrintable(english_.join(QLatin1Char('\n'))));
    QCOMPARE(w.windowTitle(), QStringLiteral("Tollgate"));
    w.close();
    QLocale::setDefault(QLocale::c());
  }
};

QTEST_MAIN(TestTranslations)
#include "test_translations.moc"
