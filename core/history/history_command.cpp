#include "history_command.h"

#include "history_reader.h"
#include "json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace tg {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr std::int64_t kExportChunkMs = 3600 * 1000;

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
  std::int64_t y;
  unsigned m, d;
};
Civil civilFromDays(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

struct Args {
  std::string command;
  std::map<std::string, std::string> opts;
  bool strict = false;
};

const std::map<std::string, std::set<std::string>> kAllowed = {
    {"incidents", {"--db", "--id"}},
    {"show", {"--db", "--from", "--to", "--group", "--points"}},
    {"export", {"--db", "--from", "--to", "--format", "--what", "--out"}},
    {"check", {"--db"}},
};

void usage(std::ostream& err) {
  err << "usage: tollgate history incidents --db FILE [--id N]\n"
         "       tollgate history show --db FILE --from T --to T [--group G] [--points N]\n"
         "       tollgate history export --db FILE --from T --to T --format csv|jsonl [--what samples|events|requests] "
         "[--out FILE]\n"
         "       tollgate history check --db FILE\n"
         "  T: epoch ms, 2026-11-29T02:00:00Z, now, or relative -90s/-15m/-1h/-2d; --strict: immutable read\n";
}

std::string num(double v, int decimals = 1) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csvNum(double v) {
  if (std::isnan(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

nlohmann::json jsonNum(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::string duration(std::int64_t ms) {
  const auto s = ms / 1000;
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  return buf;
}

std::unique_ptr<HistoryReader> openReader(const Args& a, std::ostream& err) {
  std::string error;
  HistoryReaderOptions o;
  o.strict = a.strict;
  auto r = HistoryReader::open(a.opts.at("--db"), o, &error);
  if (!r) err << "history: " << error << "\n";
  else if (!r->warning().empty()) err << "history: warning: " << r->warning() << "\n";
  return r;
}

int cmdIncidents(const Args& a, std::ostream& out, std::ostream& err) {
  auto r = openReader(a, err);
  if (!r) return kExitFailed;
  if (a.opts.count("--id")) {
    const auto& idText = a.opts.at("--id");
    char* end = nullptr;
    const long long id = std::strtoll(idText.c_str(), &end, 10);
    if (idText.empty() || *end != '\0') {
      err << "history incidents: --id: expected a number, got '" << idText << "'\n";
      return kExitUsage;
    }
    auto res = r->incident(id);
    if (!res.ok()) {
      err << "history: " << res.error << "\n";
      return kExitFailed;
    }
    if (!res.value) {
      err << "history incidents: no incident with id " << id << "\n";
      return kExitFailed;
    }
    const Incident& i = *res.value;
    out << "incident " << i.id << "\n  start    " << formatIsoUtc(i.startMs) << "\n  end      " << formatIsoUtc(i.endMs)
        << "\n  duration " << duration(i.durationMs()) << "\n  groups   " << joined(i.groups) << "\n  reasons  "
        << joined(i.reasons) << "\n  peak 429/s " << num(i.peak429PerS) << ", total 429s " << i.total429 << ", shed "
        << i.shed << "\n  operator actions: " << i.operatorActions.size() << "\n";
    for (const auto& e : i.operatorActions)
      out << "    " << formatIsoUtc(e.tsMs) << " " << e.message << " " << dumpJson(e.detail) << "\n";
    return kExitOk;
  }
  auto res = r->incidents();
  if (!res.ok()) {
    err << "history: " << res.error << "\n";
    return kExitFailed;
  }
  out << "id\tstart\tduration\tgroups\tpeak_429_per_s\ttotal_429\tshed\toperator_actions\treasons\n";
  for (const auto& i : res.value)
    out << i.id << "\t" << formatIsoUtc(i.startMs) << "\t" << duration(i.durationMs()) << "\t" << joined(i.groups) << "\t"
        << num(i.peak429PerS) << "\t" << i.total429 << "\t" << i.shed << "\t" << i.operatorActions.size() << "\t"
        << joined(i.reasons) << "\n";
  out << res.value.size() << " incident(s)\n";
  return kExitOk;
}

bool parseRange(const Args& a, EpochMs* from, EpochMs* to, std::ostream& err) {
  const EpochMs now = nowEpochMs();
  for (const char* name : {"--from", "--to"}) {
    auto it = a.opts.find(name);
    if (it == a.opts.end()) {
      err << "history " << a.command << ": missing " << name << "\n";
      return false;
    }
    auto t = parseHistoryTime(it->second, now);
    if (!t) {
      err << "history " << a.command << ": " << name << ": cannot read '" << it->second
          << "' as a time between 0000-01-01 and 9999-12-31 (epoch ms, 2026-11-29T02:00:00Z, now, -15m)\n";
      return false;
    }
    *(std::string(name) == "--from" ? from : to) = *t;
  }
  if (*to <= *from) {
    err << "history " << a.command << ": --to must be after --from\n";
    return false;
  }
  return true;
}

int cmdShow(const Args& a, std::ostream& out, std::ostream& err) {
  EpochMs from = 0, to = 0;
  if (!parseRange(a, &from, &to, err)) return kExitUsage;
  int points = 60;
  if (a.opts.count("--points")) {
    const auto& p = a.opts.at("--points");
    char* end = nullptr;
    const long v = std::strtol(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v < 1 || v > 100000) {
      err << "history show: --points: expected 1..100000, got '" << p << "'\n";
      return kExitUsage;
    }
    points = static_cast<int>(v);
  }
  auto r = openReader(a, err);
  if (!r) return kExitFailed;
  std::vector<std::string> groups;
  if (a.opts.count("--group")) groups.push_back(a.opts.at("--group"));
  auto series = r->samples(from, to, groups, points);
  auto events = r->events(from, to, groups, {});
  if (!series.ok() || !events.ok()) {
    err << "history: " << (series.ok() ? events.error : series.error) << "\n";
    return kExitFailed;
  }
  for (const auto& s : series.value) {
    out << "group " << s.group << " (bucket " << duration(s.bucketMs) << ", " << s.buckets.size() << " points)\n";
    out << "time\tsends/s\tok/s\t429/s max\t5xx/s max\tshed\tin_flight max\tqueue max\tp95_ms max\tbreaker max\n";
    for (const auto& b : s.buckets) {
      out << formatIsoUtc(b.startMs) << (b.fromRollup ? "*" : "") << "\t" << num(b[Metric::Sends].avg) << "\t"
          << num(b[Metric::Ok].avg) << "\t" << num(b[Metric::R429].max, 0) << "\t" << num(b[Metric::R5xx].max, 0) << "\t"
          << num(b[Metric::Shed].max, 0) << "\t" << num(b[Metric::InFlight].max, 0) << "\t"
          << num(b[Metric::QueueDepth].max, 0) << "\t" << num(b[Metric::P95Ms].max, 0) << "\t"
          << num(b[Metric::Breaker].max, 0) << "\n";
    }
  }
  out << events.value.size() << " event(s)\n";
  for (const auto& e : events.value)
    out << formatIsoUtc(e.tsMs) << "\t" << eventKindName(e.kind) << "\t" << severityName(e.severity) << "\t"
        << (e.group.empty() ? "-" : e.group) << "\t" << e.message << "\n";
  if (std::any_of(series.value.begin(), series.value.end(), [](const SampleSeries& s) {
        return std::any_of(s.buckets.begin(), s.buckets.end(), [](const SampleBucket& b) { return b.fromRollup; });
      }))
    out << "* read from the 10 s / 1 min rollups: min and max exact, averages weighted by samples\n";
  return kExitOk;
}

void writeSampleCsvHeader(std::ostream& o) {
  o << "ts_ms,group,req_remaining,req_limit,tok_remaining,tok_limit,reset_at_ms,in_flight,concurrency_limit,"
       "queue_p0,queue_p1,queue_p2,sends,ok,r429,r5xx,retries,shed,p50_ms,p95_ms,breaker,interval_s,"
       "arrivals_p0,arrivals_p1,arrivals_p2\n";
}

void writeSampleCsv(std::ostream& o, const Sample& s) {
  o << s.tsMs << "," << csvField(s.group) << "," << csvNum(s.reqRemaining) << "," << csvNum(s.reqLimit) << ","
    << csvNum(s.tokRemaining) << "," << csvNum(s.tokLimit) << "," << s.resetAtMs << "," << s.inFlight << ","
    << s.concurrencyLimit << "," << s.queueDepth[0] << "," << s.queueDepth[1] << "," << s.queueDepth[2] << "," << s.sends
    << "," << s.ok << "," << s.r429 << "," << s.r5xx << "," << s.retries << "," << s.shed << "," << csvNum(s.p50Ms) << ","
    << csvNum(s.p95Ms) << "," << breakerStateName(s.breaker) << "," << csvNum(s.intervalS) << "," << s.arrivals[0] << ","
    << s.arrivals[1] << "," << s.arrivals[2] << "\n";
}

nlohmann::json sampleJson(const Sample& s) {
  return {{"type", "sample"}, {"ts_ms", s.tsMs}, {"group", s.group},
          {"req_remaining", jsonNum(s.reqRemaining)}, {"req_limit", jsonNum(s.reqLimit)},
          {"tok_remaining", jsonNum(s.tokRemaining)}, {"tok_limit", jsonNum(s.tokLimit)},
          {"reset_at_ms", s.resetAtMs}, {"in_flight", s.inFlight}, {"concurrency_limit", s.concurrencyLimit},
          {"queue_depth", s.queueDepth}, {"sends", s.sends}, {"ok", s.ok}, {"r429", s.r429}, {"r5xx", s.r5xx},
          {"retries", s.retries}, {"shed", s.shed}, {"p50_ms", jsonNum(s.p50Ms)}, {"p95_ms", jsonNum(s.p95Ms)},
          {"breaker", breakerStateName(s.breaker)}, {"interval_s", s.intervalS}, {"arrivals", s.arrivals}};
}

int cmdExport(const Args& a, std::ostream& out, std::ostream& err) {
  EpochMs from = 0, to = 0;
  if (!parseRange(a, &from, &to, err)) return kExitUsage;
  const auto fmtIt = a.opts.find("--format");
  if (fmtIt == a.opts.end()) {
    err << "history export: missing --format (csv or jsonl)\n";
    return kExitUsage;
  }
  const std::string format = fmtIt->second;
  if (format != "csv" && format != "jsonl") {
    err << "history export: --format: expected csv or jsonl, got '" << format << "'\n";
    return kExitUsage;
  }
  const std::string what = a.opts.count("--what") ? a.opts.at("--what") : "samples";
  if (what != "samples" && what != "events" && what != "requests") {
    err << "history export: --what: expected samples, events or requests, got '" << what << "'\n";
    return kExitUsage;
  }
  auto r = openReader(a, err);
  if (!r) return kExitFailed;
  std::ofstream file;
  std::ostream* o = &out;
  if (a.opts.count("--out")) {
    const auto& path = a.opts.at("--out");
    std::error_code ec;
    if (std::filesystem::equivalent(path, a.opts.at("--db"), ec)) {
      err << "history export: --out: refusing to overwrite the database itself\n";
      return kExitUsage;
    }
    file.open(path, std::ios::binary | std::ios::trunc);
    if (!file) {
      err << "history export: --out: cannot write '" << path << "'\n";
      return kExitFailed;
    }
    o = &file;
  }
  const bool csv = format == "csv";
  std::size_t rows = 0;
  if (what == "samples") {
    if (csv) writeSampleCsvHeader(*o);
    // Hour by hour, so a long export never holds the whole range in memory.
    for (EpochMs t = from; t < to; t += kExportChunkMs) {
      auto res = r->rawSamples(t, std::min(to, t + kExportChunkMs), {});
      if (!res.ok()) {
        err << "history: " << res.error << "\n";
        return kExitFailed;
      }
      std::stable_sort(res.value.begin(), res.value.end(), [](const Sample& x, const Sample& y) { return x.tsMs < y.tsMs; });
      for (const auto& s : res.value) {
        if (csv) writeSampleCsv(*o, s);
        else *o << dumpJson(sampleJson(s)) << "\n";
      }
      rows += res.value.size();
    }
  } else if (what == "events") {
    auto res = r->events(from, to, {}, {});
    if (!res.ok()) {
      err << "history: " << res.error << "\n";
      return kExitFailed;
    }
    if (csv) *o << "ts_ms,kind,severity,group,message,detail\n";
    for (const auto& e : res.value) {
      if (csv)
        *o << e.tsMs << "," << eventKindName(e.kind) << "," << severityName(e.severity) << "," << csvField(e.group) << ","
           << csvField(toValidUtf8(e.message)) << "," << csvField(dumpJson(e.detail)) << "\n";
      else {
        auto j = toJson(e);
        j["type"] = "event";
        *o << dumpJson(j) << "\n";
      }
    }
    rows = res.value.size();
  } else {
    auto res = r->requestTable(from, to, /*perMinute=*/true);
    if (!res.ok()) {
      err << "history: " << res.error << "\n";
      return kExitFailed;
    }
    if (csv) *o << "minute_ms,group,key_fingerprint,endpoint,requests,r429,r5xx,net_errors,retries,avg_latency_ms,p95_latency_ms\n";
    for (const auto& q : res.value) {
      if (csv)
        *o << q.minuteMs << "," << csvField(q.group) << "," << csvField(q.keyFingerprint) << "," << csvField(q.endpoint) << ","
           << q.requests << "," << q.r429 << "," << q.r5xx << "," << q.netErrors << "," << q.retries << ","
           << csvNum(q.avgLatencyMs) << "," << csvNum(q.p95LatencyMs) << "\n";
      else
        *o << dumpJson(nlohmann::json{{"type", "requests"}, {"minute_ms", q.minuteMs}, {"group", q.group},
                             {"key_fingerprint", q.keyFingerprint}, {"endpoint", q.endpoint}, {"requests", q.requests},
                             {"r429", q.r429}, {"r5xx", q.r5xx}, {"net_errors", q.netErrors}, {"retries", q.retries},
                             {"avg_latency_ms", jsonNum(q.avgLatencyMs)}, {"p95_latency_ms", jsonNum(q.p95LatencyMs)}})
           << "\n";
    }
    rows = res.value.size();
  }
  o->flush();
  if (!*o) {
    err << "history export: write failed\n";
    return kExitFailed;
  }
  if (o != &out) err << "history export: " << rows << " " << what << " rows written\n";
  return kExitOk;
}

int cmdCheck(const Args& a, std::ostream& out, std::ostream& err) {
  const auto& path = a.opts.at("--db");
  auto r = openReader(a, err);
  if (!r) return kExitFailed;
  auto integrity = r->integrityCheck();
  auto counts = r->rowCounts();
  auto range = r->timeRange();
  for (const auto* e : {&integrity.error, &counts.error, &range.error}) {
    if (!e->empty()) {
      err << "history: " << *e << "\n";
      return kExitFailed;
    }
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto wal = std::filesystem::exists(path + "-wal", ec) ? std::filesystem::file_size(path + "-wal", ec) : 0;
  const bool ok = integrity.value.size() == 1 && integrity.value[0] == "ok";
  out << "file            " << path << "\n"
      << "schema version  " << r->schemaVersion() << "\n"
      << "size            " << size << " bytes (+ " << wal << " bytes WAL)\n"
      << "integrity       " << (ok ? "ok" : "PROBLEMS") << "\n";
  if (!ok)
    for (const auto& line : integrity.value) out << "  " << line << "\n";
  for (const auto& [table, n] : counts.value) out << "rows " << table << std::string(11 - std::min<std::size_t>(10, table.size()), ' ') << n << "\n";
  if (range.value.empty) out << "time range      (empty)\n";
  else out << "time range      " << formatIsoUtc(range.value.fromMs) << " .. " << formatIsoUtc(range.value.toMs) << "\n";
  return ok ? kExitOk : kExitFailed;
}

}  // namespace

std::optional<EpochMs> parseHistoryTime(const std::string& t, EpochMs nowMs) {
  const auto inRange = [](EpochMs v) -> std::optional<EpochMs> {
    if (v < kMinHistoryMs || v > kMaxHistoryMs) return std::nullopt;
    return v;
  };
  if (t.empty()) return std::nullopt;
  if (t == "now") return inRange(nowMs);
  if (t[0] == '-' && t.size() >= 3) {
    char* end = nullptr;
    const double v = std::strtod(t.c_str() + 1, &end);
    const std::string unit(end);
    std::int64_t mul = 0;
    if (unit == "ms") mul = 1;
    else if (unit == "s") mul = 1000;
    else if (unit == "m") mul = 60'000;
    else if (unit == "h") mul = 3'600'000;
    else if (unit == "d") mul = 86'400'000;
    if (!mul || end == t.c_str() + 1 || !(v >= 0) || !inRange(nowMs)) return std::nullopt;
    // Checked in double before converting: -1e300d must not reach llround or the subtraction.
    const double back = v * static_cast<double>(mul);
    if (!(back <= static_cast<double>(nowMs - kMinHistoryMs))) return std::nullopt;
    return inRange(nowMs - static_cast<EpochMs>(std::llround(back)));
  }
  if (t.find_first_not_of("0123456789") == std::string::npos) {
    if (t.size() > 15) return std::nullopt;
    return inRange(static_cast<EpochMs>(std::stoll(t)));
  }
  int y, mo, d, h = 0, mi = 0, s = 0, ms = 0, n = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) == 6) {
    std::size_t pos = static_cast<std::size_t>(n);
    if (pos < t.size() && t[pos] == '.') {
      std::size_t digits = 0;
      ++pos;
      while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos]))) {
        if (digits < 3) ms = ms * 10 + (t[pos] - '0');
        ++digits;
        ++pos;
      }
      if (digits == 0) return std::nullopt;
      for (std::size_t k = digits; k < 3; ++k) ms *= 10;
    }
    if (pos != t.size() - 1 || t[pos] != 'Z') return std::nullopt;  // UTC only
  } else if (std::sscanf(t.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && static_cast<std::size_t>(n) == t.size()) {
  } else {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60)
    return std::nullopt;
  if (y < 0) return std::nullopt;
  return inRange(((daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 24 + h) * 60 + mi) * 60'000LL +
                 s * 1000LL + ms);
}

