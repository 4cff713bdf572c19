#include "rate_limit_header_parser.h"

#include <QtTest>

#include <cmath>
#include <random>

using namespace tg;

namespace {

constexpr double kNow = 1732889021;  // Fri, 29 Nov 2024 14:03:41 GMT

QString n(double v) { return QString::number(v, 'g', 12); }

// "Name: value" per line; a line without ':' becomes a header with that name and an empty value.
HeaderList headersFrom(const QString& text) {
  HeaderList out;
  for (const QString& line : text.split('\n')) {
    if (line.isEmpty()) continue;
    const qsizetype colon = line.indexOf(':');
    if (colon < 0) out.emplace_back(line.toStdString(), "");
    else out.emplace_back(line.left(colon).toStdString(), line.mid(colon + 1).toStdString());
  }
  return out;
}

// One line summarising a reading, so a failing row prints everything that differs.
// Scope: name[dimension,dialect] L=limit R=remaining T=reset-in (T@= when from an absolute time) W=window.
QString describe(const QuotaReading& r) {
  QStringList parts;
  for (const auto& s : r.scopes) {
    QString p = QString("%1[%2,%3]")
                    .arg(QString::fromStdString(s.name), QString::fromStdString(std::string(dimensionName(s.dimension))),
                         QString::fromStdString(s.dialect));
    if (known(s.limit)) p += " L=" + n(s.limit);
    if (known(s.remaining)) p += " R=" + n(s.remaining);
    if (s.resetInS) p += (s.resetFromAbsoluteTime ? " T@=" : " T=") + n(*s.resetInS);
    if (s.windowS) p += " W=" + n(*s.windowS);
    parts << p;
  }
  if (r.retryAfterS) parts << QString("retry=%1(%2)").arg(n(*r.retryAfterS), QString::fromStdString(r.retryAfterHeader));
  if (r.serverDateEpochS) parts << "date=" + n(*r.serverDateEpochS);
  if (r.group) parts << "group=" + QString::fromStdString(*r.group);
  if (r.githubResource) parts << "gh=" + QString::fromStdString(*r.githubResource);
  if (!r.warnings.empty()) parts << QString("warn=%1").arg(r.warnings.size());
  return parts.join(" | ");
}

QString allWarnings(const QuotaReading& r) {
  QStringList w;
  for (const auto& s : r.warnings) w << QString::fromStdString(s);
  return w.join("\n");
}

}  // namespace

class TestHeaderParser : public QObject {
  Q_OBJECT

