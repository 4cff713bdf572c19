#include "cli.h"

#include "headers_command.h"
#include "history_command.h"
#include "json_text.h"
#include "log.h"
#include "probe.h"
#include "request_safety.h"
#include "session.h"

#include <QFile>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

namespace tg::cli {
namespace {

std::atomic<bool> gInterrupted{false};

// A probe step is a concurrency: the most a group may be configured with.
constexpr int kMaxProbeStep = 100000;

void onSignal(int) { gInterrupted = true; }

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
  std::fflush(stdout);
}

}  // namespace

Args::Args(std::vector<std::string> args, std::vector<std::string> valueFlags, std::vector<std::string> switches) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (std::find(switches.begin(), switches.end(), a) != switches.end()) {
      switches_.push_back(a);
    } else if (std::find(valueFlags.begin(), valueFlags.end(), a) != valueFlags.end()) {
      if (i + 1 >= args.size()) {
        error_ = a + " needs a value";
        return;
      }
      values_.emplace_back(a, args[++i]);
    } else {
      error_ = "unknown argument \"" + a + "\"";
      return;
    }
  }
}

std::optional<std::string> Args::value(const std::string& flag) const {
  for (const auto& [f, v] : values_)
    if (f == flag) return v;
  return std::nullopt;
}

bool Args::has(const std::string& flag) const {
  return std::find(switches_.begin(), switches_.end(), flag) != switches_.end() || value(flag).has_value();
}

std::optional<double> Args::number(const std::string& flag, std::string* error) const {
  auto v = value(flag);
  if (!v) return std::nullopt;
  // from_chars reads the whole word or fails: no leading blanks, no "4abc", no hex; inf/nan are refused below.
  double d = 0;
  const char* first = v->data();
  const char* last = v->data() + v->size();
  const auto [end, ec] = std::from_chars(first, last, d, std::chars_format::general);
  if (!v->empty() && ec == std::errc() && end == last && std::isfinite(d) && d >= 0 && d <= kMaxNumber) return d;
  *error = flag + ": expected a number from 0 to 1e15, got \"" + *v + "\"";
  return std::nullopt;
}

std::optional<int> parsePositiveInt(const std::string& text, int max) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n <= 0 || n > max) return std::nullopt;
  return n;
}

TollgateConfig loadConfig(const std::optional<std::string>& path) {
  if (path) return ConfigLoader::fromFile(*path);
  QFile f(":/tollgate/demo.json");
  if (!f.open(QIODevice::ReadOnly)) throw ConfigError("(embedded demo.json)", "", "cannot open the resource");
  const QByteArray bytes = f.readAll();
  JsonParse j = parseJsonText(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  if (!j.ok()) throw ConfigError("(embedded demo.json)", "", "invalid JSON: " + j.error);
  return ConfigLoader::fromJson(j.value, "(embedded demo.json)");
}

int runCommand(const std::vector<std::string>& argv) {
  Args a(argv, {"--config", "--workload", "--results", "--duration", "--report", "--history"}, {"--headless", "--quiet"});
  if (!a.ok()) {
    std::fprintf(stderr, "tollgate run: %s\n%s", a.error().c_str(), kUsage);
    return 2;
  }
  std::string err;
  const std::optional<double> duration = a.number("--duration", &err);
  if (!err.empty()) {
    std::fprintf(stderr, "tollgate run: %s\n", err.c_str());
    return 2;
  }
  if (duration && *duration <= 0) {
    std::fprintf(stderr, "tollgate run: --duration: expected a positive number of seconds\n");
    return 2;
  }
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(loadConfig(a.value("--config")));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate run: %s\n", e.what());
    return 2;
  }
  applyHistoryFlag(*session, a.value("--history"));
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  const bool quiet = a.has("--quiet");
  const auto job = a.value("--workload");
  try {
    session->start(/*startSyntheticWorkload=*/!job);
    if (job) {
      JsonlJob::Options o;
      o.input = *job;
      if (auto r = a.value("--results")) o.results = *r;
      session->startJob(std::move(o));
    } else if (!session->hasSyntheticProfile()) {
      std::fprintf(stderr, "tollgate run: nothing to do: no --workload and no \"workload\" section in the config\n");
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate run: %s\n", e.what());
    return 1;
  }
  if (!quiet && !session->simulatorUrl().empty())
    std::printf("embedded simulator: %s\n", session->simulatorUrl().c_str());
  if (!quiet && session->history()) std::printf("history: %s\n", session->history()->path().c_str());

  SnapshotPtr prev;
  auto lastPrint = std::chrono::steady_clock::now();
  while (!gInterrupted) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (duration && session->elapsedS() >= *duration) break;
    if (JsonlJob* j = session->job(); j && j->progress().finished) break;
    if (SyntheticWorkload* s = session->synthetic(); s && s->finished() && s->completed() >= s->submitted()) break;
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
      }
      std::printf("\n");
      printProgress(*snap, prev.get(), dt);
      prev = snap;
      lastPrint = now;
    }
  }
  const double elapsed = session->elapsedS();
  JobProgress jp;
  if (JsonlJob* j = session->job()) jp = j->progress();
  const bool hadJob = session->job() != nullptr;
  session->stop();
  nlohmann::json report = session->report().toJson(*session->engine().latestSnapshot(), elapsed);
  if (hadJob) {
    report["job"] = {{"lines", jp.lines},         {"skipped", jp.skipped},     {"rejected", jp.rejected},
                     {"submitted", jp.submitted}, {"succeeded", jp.succeeded}, {"failed", jp.failed},
                     {"finished", jp.finished}};
  }
  if (auto path = a.value("--report")) {
    std::ofstream out(*path);
    out << dumpJson(report, 2) << "\n";
    if (!out) {
      std::fprintf(stderr, "tollgate run: cannot write the report to %s\n", path->c_str());
      return 1;
    }
  }
  if (!quiet) std::printf("%s\n", dumpJson(report, 2).c_str());
  return 0;
}

