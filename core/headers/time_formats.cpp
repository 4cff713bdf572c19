#include "time_formats.h"

#include "time_text.h"

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace tg {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

bool allDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::optional<int> parseUnsigned(std::string_view s) {
  if (!allDigits(s) || s.size() > 9) return std::nullopt;
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::optional<double> epochOf(int y, int mon, int d, int h, int mi, int sec) {
  using namespace std::chrono;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mon)}, day{static_cast<unsigned>(d)}};
  // Second 60 is a leap second, which the wire format allows.
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  const double days = static_cast<double>(sys_days{ymd}.time_since_epoch().count());
  return days * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
}

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                       "Friday", "Saturday", "Sunday"};

std::optional<int> monthNumber(std::string_view s) {
  for (size_t i = 0; i < kMonths.size(); ++i)
    if (iequals(s, kMonths[i])) return static_cast<int>(i) + 1;
  return std::nullopt;
}

bool isWeekday(std::string_view s) {
  for (auto d : kDays)
    if (iequals(s, d)) return true;
  for (auto d : kLongDays)
    if (iequals(s, d)) return true;
  return false;
}

bool isGmt(std::string_view s) { return iequals(s, "GMT") || iequals(s, "UTC"); }

struct Clock {
  int h = 0, m = 0, s = 0;
};

std::optional<Clock> parseClock(std::string_view s) {
  if (s.size() != 8 || s[2] != ':' || s[5] != ':') return std::nullopt;
  auto h = parseUnsigned(s.substr(0, 2)), m = parseUnsigned(s.substr(3, 2)), sec = parseUnsigned(s.substr(6, 2));
  if (!h || !m || !sec) return std::nullopt;
  return Clock{*h, *m, *sec};
}

std::vector<std::string_view> splitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

int yearOf(double epochS) {
  using namespace std::chrono;
  const auto days = static_cast<long>(std::floor(epochS / 86400.0));
  return static_cast<int>(year_month_day{sys_days{std::chrono::days{days}}}.year());
}

// RFC 9110: a two-digit year more than 50 years in the future means the previous century.
int expandTwoDigitYear(int yy, double referenceEpochS) {
  const int ref = std::isfinite(referenceEpochS) && std::fabs(referenceEpochS) < 1e11 ? yearOf(referenceEpochS)
                                                                                       : 2000;
  int y = ref / 100 * 100 + yy;
  if (y > ref + 50) y -= 100;
  else if (y + 100 <= ref + 50) y += 100;
  return y;
}

}  // namespace

std::optional<double> parseDecimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  // from_chars also accepts "inf"/"nan"; require a digit or '.' where the number starts.
  const size_t first = (!s.empty() && s.front() == '-') ? 1 : 0;
  if (first >= s.size() || !(std::isdigit(static_cast<unsigned char>(s[first])) || s[first] == '.'))
    return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> parseHttpDate(std::string_view s, double referenceEpochS) {
  const auto t = splitSpaces(s);
  if (t.size() == 6 && t[0].size() > 1 && t[0].back() == ',') {  // IMF-fixdate
    if (!isWeekday(t[0].substr(0, t[0].size() - 1)) || !isGmt(t[5]) || t[3].size() != 4) return std::nullopt;
    auto d = parseUnsigned(t[1]);
    auto mon = monthNumber(t[2]);
    auto y = parseUnsigned(t[3]);
    auto c = parseClock(t[4]);
    if (!d || t[1].size() > 2 || !mon || !y || !c) return std::nullopt;
    return epochOf(*y, *mon, *d, c->h, c->m, c->s);
  }
  if (t.size() == 4 && t[0].size() > 1 && t[0].back() == ',') {  // RFC 850
    if (!isWeekday(t[0].substr(0, t[0].size() - 1)) || !isGmt(t[3])) return std::nullopt;
    const std::string_view date = t[1];
    const size_t a = date.find('-'), b = date.rfind('-');
    if (a == std::string_view::npos || a == b) return std::nullopt;
    auto d = parseUnsigned(date.substr(0, a));
    auto mon = monthNumber(date.substr(a + 1, b - a - 1));
    const std::string_view ys = date.substr(b + 1);
    auto y = parseUnsigned(ys);
    auto c = parseClock(t[2]);
    if (!d || a > 2 || !mon || !y || !c || (ys.size() != 2 && ys.size() != 4)) return std::nullopt;
    const int year = ys.size() == 2 ? expandTwoDigitYear(*y, referenceEpochS) : *y;
    return epochOf(year, *mon, *d, c->h, c->m, c->s);
  }
  if (t.size() == 5) {  // asctime: "Sun Nov  6 08:49:37 1994"
    if (!isWeekday(t[0]) || t[4].size() != 4 || t[2].size() > 2) return std::nullopt;
    auto mon = monthNumber(t[1]);
    auto d = parseUnsigned(t[2]);
    auto c = parseClock(t[3]);
    auto y = parseUnsigned(t[4]);
    if (!mon || !d || !c || !y) return std::nullopt;
    return epochOf(*y, *mon, *d, c->h, c->m, c->s);
  }
  return std::nullopt;
}

