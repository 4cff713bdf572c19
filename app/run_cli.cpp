// tollgate run --headless: the engine on a config, driven by a JSONL job or the config's synthetic workload,
// with a progress line per group every second and a JSON report at the end.
#include "cli.h"

#include "command_line.h"
#include "json_text.h"
#include "session.h"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace tg::cli {
namespace {

constexpr const char* kRunSynopsis =
    "usage: tollgate run --headless [--config FILE] [--workload JOB.jsonl] [--results FILE] [--rejects FILE]\n"
    "                    [--retry-failed] [--duration S] [--report report.json] [--history FILE|off]\n"
    "                    [--max-rps [GROUP=]N] [--max-tpm [GROUP=]N] [--quiet]\n";

std::atomic<bool> gInterrupted{false};

// The first SIGINT/SIGTERM stops in order (results in flight written, history flushed), which can take a while
// (a history file another process holds locked: 17 s). A second one ends it at once, as an operator pressing
// Ctrl-C again means; what was in flight is left to the resume.
void onSignal(int) {
  if (gInterrupted.exchange(true)) {
    const char msg[] = "tollgate run: second signal: exiting now; what was in flight is not written (the same "
                       "command resumes it)\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(kExitFailed);
  }
}

// The same file, by its inode when both exist, else by its absolute path.
bool samePath(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code e1, e2;
  const auto ca = std::filesystem::weakly_canonical(a, e1), cb = std::filesystem::weakly_canonical(b, e2);
  return !e1 && !e2 && ca == cb;
}

// --report and --history must not be the job or its results (a report over the results file lost every result,
// and the next run sent them all again; a history over it was cut as a torn line, then appended to). Empty when
// they are apart, else what is wrong.
std::string outputsClash(const CommandLine& a, const std::string& historyPath) {
  std::vector<std::pair<std::string, std::string>> job;  // what, path
  if (auto w = a.value("--workload")) {
    job.emplace_back("the job (--workload)", *w);
    job.emplace_back("the job's results", a.value("--results").value_or(*w + ".results.jsonl"));
    job.emplace_back("the job's rejects", a.value("--rejects").value_or(*w + ".rejects.jsonl"));
  }
  std::vector<std::pair<std::string, std::string>> outs;
  if (auto r = a.value("--report")) outs.emplace_back("--report", *r);
  if (!historyPath.empty()) outs.emplace_back("the history file", historyPath);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    for (const auto& [what, path] : job)
      if (samePath(outs[i].second, path)) return outs[i].first + " " + outs[i].second + " is " + what;
    for (std::size_t k = i + 1; k < outs.size(); ++k)
      if (samePath(outs[i].second, outs[k].second))
        return outs[i].first + " " + outs[i].second + " is " + outs[k].first;
  }
  return {};
}

// Whether the report can be written there, asked before the run (it was found only after the whole job).
std::string reportProblem(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (::access(path.c_str(), W_OK) != 0) return std::strerror(errno);
    return {};
  }
  if (::access(dir.c_str(), W_OK) != 0) return "cannot create it in " + dir.string() + ": " + std::strerror(errno);
  return {};
}