 private slots:
  void parse_data() {
    QTest::addColumn<QString>("headers");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<QString>("warning");  // a substring of one warning, empty = expect none

    const QString date = "Date: Fri, 29 Nov 2024 14:03:41 GMT\n";
    const QString dateN = "date=" + n(kNow);

    // --- X-RateLimit-* ---
    QTest::newRow("x delta reset") << "X-RateLimit-Limit: 100\nX-RateLimit-Remaining: 50\nX-RateLimit-Reset: 30"
                                   << "requests[requests,x-ratelimit] L=100 R=50 T=30" << "";
    QTest::newRow("x epoch seconds reset") << "X-RateLimit-Remaining: 0\nX-RateLimit-Reset: " + n(kNow + 45)
                                           << "requests[requests,x-ratelimit] R=0 T@=45" << "";
    QTest::newRow("x epoch ms reset") << "X-RateLimit-Reset: " + n((kNow + 45.5) * 1000)
                                      << "requests[requests,x-ratelimit] T@=45.5" << "";
    QTest::newRow("x reset in the past is 0") << "X-RateLimit-Reset: " + n(kNow - 100)
                                              << "requests[requests,x-ratelimit] T@=0" << "";
    QTest::newRow("x epoch ms in the past is 0") << "X-RateLimit-Reset: " + n((kNow - 100) * 1000)
                                                 << "requests[requests,x-ratelimit] T@=0" << "";
    QTest::newRow("x fractional delta") << "X-RateLimit-Reset: 0.75" << "requests[requests,x-ratelimit] T=0.75" << "";
    QTest::newRow("x zero delta") << "X-RateLimit-Reset: 0" << "requests[requests,x-ratelimit] T=0" << "";
    QTest::newRow("x reset against a skewed Date")  // server clock an hour behind ours: trust the server's
        << "Date: Fri, 29 Nov 2024 13:03:41 GMT\nX-RateLimit-Reset: " + n(kNow - 3600 + 10)
        << "requests[requests,x-ratelimit] T@=10 | date=" + n(kNow - 3600) << "";
    QTest::newRow("x reset against a Date ahead") << "Date: Fri, 29 Nov 2024 15:03:41 GMT\nX-RateLimit-Reset: " +
                                                         n(kNow + 1800)
                                                  << "requests[requests,x-ratelimit] T@=0 | date=" + n(kNow + 3600)
                                                  << "";
    QTest::newRow("x reset as HTTP-date") << date + "X-RateLimit-Reset: Fri, 29 Nov 2024 14:04:41 GMT"
                                          << "requests[requests,x-ratelimit] T@=60 | " + dateN << "";
    QTest::newRow("x reset as RFC 3339") << "X-RateLimit-Reset: 2024-11-29T14:04:11Z"
                                         << "requests[requests,x-ratelimit] T@=30" << "";
    QTest::newRow("x reset as a Go duration") << "X-RateLimit-Remaining: 0\nX-RateLimit-Reset: 6m0s"
                                              << "requests[requests,x-ratelimit] R=0 T=360" << "";
    QTest::newRow("x reset in milliseconds") << "X-RateLimit-Reset: 250ms" << "requests[requests,x-ratelimit] T=0.25"
                                             << "";
    QTest::newRow("mixed-case names, padded values")
        << "x-RATELIMIT-limit:\t 10 \t\nX-Ratelimit-Remaining:     7   \n  X-RateLimit-Reset  : 5"
        << "requests[requests,x-ratelimit] L=10 R=7 T=5" << "";
    QTest::newRow("garbage remaining stays unknown") << "X-RateLimit-Limit: 100\nX-RateLimit-Remaining: abc"
                                                     << "requests[requests,x-ratelimit] L=100 | warn=1"
                                                     << "X-RateLimit-Remaining: 'abc' is not a number";
    QTest::newRow("-1 remaining is not exhausted") << "X-RateLimit-Remaining: -1"
                                                   << "requests[requests,x-ratelimit] | warn=1"
                                                   << "X-RateLimit-Remaining: '-1' is negative";
    QTest::newRow("empty remaining") << "X-RateLimit-Remaining:" << "requests[requests,x-ratelimit] | warn=1"
                                     << "X-RateLimit-Remaining: '' is not a number";
    QTest::newRow("inf remaining") << "X-RateLimit-Remaining: inf" << "requests[requests,x-ratelimit] | warn=1"
                                   << "'inf' is not a number";
    QTest::newRow("NaN limit") << "X-RateLimit-Limit: NaN" << "requests[requests,x-ratelimit] | warn=1"
                               << "X-RateLimit-Limit: 'NaN' is not a number";
    // Beyond any real quota, and beyond what converts to a 64-bit count: malformed, not a limit.
    QTest::newRow("huge limit is out of range") << "X-RateLimit-Limit: 99999999999999999999"
                                                << "requests[requests,x-ratelimit] | warn=1"
                                                << "X-RateLimit-Limit: '99999999999999999999' is out of range";
    QTest::newRow("1e19 limit is out of range") << "X-RateLimit-Limit: 1e19\nX-RateLimit-Remaining: 5"
                                                << "requests[requests,x-ratelimit] R=5 | warn=1"
                                                << "X-RateLimit-Limit: '1e19' is out of range";
    QTest::newRow("largest plausible count") << "X-RateLimit-Remaining: 1000000000000000"
                                             << "requests[requests,x-ratelimit] R=1e+15" << "";
    QTest::newRow("openai huge remaining") << "x-ratelimit-limit-requests: 100\nx-ratelimit-remaining-requests: 1e300"
                                           << "requests[requests,openai] L=100 | warn=1"
                                           << "'1e300' is out of range";
    QTest::newRow("structured huge quota") << "RateLimit-Policy: \"d\";q=1e19;w=10"
                                           << "warn=1" << "is malformed (q=1e19 is not an integer); ignored";
    QTest::newRow("structured quota beyond plausible") << "RateLimit-Policy: \"d\";q=9999999999999999;w=10"
                                                       << "warn=1" << "is malformed (q=9999999999999999";
    QTest::newRow("overflowing limit") << "X-RateLimit-Limit: 1e999" << "requests[requests,x-ratelimit] | warn=1"
                                       << "X-RateLimit-Limit: '1e999' is not a number";
    QTest::newRow("negative reset") << "X-RateLimit-Reset: -5" << "requests[requests,x-ratelimit] | warn=1"
                                    << "X-RateLimit-Reset: '-5' is negative";
    QTest::newRow("garbage reset") << "X-RateLimit-Reset: later" << "requests[requests,x-ratelimit] | warn=1"
                                   << "X-RateLimit-Reset: 'later' is not a reset time";
    QTest::newRow("delta of decades is implausible") << "X-RateLimit-Reset: 900000000"
                                                     << "requests[requests,x-ratelimit] | warn=1"
                                                     << "X-RateLimit-Reset: '900000000' is implausibly far";
    QTest::newRow("epoch ms far in the future is implausible") << "X-RateLimit-Reset: 99999999999999999"
                                                               << "requests[requests,x-ratelimit] | warn=1"
                                                               << "implausibly far";
    QTest::newRow("used gives remaining") << "X-RateLimit-Limit: 60\nX-RateLimit-Used: 60"
                                          << "requests[requests,x-ratelimit] L=60 R=0" << "";
    QTest::newRow("remaining beats used") << "X-RateLimit-Limit: 60\nX-RateLimit-Used: 60\nX-RateLimit-Remaining: 3"
                                          << "requests[requests,x-ratelimit] L=60 R=3" << "";
    QTest::newRow("garbage used") << "X-RateLimit-Limit: 60\nX-RateLimit-Used: lots"
                                  << "requests[requests,x-ratelimit] L=60 | warn=1" << "X-RateLimit-Used: 'lots'";
    QTest::newRow("group") << "X-RateLimit-Group: search\nX-RateLimit-Remaining: 5"
                           << "requests[requests,x-ratelimit] R=5 | group=search" << "";
    QTest::newRow("group alone makes no scope") << "x-ratelimit-group:  chat " << "group=chat" << "";
    QTest::newRow("repeated remaining: the lowest")
        << "X-RateLimit-Remaining: 5\nx-ratelimit-remaining: 0"
        << "requests[requests,x-ratelimit] R=0 | warn=1"
        << "x-ratelimit-remaining: '0' repeats X-RateLimit-Remaining with a different value; using the more "
           "conservative, '0'";
    QTest::newRow("repeated remaining: lower first stays") << "X-RateLimit-Remaining: 3\nX-RateLimit-Remaining: 9"
                                                           << "requests[requests,x-ratelimit] R=3 | warn=1"
                                                           << "using the more conservative, '3'";
    QTest::newRow("repeated openai remaining, two spellings")
        << "x-ratelimit-remaining-requests: 59\nX-RateLimit-Remaining-Requests: 58\nx-ratelimit-limit-requests: 60"
        << "requests[requests,openai] L=60 R=58 | warn=1" << "using the more conservative, '58'";
    QTest::newRow("repeated reset: the latest") << "X-RateLimit-Reset: 10\nX-RateLimit-Reset: 30\nX-RateLimit-Reset: 20"
                                                << "requests[requests,x-ratelimit] T=30 | warn=2" << "'30'";
    QTest::newRow("repeated reset, delta against epoch") << "X-RateLimit-Reset: 50\nX-RateLimit-Reset: " + n(kNow + 45)
                                                         << "requests[requests,x-ratelimit] T=50 | warn=1" << "'50'";
    QTest::newRow("repeated go-duration reset") << "x-ratelimit-reset-tokens: 6s\nx-ratelimit-reset-tokens: 1m0s"
                                                << "tokens[tokens,openai] T=60 | warn=1" << "'1m0s'";
    QTest::newRow("repeated Retry-After: the later") << "Retry-After: 1\nRetry-After: 4"
                                                     << "retry=4(Retry-After) | warn=1" << "'4'";
    QTest::newRow("repeated used: the higher") << "X-RateLimit-Limit: 60\nX-RateLimit-Used: 10\nX-RateLimit-Used: 12"
                                               << "requests[requests,x-ratelimit] L=60 R=48 | warn=1" << "'12'";
    QTest::newRow("repeated garbage never replaces a number")
        << "X-RateLimit-Remaining: 5\nX-RateLimit-Remaining: none"
        << "requests[requests,x-ratelimit] R=5 | warn=1" << "using the readable one, '5'";
    // A repeat its reader would refuse (out of range, a form that field does not take) never replaces a good
    // value: the good reading would go with it (a 429 with remaining 0 lost its reset and became "unknown").
    QTest::newRow("repeated reset: an absurd epoch never replaces a good one")
        << "x-rate-limit-remaining: 0\nx-rate-limit-reset: " + n(kNow + 60) +
               "\nX-Rate-Limit-Reset: 99999999999999999999"
        << "requests[requests,x-rate-limit] R=0 T@=60 | warn=1"
        << "X-Rate-Limit-Reset: '99999999999999999999' repeats x-rate-limit-reset with a different value; using the "
           "readable one, '" + n(kNow + 60) + "'";
    QTest::newRow("repeated reset: a word where an epoch is read")
        << "x-rate-limit-reset: " + n(kNow + 60) + "\nX-Rate-Limit-Reset: soon"
        << "requests[requests,x-rate-limit] T@=60 | warn=1" << "using the readable one";
    QTest::newRow("repeated reset: a duration later than the epoch")
        << "x-rate-limit-reset: " + n(kNow + 60) + "\nX-Rate-Limit-Reset: 1h"
        << "requests[requests,x-rate-limit] T=3600 | warn=1" << "using the more conservative, '1h'";
    QTest::newRow("repeated reset: a date past plausibility")
        << "X-RateLimit-Reset: 30\nX-RateLimit-Reset: 2999-01-01T00:00:00Z"
        << "requests[requests,x-ratelimit] T=30 | warn=1" << "using the readable one, '30'";
    QTest::newRow("repeated Retry-After: an absurd wait never replaces a good one")
        << "Retry-After: 5\nRetry-After: 99999999999" << "retry=5(Retry-After) | warn=1"
        << "using the readable one, '5'";
    QTest::newRow("repeated used: out of range never replaces a count")
        << "X-RateLimit-Limit: 60\nX-RateLimit-Used: 10\nX-RateLimit-Used: 1e300"
        << "requests[requests,x-ratelimit] L=60 R=50 | warn=1" << "using the readable one, '10'";
    QTest::newRow("repeated non-quota field keeps the first") << "X-RateLimit-Resource: core\nX-RateLimit-Resource: search"
                                                              << "core[requests,github] | gh=core | warn=1"
                                                              << "using the first, 'core'";
    QTest::newRow("identical repeat is fine") << "X-RateLimit-Remaining: 5\nX-RateLimit-Remaining: 5"
                                              << "requests[requests,x-ratelimit] R=5" << "";

    // --- X (Twitter) API v2 ---
    QTest::newRow("x api epoch reset") << "x-rate-limit-limit: 900\nx-rate-limit-remaining: 899\nx-rate-limit-reset: " +
                                              n(kNow + 600)
                                       << "requests[requests,x-rate-limit] L=900 R=899 T@=600" << "";
    QTest::newRow("x api exhausted") << "X-Rate-Limit-Remaining: 0\nX-Rate-Limit-Reset: " + n(kNow + 30)
                                     << "requests[requests,x-rate-limit] R=0 T@=30" << "";
    QTest::newRow("x api garbage remaining") << "x-rate-limit-limit: 50\nx-rate-limit-remaining: many"
                                             << "requests[requests,x-rate-limit] L=50 | warn=1"
                                             << "x-rate-limit-remaining: 'many' is not a number";

    // --- Retry-After and the ms forms ---
    QTest::newRow("Retry-After seconds") << "Retry-After: 20" << "retry=20(Retry-After)" << "";
    QTest::newRow("Retry-After IMF-fixdate") << date + "Retry-After: Fri, 29 Nov 2024 14:05:11 GMT"
                                             << "retry=90(Retry-After) | " + dateN << "";
    QTest::newRow("Retry-After RFC 850") << date + "Retry-After: Friday, 29-Nov-24 14:05:11 GMT"
                                         << "retry=90(Retry-After) | " + dateN << "";
    QTest::newRow("Retry-After asctime") << "Date: Sun, 06 Nov 1994 08:48:37 GMT\nRetry-After: Sun Nov  6 08:49:37 1994"
                                         << "retry=60(Retry-After) | date=784111717" << "";
    QTest::newRow("Retry-After date without Date uses now") << "Retry-After: Fri, 29 Nov 2024 14:04:01 GMT"
                                                            << "retry=20(Retry-After)" << "";
    QTest::newRow("Retry-After date measured on server clock")
        << "Date: Fri, 29 Nov 2024 14:00:00 GMT\nRetry-After: Fri, 29 Nov 2024 14:00:30 GMT"
        << "retry=30(Retry-After) | date=" + n(kNow - 221) << "";
    QTest::newRow("Retry-After date in the past is 0") << date + "Retry-After: Fri, 29 Nov 2024 14:00:00 GMT"
                                                       << "retry=0(Retry-After) | " + dateN << "";
    QTest::newRow("Retry-After invalid date") << "Retry-After: Sat, 31 Feb 2024 00:00:00 GMT" << "warn=1"
                                              << "Retry-After: 'Sat, 31 Feb 2024 00:00:00 GMT' is neither";
    QTest::newRow("Retry-After garbage") << "Retry-After: soon" << "warn=1" << "Retry-After: 'soon'";
    QTest::newRow("Retry-After negative") << "Retry-After: -5" << "warn=1" << "Retry-After: '-5' is negative";
    QTest::newRow("Retry-After fractional tolerated") << "retry-after: 1.5" << "retry=1.5(Retry-After)" << "";
    QTest::newRow("Retry-After absurd") << "Retry-After: 99999999999" << "warn=1" << "implausibly far";
    QTest::newRow("retry-after-ms beats Retry-After") << "Retry-After: 2\nretry-after-ms: 1500"
                                                      << "retry=1.5(retry-after-ms)" << "";
    QTest::newRow("x-ms-retry-after-ms fractional") << "Retry-After: 1\nx-ms-retry-after-ms: 250.5"
                                                    << "retry=0.2505(x-ms-retry-after-ms)" << "";
    QTest::newRow("both ms forms: retry-after-ms first") << "x-ms-retry-after-ms: 900\nRetry-After-Ms: 1200"
                                                         << "retry=1.2(retry-after-ms)" << "";
    QTest::newRow("garbage ms falls back to Retry-After") << "retry-after-ms: fast\nRetry-After: 3"
                                                          << "retry=3(Retry-After) | warn=1"
                                                          << "retry-after-ms: 'fast' is not a number of milliseconds";
    QTest::newRow("negative ms") << "x-ms-retry-after-ms: -1" << "warn=1" << "x-ms-retry-after-ms: '-1' is negative";
    QTest::newRow("invalid Date") << "Date: yesterday\nRetry-After: 5" << "retry=5(Retry-After) | warn=1"
                                  << "Date: 'yesterday' is not an HTTP-date";

    // --- OpenAI / Azure / Kimi ---
    QTest::newRow("openai")
        << "x-ratelimit-limit-requests: 500\nx-ratelimit-limit-tokens: 30000\nx-ratelimit-remaining-requests: 499\n"
           "x-ratelimit-remaining-tokens: 29000\nx-ratelimit-reset-requests: 120ms\nx-ratelimit-reset-tokens: 6m0s"
        << "requests[requests,openai] L=500 R=499 T=0.12 | tokens[tokens,openai] L=30000 R=29000 T=360" << "";
    QTest::newRow("openai 2m52.8s and 1h2m3s")
        << "x-ratelimit-reset-requests: 2m52.8s\nx-ratelimit-reset-tokens: 1h2m3s"
        << "requests[requests,openai] T=172.8 | tokens[tokens,openai] T=3723" << "";
    QTest::newRow("openai 1h, 500ms") << "x-ratelimit-reset-requests: 1h\nx-ratelimit-reset-tokens: 500ms"
                                      << "requests[requests,openai] T=3600 | tokens[tokens,openai] T=0.5" << "";
    QTest::newRow("openai 1.5s, 0s") << "x-ratelimit-reset-requests: 1.5s\nx-ratelimit-reset-tokens: 0s"
                                     << "requests[requests,openai] T=1.5 | tokens[tokens,openai] T=0" << "";
    QTest::newRow("openai plain seconds") << "X-RateLimit-Reset-Tokens: 12" << "tokens[tokens,openai] T=12" << "";
    QTest::newRow("openai bad duration") << "x-ratelimit-reset-tokens: 5x\nx-ratelimit-remaining-tokens: 10"
                                         << "tokens[tokens,openai] R=10 | warn=1"
                                         << "x-ratelimit-reset-tokens: '5x' is not a duration";
    QTest::newRow("openai negative duration") << "x-ratelimit-reset-requests: -1s" << "requests[requests,openai] | warn=1"
                                              << "'-1s' is not a duration";
    QTest::newRow("openai -1 remaining tokens") << "x-ratelimit-remaining-tokens: -1\nx-ratelimit-limit-tokens: 1000"
                                                << "tokens[tokens,openai] L=1000 | warn=1" << "'-1' is negative";

    // --- Anthropic ---
    QTest::newRow("anthropic all scopes")
        << date +
               "anthropic-ratelimit-requests-limit: 50\nanthropic-ratelimit-requests-remaining: 49\n"
               "anthropic-ratelimit-requests-reset: 2024-11-29T14:03:42Z\n"
               "anthropic-ratelimit-tokens-limit: 80000\nanthropic-ratelimit-tokens-remaining: 0\n"
               "anthropic-ratelimit-tokens-reset: 2024-11-29T14:03:47.500Z\n"
               "anthropic-ratelimit-input-tokens-limit: 40000\nanthropic-ratelimit-input-tokens-remaining: 36000\n"
               "anthropic-ratelimit-input-tokens-reset: 2024-11-29T15:03:45+01:00\n"
               "anthropic-ratelimit-output-tokens-limit: 8000\nanthropic-ratelimit-output-tokens-remaining: 7000\n"
               "anthropic-ratelimit-output-tokens-reset: 2024-11-29T09:03:50.25-05:00"
        << "requests[requests,anthropic] L=50 R=49 T@=1 | tokens[tokens,anthropic] L=80000 R=0 T@=6.5 | "
           "input-tokens[tokens,anthropic] L=40000 R=36000 T@=4 | output-tokens[tokens,anthropic] L=8000 R=7000 "
           "T@=9.25 | " + dateN
        << "";
    QTest::newRow("anthropic bad reset") << "anthropic-ratelimit-tokens-reset: next tuesday"
                                         << "tokens[tokens,anthropic] | warn=1"
                                         << "anthropic-ratelimit-tokens-reset: 'next tuesday'";
    QTest::newRow("anthropic with retry-after") << "retry-after: 7\nanthropic-ratelimit-requests-remaining: 0"
                                                << "requests[requests,anthropic] R=0 | retry=7(Retry-After)" << "";

    // --- GitHub ---
    QTest::newRow("github core")
        << date + "X-RateLimit-Limit: 60\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: " + n(kNow + 1500) +
               "\nX-RateLimit-Used: 60\nX-RateLimit-Resource: core"
        << "core[requests,github] L=60 R=0 T@=1500 | " + dateN + " | gh=core" << "";
    QTest::newRow("github search") << "x-ratelimit-limit: 30\nx-ratelimit-remaining: 29\nx-ratelimit-resource: search"
                                   << "search[requests,github] L=30 R=29 | gh=search" << "";
    QTest::newRow("github empty resource") << "x-ratelimit-remaining: 1\nx-ratelimit-resource:"
                                           << "requests[requests,github] R=1 | gh=requests | warn=1"
                                           << "x-ratelimit-resource: '' is empty";

    // --- IETF, older numeric form ---
    QTest::newRow("ietf with policy") << "RateLimit-Limit: 100\nRateLimit-Remaining: 50\nRateLimit-Reset: 10\n"
                                         "RateLimit-Policy: 100;w=10"
                                      << "requests[requests,ietf] L=100 R=50 T=10 W=10" << "";
    QTest::newRow("ietf policy chosen by quota") << "RateLimit-Limit: 100\nRateLimit-Policy: 10;w=1, 100;w=60, 1000;w=3600"
                                                 << "requests[requests,ietf] L=100 W=60" << "";
    QTest::newRow("ietf no matching policy takes the first") << "RateLimit-Limit: 7\nRateLimit-Policy: 10;w=1, 100;w=60"
                                                             << "requests[requests,ietf] L=7 W=1" << "";
    QTest::newRow("ietf policies inside RateLimit-Limit") << "RateLimit-Limit: 10, 10;w=1, 50;w=60\nRateLimit-Remaining: 9"
                                                          << "requests[requests,ietf] L=10 R=9 W=1" << "";
    QTest::newRow("ietf policy alone") << "RateLimit-Policy: 100;w=10" << "requests[requests,ietf] L=100 W=10" << "";
    QTest::newRow("ietf draft-07 dictionary") << "RateLimit: limit=10, remaining=0, reset=30\nRateLimit-Policy: 10;w=60"
                                              << "requests[requests,ietf] L=10 R=0 T=30 W=60" << "";
    QTest::newRow("ietf garbage remaining") << "ratelimit-remaining: many\nratelimit-limit: 5"
                                            << "requests[requests,ietf] L=5 | warn=1" << "ratelimit-remaining: 'many'";
    QTest::newRow("ietf bad window") << "RateLimit-Policy: 100;w=forever" << "requests[requests,ietf] L=100 | warn=1"
                                     << "RateLimit-Policy: '100;w=forever' has a bad w=forever";

    // --- IETF structured fields ---
    QTest::newRow("structured single") << "RateLimit-Policy: \"default\";q=100;w=10\nRateLimit: \"default\";r=50;t=30"
                                       << "default[requests,ietf-structured] L=100 R=50 T=30 W=10" << "";
    QTest::newRow("structured several policies")
        << "RateLimit-Policy: \"burst\";q=100;w=60, \"daily\";q=1000;w=86400\n"
           "RateLimit: \"burst\";r=0;t=30, \"daily\";r=600;t=35779"
        << "burst[requests,ietf-structured] L=100 R=0 T=30 W=60 | daily[requests,ietf-structured] L=1000 R=600 "
           "T=35779 W=86400"
        << "";
    QTest::newRow("structured tokens, qu and pk")
        << "RateLimit-Policy: permin;q=60;w=60, tokens;q=90000;qu=\"tokens\";w=60;pk=:cHsdsRa894==:\n"
           "RateLimit: permin;r=59;t=12, tokens;r=0;t=48;pk=:cHsdsRa894==:"
        << "permin[requests,ietf-structured] L=60 R=59 T=12 W=60 | tokens[tokens,ietf-structured] L=90000 R=0 T=48 W=60"
        << "";
    QTest::newRow("structured fractional window is malformed")
        << "RateLimit-Policy: \"default\";q=100;w=1.5\nRateLimit: \"default\";r=50;t=30"
        << "default[requests,ietf-structured] R=50 T=30 | warn=1"
        << "RateLimit-Policy: '\"default\";q=100;w=1.5' is malformed (w=1.5 is not an integer); ignored";
    QTest::newRow("structured fractional remaining ignores the field")
        << "RateLimit-Policy: \"a\";q=10;w=1, \"b\";q=20;w=60\nRateLimit: \"a\";r=5;t=1, \"b\";r=2.5;t=9"
        << "a[requests,ietf-structured] L=10 W=1 | b[requests,ietf-structured] L=20 W=60 | warn=1"
        << "RateLimit: '\"a\";r=5;t=1, \"b\";r=2.5;t=9' is malformed (r=2.5";
    QTest::newRow("structured state without a policy") << "RateLimit: \"hourly\";r=3;t=100"
                                                       << "hourly[requests,ietf-structured] R=3 T=100" << "";
    QTest::newRow("structured repeated lines form one list")
        << "RateLimit-Policy: \"a\";q=10;w=1\nRateLimit-Policy: \"b\";q=20;w=2\nRateLimit: \"b\";r=5;t=1"
        << "a[requests,ietf-structured] L=10 W=1 | b[requests,ietf-structured] L=20 R=5 T=1 W=2" << "";
    QTest::newRow("structured quoted integer is malformed")
        << "RateLimit-Policy: \"default\";q=100;w=10\nRateLimit: \"default\";r=\"10\";t=30"
        << "default[requests,ietf-structured] L=100 W=10 | warn=1"
        << "RateLimit: '\"default\";r=\"10\";t=30' is malformed (r=\"10\" is not an integer); ignored";
    QTest::newRow("structured policy named twice takes the lower quota, the longer window")
        << "RateLimit-Policy: \"d\";q=50;w=1\nRateLimit-Policy: \"d\";q=500;w=10\nRateLimit: \"d\";r=5;t=1"
        << "d[requests,ietf-structured] L=50 R=5 T=1 W=10 | warn=1" << "names policy 'd' twice";
    QTest::newRow("structured state named twice takes the lower remaining, the later reset")
        << "RateLimit: \"d\";r=5;t=1\nRateLimit: \"d\";r=50;t=30"
        << "d[requests,ietf-structured] R=5 T=30 | warn=1" << "names policy 'd' twice";
    QTest::newRow("structured state named twice, lower first")
        << "RateLimit: \"d\";r=50;t=30, \"d\";r=5;t=1" << "d[requests,ietf-structured] R=5 T=30 | warn=1"
        << "using the more conservative values";
    QTest::newRow("structured bad q and r") << "RateLimit-Policy: \"x\";q=lots;w=10\nRateLimit: \"x\";r=-1;t=5"
                                            << "x[requests,ietf-structured] T=5 | warn=2"
                                            << "RateLimit-Policy: '\"x\";q=lots;w=10' is malformed (q=lots";
    QTest::newRow("structured item without a name") << "RateLimit: ;r=5" << "warn=1" << "without a policy name";
    QTest::newRow("structured unclosed quote is malformed")
        << "RateLimit: \"d;r=0;t=30" << "warn=1"
        << "RateLimit: '\"d;r=0;t=30' is malformed (a quoted string is not closed)";
    QTest::newRow("structured escaped quote stays inside")
        << "RateLimit: \"a\\\"b\";r=1;t=2" << "a\"b[requests,ietf-structured] R=1 T=2" << "";
    QTest::newRow("structured quoted comma in name")
        << "RateLimit-Policy: \"a,b\";q=5\nRateLimit: \"a,b\";r=1" << "a,b[requests,ietf-structured] L=5 R=1" << "";

    // --- Several dialects at once, and nothing at all ---
    QTest::newRow("openai + x-ratelimit + retry-after")
        << date + "X-RateLimit-Limit: 1000\nX-RateLimit-Remaining: 999\nx-ratelimit-remaining-tokens: 0\n"
                  "x-ratelimit-reset-tokens: 20s\nRetry-After: 20\nX-RateLimit-Group: llm"
        << "requests[requests,x-ratelimit] L=1000 R=999 | tokens[tokens,openai] R=0 T=20 | retry=20(Retry-After) | " +
               dateN + " | group=llm"
        << "";
    QTest::newRow("ietf + structured + github")
        << "RateLimit-Remaining: 4\nRateLimit: \"p\";r=3;t=9\nx-ratelimit-resource: graphql\nx-ratelimit-remaining: 2"
        << "graphql[requests,github] R=2 | requests[requests,ietf] R=4 | p[requests,ietf-structured] R=3 T=9 | gh=graphql"
        << "";
    QTest::newRow("no rate-limit headers") << "Content-Type: application/json\nServer: nginx" << "" << "";
    QTest::newRow("junk names and values") << "\n:\n: value\n\x01\x02: \xff\xfe\nX-RateLimit-Remaining: \"5\""
                                           << "requests[requests,x-ratelimit] | warn=1" << "'\"5\"' is not a number";
  }