int headersCommand(const std::vector<std::string>& args) {
  return runHeadersCommand(args, std::cin, std::cout, std::cerr);
}

int probeCommand(const std::vector<std::string>& argv) {
  Args a(argv, {"--config", "--group", "--key", "--steps", "--step-s", "--path"}, {});
  if (!a.ok()) {
    std::fprintf(stderr, "tollgate probe: %s\n%s", a.error().c_str(), kUsage);
    return 2;
  }
  std::string err;
  ProbeOptions o;
  if (auto s = a.number("--step-s", &err)) o.stepS = *s;
  if (!err.empty() || o.stepS <= 0 || o.stepS > kMaxProbeStepS) {
    std::fprintf(stderr, "tollgate probe: %s\n",
                 err.empty() ? "--step-s: expected seconds above 0 and at most 3600" : err.c_str());
    return 2;
  }
  if (auto steps = a.value("--steps")) {
    o.steps.clear();
    std::size_t pos = 0;
    while (pos <= steps->size()) {
      const auto comma = steps->find(',', pos);
      const std::string item = steps->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const auto n = parsePositiveInt(item, kMaxProbeStep);
      if (!n) {
        std::fprintf(stderr, "tollgate probe: --steps: expected integers from 1 to %d separated by commas, got \"%s\"\n",
                     kMaxProbeStep, item.c_str());
        return 2;
      }
      o.steps.push_back(*n);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  if (auto p = a.value("--path")) {
    // Joined after base_url: anything but a path ("@evil.com/x", ".evil.com/x") would change the host the key goes to.
    if (p->empty() || p->front() != '/') {
      std::fprintf(stderr, "tollgate probe: --path: expected a path starting with /, got \"%s\"\n", printable(*p).c_str());
      return 2;
    }
    o.path = *p;
  }
  std::unique_ptr<Session> session;
  try {
    TollgateConfig cfg = loadConfig(a.value("--config"));
    cfg.workload.reset();
    session = std::make_unique<Session>(std::move(cfg));
    session->setHistoryPath({});
    session->start(false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return 2;
  }
  const auto group = a.value("--group");
  const GroupConfig* g = group ? session->engine().config().findGroup(*group) : nullptr;
  if (!g) {
    std::fprintf(stderr, "tollgate probe: --group: expected one of the configured groups\n");
    return 2;
  }
  // The same check the engine makes before it sends anything for the group (base_url, key and group headers).
  if (std::string p = groupConfigProblem(*g, session->engine().config(), nullptr); !p.empty()) {
    std::fprintf(stderr, "tollgate probe: group \"%s\": %s\n", printable(g->name).c_str(), p.c_str());
    return 2;
  }
  o.baseUrl = g->baseUrl;
  o.group = g->name;
  o.groupHeader = session->engine().config().groupHeader;
  if (!g->keys.empty()) {
    const KeyConfig* key = &g->keys.front();
    if (auto k = a.value("--key")) {
      key = nullptr;
      for (const auto& kc : g->keys)
        if (kc.name == *k) key = &kc;
      if (!key) {
        std::fprintf(stderr, "tollgate probe: --key: no key \"%s\" in group %s\n", k->c_str(), g->name.c_str());
        return 2;
      }
    }
    o.key = *key;
  }
  session->engine().stop();  // the probe drives the upstream itself, without the engine's protection
  ProbeReport r;
  try {
    r = runProbe(o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate probe: %s\n", e.what());
    return 1;
  }
  std::fputs(formatProbeTable(r).c_str(), stdout);
  return 0;
}

int historyCommand(const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  // Without --db, the default history file.
  if (std::find(a.begin(), a.end(), "--db") == a.end() && !a.empty() && a[0] != "--help") {
    a.push_back("--db");
    a.push_back(Session::defaultHistoryPath());
  }
  return runHistoryCommand(a, std::cout, std::cerr);
}

void applyHistoryFlag(Session& s, const std::optional<std::string>& flag) {
  if (flag && (*flag == "off" || *flag == "none")) s.setHistoryPath({});
  else if (flag) s.setHistoryPath(*flag);
  else if (s.config().historyPath.empty()) s.setHistoryPath(Session::defaultHistoryPath());
}

}  // namespace tg::cli
