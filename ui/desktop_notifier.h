// Desktop notifications through the freedesktop Notifications service on the session bus, so that a click says
// which notification it was: QSystemTrayIcon::messageClicked names none, and with two on screen the dashboard
// opened at the newest one's event whichever was clicked. Each notification carries a caller's tag; clicked(tag)
// tells which was clicked. Without the service (no desktop, no bus) create() gives null and the caller falls back
// to the tray icon's balloon. UI thread only.
#pragma once

#include <QDBusConnection>
#include <QObject>
#include <QString>

#include <map>

namespace tg::ui {

class DesktopNotifier : public QObject {
  Q_OBJECT
 public:
  // On `bus` (the session bus when not given); null when the Notifications service is not on it.
  static DesktopNotifier* create(QObject* parent, const QDBusConnection& bus = QDBusConnection::sessionBus());

  void notify(const QString& summary, const QString& body, bool critical, int tag);
  // Notifications shown and not yet closed or clicked (the service keeps at most kMaxOpen of ours in mind).
  std::size_t open() const { return tags_.size(); }
  static constexpr std::size_t kMaxOpen = 64;

 signals:
  void clicked(int tag);

 private slots:
  void onActionInvoked(uint id, const QString& action);
  void onClosed(uint id, uint reason);

 private:
  DesktopNotifier(QObject* parent, const QDBusConnection& bus);

  QDBusConnection bus_;
  std::map<uint, int> tags_;  // the service's id -> our tag
};

}  // namespace tg::ui
