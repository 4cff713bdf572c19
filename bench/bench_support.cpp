#include "bench_support.h"
#include "stats.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

namespace tgbench {

std::vector<Arrival> makeArrivals(const std::vector<StreamSpec>& streams, double durationS, std::uint64_t seed) {
  std::vector<Arrival> out;
  std::mt19937_64 rng(seed);
  for (const auto& s : streams) {
    if (s.rate <= 0) continue;
    std::exponential_distribution<double> gap(s.rate);
    for (double t = s.fromS + gap(rng); t < std::min(durationS, s.toS); t += gap(rng))
      out.push_back({t, s.group, s.tier});
  }
  std::sort(out.begin(), out.end(), [](const Arrival& a, const Arrival& b) { return a.atS < b.atS; });
  return out;
}

std::string chatBody(const Arrival& a) { return "{\"max_tokens\":" + std::to_string(a.maxTokens) + "}"; }

int simTokenCost(const Arrival& a) { return a.maxTokens + static_cast<int>(chatBody(a).size() / 4); }

Figures computeFigures(const RunLog& run, double quotaPerS, double fromS, double toS, int p0Group) {
  Figures f;
  std::uint64_t okInWindow = 0;
  for (const auto& a : run.attempts) {
    ++f.attempts;
    if (!a.retry) ++f.requestsSent;
    if (a.status == tg::http::kTooManyRequests) ++f.r429;
    if (a.status >= 200 && a.status < 300) {
      ++f.ok;
      if (a.atS >= fromS && a.atS < toS) ++okInWindow;
    }
  }
  f.goodputPerS = static_cast<double>(okInWindow) / (toS - fromS);
  f.goodputRatio = quotaPerS > 0 ? f.goodputPerS / quotaPerS : 0;
  f.share429 = f.attempts ? static_cast<double>(f.r429) / static_cast<double>(f.attempts) : 0;
  f.amplification = f.requestsSent ? static_cast<double>(f.attempts) / static_cast<double>(f.requestsSent) : 0;

  std::vector<double> waits, p0;
  for (const auto& r : run.requests) {
    if (r.arrivalS < fromS || r.arrivalS >= toS) continue;
    if (r.finished && r.ok) waits.push_back(r.waitS);
    if (r.tier == tg::Tier::P0 && r.group == p0Group) {
      ++f.p0Arrived;
      if (r.finished) {
        p0.push_back(r.doneS - r.arrivalS);
      } else {
        ++f.p0Unfinished;
        p0.push_back(run.durationS - r.arrivalS);
      }
    }
  }
  f.waitP50S = tg::percentile(waits, 0.5);
  f.waitP95S = tg::percentile(waits, 0.95);
  f.p0P50S = tg::percentile(p0, 0.5);
  f.p0P95S = tg::percentile(p0, 0.95);
  return f;
}

SecondSeries perSecond(const RunLog& run) {
  SecondSeries s;
  const auto n = static_cast<std::size_t>(std::ceil(run.durationS));
  s.ok.assign(n, 0);
  s.r429.assign(n, 0);
  for (const auto& a : run.attempts) {
    if (a.atS < 0) continue;
    const auto i = static_cast<std::size_t>(a.atS);
    if (i >= n) continue;
    if (a.status >= 200 && a.status < 300) ++s.ok[i];
    else if (a.status == tg::http::kTooManyRequests) ++s.r429[i];
  }
  return s;
}

nlohmann::json toJson(const SecondSeries& s) { return {{"ok", s.ok}, {"r429", s.r429}}; }

double settleS(const std::vector<double>& perS, double fromS, double toS, double target, bool reachOnly) {
  const int from = static_cast<int>(fromS), to = std::min(static_cast<int>(toS), static_cast<int>(perS.size()));
  for (int start = from; start + 1 < to; ++start) {
    bool ok = true;
    for (int t = start; t + 1 < to && ok; ++t) {
      const double rate = (perS[t] + perS[t + 1]) / 2.0;
      ok = reachOnly ? rate >= 0.9 * target : std::abs(rate - target) <= 0.1 * target;
    }
    if (ok) return start + 1 - fromS;  // the span [start, start + 2) is settled by its end
  }
  return -1;
}

namespace {
nlohmann::json num(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }
}  // namespace

nlohmann::json toJson(const Figures& f) {
  return {{"goodput_per_s", num(f.goodputPerS)}, {"goodput_ratio", num(f.goodputRatio)},
          {"share_429", num(f.share429)},        {"amplification", num(f.amplification)},
          {"attempts", f.attempts},              {"r429", f.r429},
          {"ok", f.ok},                          {"requests_sent", f.requestsSent},
          {"wait_p50_s", num(f.waitP50S)},       {"wait_p95_s", num(f.waitP95S)},
          {"p0_p50_s", num(f.p0P50S)},           {"p0_p95_s", num(f.p0P95S)},
          {"p0_arrived", f.p0Arrived},           {"p0_unfinished", f.p0Unfinished}};
}

long readStatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return std::atol(line.c_str() + prefix.size());
  return -1;
}