  void parse() {
    QFETCH(QString, headers);
    QFETCH(QString, expected);
    QFETCH(QString, warning);
    const QuotaReading r = RateLimitHeaderParser::parse(headersFrom(headers), kNow);
    QCOMPARE(describe(r), expected);
    if (warning.isEmpty())
      QCOMPARE(allWarnings(r), QString());
    else
      QVERIFY2(allWarnings(r).contains(warning), qPrintable("warnings were:\n" + allWarnings(r)));
  }

  void emptyInput() {
    const QuotaReading r = RateLimitHeaderParser::parse({}, kNow);
    QVERIFY(r.scopes.empty());
    QVERIFY(!r.retryAfterS);
    QVERIFY(r.warnings.empty());
  }

  void nonFiniteNowDoesNotPoisonResets() {
    for (const char* reset : {"1732889066", "30", "Fri, 29 Nov 2024 14:04:41 GMT"}) {
      const QuotaReading r = RateLimitHeaderParser::parse({{"X-RateLimit-Reset", reset}}, std::nan(""));
      QCOMPARE(r.scopes.size(), size_t(1));
      QVERIFY2(!r.scopes[0].resetInS || std::isfinite(*r.scopes[0].resetInS), reset);
    }
    const QuotaReading delta = RateLimitHeaderParser::parse({{"X-RateLimit-Reset", "30"}}, std::nan(""));
    QCOMPARE(delta.scopes[0].resetInS.value_or(-1), 30.0);
  }