std::optional<double> parseRfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':') return std::nullopt;
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return std::nullopt;
  auto y = parseUnsigned(s.substr(0, 4)), mon = parseUnsigned(s.substr(5, 2)), d = parseUnsigned(s.substr(8, 2));
  auto c = parseClock(s.substr(11, 8));
  if (!y || !mon || !d || !c) return std::nullopt;
  size_t i = 19;
  double frac = 0;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i + 1) return std::nullopt;
    frac = parseDecimal(std::string("0") + std::string(s.substr(i, j - i))).value_or(0);
    i = j;
  }
  if (i >= s.size()) return std::nullopt;
  double offsetS = 0;
  const std::string_view zone = s.substr(i);
  if (zone == "Z" || zone == "z") {
    offsetS = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    auto oh = parseUnsigned(zone.substr(1, 2)), om = parseUnsigned(zone.substr(4, 2));
    if (!oh || !om || *oh > 23 || *om > 59) return std::nullopt;
    offsetS = (*oh * 3600.0 + *om * 60.0) * (zone[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  auto base = epochOf(*y, *mon, *d, c->h, c->m, c->s);
  if (!base) return std::nullopt;
  return *base + frac - offsetS;
}

std::optional<double> parseGoDuration(std::string_view s) {
  if (auto plain = parseDecimal(s)) {
    if (*plain < 0) return std::nullopt;
    return *plain;
  }
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    auto number = parseDecimal(s.substr(i, j - i));
    if (!number) return std::nullopt;
    size_t k = j;
    while (k < s.size() && !std::isdigit(static_cast<unsigned char>(s[k])) && s[k] != '.') ++k;
    const std::string_view unit = s.substr(j, k - j);
    double scale = 0;
    if (unit == "h") scale = 3600;
    else if (unit == "m") scale = 60;
    else if (unit == "s") scale = 1;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") scale = 1e-6;
    else if (unit == "ns") scale = 1e-9;
    else return std::nullopt;
    total += *number * scale;
    i = k;
  }
  if (!std::isfinite(total)) return std::nullopt;
  return total;
}

std::string formatUtc(double epochS, bool dateToo) {
  // Beyond year 9999 the calendar types overflow; such times only come from absurd inputs.
  if (!std::isfinite(epochS) || epochS < 0 || epochS > 253402300799.0) return "an unknown time";
  const auto ms = static_cast<EpochMs>(std::floor(epochS)) * 1000;
  return dateToo ? tg::formatUtc(ms, UtcStyle::Readable) : tg::formatUtc(ms, UtcStyle::Clock) + " UTC";
}

}  // namespace tg
