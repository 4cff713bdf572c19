// What the Debian package installs beside the binaries (packaging/): the desktop entry and the AppStream
// metainfo pass their validators, every icon is the size its hicolor folder says, and each man page
// documents every option the binary's --help lists, so a new option without a man page entry fails here.
#include <QDir>
#include <QFile>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

#include <csignal>

namespace {

const QString kAppId = QStringLiteral("io.github.tollgate.Tollgate");

QString sourcePath(const QString& rel) { return QStringLiteral(TOLLGATE_SOURCE_DIR "/") + rel; }
QString binaryPath(const QString& rel) { return QStringLiteral(TOLLGATE_BINARY_DIR "/") + rel; }

struct Run {
  int exitCode = -1;
  QString output;  // stdout and stderr together
};

Run run(const QString& program, const QStringList& args) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(program, args);
  if (!p.waitForStarted(10000)) return {-1, program + QStringLiteral(": cannot start (") + p.errorString() + ")"};
  p.waitForFinished(60000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
}

void writeText(const QString& path, const QString& text) {
  QFile f(path);
  if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(text.toUtf8());
}

QString readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

// "--config", "--history", ... in the order --help lists them (usage lines and option lines alike).
QStringList optionsIn(const QString& help) {
  QStringList out;
  static const QRegularExpression option(QStringLiteral("(?<![\\w-])--[a-z][a-z0-9-]*"));
  for (auto it = option.globalMatch(help); it.hasNext();) {
    const QString o = it.next().captured(0);
    if (!out.contains(o)) out << o;
  }
  return out;
}

}  // namespace

