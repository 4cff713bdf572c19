// The language the dashboard speaks and the translators that make it so: Tollgate's own strings
// (resources/translations, built into the binary under :/i18n) and Qt's own (qtbase_<lang>.qm from Debian's
// qt6-translations-l10n, when installed: dialog buttons, file dialogs). The choice is `--lang`, else the
// setting View > Language keeps, else the system locale.
//
// UI thread only. The translators are children of the loader and stay installed while it lives.
#pragma once

#include <QLocale>
#include <QObject>
#include <QStringList>

class QTranslator;

namespace tg::ui {

class TranslationLoader : public QObject {
  Q_OBJECT
 public:
  // "system" (follow the locale) and the languages Tollgate is translated into: what --lang and the setting take.
  static QStringList choices();
  static bool isChoice(const QString& choice);
  // The setting ("language" in the app's QSettings); "system" when unset or not a choice.
  static QString savedChoice();
  static void saveChoice(const QString& choice);
  // The language a choice stands for: the system locale's for "system".
  static QLocale localeFor(const QString& choice);
  // A choice as its speakers write it ("English", "简体中文"); "system" in the current language.
  static QString displayName(const QString& choice);

  explicit TranslationLoader(QObject* parent = nullptr);
  ~TranslationLoader() override;

  // Replaces the translators this loader installed with those for `choice` (which must be a choice) and makes
  // that language QLocale's default. Returns the locale Tollgate's strings are in: "zh_CN", or "en" when it
  // has no translation for the language (English is the source).
  QString install(const QString& choice);
  // The same for a locale (what "system" gives): a language with no translation gets the English text, with its
  // plural forms and English number formats.
  QString installFor(const QLocale& locale);
  // Whether Qt's own translation for the language was found (never for English).
  bool qtTranslationLoaded() const { return qtLoaded_; }

 private:
  void removeTranslators();

  QTranslator* app_ = nullptr;
  QTranslator* qt_ = nullptr;
  bool qtLoaded_ = false;
};

}  // namespace tg::ui
