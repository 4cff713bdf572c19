#include "desktop_notifier.h"

#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QStringList>
#include <QVariantMap>

namespace tg::ui {

namespace {

const QString kService = QStringLiteral("org.freedesktop.Notifications");
const QString kPath = QStringLiteral("/org/freedesktop/Notifications");
const QString kInterface = QStringLiteral("org.freedesktop.Notifications");

}  // namespace

DesktopNotifier* DesktopNotifier::create(QObject* parent, const QDBusConnection& bus) {
  if (!bus.isConnected() || !bus.interface() || !bus.interface()->isServiceRegistered(kService).value()) return nullptr;
  return new DesktopNotifier(parent, bus);
}

DesktopNotifier::DesktopNotifier(QObject* parent, const QDBusConnection& bus) : QObject(parent), bus_(bus) {
  bus_.connect(kService, kPath, kInterface, QStringLiteral("ActionInvoked"), this,
               SLOT(onActionInvoked(uint, QString)));
  bus_.connect(kService, kPath, kInterface, QStringLiteral("NotificationClosed"), this, SLOT(onClosed(uint, uint)));
}

void DesktopNotifier::notify(const QString& summary, const QString& body, bool critical, int tag) {
  QDBusMessage call = QDBusMessage::createMethodCall(kService, kPath, kInterface, QStringLiteral("Notify"));
  QVariantMap hints;
  hints.insert(QStringLiteral("urgency"), QVariant::fromValue(static_cast<uchar>(critical ? 2 : 1)));
  // "default" is the action of a click on the notification itself.
  call << QStringLiteral("Tollgate") << uint(0) << QStringLiteral("dialog-warning") << summary << body
       << QStringList{QStringLiteral("default"), tr("Open the dashboard there")} << hints << int(-1);
  auto* watcher = new QDBusPendingCallWatcher(bus_.asyncCall(call), this);
  connect(watcher, &QDBusPendingCallWatcher::finished, this, [this, tag](QDBusPendingCallWatcher* w) {
    const QDBusPendingReply<uint> reply = *w;
    w->deleteLater();
    if (reply.isError()) return;
    if (tags_.size() >= kMaxOpen) tags_.erase(tags_.begin());  // ids grow: the oldest goes
    tags_[reply.value()] = tag;
  });
}

void DesktopNotifier::onActionInvoked(uint id, const QString& action) {
  auto it = tags_.find(id);
  if (it == tags_.end() || action != QLatin1String("default")) return;
  const int tag = it->second;
  tags_.erase(it);
  emit clicked(tag);
}

void DesktopNotifier::onClosed(uint id, uint) { tags_.erase(id); }

}  // namespace tg::ui