  // Whatever arrives, the parser returns: counts are unknown or finite and >= 0, waits finite and >= 0.
  void randomInputNeverBreaksInvariants() {
    const char* names[] = {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Used",
                           "X-RateLimit-Resource", "Retry-After", "retry-after-ms", "x-ms-retry-after-ms", "Date",
                           "x-ratelimit-reset-tokens", "x-ratelimit-remaining-requests",
                           "anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-requests-remaining",
                           "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "RateLimit"};
    const std::string alphabet = "0123456789-+.,;=:\"eEsmhzZT GMTNovSun \t\x01\xff";
    std::mt19937 rng(20241129);
    for (int round = 0; round < 5000; ++round) {
      HeaderList h;
      const int count = static_cast<int>(rng() % 6) + 1;
      for (int i = 0; i < count; ++i) {
        std::string value;
        const int len = static_cast<int>(rng() % 24);
        for (int k = 0; k < len; ++k) value += alphabet[rng() % alphabet.size()];
        h.emplace_back(names[rng() % std::size(names)], value);
      }
      const QuotaReading r = RateLimitHeaderParser::parse(h, kNow);
      for (const auto& s : r.scopes) {
        QVERIFY2(!known(s.remaining) || (std::isfinite(s.remaining) && s.remaining >= 0), qPrintable(describe(r)));
        QVERIFY2(!known(s.limit) || (std::isfinite(s.limit) && s.limit >= 0), qPrintable(describe(r)));
        QVERIFY2(!s.resetInS || (std::isfinite(*s.resetInS) && *s.resetInS >= 0), qPrintable(describe(r)));
        QVERIFY2(!s.windowS || (std::isfinite(*s.windowS) && *s.windowS >= 0), qPrintable(describe(r)));
      }
      QVERIFY(!r.retryAfterS || (std::isfinite(*r.retryAfterS) && *r.retryAfterS >= 0));
    }
  }
};

QTEST_APPLESS_MAIN(TestHeaderParser)
#include "test_headers_parser.moc"
