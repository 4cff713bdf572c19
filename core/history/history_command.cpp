#include "history_command.h"

#include "history_reader.h"
#include "json_text.h"
#include "time_text.h"

#include <nlohmann/json.hpp>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <tuple>

namespace tg {
namespace {

// The export's partial file while it is being written, for a signal to remove: Ctrl-C part-way left an
// "out.csv.partial-XXXXXX" beside the export for good.
char gPartialPath[4096];
volatile std::sig_atomic_t gPartialArmed = 0;

void removePartialThenDie(int sig) {
  if (gPartialArmed) ::unlink(gPartialPath);  // async-signal-safe
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// While armed, SIGINT, SIGTERM and SIGHUP remove the partial file and then end the process as they would have.
class PartialFileSignals {
 public:
  explicit PartialFileSignals(const std::string& path) {
    if (path.size() >= sizeof gPartialPath) return;  // not removed on a signal; never longer than PATH_MAX here
    std::memcpy(gPartialPath, path.c_str(), path.size() + 1);
    struct sigaction sa {};
    sa.sa_handler = &removePartialThenDie;
    sigemptyset(&sa.sa_mask);
    gPartialArmed = 1;
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      struct sigaction old {};
      ::sigaction(kSignals[i], nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // ignored (nohup): stays ignored
      ::sigaction(kSignals[i], &sa, &old_[i]);
      set_[i] = true;
    }
  }
  ~PartialFileSignals() {
    gPartialArmed = 0;
    for (std::size_t i = 0; i < kSignals.size(); ++i)
      if (set_[i]) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  PartialFileSignals(const PartialFileSignals&) = delete;
  PartialFileSignals& operator=(const PartialFileSignals&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
  std::array<bool, 3> set_{};
};

constexpr std::int64_t kExportChunkMs = 3600 * 1000;

using Status = HistoryOutcome::Status;

HistoryOutcome failed(HistoryOutcome o, std::string error) {
  o.status = Status::Failed;
  o.error = std::move(error);
  return o;
}

HistoryOutcome badRequest(std::string error) {
  HistoryOutcome o;
  o.status = Status::BadRequest;
  o.error = std::move(error);
  return o;
}

std::string iso(EpochMs ms) { return formatUtc(ms, UtcStyle::IsoMillis); }

std::string label(const HistoryRequest& r) { return "history " + std::string(historyActionName(r.action)); }

std::string num(double v, int decimals = 1) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string csvNum(double v) {
  if (std::isnan(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Text from the history file on a terminal line: a crafted or copied file's names and messages may hold escape
// sequences (a group named ESC[2J cleared the screen) or bytes that are not UTF-8.
std::string shown(const std::string& text) { return toValidUtf8(escapeControlBytes(text)); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + shown(x);
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

// Opens the file; on refusal *outcome holds the error. A warning (strict read beside a -wal file) is a note.
std::unique_ptr<HistoryReader> openReader(const HistoryRequest& a, HistoryOutcome* outcome) {
  std::string error;
  HistoryReaderOptions o;
  o.strict = a.strict;
  auto r = HistoryReader::open(a.db, o, &error);
  if (!r) *outcome = failed(std::move(*outcome), "history: " + error);
  else if (!r->warning().empty()) outcome->notes.push_back("history: warning: " + r->warning());
  return r;
}

HistoryOutcome cmdIncidents(const HistoryRequest& a, std::ostream& out) {
  HistoryOutcome outcome;
  auto r = openReader(a, &outcome);
  if (!r) return outcome;
  if (a.id) {
    const auto& idText = *a.id;
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(idText.c_str(), &end, 10);
    if (idText.empty() || *end != '\0' || errno == ERANGE || id < 1) {  // 99999999999999999999 read as INT64_MAX
      outcome.status = Status::BadRequest;
      outcome.error = "history incidents: --id: expected an incident number (1 and up), got '" + shown(idText) + "'";
      return outcome;
    }
    auto res = r->incident(id);
    if (!res.ok()) return failed(std::move(outcome), "history: " + a.db + ": " + res.error);
    if (!res.value) return failed(std::move(outcome), "history incidents: no incident with id " + std::to_string(id));
    const Incident& i = *res.value;
    out << "incident " << i.id << "\n  start    " << iso(i.startMs) << "\n  end      " << iso(i.endMs)
        << "\n  duration " << duration(i.durationMs()) << "\n  groups   " << joined(i.groups) << "\n  reasons  "
        << joined(i.reasons) << "\n  peak 429/s " << num(i.peak429PerS) << ", total 429s " << i.total429 << ", shed "
        << i.shed << "\n  operator actions: " << i.operatorActions.size() << "\n";
    for (const auto& e : i.operatorActions)
      out << "    " << iso(e.tsMs) << " " << shown(e.message) << " " << dumpJson(e.detail) << "\n";
    return outcome;
  }
  auto res = r->incidents();
  if (!res.ok()) return failed(std::move(outcome), "history: " + a.db + ": " + res.error);
  out << "id\tstart\tduration\tgroups\tpeak_429_per_s\ttotal_429\tshed\toperator_actions\treasons\n";
  for (const auto& i : res.value)
    out << i.id << "\t" << iso(i.startMs) << "\t" << duration(i.durationMs()) << "\t" << joined(i.groups) << "\t"
        << num(i.peak429PerS) << "\t" << i.total429 << "\t" << i.shed << "\t" << i.operatorActions.size() << "\t"
        << joined(i.reasons) << "\n";
  out << res.value.size() << " incident(s)\n";
  // What the writer has not scanned yet (killed before its next scan): found here, recorded by its next run.
  if (auto fresh = r->unscannedIncidents(); fresh.ok() && !fresh.value.empty()) {
    for (const auto& i : fresh.value)
      out << "-\t" << iso(i.startMs) << "\t" << duration(i.durationMs()) << "\t" << joined(i.groups) << "\t"
          << num(i.peak429PerS) << "\t" << i.total429 << "\t" << i.shed << "\t" << i.operatorActions.size() << "\t"
          << joined(i.reasons) << "\n";
    out << fresh.value.size() << " more in samples the writer has not scanned yet (it scans every 30 s and at a "
        << "clean stop; killed?): no id until a run records them\n";
  }
  return outcome;
}

// Both ends of the range, or the error naming the one that is wrong.
std::optional<std::string> parseRange(const HistoryRequest& a, EpochMs* from, EpochMs* to) {
  for (const auto& [name, text, into] : {std::tuple{"--from", &a.from, from}, std::tuple{"--to", &a.to, to}}) {
    if (!*text) return label(a) + ": missing " + name;
    auto t = parseHistoryTime(**text, a.nowMs);
    if (!t)
      return label(a) + ": " + name + ": cannot read '" + **text +
             "' as a time between 0000-01-01 and 9999-12-31 (epoch ms, 2026-11-29T02:00:00Z, now, -15m)";
    *into = *t;
  }
  if (*to <= *from) return label(a) + ": --to must be after --from";
  return std::nullopt;
}

HistoryOutcome cmdShow(const HistoryRequest& a, std::ostream& out) {
  EpochMs from = 0, to = 0;
  if (auto problem = parseRange(a, &from, &to)) return badRequest(std::move(*problem));
  int points = 60;
  if (a.points) {
    const auto& p = *a.points;
    char* end = nullptr;
    const long v = std::strtol(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v < 1 || v > 100000)
      return badRequest("history show: --points: expected 1..100000, got '" + p + "'");
    points = static_cast<int>(v);
  }
  HistoryOutcome outcome;
  auto r = openReader(a, &outcome);
  if (!r) return outcome;
  std::vector<std::string> groups;
  if (a.group) {
    // A group the file has never seen is a typo, not a quiet range (it printed no series and exited 0).
    auto known = r->groups();
    if (!known.ok()) return failed(std::move(outcome), "history: " + a.db + ": " + known.error);
    if (std::find(known.value.begin(), known.value.end(), *a.group) == known.value.end()) {
      std::string names;
      for (const auto& g : known.value) names += (names.empty() ? "" : ", ") + shown(g);
      outcome.status = Status::BadRequest;
      outcome.error = "history show: --group: no group '" + shown(*a.group) + "' in " + a.db + " (it has: " +
                      (names.empty() ? "none" : names) + ")";
      return outcome;
    }
    groups.push_back(*a.group);
  }
  auto series = r->samples(from, to, groups, points);
  auto events = r->events(from, to, groups, {});
  if (!series.ok() || !events.ok())
    return failed(std::move(outcome), "history: " + a.db + ": " + (series.ok() ? events.error : series.error));
  for (const auto& s : series.value) {
    out << "group " << shown(s.group) << " (bucket " << duration(s.bucketMs) << ", " << s.buckets.size() << " points)\n";
    out << "time\tsends/s\tok/s\t429/s max\t5xx/s max\tshed\tin_flight max\tqueue max\tp95_ms max\tbreaker max\n";
    for (const auto& b : s.buckets) {
      out << iso(b.startMs) << (b.fromRollup ? "*" : "") << "\t" << num(b[Metric::Sends].avg) << "\t"
          << num(b[Metric::Ok].avg) << "\t" << num(b[Metric::R429].max, 0) << "\t" << num(b[Metric::R5xx].max, 0) << "\t"
          << num(b[Metric::Shed].max, 0) << "\t" << num(b[Metric::InFlight].max, 0) << "\t"
          << num(b[Metric::QueueDepth].max, 0) << "\t" << num(b[Metric::P95Ms].max, 0) << "\t"
          << num(b[Metric::Breaker].max, 0) << "\n";
    }
  }
  out << events.value.size() << " event(s)\n";
  for (const auto& e : events.value)
    out << iso(e.tsMs) << "\t" << eventKindName(e.kind) << "\t" << severityName(e.severity) << "\t"
        << (e.group.empty() ? "-" : shown(e.group)) << "\t" << shown(e.message) << "\n";
  if (std::any_of(series.value.begin(), series.value.end(), [](const SampleSeries& s) {
        return std::any_of(s.buckets.begin(), s.buckets.end(), [](const SampleBucket& b) { return b.fromRollup; });
      }))
    out << "* read from the 10 s / 1 min rollups: min and max exact, averages weighted by samples\n";
  return outcome;
}

void writeSampleCsvHeader(std::ostream& o) {
  o << "ts_ms,group,req_remaining,req_limit,tok_remaining,tok_limit,reset_at_ms,in_flight,concurrency_limit,"
       "queue_p0,queue_p1,queue_p2,sends,ok,r429,r5xx,retries,shed,p50_ms,p95_ms,breaker,interval_s,"
       "arrivals_p0,arrivals_p1,arrivals_p2\n";
}

void writeSampleCsv(std::ostream& o, const Sample& s) {
  o << s.tsMs << "," << csvCell(s.group) << "," << csvNum(s.reqRemaining) << "," << csvNum(s.reqLimit) << ","
    << csvNum(s.tokRemaining) << "," << csvNum(s.tokLimit) << "," << s.resetAtMs << "," << s.inFlight << ","
    << s.concurrencyLimit << "," << s.queueDepth[0] << "," << s.queueDepth[1] << "," << s.queueDepth[2] << "," << s.sends
    << "," << s.ok << "," << s.r429 << "," << s.r5xx << "," << s.retries << "," << s.shed << "," << csvNum(s.p50Ms) << ","
    << csvNum(s.p95Ms) << "," << breakerStateName(s.breaker) << "," << csvNum(s.intervalS) << "," << s.arrivals[0] << ","
    << s.arrivals[1] << "," << s.arrivals[2] << "\n";
}

nlohmann::json sampleJson(const Sample& s) {
  return {{"type", "sample"}, {"ts_ms", s.tsMs}, {"group", s.group},
          {"req_remaining", numberOrNull(s.reqRemaining)}, {"req_limit", numberOrNull(s.reqLimit)},
          {"tok_remaining", numberOrNull(s.tokRemaining)}, {"tok_limit", numberOrNull(s.tokLimit)},
          {"reset_at_ms", s.resetAtMs}, {"in_flight", s.inFlight}, {"concurrency_limit", s.concurrencyLimit},
          {"queue_depth", s.queueDepth}, {"sends", s.sends}, {"ok", s.ok}, {"r429", s.r429}, {"r5xx", s.r5xx},
          {"retries", s.retries}, {"shed", s.shed}, {"p50_ms", numberOrNull(s.p50Ms)}, {"p95_ms", numberOrNull(s.p95Ms)},
          {"breaker", breakerStateName(s.breaker)}, {"interval_s", s.intervalS}, {"arrivals", s.arrivals}};
}

HistoryOutcome cmdExport(const HistoryRequest& a, std::ostream& out) {
  EpochMs from = 0, to = 0;
  if (auto problem = parseRange(a, &from, &to)) return badRequest(std::move(*problem));
  if (!a.format) return badRequest("history export: missing --format (csv or jsonl)");
  const std::string format = *a.format;
  if (format != "csv" && format != "jsonl")
    return badRequest("history export: --format: expected csv or jsonl, got '" + format + "'");
  const std::string what = a.what.value_or("samples");
  if (what != "samples" && what != "events" && what != "requests")
    return badRequest("history export: --what: expected samples, events or requests, got '" + what + "'");
  HistoryOutcome outcome;
  auto r = openReader(a, &outcome);
  if (!r) return outcome;
  std::ofstream file;
  std::ostream* o = &out;
  std::string finalPath;  // --out, its symlinks resolved
  // A file is written beside its name and renamed over it once whole: a failure part-way (a corrupt page, a full
  // disk) left a 12 KB export cut to 228 bytes. A device or pipe (not a regular file) is written as it is.
  struct Partial {
    std::string path;  // removed unless kept, on a signal too
    bool keep = false;
    std::optional<PartialFileSignals> signals;
    ~Partial() {
      if (!keep && !path.empty()) ::unlink(path.c_str());
      signals.reset();  // after: a signal in between unlinks a name already gone
    }
  } partial;
  if (a.out) {
    const auto& path = *a.out;
    if (std::string clash = historyFileClash(path, a.db); !clash.empty()) {
      outcome.status = Status::BadRequest;
      outcome.error = "history export: --out: refusing to overwrite " + clash;
      return outcome;
    }
    struct stat st {};
    const bool exists = ::stat(path.c_str(), &st) == 0;  // through a symlink: the file it names
    const bool special = exists && !S_ISREG(st.st_mode);
    std::error_code ec;
    // A symlink's target is what gets replaced (not the link), keeping the mode it had (a 0600 export of client
    // names and key fingerprints must not come back 0644). The partial file is made new and exclusively
    // (mkstemp: no name another user could plant a link at); where none can be made (a writable file in a
    // read-only folder) the file is written in place.
    finalPath = exists ? std::filesystem::canonical(path, ec).string() : path;
    if (ec) finalPath = path;
    std::string target = path;
    if (!special) {
      std::string name = finalPath + ".partial-XXXXXX";
      if (const int fd = ::mkstemp(name.data()); fd >= 0) {
        // mkstemp's 0600 for a new file would be a change: the mode a plain create gives (0666 less the umask).
        const mode_t mask = ::umask(0);
        ::umask(mask);
        ::fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask));
        ::close(fd);
        target = name;
        partial.path = name;
        partial.signals.emplace(name);
      }
    }
    file.open(target, std::ios::binary | std::ios::trunc);
    if (!file)
      return failed(std::move(outcome), "history export: --out: cannot write '" + target + "': " + std::strerror(errno));
    o = &file;
  }
  const bool csv = format == "csv";
  std::size_t rows = 0;
  if (what == "samples") {
    if (csv) writeSampleCsvHeader(*o);
    // Hour by hour, so a long export never holds the whole range in memory; only over the hours the file holds
    // (from 0 it walked 490,000 empty hours: 24 s of CPU for a 30 s recording, 70 minutes for 0000..9999).
    EpochMs first = from, last = to;
    if (auto range = r->timeRange(); range.ok() && !range.value.empty) {
      first = std::max(from, range.value.fromMs);
      last = std::min(to, range.value.toMs + 1);
    } else if (range.ok()) {
      last = first;  // nothing recorded
    }
    for (EpochMs t = first; t < last; t += kExportChunkMs) {
      auto res = r->rawSamples(t, std::min(last, t + kExportChunkMs), {});
      if (!res.ok()) return failed(std::move(outcome), "history: " + a.db + ": " + res.error);
      std::stable_sort(res.value.begin(), res.value.end(), [](const Sample& x, const Sample& y) { return x.tsMs < y.tsMs; });
      for (const auto& s : res.value) {
        if (csv) writeSampleCsv(*o, s);
        else *o << dumpJson(sampleJson(s)) << "\n";
      }
      rows += res.value.size();
    }
  } else if (what == "events") {
    auto res = r->events(from, to, {}, {});
    if (!res.ok()) return failed(std::move(outcome), "history: " + a.db + ": " + res.error);
    if (csv) *o << "ts_ms,kind,severity,group,message,detail\n";
    for (const auto& e : res.value) {
      if (csv)
        *o << e.tsMs << "," << eventKindName(e.kind) << "," << severityName(e.severity) << "," << csvCell(e.group) << ","
           << csvCell(toValidUtf8(e.message)) << "," << csvCell(dumpJson(e.detail)) << "\n";
      else {
        auto j = toJson(e);
        j["type"] = "event";
        *o << dumpJson(j) << "\n";
      }
    }
    rows = res.value.size();
  } else {
    auto res = r->requestTable(from, to, /*perMinute=*/true);
    if (!res.ok()) return failed(std::move(outcome), "history: " + a.db + ": " + res.error);
    if (csv) *o << "minute_ms,group,key_fingerprint,endpoint,client,requests,r429,r5xx,net_errors,retries,avg_latency_ms,p95_latency_ms\n";
    for (const auto& q : res.value) {
      if (csv)
        *o << q.minuteMs << "," << csvCell(q.group) << "," << csvCell(q.keyFingerprint) << "," << csvCell(q.endpoint) << ","
           << csvCell(q.client) << "," << q.requests << "," << q.r429 << "," << q.r5xx << "," << q.netErrors << "," << q.retries << ","
           << csvNum(q.avgLatencyMs) << "," << csvNum(q.p95LatencyMs) << "\n";
      else
        *o << dumpJson(nlohmann::json{{"type", "requests"}, {"minute_ms", q.minuteMs}, {"group", q.group},
                             {"key_fingerprint", q.keyFingerprint}, {"endpoint", q.endpoint}, {"client", q.client}, {"requests", q.requests},
                             {"r429", q.r429}, {"r5xx", q.r5xx}, {"net_errors", q.netErrors}, {"retries", q.retries},
                             {"avg_latency_ms", numberOrNull(q.avgLatencyMs)}, {"p95_latency_ms", numberOrNull(q.p95LatencyMs)}})
           << "\n";
    }
    rows = res.value.size();
  }
  o->flush();
  if (o == &file) file.close();  // a full disk shows at the close
  if (!*o)
    return failed(std::move(outcome), "history export: cannot write " +
                                          (a.out ? "'" + *a.out + "'" : std::string("to standard output")) + ": " +
                                          std::strerror(errno ? errno : EIO));
  if (!partial.path.empty()) {
    if (std::rename(partial.path.c_str(), finalPath.c_str()) != 0)
      return failed(std::move(outcome), "history export: cannot write '" + *a.out + "': " + std::strerror(errno));
    partial.signals.reset();  // disarmed after the rename: a signal between the two unlinks a name now gone
    partial.keep = true;
  }
  if (o != &out) outcome.notes.push_back("history export: " + std::to_string(rows) + " " + what + " rows written");
  return outcome;
}

HistoryOutcome cmdCheck(const HistoryRequest& a, std::ostream& out) {
  const auto& path = a.db;
  HistoryOutcome outcome;
  auto r = openReader(a, &outcome);
  if (!r) return outcome;
  auto integrity = r->integrityCheck();
  auto counts = r->rowCounts();
  auto range = r->timeRange();
  for (const auto* e : {&integrity.error, &counts.error, &range.error}) {
    if (!e->empty()) return failed(std::move(outcome), "history: " + a.db + ": " + *e);
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
  else out << "time range      " << iso(range.value.fromMs) << " .. " << iso(range.value.toMs) << "\n";
  if (!ok) outcome.status = Status::Failed;
  return outcome;
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
  // The month's own length (2026-02-30 was read as 2 March).
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[mo - 1] + (mo == 2 && leap ? 1 : 0)) return std::nullopt;
  if (y < 0) return std::nullopt;
  return inRange(((daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 24 + h) * 60 + mi) * 60'000LL +
                 s * 1000LL + ms);
}

std::string_view historyActionName(HistoryAction a) {
  switch (a) {
    case HistoryAction::Incidents: return "incidents";
    case HistoryAction::Show: return "show";
    case HistoryAction::Export: return "export";
    case HistoryAction::Check: return "check";
  }
  return "check";
}

std::optional<HistoryAction> historyActionFromName(std::string_view name) {
  for (HistoryAction a : {HistoryAction::Incidents, HistoryAction::Show, HistoryAction::Export, HistoryAction::Check})
    if (historyActionName(a) == name) return a;
  return std::nullopt;
}

HistoryOutcome runHistoryAction(const HistoryRequest& request, std::ostream& out) {
  switch (request.action) {
    case HistoryAction::Incidents: return cmdIncidents(request, out);
    case HistoryAction::Show: return cmdShow(request, out);
    case HistoryAction::Export: return cmdExport(request, out);
    case HistoryAction::Check: return cmdCheck(request, out);
  }
  return cmdCheck(request, out);
}

}  // namespace tg
