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
    case UtcStyle::DateTime:
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d", y, mo, d, h, mi, s);
      break;
    case UtcStyle::HttpDate: {
      static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
      static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
      std::snprintf(buf, sizeof buf, "%s, %02u %s %04d %02d:%02d:%02d GMT", kDays[ch::weekday{day}.c_encoding()],
                    d, kMonths[mo - 1], y, h, mi, s);
      break;
    }
  }
  return buf;
}

std::string formatDuration(double seconds) {
  if (std::isnan(seconds)) return "-";
  if (std::isinf(seconds)) return seconds > 0 ? "forever" : "-forever";
  const double s = std::fabs(seconds);
  char buf[64];
  if (s >= 1e15) {
    std::snprintf(buf, sizeof buf, "%s%.3g d", seconds < 0 ? "-" : "", s / 86400);
    return buf;
  }
  // Round to what each band shows before choosing the band, so a value never prints as the next band's
  // first figure ("1000 ms", "60 s").
  const long long ms = std::llround(s * 1000);
  const char* sign = seconds < 0 && ms > 0 ? "-" : "";
  const long long whole = std::llround(s);
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%s%lld ms", sign, ms);
  } else if (ms < 9950) {
    std::snprintf(buf, sizeof buf, "%s%.1f s", sign, s);
  } else if (whole < 60) {
    std::snprintf(buf, sizeof buf, "%s%lld s", sign, whole);
  } else if (whole < 3600) {
    std::snprintf(buf, sizeof buf, "%s%lld min %lld s", sign, whole / 60, whole % 60);
  } else if (whole < 86400) {
    std::snprintf(buf, sizeof buf, "%s%lld h %02lld min", sign, whole / 3600, whole % 3600 / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%s%lld d %02lld h", sign, whole / 86400, whole % 86400 / 3600);
  }
  return buf;
}

std::int64_t daysFromCivil(int year, unsigned month, unsigned day) {
  return ch::sys_days{ch::year{year} / ch::month{month} / ch::day{day}}.time_since_epoch().count();
}

}  // namespace tg
