// The official openai npm SDK (tests/gateway/node, installed by scripts/setup.sh into the build dir) against
// tollgate-sim's OpenAI dialect directly: the harness the gateway tests drive must itself work, and must
// fail loudly (exit code and a JSON line saying why) when the server or the setup is wrong.
#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

const QString kSourceDir = QStringLiteral(TOLLGATE_SOURCE_DIR);
const QString kSdkDir = QStringLiteral(TOLLGATE_BINARY_DIR "/node-openai");
const QString kScript = kSourceDir + "/tests/gateway/node/openai_sdk_test.mjs";
constexpr int kExitFailed = 1;
constexpr int kExitSetup = 2;

struct ScriptRun {
  int exitCode = -1;  // -1 did not start or did not finish
  std::vector<nlohmann::json> lines;
  QByteArray out, err;

  const nlohmann::json* check(const std::string& name) const {
    for (const auto& l : lines)
      if (l.value("check", "") == name) return &l;
    return nullptr;
  }
  QByteArray why() const { return "stdout:\n" + out + "\nstderr:\n" + err; }
};

ScriptRun runScript(const QStringList& args, const QMap<QString, QString>& env) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.remove("GATEWAY_URL");
  e.remove("NODE_PATH");
  for (auto it = env.begin(); it != env.end(); ++it) e.insert(it.key(), it.value());
  p.setProcessEnvironment(e);
  p.start(QStandardPaths::findExecutable("node"), QStringList{kScript} + args);
  ScriptRun r;
  if (!p.waitForStarted(5000)) return r;
  if (!p.waitForFinished(60000)) {
    p.kill();
    p.waitForFinished(5000);
    return r;
  }
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  for (const QByteArray& line : r.out.split('\n'))
    if (!line.trimmed().isEmpty()) r.lines.push_back(nlohmann::json::parse(line.toStdString(), nullptr, false));
  return r;
}

}  // namespace

class TestOpenAiSdkSim : public QObject {
  Q_OBJECT
  QProcess sim_;
  int port_ = 0;

 private slots:
  void initTestCase() {
    QVERIFY2(!QStandardPaths::findExecutable("node").isEmpty(), "no `node` on PATH: scripts/setup.sh installs nodejs");
    QVERIFY2(QFileInfo::exists(kSdkDir + "/node_modules/openai/package.json"),
             qPrintable("the openai SDK is not installed in " + kSdkDir + ": run scripts/setup.sh"));
    const QString simBin = QString::fromLocal8Bit(qgetenv("TOLLGATE_SIM"));
    QVERIFY(!simBin.isEmpty());
    sim_.start(simBin, {"--config", kSourceDir + "/examples/sim/openai-style.json", "--port", "0"});
    QVERIFY(sim_.waitForStarted(5000));
    QByteArray banner;
    while (!banner.contains('\n') && sim_.waitForReadyRead(5000)) banner += sim_.readAllStandardOutput();
    const int colon = banner.lastIndexOf(':');
    QVERIFY2(banner.startsWith("tollgate-sim listening on ") && colon > 0, banner.constData());
    port_ = banner.mid(colon + 1).trimmed().toInt();
    QVERIFY(port_ > 0);
  }

  void cleanupTestCase() {
    sim_.terminate();
    if (!sim_.waitForFinished(5000)) sim_.kill();
  }

  void nonStreamingCompletion() {
    const auto r = runScript({"all"}, {{"GATEWAY_URL", QString("http://127.0.0.1:%1/v1").arg(port_)},
                                        {"GATEWAY_TOKEN", "sim-key-sdk-test"},
                                        {"OPENAI_SDK_DIR", kSdkDir}});
    QVERIFY2(r.exitCode == 0, r.why().constData());
    const auto* setup = r.check("setup");
    QVERIFY2(setup && setup->at("sdk") == "4.104.0", r.why().constData());
    const auto* chat = r.check("chat");
    QVERIFY2(chat && chat->at("ok") == true, r.why().constData());
    QCOMPARE(chat->at("status").get<int>(), 200);
    QCOMPARE(chat->at("attempts").get<int>(), 1);  // one answer: the SDK did not retry
    QVERIFY2(chat->at("id").get<std::string>().rfind("sim-", 0) == 0, r.why().constData());
    QVERIFY(chat->at("usage").at("total_tokens").get<int>() > 0);
  }

  // The same completion against a port nothing listens on: the SDK throws, the script says so and fails.
  void unreachableServerFails() {
    // Bound but not listening: connections are refused, and no other process can take the port meanwhile.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    QVERIFY(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    QVERIFY(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    QVERIFY(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    const int closed = ntohs(a.sin_port);
    const auto r = runScript({"all"}, {{"GATEWAY_URL", QString("http://127.0.0.1:%1/v1").arg(closed)},
                                        {"OPENAI_SDK_DIR", kSdkDir}, {"SDK_MAX_RETRIES", "0"}});
    ::close(fd);
    QVERIFY2(r.exitCode == kExitFailed, r.why().constData());
    const auto* chat = r.check("chat");
    QVERIFY2(chat && chat->at("ok") == false && chat->contains("error"), r.why().constData());
  }

  void setupErrorsAreNamed() {
    auto r = runScript({"all"}, {{"OPENAI_SDK_DIR", kSdkDir}});
    QVERIFY2(r.exitCode == kExitSetup, r.why().constData());
    QVERIFY2(r.check("setup") && r.check("setup")->at("error").get<std::string>().find("GATEWAY_URL") !=
                                     std::string::npos, r.why().constData());

    r = runScript({"all"}, {{"GATEWAY_URL", "http://127.0.0.1:1/v1"}, {"OPENAI_SDK_DIR", QDir::tempPath() + "/no-sdk-here"}});
    QVERIFY2(r.exitCode == kExitSetup, r.why().constData());
    QVERIFY2(r.check("setup")->at("error").get<std::string>().find("scripts/setup.sh") != std::string::npos,
             r.why().constData());

    r = runScript({"bogus"}, {{"GATEWAY_URL", "http://127.0.0.1:1/v1"}, {"OPENAI_SDK_DIR", kSdkDir}});
    QVERIFY2(r.exitCode == kExitSetup, r.why().constData());
  }
};

QTEST_GUILESS_MAIN(TestOpenAiSdkSim)
#include "test_openai_sdk_sim.moc"
