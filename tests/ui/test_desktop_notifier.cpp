// Desktop notifications over a real D-Bus: a private dbus-daemon started by the test, and a notification service
// on it (this process, on its own connection) that records what it is asked to show and reports clicks as the
// freedesktop spec says (ActionInvoked with the "default" action). Two notifications on screen, the older one
// clicked: the dashboard is asked for the older one's moment. (With QSystemTrayIcon's messageClicked, which names
// no notification, it was the newest one's.)
#include "alert_events.h"
#include "alert_tray.h"
#include "desktop_notifier.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QProcess>
#include <QSignalSpy>
#include <QtTest>

using namespace tg;
using namespace tg::ui;

namespace {

constexpr EpochMs kT0 = tgtest::kAlertT0;
using tgtest::makeEvent;

class FakeNotifications : public QObject {
  Q_OBJECT
  Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Notifications")
 public:
  struct Shown {
    uint id;
    QString summary, body;
    QStringList actions;
    uchar urgency;
  };
  QList<Shown> shown;

 public slots:
  Q_SCRIPTABLE uint Notify(const QString&, uint, const QString&, const QString& summary, const QString& body,
                           const QStringList& actions, const QVariantMap& hints, int) {
    const uint id = 100 + static_cast<uint>(shown.size());
    shown.push_back({id, summary, body, actions, hints.value(QStringLiteral("urgency")).value<uchar>()});
    return id;
  }
};

}  // namespace

class TestDesktopNotifier : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    daemon_.start(QStringLiteral("dbus-daemon"), {QStringLiteral("--session"), QStringLiteral("--nofork"),
                                                  QStringLiteral("--print-address=1")});
    QVERIFY2(daemon_.waitForStarted(5000), "dbus-daemon did not start (scripts/setup.sh installs dbus-daemon)");
    QVERIFY(daemon_.waitForReadyRead(5000));
    address_ = QString::fromUtf8(daemon_.readLine()).trimmed();
    QVERIFY2(!address_.isEmpty(), "dbus-daemon printed no address");
  }
  void cleanupTestCase() {
    daemon_.terminate();
    daemon_.waitForFinished(3000);
  }

  void withoutTheServiceThereIsNoNotifier() {
    QDBusConnection bus = QDBusConnection::connectToBus(address_, QStringLiteral("client-alone"));
    QVERIFY(bus.isConnected());
    QVERIFY(!DesktopNotifier::create(nullptr, bus));
  }

  void aClickOpensAtTheClickedNotificationsEvent() {
    QDBusConnection server = QDBusConnection::connectToBus(address_, QStringLiteral("server"));
    QVERIFY(server.isConnected());
    FakeNotifications fake;
    QVERIFY(server.registerObject(QStringLiteral("/org/freedesktop/Notifications"), &fake,
                                  QDBusConnection::ExportScriptableSlots));
    QVERIFY(server.registerService(QStringLiteral("org.freedesktop.Notifications")));
    QDBusConnection client = QDBusConnection::connectToBus(address_, QStringLiteral("client"));

    AlertTray tray(nullptr, false);
    DesktopNotifier* notifier = DesktopNotifier::create(&tray, client);
    QVERIFY(notifier);
    tray.setNotifier(notifier);
    QSignalSpy opened(&tray, &AlertTray::openRequested);
    tray.onEvent(makeEvent(EventKind::Burst429Start, kT0, "batch"));
    tray.onEvent(makeEvent(EventKind::BreakerTransition, kT0 + 30'000, "interactive",
                           {{"from", "closed"}, {"to", "open"}}));
    QTRY_COMPARE(fake.shown.size(), 2);
    QTRY_COMPARE(notifier->open(), std::size_t(2));  // both ids came back
    QVERIFY2(fake.shown[0].body.contains(QStringLiteral("batch")), qPrintable(fake.shown[0].body));
    QCOMPARE(fake.shown[0].urgency, uchar(1));
    QCOMPARE(fake.shown[1].urgency, uchar(2));  // a breaker is critical
    QCOMPARE(fake.shown[1].actions.value(0), QStringLiteral("default"));

    // The older one is clicked.
    QDBusMessage click = QDBusMessage::createSignal(QStringLiteral("/org/freedesktop/Notifications"),
                                                    QStringLiteral("org.freedesktop.Notifications"),
                                                    QStringLiteral("ActionInvoked"));
    click << fake.shown[0].id << QStringLiteral("default");
    QVERIFY(server.send(click));
    QTRY_COMPARE(opened.size(), 1);
    QCOMPARE(opened[0][0].toLongLong(), kT0);
    QCOMPARE(opened[0][1].toString(), QStringLiteral("batch"));
    // The newer one closed unclicked: forgotten, and a late click on it opens nothing.
    QDBusMessage closed = QDBusMessage::createSignal(QStringLiteral("/org/freedesktop/Notifications"),
                                                     QStringLiteral("org.freedesktop.Notifications"),
                                                     QStringLiteral("NotificationClosed"));
    closed << fake.shown[1].id << uint(2);
    QVERIFY(server.send(closed));
    QTRY_COMPARE(notifier->open(), std::size_t(0));
    click.setArguments({fake.shown[1].id, QStringLiteral("default")});
    QVERIFY(server.send(click));
    QTest::qWait(200);
    QCOMPARE(opened.size(), 1);
  }

 private:
  QProcess daemon_;
  QString address_;
};

QTEST_GUILESS_MAIN(TestDesktopNotifier)
#include "test_desktop_notifier.moc"
