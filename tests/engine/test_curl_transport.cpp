// The one mapping from a transfer's CURLcode and HTTP status to the engine's error kinds.
#include "curl_transport.h"

#include <QtTest>

using namespace tg;

Q_DECLARE_METATYPE(CURLcode)
Q_DECLARE_METATYPE(tg::ErrorKind)

class TestCurlTransport : public QObject {
  Q_OBJECT
 private slots:
  void classifyTransfer_data() {
    QTest::addColumn<CURLcode>("rc");
    QTest::addColumn<int>("status");
    QTest::addColumn<ErrorKind>("kind");
    QTest::addColumn<bool>("permanent");

    QTest::newRow("200") << CURLE_OK << 200 << ErrorKind::None << false;
    QTest::newRow("304") << CURLE_OK << 304 << ErrorKind::None << false;
    QTest::newRow("404") << CURLE_OK << 404 << ErrorKind::Http << false;
    QTest::newRow("429") << CURLE_OK << 429 << ErrorKind::RateLimited << false;
    QTest::newRow("503") << CURLE_OK << 503 << ErrorKind::Http << false;
    QTest::newRow("timeout") << CURLE_OPERATION_TIMEDOUT << 0 << ErrorKind::Timeout << false;
    QTest::newRow("refused") << CURLE_COULDNT_CONNECT << 0 << ErrorKind::Network << false;
    QTest::newRow("dns") << CURLE_COULDNT_RESOLVE_HOST << 0 << ErrorKind::Network << false;
    QTest::newRow("reset") << CURLE_RECV_ERROR << 0 << ErrorKind::Network << false;
    QTest::newRow("empty reply") << CURLE_GOT_NOTHING << 0 << ErrorKind::Network << false;
    QTest::newRow("malformed url") << CURLE_URL_MALFORMAT << 0 << ErrorKind::Config << true;
    QTest::newRow("protocol") << CURLE_UNSUPPORTED_PROTOCOL << 0 << ErrorKind::Config << true;
    QTest::newRow("not built in") << CURLE_NOT_BUILT_IN << 0 << ErrorKind::Config << true;
    QTest::newRow("bad argument") << CURLE_BAD_FUNCTION_ARGUMENT << 0 << ErrorKind::Config << true;
    QTest::newRow("unknown option") << CURLE_UNKNOWN_OPTION << 0 << ErrorKind::Config << true;
    QTest::newRow("too large") << CURLE_FILESIZE_EXCEEDED << 200 << ErrorKind::Http << true;
    QTest::newRow("header line too large") << CURLE_OUT_OF_MEMORY << 0 << ErrorKind::Http << true;
    QTest::newRow("unknown content encoding") << CURLE_BAD_CONTENT_ENCODING << 200 << ErrorKind::Http << true;
    // An untrusted certificate: a network error (502 at the gateway), but the same on every retry.
    QTest::newRow("untrusted certificate") << CURLE_PEER_FAILED_VERIFICATION << 0 << ErrorKind::Network << true;
    QTest::newRow("CA file unreadable") << CURLE_SSL_CACERT_BADFILE << 0 << ErrorKind::Network << true;
    QTest::newRow("TLS handshake broke") << CURLE_SSL_CONNECT_ERROR << 0 << ErrorKind::Network << false;
    QTest::newRow("status ignored on failure") << CURLE_OPERATION_TIMEDOUT << 200 << ErrorKind::Timeout << false;
  }

  void classifyTransfer() {
    QFETCH(CURLcode, rc);
    QFETCH(int, status);
    QFETCH(ErrorKind, kind);
    QFETCH(bool, permanent);
    const TransferOutcome o = tg::classifyTransfer(rc, status);
    QCOMPARE(std::string(errorKindName(o.kind)), std::string(errorKindName(kind)));
    QCOMPARE(o.permanent, permanent);
  }

  // A send that cannot be set up fails with a typed error and leaves nothing in flight.
  void failedSetupLeavesNothingInFlight() {
    CurlTransport t(TransportOptions{});
    Dispatch d;
    d.ticket = 1;
    d.method = "GET";
    d.url = "http://127.0.0.1:9/" + std::string(9'000'000, 'a');  // over libcurl's input limit
    auto err = t.start(d);
    QVERIFY(err);
    QCOMPARE(err->kind, ErrorKind::Config);
    QVERIFY2(err->message.find("curl_easy_setopt(CURLOPT_URL)") == 0, err->message.c_str());
    QCOMPARE(t.inFlight(), std::size_t{0});
    d.url = "http://127.0.0.1:9/";
    d.headerLines = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"Expect:"});
    QVERIFY(!t.start(d));
    QCOMPARE(t.inFlight(), std::size_t{1});
    QCOMPARE(t.abortAll(), std::vector<Ticket>{1});
    QCOMPARE(t.inFlight(), std::size_t{0});
  }
};

QTEST_GUILESS_MAIN(TestCurlTransport)
#include "test_curl_transport.moc"
