// tg::formatUtc / formatDuration / daysFromCivil: the one way a time or a duration is written.
#include "time_text.h"

#include <QtTest>

#include <cmath>
#include <limits>
#include <string>

using tg::EpochMs;
using tg::UtcStyle;

Q_DECLARE_METATYPE(tg::UtcStyle)

class TestTimeText : public QObject {
  Q_OBJECT
 private slots:
  void formatUtcRows_data() {
    QTest::addColumn<qint64>("ms");
    QTest::addColumn<UtcStyle>("style");
    QTest::addColumn<QString>("expected");
    constexpr qint64 kRfcExample = 784111777000;  // RFC 9110's "Sun, 06 Nov 1994 08:49:37 GMT"
    QTest::newRow("epoch iso") << qint64(0) << UtcStyle::Iso << "1970-01-01T00:00:00Z";
    QTest::newRow("epoch http") << qint64(0) << UtcStyle::HttpDate << "Thu, 01 Jan 1970 00:00:00 GMT";
    QTest::newRow("rfc iso") << kRfcExample << UtcStyle::Iso << "1994-11-06T08:49:37Z";
    QTest::newRow("rfc iso millis") << kRfcExample + 5 << UtcStyle::IsoMillis << "1994-11-06T08:49:37.005Z";
    QTest::newRow("rfc readable") << kRfcExample << UtcStyle::Readable << "1994-11-06 08:49:37 UTC";
    QTest::newRow("rfc clock") << kRfcExample + 999 << UtcStyle::Clock << "08:49:37";
    QTest::newRow("rfc datetime") << kRfcExample << UtcStyle::DateTime << "1994-11-06 08:49:37";
    QTest::newRow("rfc http date") << kRfcExample << UtcStyle::HttpDate << "Sun, 06 Nov 1994 08:49:37 GMT";
    QTest::newRow("millis truncate, never round up") << kRfcExample + 999 << UtcStyle::Iso << "1994-11-06T08:49:37Z";
    QTest::newRow("leap day") << qint64(1709251199000) << UtcStyle::Iso << "2024-02-29T23:59:59Z";
    QTest::newRow("leap day http") << qint64(1709251199000) << UtcStyle::HttpDate
                                   << "Thu, 29 Feb 2024 23:59:59 GMT";
    QTest::newRow("day after leap day") << qint64(1709251200000) << UtcStyle::Readable << "2024-03-01 00:00:00 UTC";
    QTest::newRow("negative: one ms before epoch") << qint64(-1) << UtcStyle::IsoMillis << "1969-12-31T23:59:59.999Z";
    QTest::newRow("negative: one ms before epoch clock") << qint64(-1) << UtcStyle::Clock << "23:59:59";
    QTest::newRow("negative: moon landing") << qint64(-14182940000) << UtcStyle::HttpDate
                                            << "Sun, 20 Jul 1969 20:17:40 GMT";
    QTest::newRow("negative: 1900-03-01") << qint64(-25508) * 86400000 << UtcStyle::Iso << "1900-03-01T00:00:00Z";
    QTest::newRow("year clamp, max") << std::numeric_limits<qint64>::max() << UtcStyle::IsoMillis
                                     << "32767-12-31T23:59:59.999Z";
    QTest::newRow("year clamp, min") << std::numeric_limits<qint64>::min() << UtcStyle::Iso
                                     << "-32767-01-01T00:00:00Z";
  }
  void formatUtcRows() {
    QFETCH(qint64, ms);
    QFETCH(UtcStyle, style);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(tg::formatUtc(EpochMs(ms), style)), expected);
  }

  void isoIsTheDefault() { QCOMPARE(tg::formatUtc(784111777000), std::string("1994-11-06T08:49:37Z")); }

  void formatDurationRows_data() {
    QTest::addColumn<double>("seconds");
    QTest::addColumn<QString>("expected");
    QTest::newRow("NaN") << std::numeric_limits<double>::quiet_NaN() << "-";
    QTest::newRow("+inf") << std::numeric_limits<double>::infinity() << "forever";
    QTest::newRow("-inf") << -std::numeric_limits<double>::infinity() << "-forever";
    QTest::newRow("zero") << 0.0 << "0 ms";
    QTest::newRow("tiny negative is not -0") << -0.0001 << "0 ms";
    QTest::newRow("ms band") << 0.85 << "850 ms";
    QTest::newRow("ms rounds into seconds") << 0.9996 << "1.0 s";
    QTest::newRow("tenths band") << 8.5 << "8.5 s";
    QTest::newRow("tenths rounds into whole seconds") << 9.96 << "10 s";
    QTest::newRow("whole seconds") << 42.4 << "42 s";
    QTest::newRow("seconds round into minutes") << 59.7 << "1 min 0 s";
    QTest::newRow("minutes band") << 250.0 << "4 min 10 s";
    QTest::newRow("minutes round into hours") << 3599.6 << "1 h 00 min";
    QTest::newRow("hours band") << 3 * 3600.0 + 5 * 60 + 59 << "3 h 05 min";
    QTest::newRow("days band") << 2 * 86400.0 + 4 * 3600 + 1 << "2 d 04 h";
    QTest::newRow("huge") << 1e16 << "1.16e+11 d";
    QTest::newRow("negative") << -250.0 << "-4 min 10 s";
    QTest::newRow("negative ms") << -0.5 << "-500 ms";
  }
  void formatDurationRows() {
    QFETCH(double, seconds);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(tg::formatDuration(seconds)), expected);
  }

  void daysFromCivilRows_data() {
    QTest::addColumn<int>("year");
    QTest::addColumn<uint>("month");
    QTest::addColumn<uint>("day");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("epoch") << 1970 << 1u << 1u << qint64(0);
    QTest::newRow("day before epoch") << 1969 << 12u << 31u << qint64(-1);
    QTest::newRow("leap day 2024") << 2024 << 2u << 29u << qint64(19782);
    QTest::newRow("2000 is a leap year") << 2000 << 3u << 1u << qint64(11017);
    QTest::newRow("1900 is not") << 1900 << 3u << 1u << qint64(-25508);
    QTest::newRow("2100 is not") << 2100 << 2u << 28u << qint64(47540);
    QTest::newRow("year 1") << 1 << 1u << 1u << qint64(-719162);
    QTest::newRow("year 9999") << 9999 << 12u << 31u << qint64(2932896);
  }
  void daysFromCivilRows() {
    QFETCH(int, year);
    QFETCH(uint, month);
    QFETCH(uint, day);
    QFETCH(qint64, expected);
    QCOMPARE(qint64(tg::daysFromCivil(year, month, day)), expected);
    // And back: midnight of that day formats as that date.
    const QString iso = QString::fromStdString(tg::formatUtc(EpochMs(expected) * 86'400'000, UtcStyle::Iso));
    QCOMPARE(iso, QStringLiteral("%1-%2-%3T00:00:00Z")
                      .arg(year, 4, 10, QLatin1Char('0'))
                      .arg(month, 2, 10, QLatin1Char('0'))
                      .arg(day, 2, 10, QLatin1Char('0')));
  }
};

QTEST_APPLESS_MAIN(TestTimeText)
#include "test_time_text.moc"
