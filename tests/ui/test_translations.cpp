// Tollgate's translations (resources/translations): every string the dashboard shows has a finished Simplified
// Chinese translation that keeps its placeholders and its keyboard accelerator; each .ts holds exactly the
// strings the sources have (lupdate run afresh into a temp dir and compared), so a new tr() string without a
// translation fails here; TranslationLoader installs Tollgate's and Qt's own Chinese; a dashboard built in
// Chinese shows no English words.
#include "main_window.h"
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
    QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("Cancel"));
    QVERIFY(!loader.qtTranslationLoaded());
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
