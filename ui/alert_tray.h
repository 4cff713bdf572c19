// The tray icon and desktop notifications over AlertPolicy: the icon's colour is the worst state now (green
// all fine, amber 429s, red breaker open, purple quota exhausted), its tooltip says where; a notification
// (QSystemTrayIcon::showMessage) when the policy calls for one; clicking it asks for the dashboard at that
// event's time. Notifications go through the desktop's notification service (DesktopNotifier) when the session
// bus has one, so a click opens at the clicked one's event; else through the icon's balloon, whose click names no
// notification (the newest is opened). Which kinds notify is kept in QSettings (group "alerts"). Without a system
// tray (offscreen, Xvfb, a desktop without one) there is no icon; level() still works. UI thread only.
#pragma once

#include "alert_policy.h"
#include "meta_types.h"

#include <QIcon>
#include <QObject>
#include <QString>

#include <map>

class QSystemTrayIcon;

namespace tg::ui {

class DesktopNotifier;

class AlertTray : public QObject {
  Q_OBJECT
 public:
  // `withIcon` false: never create a tray icon (tests, replay-only windows).
  explicit AlertTray(QObject* parent = nullptr, bool withIcon = true);

  bool hasIcon() const { return icon_ != nullptr; }
  // Shows or hides the icon (a window without a live engine has nothing to alert about); hidden at first.
  void setIconVisible(bool on);
  AlertLevel level() const { return level_; }
  QString levelText() const;  // "429s on batch", "429s on batch and 7 more groups"
  static QColor levelColor(AlertLevel level);
  static QIcon levelIcon(AlertLevel level);
  static QString kindText(AlertKind kind);  // what the setting's menu item says

  bool notifies(AlertKind kind) const { return policy_.enabled(kind); }
  void setNotifies(AlertKind kind, bool on);  // saved in QSettings

  // The last notification shown (or that would have been, without a tray); tsMs 0 = none yet.
  const AlertNotice& lastNotice() const { return last_; }
  // Notifications go through `n` (owned by the caller, or by this when parented here); made on the session bus by
  // the constructor when the desktop has the service. A click on one opens at that one's event.
  void setNotifier(DesktopNotifier* n);

 public slots:
  void onEvent(const tg::Event& e);
  // Recolours the icon for `nowMs` (an exhausted quota lapses with time).
  void refresh(qint64 nowMs);
  void clear();

 signals:
  // The operator clicked a notification (or the icon after one): show the dashboard at `tsMs`.
  void openRequested(qint64 tsMs, const QString& group);
  void levelChanged(tg::ui::AlertLevel level);

 private:
  QString noticeText(const AlertNotice& n) const;

  AlertPolicy policy_;
  QSystemTrayIcon* icon_ = nullptr;
  AlertLevel level_ = AlertLevel::Fine;
  QString levelGroup_;
  int levelGroups_ = 0;  // groups in the worst state
  AlertNotice last_;
  DesktopNotifier* notifier_ = nullptr;
  std::map<int, AlertNotice> shown_;  // by tag: what each notification on the desktop was about
  int nextTag_ = 0;
};

}  // namespace tg::ui