class TestPackagingFiles : public QObject {
  Q_OBJECT
 private slots:
  void desktopEntryValidates() {
    const QString file = sourcePath(QStringLiteral("packaging/%1.desktop").arg(kAppId));
    const Run r = run(QStringLiteral("desktop-file-validate"), {file});
    QVERIFY2(r.exitCode == 0 && r.output.trimmed().isEmpty(),
             qPrintable(QStringLiteral("desktop-file-validate (package desktop-file-utils) exit %1:\n%2")
                            .arg(r.exitCode)
                            .arg(r.output)));
    const QString text = readText(file);
    QVERIFY2(text.contains(QStringLiteral("\nIcon=%1\n").arg(kAppId)), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("\nExec=tollgate\n")), qPrintable(text));
  }

  void metainfoValidates() {
    const QString file = binaryPath(QStringLiteral("packaging/%1.metainfo.xml").arg(kAppId));
    const Run r = run(QStringLiteral("appstreamcli"), {QStringLiteral("validate"), QStringLiteral("--no-net"), file});
    QVERIFY2(r.exitCode == 0, qPrintable(QStringLiteral("appstreamcli validate (package appstream) exit %1:\n%2")
                                             .arg(r.exitCode)
                                             .arg(r.output)));
    const QString text = readText(file);
    QVERIFY2(text.contains(QStringLiteral("<release version=\"%1\"").arg(QStringLiteral(TOLLGATE_VERSION))),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("<launchable type=\"desktop-id\">%1.desktop</launchable>").arg(kAppId)),
             qPrintable(text));
  }

  void iconsAreTheSizeTheirFolderSays() {
    for (int size : {48, 64, 128, 256}) {
      const QString file = sourcePath(QStringLiteral("packaging/icons/%1-%2.png").arg(kAppId).arg(size));
      const QImage image(file);
      QVERIFY2(!image.isNull(), qPrintable(file + QStringLiteral(": not a readable PNG")));
      QCOMPARE(image.size(), QSize(size, size));
      QVERIFY2(image.hasAlphaChannel(), qPrintable(file + QStringLiteral(": no transparency around the rounded corners")));
    }
    const QString svg = readText(sourcePath(QStringLiteral("packaging/icons/%1.svg").arg(kAppId)));
    QVERIFY2(svg.contains(QStringLiteral("viewBox=\"0 0 128 128\"")), "the SVG lost its square view box");
  }

  // The gateway's systemd unit: systemd-analyze accepts it (with the build's binary in the package's place), and
  // its own command lines, run as systemd runs them (the environment file read, $MAINPID the serve's pid), check the
  // config, start the gateway with its history in the state directory, reload on `systemctl reload`, and stop on
  // the unit's KillSignal within its TimeoutStopSec.
  void systemdUnitVerifiesAndItsCommandsRunTheGateway() {
    const QString unit = readText(sourcePath(QStringLiteral("packaging/tollgate-gateway.service")));
    QVERIFY(!unit.isEmpty());
    QTemporaryDir dir;
    const QString etc = dir.filePath(QStringLiteral("etc")), state = dir.filePath(QStringLiteral("state"));
    QVERIFY(QDir().mkpath(etc) && QDir().mkpath(state));
    QString local = unit;
    local.replace(QStringLiteral("/usr/bin/tollgate"), QStringLiteral(TOLLGATE_BIN))
        .replace(QStringLiteral("/etc/tollgate"), etc)
        .replace(QStringLiteral("/var/lib/tollgate"), state);
    const QString localUnit = dir.filePath(QStringLiteral("tollgate-gateway.service"));
    writeText(localUnit, local);
    const Run verify = run(QStringLiteral("systemd-analyze"), {QStringLiteral("verify"), QStringLiteral("--man=no"),
                                                                localUnit});
    QVERIFY2(verify.exitCode == 0 && verify.output.trimmed().isEmpty(),
             qPrintable(QStringLiteral("systemd-analyze verify (package systemd) exit %1:\n%2")
                            .arg(verify.exitCode)
                            .arg(verify.output)));

    writeText(etc + QStringLiteral("/gateway.json"),
              QStringLiteral(R"({"groups": [{"name": "g", "base_url": "sim", "keys": [{"name": "k"}]}],
                                 "simulator": {},
                                 "gateway": {"listen": "127.0.0.1:0",
                                             "clients": [{"name": "svc", "token_env": "TOLLGATE_UNIT_TOKEN"}],
                                             "routes": [{"prefix": "/openai", "group": "g"}]}})"));
    writeText(etc + QStringLiteral("/gateway.env"),
              QStringLiteral("TOLLGATE_UNIT_TOKEN=unit-token-0123456789abcdef\n"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    QString envFile;
    QMap<QString, QStringList> exec;  // ExecStartPre, ExecStart, ExecReload: each line's words
    for (const QString& line : local.split(QLatin1Char('\n'))) {
      const int eq = line.indexOf(QLatin1Char('='));
      if (line.startsWith(QLatin1Char('#')) || eq < 0) continue;
      const QString key = line.left(eq), value = line.mid(eq + 1);
      if (key == QStringLiteral("EnvironmentFile")) envFile = value.startsWith(QLatin1Char('-')) ? value.mid(1) : value;
      if (key.startsWith(QStringLiteral("Exec"))) exec[key] << value;
    }
    QCOMPARE(envFile, etc + QStringLiteral("/gateway.env"));
    for (const QString& kv : readText(envFile).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
      env.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    QCOMPARE(exec.value(QStringLiteral("ExecStartPre")).size(), 0);  // serve's own exit 2 is what is not restarted
    QCOMPARE(exec.value(QStringLiteral("ExecStart")).size(), 1);
    QCOMPARE(exec.value(QStringLiteral("ExecReload")).size(), 2);
    const auto runLine = [&env](const QString& line) {
      QStringList words = QProcess::splitCommand(line);
      QProcess p;
      p.setProcessEnvironment(env);
      p.setProcessChannelMode(QProcess::MergedChannels);
      p.start(words.takeFirst(), words);
      p.waitForFinished(30000);
      return Run{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
    };

    // A config error: serve exits 2, the status the unit does not restart on (RestartPreventExitStatus= reads the
    // main process's; a check in ExecStartPre failing restarted for ever).
    QVERIFY(local.contains(QStringLiteral("\nRestartPreventExitStatus=2\n")));
    const QString good = readText(etc + QStringLiteral("/gateway.json"));
    writeText(etc + QStringLiteral("/gateway.json"), QStringLiteral(R"({"groups": [{"name": "g", "base_url": "sim"}],
                                                                       "simulator": {}})"));
    const Run noGateway = runLine(exec.value(QStringLiteral("ExecStart")).first());
    QVERIFY2(noGateway.exitCode == 2 && noGateway.output.contains(QStringLiteral("gateway")),
             qPrintable(noGateway.output));
    writeText(etc + QStringLiteral("/gateway.json"), good);
    QStringList words = QProcess::splitCommand(exec.value(QStringLiteral("ExecStart")).first());
    QProcess serve;
    serve.setProcessEnvironment(env);
    serve.start(words.takeFirst(), words);
    QVERIFY(serve.waitForStarted(10000));
    QByteArray out, err;
    for (int i = 0; i < 200 && !out.contains("gateway: http://127.0.0.1:"); ++i) {
      serve.waitForReadyRead(50);
      out += serve.readAllStandardOutput();
    }
    QVERIFY2(out.contains("gateway: http://127.0.0.1:"), out.constData());
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(state + QStringLiteral("/history.db")), 10000);
    QString reload = exec.value(QStringLiteral("ExecReload")).at(1);
    reload.replace(QStringLiteral("$MAINPID"), QString::number(serve.processId()));
    const Run check = runLine(exec.value(QStringLiteral("ExecReload")).at(0));
    QVERIFY2(check.exitCode == 0, qPrintable(check.output));
    QCOMPARE(runLine(reload).exitCode, 0);
    for (int i = 0; i < 200 && !err.contains("SIGHUP: "); ++i) {
      serve.waitForReadyRead(50);
      err += serve.readAllStandardError();
    }
    QVERIFY2(err.contains("SIGHUP: " + etc.toUtf8() + "/gateway.json: no concurrency or rate ceiling changed"),
             err.constData());
    QVERIFY(exec.value(QStringLiteral("ExecReload")).at(0).contains(QStringLiteral(" check --serve ")));
    QVERIFY(local.contains(QStringLiteral("\nKillSignal=SIGTERM\n")) &&
            local.contains(QStringLiteral("\nTimeoutStopSec=45\n")));
    ::kill(static_cast<pid_t>(serve.processId()), SIGTERM);
    QVERIFY(serve.waitForFinished(45000));
    QCOMPARE(serve.exitStatus(), QProcess::NormalExit);
    QCOMPARE(serve.exitCode(), 0);
    err += serve.readAllStandardError();
    QVERIFY2(!err.contains("unit-token-0123456789abcdef"), err.constData());
  }

  void manPagesDocumentEveryOption_data() {
    QTest::addColumn<QString>("program");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("page");
    const QString tollgate = QStringLiteral(TOLLGATE_BIN);
    const QString man = QStringLiteral("packaging/man/tollgate.1");
    // `tollgate --help` is the overview; the dashboard's own options answer when a word comes first.
    QTest::newRow("tollgate") << tollgate << QStringList{QStringLiteral("--help")} << man;
    QTest::newRow("dashboard") << tollgate << QStringList{QStringLiteral("--history"), QStringLiteral("off"),
                                                          QStringLiteral("--help")}
                               << man;
    for (const char* command : {"run", "serve", "headers", "probe", "replay", "check"})
      QTest::newRow(command) << tollgate << QStringList{QString::fromLatin1(command), QStringLiteral("--help")} << man;
    for (const char* action : {"incidents", "show", "export", "check"})
      QTest::newRow(qPrintable(QStringLiteral("history ") + QString::fromLatin1(action)))
          << tollgate << QStringList{QStringLiteral("history"), QString::fromLatin1(action), QStringLiteral("--help")}
          << man;
    QTest::newRow("tollgate-sim") << QStringLiteral(TOLLGATE_SIM) << QStringList{QStringLiteral("--help")}
                                  << QStringLiteral("packaging/man/tollgate-sim.1");
  }

  void manPagesDocumentEveryOption() {
    QFETCH(QString, program);
    QFETCH(QStringList, args);
    QFETCH(QString, page);
    const Run help = run(program, args);
    QCOMPARE(help.exitCode, 0);
    const QStringList options = optionsIn(help.output);
    QVERIFY2(!options.isEmpty(), qPrintable(help.output));
    const QString roff = readText(sourcePath(page));
    QVERIFY2(!roff.isEmpty(), qPrintable(page + QStringLiteral(": missing")));
    QStringList missing;
    for (const QString& o : options) {
      QString escaped = o;  // roff writes a literal hyphen as \-
      escaped.replace(QLatin1Char('-'), QStringLiteral("\\-"));
      if (!roff.contains(escaped)) missing << o;
    }
    QVERIFY2(missing.isEmpty(), qPrintable(page + QStringLiteral(" lacks ") + missing.join(QStringLiteral(", ")) +
                                           QStringLiteral(" from:\n") + help.output));
  }
};

QTEST_GUILESS_MAIN(TestPackagingFiles)
#include "test_packaging_files.moc"
