#include "time_formats.h"

#include <QtTest>

#include <cmath>

using namespace tg;

namespace {
constexpr double kInvalid = -1;          // expected value meaning "must not parse"
constexpr double kNow2024 = 1732889021;  // Fri, 29 Nov 2024 14:03:41 GMT
constexpr double kNov6_1994 = 784111777; // Sun, 06 Nov 1994 08:49:37 GMT

double orInvalid(const std::optional<double>& v) { return v ? *v : kInvalid; }
}  // namespace

class TestTimeFormats : public QObject {
  Q_OBJECT

 private slots:
  void decimal_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<double>("expected");
    QTest::newRow("integer") << "42" << true << 42.0;
    QTest::newRow("fraction") << "2.5" << true << 2.5;
    QTest::newRow("leading dot") << ".5" << true << 0.5;
    QTest::newRow("plus sign") << "+7" << true << 7.0;
    QTest::newRow("negative") << "-1" << true << -1.0;
    QTest::newRow("exponent") << "1e3" << true << 1000.0;
    QTest::newRow("huge but finite") << "99999999999999999999" << true << 1e20;
    QTest::newRow("overflow") << "1e400" << false << 0.0;
    QTest::newRow("inf") << "inf" << false << 0.0;
    QTest::newRow("negative inf") << "-inf" << false << 0.0;
    QTest::newRow("nan") << "nan" << false << 0.0;
    QTest::newRow("hex") << "0x10" << false << 0.0;
    QTest::newRow("trailing junk") << "10abc" << false << 0.0;
    QTest::newRow("thousands separator") << "1,000" << false << 0.0;
    QTest::newRow("empty") << "" << false << 0.0;
    QTest::newRow("just sign") << "-" << false << 0.0;
  }
  void decimal() {
    QFETCH(QString, text);
    QFETCH(bool, valid);
    QFETCH(double, expected);
    const auto v = parseDecimal(text.toStdString());
    QCOMPARE(v.has_value(), valid);
    if (valid) QCOMPARE(*v, expected);
  }

  void httpDate_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("expected");
    QTest::newRow("IMF-fixdate") << "Sun, 06 Nov 1994 08:49:37 GMT" << kNov6_1994;
    QTest::newRow("RFC 850") << "Sunday, 06-Nov-94 08:49:37 GMT" << kNov6_1994;
    QTest::newRow("asctime") << "Sun Nov  6 08:49:37 1994" << kNov6_1994;
    QTest::newRow("asctime two-digit day") << "Fri Nov 29 14:03:41 2024" << kNow2024;
    QTest::newRow("IMF 2024") << "Fri, 29 Nov 2024 14:03:41 GMT" << kNow2024;
    QTest::newRow("RFC 850 year 24 is 2024") << "Friday, 29-Nov-24 14:03:41 GMT" << kNow2024;
    QTest::newRow("lower-case month, UTC zone") << "Fri, 29 nov 2024 14:03:41 UTC" << kNow2024;
    QTest::newRow("extra spaces") << "  Fri,  29 Nov 2024  14:03:41 GMT " << kNow2024;
    QTest::newRow("leap day") << "Thu, 29 Feb 2024 00:00:00 GMT" << 1709164800.0;
    QTest::newRow("31 Feb") << "Sat, 31 Feb 2024 00:00:00 GMT" << kInvalid;
    QTest::newRow("29 Feb non-leap") << "Wed, 29 Feb 2023 00:00:00 GMT" << kInvalid;
    QTest::newRow("hour 24") << "Fri, 29 Nov 2024 24:00:00 GMT" << kInvalid;
    QTest::newRow("minute 60") << "Fri, 29 Nov 2024 12:60:00 GMT" << kInvalid;
    QTest::newRow("bad month") << "Fri, 29 Nox 2024 14:03:41 GMT" << kInvalid;
    QTest::newRow("bad weekday") << "Fry, 29 Nov 2024 14:03:41 GMT" << kInvalid;
    QTest::newRow("other zone") << "Fri, 29 Nov 2024 14:03:41 PST" << kInvalid;
    QTest::newRow("no zone") << "Fri, 29 Nov 2024 14:03:41" << kInvalid;
    QTest::newRow("short time") << "Fri, 29 Nov 2024 14:03 GMT" << kInvalid;
    QTest::newRow("RFC 3339 is not an HTTP-date") << "2024-11-29T14:03:41Z" << kInvalid;
    QTest::newRow("number") << "120" << kInvalid;
    QTest::newRow("empty") << "" << kInvalid;
  }
  void httpDate() {
    QFETCH(QString, text);
    QFETCH(double, expected);
    QCOMPARE(orInvalid(parseHttpDate(text.toStdString(), kNow2024)), expected);
  }

  // RFC 9110: a two-digit year more than 50 years in the future is the previous century.
  void rfc850Century_data() {
    QTest::addColumn<double>("reference");
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("expected");
    QTest::newRow("94 seen in 2024") << kNow2024 << "Sunday, 06-Nov-94 08:49:37 GMT" << kNov6_1994;
    QTest::newRow("70 seen in 2024 is 2070") << kNow2024 << "Wednesday, 01-Jan-70 00:00:00 GMT" << 3155760000.0;
    QTest::newRow("74 seen in 2024 is 2074") << kNow2024 << "Monday, 01-Jan-74 00:00:00 GMT" << 3281990400.0;
    QTest::newRow("75 seen in 2024 is 1975") << kNow2024 << "Wednesday, 01-Jan-75 00:00:00 GMT" << 157766400.0;
    QTest::newRow("01 seen in 2099 is 2101") << 4070908800.0 << "Saturday, 01-Jan-01 00:00:00 GMT"
                                             << 4133980800.0;
  }
  void rfc850Century() {
    QFETCH(double, reference);
    QFETCH(QString, text);
    QFETCH(double, expected);
    QCOMPARE(orInvalid(parseHttpDate(text.toStdString(), reference)), expected);
  }

  void rfc3339_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("expected");
    QTest::newRow("Z") << "2024-11-29T14:03:41Z" << kNow2024;
    QTest::newRow("lower-case t and z") << "2024-11-29t14:03:41z" << kNow2024;
    QTest::newRow("fraction") << "2024-11-29T14:03:41.250Z" << kNow2024 + 0.25;
    QTest::newRow("long fraction") << "2024-11-29T14:03:41.123456789Z" << kNow2024 + 0.123456789;
    QTest::newRow("positive offset") << "2024-11-29T15:03:41+01:00" << kNow2024;
    QTest::newRow("negative offset") << "2024-11-29T09:03:41-05:00" << kNow2024;
    QTest::newRow("offset with fraction") << "2024-11-29T19:33:41.5+05:30" << kNow2024 + 0.5;
    QTest::newRow("zero offset") << "2024-11-29T14:03:41+00:00" << kNow2024;
    QTest::newRow("no zone") << "2024-11-29T14:03:41" << kInvalid;
    QTest::newRow("bad offset") << "2024-11-29T14:03:41+1:00" << kInvalid;
    QTest::newRow("offset hour 24") << "2024-11-29T14:03:41+24:00" << kInvalid;
    QTest::newRow("empty fraction") << "2024-11-29T14:03:41.Z" << kInvalid;
    QTest::newRow("bad date") << "2024-13-01T00:00:00Z" << kInvalid;
    QTest::newRow("junk") << "tomorrow" << kInvalid;
    QTest::newRow("trailing junk") << "2024-11-29T14:03:41Zjunk" << kInvalid;
  }
  void rfc3339() {
    QFETCH(QString, text);
    QFETCH(double, expected);
    const double got = orInvalid(parseRfc3339(text.toStdString()));
    QVERIFY2(std::fabs(got - expected) < 1e-6, qPrintable(QString("got %1, expected %2").arg(got, 0, 'f', 9).arg(expected, 0, 'f', 9)));
  }

  void goDuration_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("expected");
    QTest::newRow("6m0s") << "6m0s" << 360.0;
    QTest::newRow("20ms") << "20ms" << 0.02;
    QTest::newRow("500ms") << "500ms" << 0.5;
    QTest::newRow("2m52.8s") << "2m52.8s" << 172.8;
    QTest::newRow("1h2m3s") << "1h2m3s" << 3723.0;
    QTest::newRow("1h") << "1h" << 3600.0;
    QTest::newRow("1.5s") << "1.5s" << 1.5;
    QTest::newRow("0s") << "0s" << 0.0;
    QTest::newRow("bare 0") << "0" << 0.0;
    QTest::newRow("plain seconds") << "30" << 30.0;
    QTest::newRow("plain fraction") << "0.25" << 0.25;
    QTest::newRow("microseconds") << "1500us" << 0.0015;
    QTest::newRow("micro sign") << QString::fromUtf8("1500\u00b5s") << 0.0015;
    QTest::newRow("nanoseconds") << "2000000ns" << 0.002;
    QTest::newRow("1m30s") << "1m30s" << 90.0;
    QTest::newRow("unknown unit") << "5x" << kInvalid;
    QTest::newRow("days are not Go") << "1d" << kInvalid;
    QTest::newRow("no number") << "ms" << kInvalid;
    QTest::newRow("negative") << "-1s" << kInvalid;
    QTest::newRow("negative plain") << "-5" << kInvalid;
    QTest::newRow("two dots") << "1.2.3s" << kInvalid;
    QTest::newRow("words") << "soon" << kInvalid;
    QTest::newRow("spaces inside") << "1m 30s" << kInvalid;
    QTest::newRow("empty") << "" << kInvalid;
  }
  void goDuration() {
    QFETCH(QString, text);
    QFETCH(double, expected);
    const double got = orInvalid(parseGoDuration(text.toStdString()));
    QVERIFY2(std::fabs(got - expected) < 1e-9, qPrintable(QString("got %1, expected %2").arg(got).arg(expected)));
  }

  void formatUtc_data() {
    QTest::addColumn<double>("epoch");
    QTest::addColumn<bool>("dateToo");
    QTest::addColumn<QString>("expected");
    QTest::newRow("full") << kNow2024 << true << "2024-11-29 14:03:41 UTC";
    QTest::newRow("time only") << kNow2024 + 0.9 << false << "14:03:41 UTC";
    QTest::newRow("epoch") << 0.0 << true << "1970-01-01 00:00:00 UTC";
    QTest::newRow("NaN") << std::nan("") << true << "an unknown time";
    QTest::newRow("absurdly late") << 1e300 << true << "an unknown time";
  }
  void formatUtc() {
    QFETCH(double, epoch);
    QFETCH(bool, dateToo);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(tg::formatUtc(epoch, dateToo)), expected);
  }
};

QTEST_APPLESS_MAIN(TestTimeFormats)
#include "test_headers_time_formats.moc"