std::string fmt(double v, const char* f = "%.0f") {
  if (!known(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void printProgress(const EngineSnapshot& s, const EngineSnapshot* prev, double dt) {
  for (const auto& g : s.groups) {
    const GroupSnapshot* pg = prev ? prev->find(g.group) : nullptr;
    const double okRate = pg && dt > 0 ? static_cast<double>(g.counters.ok - pg->counters.ok) / dt : 0;
    const auto r429 = pg ? g.counters.r429 - pg->counters.r429 : 0;
    const auto& req = g.dims[0];
    std::printf("%-12s ok %6.1f/s  429 %3llu  5xx %4llu  shed %4llu  q %d/%d/%d  in-flight %2d/%-2d  remaining %s/%s  %s%s\n",
                g.group.c_str(), okRate, static_cast<unsigned long long>(r429),
                static_cast<unsigned long long>(g.counters.r5xx), static_cast<unsigned long long>(g.counters.shed),
                g.queueDepth[0], g.queueDepth[1], g.queueDepth[2], g.inFlight, g.concurrencyLimit,
                fmt(req.remaining).c_str(), fmt(req.limit).c_str(), std::string(breakerStateName(g.breaker)).c_str(),
                g.waitReason.empty() ? "" : ("  waiting: " + g.waitReason).c_str());
  }
  if (s.shared.enabled)
    std::printf("shared quota: %s, %d instance(s)%s\n", s.shared.mode.c_str(), s.shared.live,
                s.shared.why.empty() ? "" : (" (" + s.shared.why + ")").c_str());
  std::fflush(stdout);
}

}  // namespace

int runCommand(const std::vector<std::string>& argv) {
  CommandLine a(kRunSynopsis, {{"--headless", "", "without a window (run never opens one)"},
                                {"--config", "FILE", "upstream config (default: the embedded simulator demo)"},
                                {"--workload", "JOB.jsonl", "requests to send, one JSON object a line"},
                                {"--results", "FILE", "where the job's results go (default: next to the job)"},
                                {"--retry-failed", "", "a resume sends again the lines whose last result was a "
                                                       "failure another try may pass (shed, 429s, 5xx, network, ...)"},
                                {"--rejects", "FILE", "where its malformed lines go (default: next to the job; for "
                                                      "a job from a pipe, next to the results)"},
                                {"--duration", "S", "stop after S seconds"},
                                {"--report", "FILE", "write the run report as JSON"},
                                {"--history", "FILE|off", "history file (default: the config's or the user's)"},
                                {"--max-rps", "[GROUP=]N", kMaxRpsHelp, true},
                                {"--max-tpm", "[GROUP=]N", kMaxTpmHelp, true},
                                {"--quiet", "", "no progress lines and no report on stdout"}});
  if (auto answered = a.parseOrAnswer(argv, "tollgate run", std::cout, std::cerr)) return *answered;
  std::string err;
  const std::optional<double> duration = a.number("--duration", &err);
  if (!err.empty()) {
    std::fprintf(stderr, "tollgate run: %s\n", err.c_str());
    return kExitUsage;
  }
  if (duration && *duration <= 0) {
    std::fprintf(stderr, "tollgate run: --duration: expected a positive number of seconds\n");
    return kExitUsage;
  }
  std::unique_ptr<Session> session;
  try {
    TollgateConfig config = loadConfig(a.value("--config"));
    if (!applyRateCeilingFlags(a, config, &err)) {
      std::fprintf(stderr, "tollgate run: %s\n", err.c_str());
      return kExitUsage;
    }
    session = std::make_unique<Session>(std::move(config));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate run: %s\n", e.what());
    return kExitUsage;
  }
  applyHistoryFlag(*session, a.value("--history"));
  if (std::string clash = outputsClash(a, session->historyPath()); !clash.empty()) {
    std::fprintf(stderr, "tollgate run: %s: it would be overwritten\n", clash.c_str());
    return kExitUsage;
  }
  if (auto r = a.value("--report")) {
    if (std::string why = reportProblem(*r); !why.empty()) {
      std::fprintf(stderr, "tollgate run: --report %s: %s\n", r->c_str(), why.c_str());
      return kExitUsage;
    }
  }
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  // A results pipe whose reader left (`--results /dev/stdout | head`) is a write error like a full disk (named, the
  // job's queue cancelled, exit 1), not a silent death mid-job with what was in flight unwritten.
  std::signal(SIGPIPE, SIG_IGN);
  const bool quiet = a.isSet("--quiet");
  const auto job = a.value("--workload");
  if (a.isSet("--retry-failed") && !job) {
    std::fprintf(stderr, "tollgate run: --retry-failed resumes a job: it needs --workload\n");
    return kExitUsage;
  }
  try {
    session->start(/*startSyntheticWorkload=*/!job);
    if (job) {
      JsonlJob::Options o;
      o.input = *job;
      if (auto r = a.value("--results")) o.results = *r;
      if (auto r = a.value("--rejects")) o.rejects = *r;
      o.retryFailed = a.isSet("--retry-failed");
      session->startJob(std::move(o));
    } else if (!session->hasSyntheticProfile()) {
      std::fprintf(stderr, "tollgate run: nothing to do: no --workload and no \"workload\" section in the config\n");
      return kExitUsage;
    }
  } catch (const std::invalid_argument& e) {  // --workload or --results names the wrong thing
    std::fprintf(stderr, "tollgate run: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate run: %s\n", e.what());
    return kExitFailed;
  }
  if (!quiet && !session->simulatorUrl().empty())
    std::printf("embedded simulator: %s\n", session->simulatorUrl().c_str());
  if (!quiet && session->history()) std::printf("history: %s\n", session->history()->path().c_str());

  SnapshotPtr prev;
  auto lastPrint = std::chrono::steady_clock::now();
  bool ranToItsEnd = false;  // every request answered: nothing is in flight, whatever the last snapshot says
  while (!gInterrupted) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (duration && session->elapsedS() >= *duration) break;
    if (JsonlJob* j = session->job(); j && j->progress().finished) {
      ranToItsEnd = true;
      break;
    }
    if (SyntheticWorkload* s = session->synthetic(); s && s->finished() && s->completed() >= s->submitted()) {
      ranToItsEnd = true;
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!quiet && now - lastPrint >= std::chrono::seconds(1)) {
      SnapshotPtr snap = session->engine().latestSnapshot();
      const double dt = std::chrono::duration<double>(now - lastPrint).count();
      std::printf("--- t=%.0fs", session->elapsedS());
      if (JsonlJob* j = session->job()) {
        const JobProgress p = j->progress();
        std::printf("  job: %lld done (%lld ok, %lld failed), %lld skipped, %lld rejected",
                    static_cast<long long>(p.done()), static_cast<long long>(p.succeeded),
                    static_cast<long long>(p.failed), static_cast<long long>(p.skipped),
                    static_cast<long long>(p.rejected));
        if (p.retried > 0) std::printf(", %lld retried", static_cast<long long>(p.retried));
      }
      std::printf("\n");
      printProgress(*snap, prev.get(), dt);
      prev = snap;
      lastPrint = now;
    }
  }
  const double elapsed = session->elapsedS();
  // An orderly stop (a signal, --duration): the job reads no more, nothing more is sent, and what is in flight is
  // answered and written; what is still queued is cancelled by the stop and left to the resume. (Stopping at once
  // aborted 8 requests in flight: sent and paid for, then sent again by the resume.)
  if (JsonlJob* j = session->job()) j->cancel();
  const int inFlight = session->engine().latestSnapshot()->globalInFlight;
  // A snapshot is up to 250 ms old: at a job's natural end it still counted the last requests as in flight, and
  // every finished run said it was "stopping" for a signal.
  if (inFlight > 0 && !quiet && !ranToItsEnd)
    std::fprintf(stderr, "tollgate run: stopping: waiting for the requests in flight (%d) to be answered; a second "
                 "signal leaves them to the resume\n", inFlight);
  session->engine().finishInFlight(session->config().engine.requestTimeoutS + 1);
  session->stop();
  nlohmann::json report = session->report().toJson(*session->engine().latestSnapshot(), elapsed);
  std::string writeError;
  if (const auto& done = session->finalJobProgress()) {
    const JobProgress& jp = *done;
    report["job"] = {{"lines", jp.lines},         {"skipped", jp.skipped},     {"retried", jp.retried},
                     {"rejected", jp.rejected},
                     {"submitted", jp.submitted}, {"succeeded", jp.succeeded}, {"failed", jp.failed},
                     {"cancelled", jp.cancelled},
                     {"finished", jp.complete()}};
    // Results that could not be written are lost to the resume too: the run did not do its job.
    if (!jp.writeError.empty()) report["job"]["write_error"] = writeError = jp.writeError;
  }
  // Whether the run was recorded: a history file refused (newer schema, locked, not writable) left one log line
  // among the run's, and the report looked the same either way.
  if (!session->historyPath().empty()) {
    nlohmann::json h = {{"path", session->historyPath()}, {"recording", session->history() != nullptr}};
    if (!session->history()) {
      h["error"] = session->historyError();
    } else if (const HistoryStatus st = session->history()->status(); !st.ok || st.rowsDropped > 0) {
      h["error"] = st.lastError;
      h["rows_dropped"] = st.rowsDropped;
    }
    report["history"] = std::move(h);
  }
  if (auto path = a.value("--report")) {
    std::ofstream out(*path);
    out << dumpJson(report, 2) << "\n";
    out.close();  // a full disk shows at the flush, not at the <<
    if (!out) {
      std::fprintf(stderr, "tollgate run: cannot write the report to %s: %s\n", path->c_str(), std::strerror(errno));
      return kExitFailed;
    }
  }
  if (!quiet) std::printf("%s\n", dumpJson(report, 2).c_str());
  if (!writeError.empty()) {
    std::fprintf(stderr, "tollgate run: %s\n", writeError.c_str());
    return kExitFailed;
  }
  // Stopped by a signal before the job's end: a script must not take it for a finished job.
  if (const auto& done = session->finalJobProgress(); done && !done->complete() && gInterrupted) {
    std::fprintf(stderr, "tollgate run: interrupted with the job unfinished (%lld lines read); the same command "
                 "resumes it\n", static_cast<long long>(done->lines));
    return kExitFailed;
  }
  if (const auto& done = session->finalJobProgress(); done && !done->complete()) {
    // --duration ended it first: what was asked, but not the job's end.
    if (duration && elapsed >= *duration) {
      std::fprintf(stderr, "tollgate run: --duration ended the run with the job unfinished (%lld lines read, %lld "
                   "requests cancelled); the same command resumes it\n", static_cast<long long>(done->lines),
                   static_cast<long long>(done->cancelled));
      return kExitOk;
    }
    // Else something cancelled requests of it (an operator draining the group, a fleet's drain action).
    std::fprintf(stderr, "tollgate run: the job ended unfinished: %lld of its requests were cancelled (a group "
                 "drained?); the same command resumes them\n", static_cast<long long>(done->cancelled));
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace tg::cli
