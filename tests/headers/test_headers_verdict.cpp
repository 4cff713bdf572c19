#include "quota_verdict.h"
#include "rate_limit_header_parser.h"

#include <QtTest>

#include <cmath>

using namespace tg;

namespace {

constexpr double kNow = 1732889021;  // Fri, 29 Nov 2024 14:03:41 GMT
constexpr double kCap = 120;

QString n(double v) { return QString::number(v, 'g', 12); }

HeaderList headersFrom(const QString& text) {
  HeaderList out;
  for (const QString& line : text.split('\n')) {
    const qsizetype colon = line.indexOf(':');
    if (colon > 0) out.emplace_back(line.left(colon).toStdString(), line.mid(colon + 1).toStdString());
  }
  return out;
}

}  // namespace

class TestQuotaVerdict : public QObject {
  Q_OBJECT

 private slots:
  void verdict_data() {
    QTest::addColumn<QString>("headers");
    QTest::addColumn<int>("status");
    QTest::addColumn<double>("maxWait");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<double>("wait");
    QTest::addColumn<QString>("classification");
    QTest::addColumn<QString>("reason");  // substring

    const QString github0 = "X-RateLimit-Limit: 60\nX-RateLimit-Remaining: 0\nX-RateLimit-Resource: core\n"
                            "X-RateLimit-Reset: " + n(kNow + 90);

    // Responses that are not rate-limited.
    QTest::newRow("200 bare") << "" << 200 << kCap << "ok" << 0.0 << "ok" << "within quota";
    QTest::newRow("200 with room") << "X-RateLimit-Remaining: 5\nX-RateLimit-Reset: 3" << 200 << kCap << "ok" << 0.0
                                   << "ok" << "within quota";
    QTest::newRow("200 last request: pre-emptive throttle")
        << "X-RateLimit-Remaining: 0\nX-RateLimit-Reset: 3.2" << 200 << kCap << "throttled" << 3.2 << "ok"
        << "requests exhausted, reset in 3.2 s";
    QTest::newRow("200 exhausted without a reset") << "X-RateLimit-Remaining: 0" << 200 << kCap << "ok" << 0.0 << "ok"
                                                   << "within quota";
    QTest::newRow("200 ignores Retry-After") << "Retry-After: 30" << 200 << kCap << "ok" << 0.0 << "ok" << "within quota";
    QTest::newRow("304 is ok") << "" << 304 << kCap << "ok" << 0.0 << "ok" << "within quota";
    QTest::newRow("500 error") << "X-RateLimit-Remaining: 3" << 500 << kCap << "ok" << 0.0 << "error"
                               << "HTTP 500, not rate-limited";
    QTest::newRow("-1 remaining is not exhausted") << "X-RateLimit-Remaining: -1\nX-RateLimit-Reset: 9" << 200 << kCap
                                                   << "ok" << 0.0 << "ok" << "within quota";
    QTest::newRow("status unknown") << "" << 0 << kCap << "ok" << 0.0 << "unknown" << "no scope exhausted";

    // 429s.
    QTest::newRow("429 Retry-After") << "Retry-After: 20" << 429 << kCap << "throttled" << 20.0 << "unknown"
                                     << "Retry-After until 14:04:01 UTC";
    QTest::newRow("429 Retry-After 0") << "Retry-After: 0" << 429 << kCap << "throttled" << 0.0 << "unknown"
                                       << "Retry-After until 14:03:41 UTC";
    QTest::newRow("429 ms beats Retry-After") << "Retry-After: 20\nretry-after-ms: 1500" << 429 << kCap << "throttled"
                                              << 1.5 << "unknown" << "retry-after-ms until 14:03:42 UTC";
    QTest::newRow("429 Retry-After beats reset")
        << "Retry-After: 5\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: 50" << 429 << kCap << "throttled" << 5.0
        << "quota_exhausted" << "Retry-After until";
    QTest::newRow("429 exhausted scope's reset")
        << "x-ratelimit-remaining-requests: 499\nx-ratelimit-reset-requests: 120ms\n"
           "x-ratelimit-remaining-tokens: 0\nx-ratelimit-reset-tokens: 1m2.4s"
        << 429 << kCap << "throttled" << 62.4 << "quota_exhausted" << "tokens exhausted, reset in 62 s";
    QTest::newRow("429 burst: earliest reset")
        << "x-ratelimit-remaining-requests: 4\nx-ratelimit-reset-requests: 120ms\n"
           "x-ratelimit-remaining-tokens: 900\nx-ratelimit-reset-tokens: 10s"
        << 429 << kCap << "throttled" << 0.12 << "burst" << "requests resets in 120 ms";
    QTest::newRow("429 reset 17 ms away is not \"0.0 s\"")
        << "x-ratelimit-remaining-requests: 0\nx-ratelimit-reset-requests: 17ms" << 429 << kCap << "throttled"
        << 0.017 << "quota_exhausted" << "requests exhausted, reset in 17 ms";
    QTest::newRow("429 relative reset beats absolute")
        << "RateLimit-Remaining: 0\nRateLimit-Reset: 30\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: " + n(kNow + 50)
        << 429 << kCap << "throttled" << 30.0 << "quota_exhausted" << "requests exhausted, reset in 30 s";
    QTest::newRow("429 absolute reset when it is the only one")
        << "X-RateLimit-Remaining: 0\nX-RateLimit-Reset: " + n(kNow + 50) << 429 << kCap << "throttled" << 50.0
        << "quota_exhausted" << "reset in 50 s";
    QTest::newRow("429 two exhausted scopes: the later reset binds")
        << "x-ratelimit-remaining-requests: 0\nx-ratelimit-reset-requests: 2s\n"
           "x-ratelimit-remaining-tokens: 0\nx-ratelimit-reset-tokens: 7s"
        << 429 << kCap << "throttled" << 7.0 << "quota_exhausted" << "tokens exhausted";
    QTest::newRow("bare 429") << "Content-Type: text/plain" << 429 << kCap << "unknown_429" << 0.0 << "unknown"
                              << "without a wait hint";
    QTest::newRow("429 with garbage remaining") << "X-RateLimit-Remaining: abc" << 429 << kCap << "unknown_429" << 0.0
                                                << "unknown" << "without a wait hint";
    QTest::newRow("429 structured burst policy")
        << "RateLimit-Policy: \"burst\";q=100;w=60, \"daily\";q=1000;w=86400\n"
           "RateLimit: \"burst\";r=0;t=30, \"daily\";r=600;t=35779"
        << 429 << kCap << "throttled" << 30.0 << "quota_exhausted" << "burst exhausted, reset in 30 s";

    // GitHub's 403.
    QTest::newRow("github 403 remaining 0") << github0 << 403 << kCap << "throttled" << 90.0 << "quota_exhausted"
                                            << "core exhausted, reset in 90 s";
    QTest::newRow("github 403 with quota left is an error")
        << "X-RateLimit-Remaining: 12\nX-RateLimit-Resource: core\nX-RateLimit-Reset: " + n(kNow + 90) << 403 << kCap
        << "ok" << 0.0 << "error" << "HTTP 403, not rate-limited";
    // A secondary rate limit: 403 with Retry-After, the primary quota far from spent (GitHub's docs: wait it out).
    QTest::newRow("github 403 secondary limit")
        << "Retry-After: 60\nX-RateLimit-Remaining: 4000\nX-RateLimit-Resource: core\nX-RateLimit-Reset: " +
               n(kNow + 900)
        << 403 << kCap << "throttled" << 60.0 << "burst" << "Retry-After until";
    QTest::newRow("403 without GitHub headers is an error") << "Retry-After: 10" << 403 << kCap << "ok" << 0.0 << "error"
                                                            << "HTTP 403";
    QTest::newRow("github 403 remaining 0 beyond the cap")
        << "X-RateLimit-Remaining: 0\nX-RateLimit-Resource: core\nX-RateLimit-Reset: " + n(kNow + 1500) << 403 << kCap
        << "exhausted" << 1500.0 << "quota_exhausted" << "quota exhausted until 2024-11-29 14:28:41 UTC";

    // 503.
    QTest::newRow("503 with Retry-After") << "Retry-After: 10" << 503 << kCap << "throttled" << 10.0 << "error"
                                          << "Retry-After until 14:03:51 UTC";
    QTest::newRow("503 without Retry-After") << "" << 503 << kCap << "ok" << 0.0 << "error" << "HTTP 503";

    // The cap.
    QTest::newRow("Retry-After beyond the cap") << "Retry-After: 3600" << 429 << kCap << "exhausted" << 3600.0
                                                << "unknown" << "quota exhausted until 2024-11-29 15:03:41 UTC";
    QTest::newRow("Retry-After exactly the cap") << "Retry-After: 120" << 429 << kCap << "throttled" << 120.0
                                                 << "unknown" << "Retry-After until";
    QTest::newRow("pre-emptive wait beyond the cap")
        << "X-RateLimit-Remaining: 0\nX-RateLimit-Reset: 86000" << 200 << kCap << "exhausted" << 86000.0 << "ok"
        << "quota exhausted until 2024-11-30 13:57:01 UTC";
    QTest::newRow("cap 0 turns any wait into exhausted") << "Retry-After: 1" << 429 << 0.0 << "exhausted" << 1.0
                                                         << "unknown" << "quota exhausted until";
    QTest::newRow("NaN cap is treated as 0") << "Retry-After: 1" << 429 << std::nan("") << "exhausted" << 1.0
                                             << "unknown" << "quota exhausted until";
    QTest::newRow("infinite cap") << "Retry-After: 99999" << 429 << HUGE_VAL << "throttled" << 99999.0 << "unknown"
                                  << "Retry-After until";
  }

