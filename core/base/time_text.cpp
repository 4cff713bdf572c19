#include "time_text.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tg {

namespace {

namespace ch = std::chrono;

// The span std::chrono::year can name, in milliseconds since the epoch.
EpochMs clampToCalendar(EpochMs ms) {
  static const EpochMs kMin =
      ch::duration_cast<ch::milliseconds>(ch::sys_days{ch::year::min() / 1 / 1}.time_since_epoch()).count();
  static const EpochMs kMax =
      ch::duration_cast<ch::milliseconds>(ch::sys_days{ch::year::max() / 12 / 31}.time_since_epoch()).count() +
      86'399'999;
  return ms < kMin ? kMin : (ms > kMax ? kMax : ms);
}

}  // namespace

std::string formatUtc(EpochMs msIn, UtcStyle style) {
  const ch::sys_time<ch::milliseconds> t{ch::milliseconds{clampToCalendar(msIn)}};
  const auto day = ch::floor<ch::days>(t);
  const ch::year_month_day ymd{day};
  const ch::hh_mm_ss<ch::milliseconds> hms{t - day};
  const int y = static_cast<int>(ymd.year());
  const unsigned mo = static_cast<unsigned>(ymd.month()), d = static_cast<unsigned>(ymd.day());
  const auto h = static_cast<int>(hms.hours().count()), mi = static_cast<int>(hms.minutes().count()),
             s = static_cast<int>(hms.seconds().count()), milli = static_cast<int>(hms.subseconds().count());
  char buf[64];
  switch (style) {
    case UtcStyle::Iso:
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", y, mo, d, h, mi, s);
      break;
    case UtcStyle::IsoMillis:
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", y, mo, d, h, mi, s, milli);
      break;
    case UtcStyle::Readable:
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d UTC", y, mo, d, h, mi, s);
      break;
    case UtcStyle::Clock:
      std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", h, mi, s);
      break;
  }
  return buf;
}

std::string formatDuration(double seconds) {
  if (std::isnan(seconds)) return "-";
  if (std::isinf(seconds)) return seconds > 0 ? "forever" : "-forever";
  const char* sign = seconds < 0 ? "-" : "";
  const double s = std::fabs(seconds);
  char buf[64];
  if (s < 1) {
    std::snprintf(buf, sizeof buf, "%s%.0f ms", sign, s * 1000);
  } else if (s < 60) {
    std::snprintf(buf, sizeof buf, "%s%.*f s", sign, s < 10 ? 1 : 0, s);
  } else if (s < 3600) {
    const auto whole = static_cast<long long>(s);
    std::snprintf(buf, sizeof buf, "%s%lld min %lld s", sign, whole / 60, whole % 60);
  } else if (s < 86400) {
    const auto minutes = static_cast<long long>(s / 60);
    std::snprintf(buf, sizeof buf, "%s%lld h %02lld min", sign, minutes / 60, minutes % 60);
  } else if (s < 1e15) {
    const auto hours = static_cast<long long>(s / 3600);
    std::snprintf(buf, sizeof buf, "%s%lld d %02lld h", sign, hours / 24, hours % 24);
  } else {
    std::snprintf(buf, sizeof buf, "%s%.3g d", sign, s / 86400);
  }
  return buf;
}

std::int64_t daysFromCivil(int year, unsigned month, unsigned day) {
  return ch::sys_days{ch::year{year} / ch::month{month} / ch::day{day}}.time_since_epoch().count();
}

}  // namespace tg
