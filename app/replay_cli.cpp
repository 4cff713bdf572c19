// tollgate replay --incident ID | --from MS --to MS [--db FILE] [--override FILE] [--report out.json]
//                 [--speed K] [--pad S] [--strict]
// Re-drives a recorded incident (or range) through a fresh engine against the in-process simulator with the
// operator's overrides, prints recorded vs re-driven headline numbers and writes the report JSON.
#include "cli.h"

#include "command_line.h"
#include "history_reader.h"
#include "json_text.h"
#include "request_safety.h"
#include "session.h"
#include "what_if_runner.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <fstream>

namespace tg::cli {

namespace {

std::string cell(double v, int prec = 0) {
  if (!known(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

void printRow(const std::string& name, const Headline& a, const Headline& b) {
  std::printf("%-14s %9lld %9lld %8lld %8lld %9lld %9lld %9s %9s %9s %9s %9s %9s\n",
              toValidUtf8(escapeControlBytes(name)).c_str(), (long long)a.r429,
              (long long)b.r429, (long long)a.shed, (long long)b.shed, (long long)a.unfinished(),
              (long long)b.unfinished(), cell(a.completionS, 1).c_str(),
              cell(b.completionS, 1).c_str(), cell(a.p0P50Ms).c_str(), cell(b.p0P50Ms).c_str(), cell(a.p0P95Ms).c_str(),
              cell(b.p0P95Ms).c_str());
}

}  // namespace

int replayCommand(const std::vector<std::string>& args) {
  CommandLine a(
      "usage: tollgate replay --incident ID | --from MS --to MS [--db FILE] [--override FILE] [--report out.json]\n"
      "                       [--speed K] [--pad S] [--strict]\n",
      {{"--incident", "ID", "re-drive a recorded incident"},
       {"--from", "MS", "or a range of history: start, epoch ms"},
       {"--to", "MS", "end of the range, epoch ms"},
       {"--db", "FILE", "the history file (default: the user's)"},
       {"--override", "FILE", "what-if overrides (JSON)"},
       {"--report", "FILE", "write recorded vs re-driven as JSON"},
       {"--speed", "K", "re-drive K times faster, 1..1000 (default: 10)"},
       {"--pad", "S", "seconds of history before and after an incident (default: 30)"},
       {"--strict", "", "immutable read of the history file"}});
  if (auto answered = a.parseOrAnswer(args, "tollgate replay", std::cout, std::cerr)) return *answered;
  std::string err;
  const auto incident = a.number("--incident", &err);
  const auto from = a.number("--from", &err);
  const auto to = a.number("--to", &err);
  const double speed = a.number("--speed", &err).value_or(10);
  const double padS = a.number("--pad", &err).value_or(30);
  if (!err.empty()) {
    std::fprintf(stderr, "tollgate replay: %s\n", err.c_str());
    return kExitUsage;
  }
  if (!incident && !(from && to)) {
    std::fprintf(stderr, "tollgate replay: expected --incident ID or --from MS --to MS\n%s", a.usage().c_str());
    return kExitUsage;
  }
  if (incident && (from || to)) {  // --from/--to were silently ignored
    std::fprintf(stderr, "tollgate replay: --incident ID or --from/--to, not both\n");
    return kExitUsage;
  }
  if (incident && (*incident != std::floor(*incident) || *incident < 1)) {  // 1.5 re-drove incident 1
    std::fprintf(stderr, "tollgate replay: --incident: expected an incident number (1 and up), got %g\n", *incident);
    return kExitUsage;
  }
  if (from && to && !replaySpanProblem(EpochMs(*from), EpochMs(*to)).empty()) {
    std::fprintf(stderr, "tollgate replay: --from/--to: %s\n", replaySpanProblem(EpochMs(*from), EpochMs(*to)).c_str());
    return kExitUsage;
  }
  if (speed < 1 || speed > 1000) {
    std::fprintf(stderr, "tollgate replay: --speed: expected a factor from 1 to 1000\n");
    return kExitUsage;
  }
  WhatIfOverrides overrides;
  if (auto f = a.value("--override")) {
    try {
      overrides = WhatIfOverrides::fromFile(*f);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tollgate replay: %s\n", e.what());
      return kExitUsage;
    }
  }
  const std::string db = a.value("--db").value_or(Session::defaultHistoryPath());
  HistoryReaderOptions ro;
  ro.strict = a.isSet("--strict");
  // The report may not land on the history file (it exited 0 with the database replaced by the report).
  if (auto out = a.value("--report")) {
    if (std::string clash = historyFileClash(*out, db); !clash.empty()) {
      std::fprintf(stderr, "tollgate replay: --report %s: refusing to overwrite %s\n", out->c_str(), clash.c_str());
      return kExitUsage;
    }
  }
  auto reader = HistoryReader::open(db, ro, &err);
  if (!reader) {
    std::fprintf(stderr, "tollgate replay: %s: %s\n", db.c_str(), err.c_str());
    return kExitFailed;
  }
  if (!reader->warning().empty()) std::fprintf(stderr, "tollgate replay: %s\n", reader->warning().c_str());
  auto sc = incident ? ReplayScenario::fromIncident(*reader, std::int64_t(*incident), std::int64_t(padS * 1000), &err)
                     : ReplayScenario::fromHistory(*reader, EpochMs(*from), EpochMs(*to), &err);
  if (!sc) {
    std::fprintf(stderr, "tollgate replay: %s\n", err.c_str());
    return kExitFailed;
  }
  // Overrides naming a group the recording does not hold: a configuration error, named before re-driving.
  for (const auto& [name, o] : overrides.groups) {
    std::string known;
    bool found = false;
    for (const auto& g : sc->groups) {
      found = found || g.name == name;
      known += (known.empty() ? "" : ", ") + g.name;
    }
    if (!found) {
      std::fprintf(stderr, "tollgate replay: %s: /groups/%s: expected a group of the recording (%s)\n",
                   a.value("--override")->c_str(), printable(name).c_str(), printable(known).c_str());
      return kExitUsage;
    }
  }
  std::fprintf(stderr, "re-driving %.0f s of history (%zu groups) at %gx...\n", sc->durationS(), sc->groups.size(),
               speed);
  WhatIfOptions opts;
  opts.speed = speed;
  const WhatIfResult r = WhatIfRunner::run(*sc, overrides, opts);
  if (!r.ok) {
    std::fprintf(stderr, "tollgate replay: %s\n", r.error.c_str());
    return kExitFailed;
  }
  if (sc->incident)
    std::printf("incident %lld: %lld s, groups %zu, peak %.1f 429/s\n", (long long)sc->incident->id,
                (long long)sc->incident->durationMs() / 1000, sc->incident->groups.size(), sc->incident->peak429PerS);
  std::printf("re-drive: %.1f s wall at %gx\n", r.wallS, r.speed);
  // A recording older than the settings it ran with looked exactly like a faithful re-drive.
  if (!r.recordedSettings)
    std::printf("note: this recording predates recorded engine settings: re-driven on the defaults (tiers, retries, "
                "timeouts, no rate ceiling), not on the engine that recorded it\n");
  std::printf("\n");
  std::printf("%-14s %9s %9s %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s\n", "group", "429 rec", "429 new", "shed rec",
              "shed new", "unfin rec", "unfin new", "done rec", "done new", "p0p50rec", "p0p50new", "p0p95rec",
              "p0p95new");
  for (const auto& [name, h] : r.recorded.groups) {
    auto it = r.redriven.groups.find(name);
    printRow(name, h, it == r.redriven.groups.end() ? Headline{} : it->second);
  }
  printRow("total", r.recorded.total, r.redriven.total);
  if (auto out = a.value("--report")) {
    std::ofstream f(*out);
    f << dumpJson(r.toJson(*sc), 2) << "\n";  // group names and messages come from the history file
    f.close();  // a full disk shows at the close
    if (!f) {
      std::fprintf(stderr, "tollgate replay: cannot write %s: %s\n", out->c_str(), std::strerror(errno));
      return kExitFailed;
    }
    std::printf("\nreport: %s\n", out->c_str());
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {  // `> /dev/full` exited 0 with nothing written
    std::fprintf(stderr, "tollgate replay: cannot write to standard output: %s\n", std::strerror(errno));
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace tg::cli