  void verdict() {
    QFETCH(QString, headers);
    QFETCH(int, status);
    QFETCH(double, maxWait);
    QFETCH(QString, kind);
    QFETCH(double, wait);
    QFETCH(QString, classification);
    QFETCH(QString, reason);

    const QuotaReading r = RateLimitHeaderParser::parse(headersFrom(headers), kNow);
    const QuotaVerdict v = decideVerdict(r, status, kNow, maxWait);
    QCOMPARE(QString::fromStdString(std::string(verdictKindName(v.kind))), kind);
    QCOMPARE(v.waitS, wait);
    QCOMPARE(QString::fromStdString(std::string(verdictClassName(v.classification))), classification);
    QVERIFY2(QString::fromStdString(v.reason).contains(reason), v.reason.c_str());
    if (v.kind == QuotaVerdict::Kind::Throttled || v.kind == QuotaVerdict::Kind::Exhausted)
      QCOMPARE(v.untilEpochS, kNow + wait);
    else
      QVERIFY2(std::isnan(v.untilEpochS), qPrintable(n(v.untilEpochS)));
  }

  // The engine may build readings by hand; a scope flagged absolute loses to a delta even when listed first.
  void handBuiltReadingPrefersDelta() {
    QuotaReading r;
    QuotaScope absolute;
    absolute.name = "a";
    absolute.remaining = 0;
    absolute.resetInS = 10;
    absolute.resetFromAbsoluteTime = true;
    QuotaScope delta = absolute;
    delta.name = "d";
    delta.resetInS = 40;
    delta.resetFromAbsoluteTime = false;
    r.scopes = {absolute, delta};
    const QuotaVerdict v = decideVerdict(r, 429, kNow, kCap);
    QCOMPARE(v.waitS, 40.0);
    QCOMPARE(QString::fromStdString(v.reason), QString("d exhausted, reset in 40 s"));
  }
};

QTEST_APPLESS_MAIN(TestQuotaVerdict)
#include "test_headers_verdict.moc"
