#include "translation_loader.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QSettings>
#include <QTranslator>

namespace tg::ui {

namespace {

const QString kSystem = QStringLiteral("system");
const QString kSettingsKey = QStringLiteral("language");
const QString kResourceDir = QStringLiteral(":/i18n");

}  // namespace

QStringList TranslationLoader::choices() { return {kSystem, QStringLiteral("en"), QStringLiteral("zh_CN")}; }

bool TranslationLoader::isChoice(const QString& choice) { return choices().contains(choice); }

QString TranslationLoader::savedChoice() {
  const QString v = QSettings().value(kSettingsKey).toString();
  return isChoice(v) ? v : kSystem;
}

void TranslationLoader::saveChoice(const QString& choice) {
  if (isChoice(choice)) QSettings().setValue(kSettingsKey, choice);
}

QLocale TranslationLoader::localeFor(const QString& choice) {
  return choice == kSystem || !isChoice(choice) ? QLocale::system() : QLocale(choice);
}

QString TranslationLoader::displayName(const QString& choice) {
  if (choice == QLatin1String("en")) return QStringLiteral("English");
  if (choice == QLatin1String("zh_CN")) return QStringLiteral("简体中文");
  return tr("System language");
}

TranslationLoader::TranslationLoader(QObject* parent) : QObject(parent) {}

TranslationLoader::~TranslationLoader() { removeTranslators(); }

void TranslationLoader::removeTranslators() {
  for (QTranslator** t : {&app_, &qt_}) {
    if (!*t) continue;
    QCoreApplication::removeTranslator(*t);
    delete *t;
    *t = nullptr;
  }
  qtLoaded_ = false;
}

QString TranslationLoader::install(const QString& choice) { return installFor(localeFor(choice)); }

QString TranslationLoader::installFor(const QLocale& locale) {
  removeTranslators();
  QLocale::setDefault(locale);
  // QTranslator::load(QLocale, ...) tries the locale's UI languages in order (zh_Hans_CN, zh_CN, zh, ...), so a
  // system in any Simplified Chinese locale finds tollgate_zh_CN. English is the source text, but its plural forms
  // ("1 group", "3 groups" for "%n group(s)") are in tollgate_en.
  QString spoken = QStringLiteral("en");
  auto* app = new QTranslator(this);
  if (app->load(locale, QStringLiteral("tollgate"), QStringLiteral("_"), kResourceDir)) {
    QCoreApplication::installTranslator(app);
    app_ = app;
    spoken = app->language();
  } else if (app->load(QStringLiteral("tollgate_en"), kResourceDir)) {
    // No translation for this language (LANG=C, de_DE, ...): the English text, with its plural forms ("Engine
    // started (2 group(s))" without them) and its number format (an English card read "90.000 tokens/min" under
    // de_DE, beside "req/s 0.0").
    QCoreApplication::installTranslator(app);
    app_ = app;
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    return spoken;
  } else {
    delete app;
  }
  if (app_ && locale.language() != QLocale::English) {  // Qt's own words are English already
    auto* qt = new QTranslator(this);
    if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
      QCoreApplication::installTranslator(qt);
      qt_ = qt;
      qtLoaded_ = true;
    } else {
      delete qt;
    }
  }
  return spoken;
}

}  // namespace tg::ui