nlohmann::json machineJson() {
  std::string model;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  long memKb = 0;
  std::ifstream mem("/proc/meminfo");
  for (std::string line; std::getline(mem, line);)
    if (line.rfind("MemTotal:", 0) == 0) memKb = std::atol(line.c_str() + 9);
  return {{"nproc", sysconf(_SC_NPROCESSORS_ONLN)}, {"cpu", model}, {"ram_mb", memKb / 1024}};
}

void writeJson(const std::string& path, const nlohmann::json& j) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream(path) << j.dump(1) << "\n";
  std::printf("wrote %s\n", path.c_str());
}

TablePrinter::TablePrinter(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void TablePrinter::row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

void TablePrinter::print() const {
  std::vector<std::size_t> w(headers_.size(), 0);
  for (std::size_t i = 0; i < headers_.size(); ++i) w[i] = headers_[i].size();
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (std::size_t i = 0; i < w.size(); ++i) {
      const std::string c = i < cells.size() ? cells[i] : "";
      s += " " + c + std::string(w[i] - c.size(), ' ') + " |";
    }
    std::printf("%s\n", s.c_str());
  };
  line(headers_);
  std::string sep = "|";
  for (auto x : w) sep += std::string(x + 2, '-') + "|";
  std::printf("%s\n", sep.c_str());
  for (const auto& r : rows_) line(r);
  std::fflush(stdout);
}

std::string fmt(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pct(double share, int decimals) { return std::isnan(share) ? "n/a" : fmt(share * 100, decimals) + "%"; }

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

Args::Args(int argc, char** argv) : args_(argv + 1, argv + argc) {
  // A benchmark runs for minutes and starts servers: --help must not start one (it did, and ran).
  for (const auto& a : args_)
    if (a == "--help" || a == "-h") {
      const std::string program = std::filesystem::path(argv[0]).filename().string();
      std::printf("usage: %s [--OPTION VALUE | --FLAG] ...\n"
                  "Its options and what it measures: the comment at the top of bench/%s.cpp, and docs/BENCHMARKS.md.\n",
                  program.c_str(), program.c_str());
      std::exit(0);
    }
}

double Args::number(const std::string& name, double fallback) const {
  for (std::size_t i = 0; i + 1 < args_.size(); ++i)
    if (args_[i] == "--" + name) {
      const std::string& v = args_[i + 1];
      char* end = nullptr;
      const double n = std::strtod(v.c_str(), &end);
      if (v.empty() || !end || *end != '\0' || !std::isfinite(n)) {  // atof read "ten" as 0
        std::fprintf(stderr, "--%s: expected a number, got \"%s\"\n", name.c_str(), v.c_str());
        std::exit(2);
      }
      return n;
    }
  return fallback;
}

std::string Args::text(const std::string& name, const std::string& fallback) const {
  for (std::size_t i = 0; i + 1 < args_.size(); ++i)
    if (args_[i] == "--" + name) return args_[i + 1];
  return fallback;
}

bool Args::flag(const std::string& name) const {
  return std::find(args_.begin(), args_.end(), "--" + name) != args_.end();
}

}  // namespace tgbench
