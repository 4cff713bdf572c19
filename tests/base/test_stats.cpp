// tg::percentile: the one quantile of the program (type 7, q in 0..1, NaN ignored).
#include "stats.h"

#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

using tg::percentile;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

class TestStats : public QObject {
  Q_OBJECT
 private slots:
  void percentileRows_data() {
    QTest::addColumn<std::vector<double>>("values");
    QTest::addColumn<double>("q");
    QTest::addColumn<double>("expected");  // NaN: the answer is unknown
    QTest::newRow("empty") << std::vector<double>{} << 0.5 << kNaN;
    QTest::newRow("only NaN") << std::vector<double>{kNaN, kNaN} << 0.5 << kNaN;
    QTest::newRow("one value, median") << std::vector<double>{7} << 0.5 << 7.0;
    QTest::newRow("one value, q=0") << std::vector<double>{7} << 0.0 << 7.0;
    QTest::newRow("one value, q=1") << std::vector<double>{7} << 1.0 << 7.0;
    QTest::newRow("min") << std::vector<double>{4, 1, 3, 2} << 0.0 << 1.0;
    QTest::newRow("max") << std::vector<double>{4, 1, 3, 2} << 1.0 << 4.0;
    QTest::newRow("even median interpolates") << std::vector<double>{4, 1, 3, 2} << 0.5 << 2.5;
    QTest::newRow("odd median is the middle") << std::vector<double>{5, 1, 3} << 0.5 << 3.0;
    QTest::newRow("p95 of 1..20") << std::vector<double>{1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                                          11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
                                  << 0.95 << 19.05;
    QTest::newRow("p25 interpolates") << std::vector<double>{10, 20, 30} << 0.25 << 15.0;
    QTest::newRow("NaN ignored") << std::vector<double>{kNaN, 1, kNaN, 3} << 0.5 << 2.0;
    QTest::newRow("duplicates") << std::vector<double>{2, 2, 2, 9} << 0.5 << 2.0;
    QTest::newRow("q below 0 clamps") << std::vector<double>{3, 1, 2} << -0.5 << 1.0;
    QTest::newRow("q above 1 clamps") << std::vector<double>{3, 1, 2} << 7.0 << 3.0;
    QTest::newRow("q NaN is unknown") << std::vector<double>{3, 1, 2} << kNaN << kNaN;
    QTest::newRow("negative values") << std::vector<double>{-1, -3, -2} << 0.5 << -2.0;
    QTest::newRow("infinity is a value") << std::vector<double>{1, std::numeric_limits<double>::infinity()}
                                         << 1.0 << std::numeric_limits<double>::infinity();
  }
  void percentileRows() {
    QFETCH(std::vector<double>, values);
    QFETCH(double, q);
    QFETCH(double, expected);
    const double got = percentile(values, q);
    if (std::isnan(expected)) {
      QVERIFY2(std::isnan(got), qPrintable(QStringLiteral("got %1").arg(got)));
    } else {
      QVERIFY2(std::fabs(got - expected) < 1e-9 || got == expected,
               qPrintable(QStringLiteral("got %1, expected %2").arg(got, 0, 'g', 17).arg(expected, 0, 'g', 17)));
    }
    // The float overload gives the same answer.
    const std::vector<float> asFloat(values.begin(), values.end());
    const double gotFloat = percentile(asFloat, q);
    if (std::isnan(expected)) QVERIFY(std::isnan(gotFloat));
    else if (std::isfinite(expected)) QVERIFY2(std::fabs(gotFloat - expected) < 1e-4, qPrintable(QString::number(gotFloat)));
  }

  void callersOrderIsKept() {
    const std::vector<double> v{3, 1, 2};
    QCOMPARE(percentile(v, 0.5), 2.0);
    QCOMPARE(v, (std::vector<double>{3, 1, 2}));
  }

  // Every q between two ranks lies between their values, and the result never decreases with q.
  void monotoneInQ() {
    std::vector<double> v;
    for (int i = 0; i < 101; ++i) v.push_back(std::fmod(i * 37.0, 101.0));
    double last = -1;
    for (int i = 0; i <= 1000; ++i) {
      const double got = percentile(v, i / 1000.0);
      QVERIFY2(got >= last, qPrintable(QStringLiteral("q=%1 got %2 after %3").arg(i / 1000.0).arg(got).arg(last)));
      QCOMPARE(got, i / 10.0);  // 0..100 spread evenly: the q-quantile is 100 q
      last = got;
    }
  }
};

QTEST_APPLESS_MAIN(TestStats)
#include "test_stats.moc"