std::string formatIsoUtc(EpochMs ms) {
  const std::int64_t days = (ms >= 0 ? ms : ms - 86'399'999) / 86'400'000;
  const std::int64_t rem = ms - days * 86'400'000;
  const Civil c = civilFromDays(days);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", static_cast<long long>(c.y), c.m, c.d,
                static_cast<long long>(rem / 3'600'000), static_cast<long long>(rem / 60'000 % 60),
                static_cast<long long>(rem / 1000 % 60), static_cast<long long>(rem % 1000));
  return buf;
}

int runHistoryCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::size_t i = 0;
  if (i < argv.size() && argv[i] == "history") ++i;
  if (i >= argv.size()) {
    err << "history: missing subcommand (incidents, show, export, check)\n";
    usage(err);
    return kExitUsage;
  }
  Args a;
  a.command = argv[i++];
  const auto allowed = kAllowed.find(a.command);
  if (allowed == kAllowed.end()) {
    err << "history: unknown subcommand '" << a.command << "' (expected incidents, show, export or check)\n";
    usage(err);
    return kExitUsage;
  }
  for (; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w == "--strict") {
      a.strict = true;
      continue;
    }
    if (!allowed->second.count(w)) {
      err << "history " << a.command << ": unknown argument '" << w << "'\n";
      usage(err);
      return kExitUsage;
    }
    if (i + 1 >= argv.size()) {
      err << "history " << a.command << ": " << w << " needs a value\n";
      return kExitUsage;
    }
    if (a.opts.count(w)) {
      err << "history " << a.command << ": " << w << " given twice\n";
      return kExitUsage;
    }
    a.opts[w] = argv[++i];
  }
  if (!a.opts.count("--db")) {
    err << "history " << a.command << ": missing --db FILE\n";
    return kExitUsage;
  }
  if (a.command == "incidents") return cmdIncidents(a, out, err);
  if (a.command == "show") return cmdShow(a, out, err);
  if (a.command == "export") return cmdExport(a, out, err);
  return cmdCheck(a, out, err);
}

}  // namespace tg
