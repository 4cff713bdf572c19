// The command line as the operator meets it, through the real binaries: every command and history action
// answers --help/-h with its own usage (exit 0, stdout); `tollgate --version` prints CMake's project
// version; unknown words, stray values and missing values stay exit 2 with the wording they always had.
#include "cli_process.h"

#include <QProcess>
#include <QtTest>

using namespace tgtest;

namespace {
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
}  // namespace

class TestCliHelp : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY2(!bin().isEmpty(), "TOLLGATE_BIN is not set"); }

  void everyCommandAnswersHelp_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("usage");    // how stdout starts
    QTest::addColumn<QString>("mentions");  // an option of that command only
    QTest::newRow("tollgate --help") << QStringList{"--help"} << "usage:\n  tollgate [gui] [--config FILE]" << "--version";
    // The dashboard's own options in the first help a newcomer reads (README names --screenshot, --pause-tier).
    QTest::newRow("tollgate --help: dashboard") << QStringList{"--help"} << "usage:\n" << "--pause-tier TIER@S";
    QTest::newRow("tollgate -h") << QStringList{"-h"} << "usage:\n" << "tollgate replay";
    QTest::newRow("dashboard options") << QStringList{"--history", "off", "--help"} << "usage:\n" << "--screenshot-after S";
    // `tollgate gui` names the dashboard, as a command would (it was an unknown argument "gui").
    QTest::newRow("gui --help") << QStringList{"gui", "--help"} << "usage:\n" << "--screenshot-after S";
    QTest::newRow("dashboard --pause-tier") << QStringList{"--history", "off", "--help"} << "usage:\n"
                                            << "--pause-tier TIER@S";
    QTest::newRow("run") << QStringList{"run", "--help"} << "usage: tollgate run" << "--workload JOB.jsonl";
    QTest::newRow("run -h") << QStringList{"run", "-h"} << "usage: tollgate run" << "--quiet";
    QTest::newRow("probe") << QStringList{"probe", "--help"} << "usage: tollgate probe" << "--step-s S";
    QTest::newRow("replay") << QStringList{"replay", "--help"} << "usage: tollgate replay" << "--override FILE";
    QTest::newRow("headers") << QStringList{"headers", "--help"} << "usage: tollgate headers" << "--max-wait S";
    QTest::newRow("check") << QStringList{"check", "--help"} << "usage: tollgate check" << "--config FILE";
    QTest::newRow("history") << QStringList{"history", "--help"} << "usage: tollgate history incidents"
                             << "tollgate history check";
    QTest::newRow("history incidents") << QStringList{"history", "incidents", "--help"}
                                       << "usage: tollgate history incidents" << "--id N";
    QTest::newRow("history show") << QStringList{"history", "show", "-h"} << "usage: tollgate history show"
                                  << "--points N";
    QTest::newRow("history export") << QStringList{"history", "export", "--help"} << "usage: tollgate history export"
                                    << "--format csv|jsonl";
    QTest::newRow("history check") << QStringList{"history", "check", "--help"} << "usage: tollgate history check"
                                   << "--strict";
  }
  void everyCommandAnswersHelp() {
    QFETCH(QStringList, args);
    QFETCH(QString, usage);
    QFETCH(QString, mentions);
    QByteArray out, err;
    QCOMPARE(runTollgate(args, &out, &err), kExitOk);
    QVERIFY2(out.startsWith(usage.toUtf8()), out.constData());
    QVERIFY2(out.contains(mentions.toUtf8()), out.constData());
    QVERIFY2(out.contains("--help"), out.constData());
    QCOMPARE(err, QByteArray());
  }

  void versionComesFromCMake_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("--version") << QStringList{"--version"};
    QTest::newRow("-v") << QStringList{"-v"};
    QTest::newRow("after dashboard options") << QStringList{"--history", "off", "--version"};
    QTest::newRow("gui --version") << QStringList{"gui", "--version"};
  }
  void versionComesFromCMake() {
    QFETCH(QStringList, args);
    QByteArray out, err;
    QCOMPARE(runTollgate(args, &out, &err), kExitOk);
    QCOMPARE(out, QByteArray("tollgate " TOLLGATE_EXPECTED_VERSION "\n"));
    QCOMPARE(err, QByteArray());
  }

  void wrongWordsKeepTheirWording_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");  // the first line of stderr
    QTest::newRow("run unknown") << QStringList{"run", "--frobnicate"} << "tollgate run: unknown argument \"--frobnicate\"";
    QTest::newRow("run stray word") << QStringList{"run", "--headless", "now"} << "tollgate run: unknown argument \"now\"";
    QTest::newRow("run --") << QStringList{"run", "--"} << "tollgate run: unknown argument \"--\"";
    QTest::newRow("run switch=value") << QStringList{"run", "--quiet=1"} << "tollgate run: unknown argument \"--quiet=1\"";
    QTest::newRow("run single dash") << QStringList{"run", "-config", "x"} << "tollgate run: unknown argument \"-config\"";
    QTest::newRow("run missing value") << QStringList{"run", "--headless", "--report"}
                                       << "tollgate run: --report needs a value";
    QTest::newRow("probe unknown") << QStringList{"probe", "--group", "g", "--fast"}
                                   << "tollgate probe: unknown argument \"--fast\"";
    QTest::newRow("replay unknown") << QStringList{"replay", "--incident", "1", "--x"}
                                    << "tollgate replay: unknown argument \"--x\"";
    QTest::newRow("dashboard unknown") << QStringList{"--bogus"} << "tollgate: unknown argument \"--bogus\"";
    QTest::newRow("unknown command") << QStringList{"launch"} << "tollgate: unknown command \"launch\"";
    QTest::newRow("headers unknown") << QStringList{"headers", "--verbose"} << "tollgate headers: unknown argument '--verbose'";
    QTest::newRow("history unknown") << QStringList{"history", "check", "--db", "x", "--fast"}
                                     << "history check: unknown argument '--fast'";
    QTest::newRow("history no action") << QStringList{"history"}
                                       << "history: missing subcommand (incidents, show, export, check)";
    // A value option given twice: which one was meant? (--max-rps and --pause-tier add up, headers' replace.)
    QTest::newRow("run twice") << QStringList{"run", "--config", "a.json", "--config", "b.json"}
                               << "tollgate run: --config given twice";
    QTest::newRow("probe twice") << QStringList{"probe", "--group", "g", "--group=zzz"}
                                 << "tollgate probe: --group given twice";
    QTest::newRow("probe rates twice") << QStringList{"probe", "--group", "g", "--rates", "5", "--rates", "9"}
                                       << "tollgate probe: --rates given twice";
    QTest::newRow("serve twice") << QStringList{"serve", "--listen", "127.0.0.1:1", "--listen", "127.0.0.1:2"}
                                 << "tollgate serve: --listen given twice";
    QTest::newRow("replay twice") << QStringList{"replay", "--incident", "1", "--incident", "2"}
                                  << "tollgate replay: --incident given twice";
    QTest::newRow("gui unknown") << QStringList{"gui", "--bogus"} << "tollgate: unknown argument \"--bogus\"";
    QTest::newRow("dashboard twice") << QStringList{"--history", "off", "--history", "a.db"}
                                     << "tollgate: --history given twice";
    QTest::newRow("help after a bad word") << QStringList{"run", "--frobnicate", "--help"}
                                           << "tollgate run: unknown argument \"--frobnicate\"";
  }
  void wrongWordsKeepTheirWording() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QByteArray out, err;
    QCOMPARE(runTollgate(args, &out, &err), kExitUsage);
    QCOMPARE(QString::fromUtf8(err.left(err.indexOf('\n'))), message);
    QCOMPARE(out, QByteArray());
  }

  // tollgate-sim reads its options the same way.
  void simulatorOptions() {
    const QString sim = QString::fromLocal8Bit(qgetenv("TOLLGATE_SIM"));
    QVERIFY(!sim.isEmpty());
    QProcess p;
    p.start(sim, {"--help"});
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitCode(), kExitOk);
    const QByteArray help = p.readAllStandardOutput();
    QVERIFY2(help.startsWith("usage: tollgate-sim"), help.constData());
    QVERIFY2(help.contains("--port N"), help.constData());
    p.start(sim, {"--version"});  // as tollgate's: it was an unknown argument
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitCode(), kExitOk);
    QCOMPARE(p.readAllStandardOutput(), QByteArray("tollgate-sim " TOLLGATE_EXPECTED_VERSION "\n"));
    const std::pair<QStringList, QByteArray> bad[] = {
        {{"--bogus"}, "tollgate-sim: unknown argument \"--bogus\"\n"},
        {{"--port"}, "tollgate-sim: --port needs a value\n"},
        {{"--port", "1", "--port", "2"}, "tollgate-sim: --port given twice\n"}};
    for (const auto& [words, message] : bad) {
      p.start(sim, words);
      QVERIFY(p.waitForFinished(10000));
      QCOMPARE(p.exitCode(), kExitUsage);
      const QByteArray err = p.readAllStandardError();
      QVERIFY2(err.startsWith(message), err.constData());
    }
    for (const QString& port : {QStringLiteral("65536"), QStringLiteral(" 0"), QStringLiteral("+5")}) {  // digits only
      p.start(sim, {"--port", port});
      QVERIFY(p.waitForFinished(10000));
      QCOMPARE(p.exitCode(), kExitUsage);
      QVERIFY(p.readAllStandardError().contains("--port expects 0..65535"));
    }
  }
};

QTEST_GUILESS_MAIN(TestCliHelp)
#include "test_cli_help.moc"
