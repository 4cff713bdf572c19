// The tollgate executable given hostile input: numbers that are not numbers, configs nested millions deep or
// holding 2^64-1, header bytes that are not UTF-8, a history file with garbage in its meta table. Each is a
// usage/config error naming the argument, file or key (exit 2), or a clean result; never an abort (134).
#include "cli_process.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace tgtest;

namespace {
constexpr int kExitUsage = 2;
}  // namespace

class TestCliHostile : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY2(!bin().isEmpty(), "TOLLGATE_BIN is not set"); }

  void commandLineNumbersAreWholeAndFinite_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("duration nan") << QStringList{"run", "--headless", "--duration", "nan"} << "--duration";
    QTest::newRow("duration inf") << QStringList{"run", "--headless", "--duration", "inf"} << "--duration";
    QTest::newRow("duration -5") << QStringList{"run", "--headless", "--duration", "-5"} << "--duration";
    QTest::newRow("duration 1e400") << QStringList{"run", "--headless", "--duration", "1e400"} << "--duration";
    QTest::newRow("duration 5s") << QStringList{"run", "--headless", "--duration", "5s"} << "--duration";
    QTest::newRow("duration blank") << QStringList{"run", "--headless", "--duration", " 5"} << "--duration";
    QTest::newRow("rates 4abc") << QStringList{"probe", "--group", "g", "--rates", "4abc"} << "\"4abc\"";
    QTest::newRow("rates 2^31") << QStringList{"probe", "--group", "g", "--rates", "1,2147483648"} << "--rates";
    QTest::newRow("rates empty item") << QStringList{"probe", "--group", "g", "--rates", "1,,2"} << "--rates";
    QTest::newRow("rates leading blank") << QStringList{"probe", "--group", "g", "--rates", " 5,10"} << "\" 5\"";
    QTest::newRow("rates hex") << QStringList{"probe", "--group", "g", "--rates", "5,0x10"} << "\"0x10\"";
    QTest::newRow("rates nan") << QStringList{"probe", "--group", "g", "--rates", "nan"} << "--rates";
    QTest::newRow("rates falling") << QStringList{"probe", "--group", "g", "--rates", "10,5"} << "higher";
    QTest::newRow("method with CRLF") << QStringList{"probe", "--group", "g", "--method", "GET\r\nX: 1"} << "method";
    QTest::newRow("stop-429 2") << QStringList{"probe", "--group", "g", "--stop-429", "2"} << "--stop-429";
    QTest::newRow("max-per-step 0") << QStringList{"probe", "--group", "g", "--max-per-step", "0"} << "--max-per-step";
    QTest::newRow("step-s nan") << QStringList{"probe", "--group", "g", "--step-s", "nan"} << "--step-s";
    QTest::newRow("step-s 1e-300") << QStringList{"probe", "--group", "g", "--step-s", "1e-300"} << "--step-s";
    QTest::newRow("rates 1e-300") << QStringList{"probe", "--group", "g", "--rates", "1e-300"}
                                  << "--rates: 1e-300/s offers no request in a step of 5 s";
    QTest::newRow("rate under a step") << QStringList{"probe", "--group", "g", "--rates", "1,2", "--step-s", "0.5"}
                                       << "--rates: 1/s offers no request in a step of 0.5 s";
    QTest::newRow("body not JSON") << QStringList{"probe", "--group", "g", "--body", "{not json"}
                                   << "--body: the body is sent as application/json but is not JSON";
    QTest::newRow("body with GET") << QStringList{"probe", "--group", "g", "--method", "GET", "--body", "{}"}
                                   << "--body: a GET request sends no body";
    QTest::newRow("max-rps nan") << QStringList{"run", "--headless", "--max-rps", "nan"} << "--max-rps";
    QTest::newRow("max-rps group=-1") << QStringList{"run", "--headless", "--max-rps", "batch=-1"} << "\"batch=-1\"";
    QTest::newRow("max-tpm 5k") << QStringList{"run", "--headless", "--max-tpm", "5k"} << "--max-tpm";
    QTest::newRow("max-rps unknown group") << QStringList{"run", "--headless", "--max-rps", "nope=5"}
                                           << "--max-rps: no group \"nope\"";
  }
  void commandLineNumbersAreWholeAndFinite() {
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    QByteArray err;
    QCOMPARE(runTollgate(args, nullptr, &err), kExitUsage);
    QVERIFY2(err.contains(mentions.toUtf8()), err.constData());
  }

  void configsNamingTheirProblem_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("mentions");
    const std::string group = R"({"name":"g","base_url":"sim","keys":[{"name":"k"}]})";
    QTest::newRow("2^64-1") << QByteArray::fromStdString(R"({"global_concurrency": 18446744073709551615, "groups": [)" +
                                                         group + "]}")
                            << "/global_concurrency: expected an integer in [1, 100000], got 18446744073709551615";
    QTest::newRow("deep simulator") << QByteArray::fromStdString(R"({"groups": [)" + group + R"(], "simulator": )" +
                                                                 std::string(4000000, '[') + std::string(4000000, ']') + "}")
                                    << "nested deeper than 256 levels";
    QTest::newRow("1e400") << QByteArray(R"({"request_timeout_s": 1e400, "groups": []})") << "1e400";
    QTest::newRow("rate ceiling -1") << QByteArray::fromStdString(
                                            R"({"rate_ceiling": {"requests_per_s": -1}, "groups": [)" + group + "]}")
                                     << "/rate_ceiling/requests_per_s";
    QTest::newRow("group rate ceiling typo")
        << QByteArray(R"({"groups": [{"name":"g","base_url":"sim","keys":[{"name":"k"}],"rate_ceiling":{"rps":5}}]})")
        << "/groups/0/rate_ceiling/rps";
    QTest::newRow("rate ceiling not an object")
        << QByteArray::fromStdString(R"({"rate_ceiling": 10, "groups": [)" + group + "]}") << "/rate_ceiling";
    QTest::newRow("bytes in a key") << QByteArray("{\"na\xFF\xFEme\": 1, \"groups\": []}") << "invalid JSON";
    const std::string twice = group.substr(0, group.size() - 1) + R"(,"base_url":"http://127.0.0.1:9/x"})";
    // Names reach log lines, group headers and the fleet's tab-separated messages; secrets go out as one line.
    QTest::newRow("group name with ESC and CR")
        << QByteArray("{\"groups\": [{\"name\":\"g\\u001b[31m\\rFORGED\",\"base_url\":\"sim\",\"keys\":[{\"name\":\"k\"}]}]}")
        << "/groups/0/name: expected a group name without control characters";
    QTest::newRow("key name with a tab")
        << QByteArray("{\"groups\": [{\"name\":\"g\",\"base_url\":\"sim\",\"keys\":[{\"name\":\"k\\tx\"}]}]}")
        << "/groups/0/keys/0/name: expected a key name without control characters";
    QTest::newRow("base_url without a host")
        << QByteArray("{\"groups\": [{\"name\":\"g\",\"base_url\":\"https://\",\"keys\":[{\"name\":\"k\"}]}]}")
        << "/groups/0/base_url: expected an http:// or https:// URL with a host";
    QTest::newRow("key from a file with Windows line ends")
        << QByteArray("{\"groups\": [{\"name\":\"g\",\"base_url\":\"http://127.0.0.1:9\",\"keys\":[{\"name\":\"k\","
                      "\"env\":\"TG_TEST_CR_KEY\"}]}]}")
        << "/groups/0/keys/0/env: environment variable TG_TEST_CR_KEY holds a control character";
    QTest::newRow("group header the name cannot fill")
        << QByteArray("{\"group_header\":\"X Bad\",\"groups\": [{\"name\":\"g\",\"base_url\":\"http://127.0.0.1:9\"}]}")
        << "/groups/0: group_header header name \"X\" is followed by a character an HTTP token cannot hold (byte 2";
    QTest::newRow("a key named twice") << QByteArray::fromStdString(R"({"groups": [)" + twice + "]}")
                                       << "invalid JSON: duplicate key at /groups/0/base_url";
  }
  void configsNamingTheirProblem() {
    QFETCH(QByteArray, text);
    QFETCH(QString, mentions);
    qputenv("TG_TEST_CR_KEY", "sk-test-from-a-windows-file-0123\r");
    QTemporaryDir dir;
    const QString cfg = dir.filePath("c.json");
    writeFile(cfg, text.toStdString());
    QByteArray err;
    QCOMPARE(runTollgate({"run", "--headless", "--config", cfg, "--history", "off", "--duration", "1"}, nullptr, &err),
             kExitUsage);
    QVERIFY2(err.contains(mentions.toUtf8()), err.left(400).constData());
    QVERIFY2(err.contains(cfg.toUtf8()), err.left(400).constData());
    QVERIFY(!err.contains("sk-test-from-a-windows-file"));  // a secret is named by its variable, never shown
  }

  void headersWithBytesThatAreNotUtf8() {
    QByteArray out, err;
    QCOMPARE(runTollgate({"headers"}, &out, &err, QByteArray("HTTP/1.1 429 X\r\nRetry-After: \xFF\r\n")), 0);
    const auto j = nlohmann::json::parse(out.toStdString());
    QCOMPARE(j["status"].get<int>(), 429);
  }
};

QTEST_GUILESS_MAIN(TestCliHostile)
#include "test_cli_hostile.moc"
