// History benchmark (not a test): sustained sample insert rate, a chart query (24 h x 10 groups downsampled
// to 2,000 points per series) and the file size of 7 days x 10 groups at full resolution plus per-minute
// rollups for the rest of the retention span (HistoryOptions defaults). Prints its figures and writes them as JSON.
//
//   history_bench [--dir DIR] [--json FILE] [--hours H] [--full-week]
//
// By default it records H = 28 hours (1,008,000 rows) and extrapolates the week's size from measured bytes
// per row; --full-week records all 7 days (6,048,000 rows) and measures it.
#include "history_reader.h"
#include "history_store.h"
#include "stats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sys/resource.h>
#include <string>
#include <vector>

using namespace tg;
namespace fs = std::filesystem;

namespace {

constexpr int kGroups = 10;
constexpr EpochMs kStart = 1'796'000'000'000 - 1'796'000'000'000 % 60'000;
constexpr std::int64_t kDayMs = 86'400'000;

// CPU seconds of the whole process (engine-side appends plus the writer thread): on a shared machine the
// wall-clock rate depends on the neighbours, this does not.
double processCpuSeconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::uint64_t bytesOf(const std::string& path, bool withWal = true) {
  std::error_code ec;
  std::uint64_t n = 0;
  for (const char* suffix : {"", "-wal"}) {
    if (!withWal && *suffix) continue;
    const auto s = fs::file_size(path + suffix, ec);
    if (!ec) n += s;
  }
  return n;
}

// Plausible engine output: rates with noise, occasional 429 bursts, unknowns now and then.
std::vector<Sample> secondOfSamples(std::int64_t second, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Sample> out;
  out.reserve(kGroups);
  for (int g = 0; g < kGroups; ++g) {
    Sample s;
    s.tsMs = kStart + second * 1000;
    s.group = "group-" + std::to_string(g);
    s.sends = static_cast<int>(20 + 15 * std::sin(second / 600.0 + g) + 5 * u(rng));
    s.r429 = u(rng) < 0.02 ? static_cast<int>(u(rng) * 20) : 0;
    s.r5xx = u(rng) < 0.005 ? 1 : 0;
    s.ok = std::max(0, s.sends - s.r429 - s.r5xx);
    s.retries = s.r429 / 2;
    s.reqLimit = 3000;
    s.reqRemaining = std::floor(3000 * u(rng));
    s.tokLimit = 90'000;
    s.tokRemaining = u(rng) < 0.1 ? kUnknown : std::floor(90'000 * u(rng));
    s.resetAtMs = s.tsMs + 30'000;
    s.inFlight = static_cast<int>(8 * u(rng));
    s.concurrencyLimit = 8;
    s.queueDepth = {static_cast<int>(3 * u(rng)), static_cast<int>(10 * u(rng)), static_cast<int>(40 * u(rng))};
    s.p50Ms = 200 + 50 * u(rng);
    s.p95Ms = 600 + 300 * u(rng);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = fs::temp_directory_path() / "tollgate-history-bench";
  std::string jsonPath = "history_bench.json";
  int hours = 28;
  bool fullWeek = false;
  bool keepCopy = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--json" && i + 1 < argc) jsonPath = argv[++i];
    else if (a == "--hours" && i + 1 < argc) hours = std::max(25, std::atoi(argv[++i]));
    else if (a == "--full-week") fullWeek = true;
    else if (a == "--keep-copy") keepCopy = true;  // bench.db.full: the file before retention, to inspect
    else {
      std::cerr << "usage: history_bench [--dir DIR] [--json FILE] [--hours H>=25] [--full-week]\n";
      return 2;
    }
  }
  if (fullWeek) hours = 7 * 24;
  fs::create_directories(dir);
  const std::string path = (fs::path(dir) / "bench.db").string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);

  HistoryOptions opts;  // defaults: 1 s flushes, 7 d full resolution, 90 d retention
  opts.incidentIntervalMs = 24 * 3'600'000LL;
  opts.maintenanceIntervalMs = 24 * 3'600'000LL;
  std::string error;
  auto store = HistoryStore::open(path, opts, &error);
  if (!store) {
    std::cerr << error << "\n";
    return 1;
  }

  // 1. Sustained insert rate: the engine's shape (one append of 10 rows per recorded second), as fast as the
  //    writer can commit. Rows are generated up front so the figure is the store's, not the generator's.
  const std::int64_t seconds = static_cast<std::int64_t>(hours) * 3600;
  const std::int64_t rows = seconds * kGroups;
  std::mt19937 rng(42);
  std::vector<double> appendUs;
  double insertSeconds = 0, insertCpuSeconds = 0;
  constexpr std::int64_t kChunkSeconds = 3600;
  for (std::int64_t base = 0; base < seconds; base += kChunkSeconds) {
    std::vector<std::vector<Sample>> batches;
    for (std::int64_t s = base; s < std::min(seconds, base + kChunkSeconds); ++s) batches.push_back(secondOfSamples(s, rng));
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = processCpuSeconds();
    for (auto& b : batches) {
      const auto a0 = std::chrono::steady_clock::now();
      store->append(std::move(b));
      appendUs.push_back(secondsSince(a0) * 1e6);
    }
    if (!store->flush()) {
      std::cerr << "flush failed: " << store->status().lastError << "\n";
      return 1;
    }
    insertSeconds += secondsSince(t0);
    insertCpuSeconds += processCpuSeconds() - cpu0;
  }
  const double insertRate = static_cast<double>(rows) / insertSeconds;
  const double worstAppendUs = tg::percentile(appendUs, 1.0);
  const double p99AppendUs = tg::percentile(appendUs, 0.99);
  const double p50AppendUs = tg::percentile(appendUs, 0.5);
  const std::uint64_t fullBytes = bytesOf(path);  // main file + WAL, while the writer is open
  const double insertCpuRate = static_cast<double>(rows) / insertCpuSeconds;
  std::printf("insert: %lld sample rows in %.2f s = %.0f rows/s wall (target >= 100000); %.2f CPU s = %.0f rows per "
              "CPU second\n"
              "append() of one second's 10 rows: median %.1f us, p99 %.1f us, worst %.0f us\n",
              static_cast<long long>(rows), insertSeconds, insertRate, insertCpuSeconds, insertCpuRate, p50AppendUs,
              p99AppendUs, worstAppendUs);

  // 2. Chart query: 24 h x 10 groups, 2,000 points per series, on the writer's file (WAL checkpointed).
  store.reset();
  std::vector<double> queryMs, queryCpuMs;
  std::size_t points = 0;
  {
    auto reader = HistoryReader::open(path, {}, &error);
    if (!reader) {
      std::cerr << error << "\n";
      return 1;
    }
    const EpochMs from = kStart + (seconds - 24 * 3600) * 1000;
    for (int run = 0; run < 5; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      const double cpu0 = processCpuSeconds();
      auto res = reader->samples(from, from + kDayMs, {}, 2000);
      queryMs.push_back(secondsSince(t0) * 1000);
      queryCpuMs.push_back((processCpuSeconds() - cpu0) * 1000);
      if (!res.ok() || res.value.size() != kGroups) {
        std::cerr << "query failed: " << res.error << "\n";
        return 1;
      }
      points = 0;
      for (const auto& s : res.value) points += s.buckets.size();
    }
  }
  const double queryMedianMs = tg::percentile(queryMs, 0.5);
  const double queryCpuMedianMs = tg::percentile(queryCpuMs, 0.5);
  std::printf("query: 24 h x %d groups -> %zu points (<= 2000 per series): first %.1f ms, median %.1f ms wall, "
              "median %.1f ms CPU (target < 200 ms)\n",
              kGroups, points, queryMs[0], queryMedianMs, queryCpuMedianMs);

  // 3. Size, main file and WAL apart (the WAL is bounded by checkpoints, not by the data; counted once).
  //    Steady state = the file after retention at the end of the recording (7 d full resolution, the 10 s
  //    tier for its span, minute rows) + minute rows for the rest of the retention span, extrapolated from
  //    measured bytes per minute row (the file after everything rolled up).
  const std::uint64_t fullMainBytes = bytesOf(path, false);
  const double bytesPerSample = static_cast<double>(fullMainBytes) / static_cast<double>(rows);
  if (keepCopy) fs::copy_file(path, path + ".full", fs::copy_options::overwrite_existing);
  store = HistoryStore::open(path, opts, &error);
  const EpochMs endMs = kStart + seconds * 1000;
  if (!store || !store->runRetention(endMs)) {
    std::cerr << "retention failed: " << (store ? store->status().lastError : error) << "\n";
    return 1;
  }
  const std::uint64_t walAfterRetention = bytesOf(path, true) - bytesOf(path, false);
  store.reset();
  const std::uint64_t trimmedBytes = bytesOf(path, false);  // 10 s tier cut to its span
  const double bytesPerSampleTrimmed = static_cast<double>(trimmedBytes) / static_cast<double>(rows);
  store = HistoryStore::open(path, opts, &error);
  const auto r0 = std::chrono::steady_clock::now();
  if (!store || !store->runRetention(endMs + opts.fullResolutionMs + 60'000)) {
    std::cerr << "retention failed: " << (store ? store->status().lastError : error) << "\n";
    return 1;
  }
  const double retentionSeconds = secondsSince(r0);
  store.reset();
  const std::uint64_t rolledBytes = bytesOf(path, false);
  const double rollupRows = std::ceil(seconds / 60.0) * kGroups;
  const double bytesPerRollup = static_cast<double>(rolledBytes) / rollupRows;  // upper bound: includes schema pages
  const double weekRows = 7.0 * 86400 * kGroups;
  const double restDays = static_cast<double>(opts.retainMs - opts.fullResolutionMs) / kDayMs;
  const double rollupRowsRest = restDays * 1440 * kGroups;
  // Extrapolated mode: the recording is shorter than the 10 s tier's span would make a difference, so the
  // untrimmed figure (10 s tier for the whole week) is used: an upper bound.
  const double weekBytes = fullWeek ? static_cast<double>(trimmedBytes) : weekRows * bytesPerSampleTrimmed;
  const double steadyBytes = weekBytes + rollupRowsRest * bytesPerRollup;
  std::printf("size: %.1f bytes/sample row before retention (%.1f MB main file for %lld rows, 10 s tier for all of it), "
              "%.1f after the 10 s tier is cut to %.0f h; %.1f bytes/rollup row\n",
              bytesPerSample, fullMainBytes / 1e6, static_cast<long long>(rows), bytesPerSampleTrimmed,
              opts.tier10sRetainMs / 3.6e6, bytesPerRollup);
  std::printf("size: 7 d x %d groups full resolution + rollups = %.0f MB (%s); + %.0f d of rollups = %.0f MB; steady "
              "state %.0f MB main file (target < 500); WAL after retention %.1f MB\n",
              kGroups, weekBytes / 1e6, fullWeek ? "measured" : "extrapolated from the measured rows", restDays,
              rollupRowsRest * bytesPerRollup / 1e6, steadyBytes / 1e6, walAfterRetention / 1e6);
  std::printf("retention: expired %lld full-resolution rows (rollups were already current) in %.2f s\n", static_cast<long long>(rows), retentionSeconds);

  nlohmann::json j = {
      {"insert_rows", rows},
      {"insert_seconds", insertSeconds},
      {"insert_rows_per_s", insertRate},
      {"insert_cpu_seconds", insertCpuSeconds},
      {"insert_rows_per_cpu_s", insertCpuRate},
      {"query_cpu_ms", queryCpuMs},
      {"append_us_median", p50AppendUs},
      {"append_us_p99", p99AppendUs},
      {"append_us_worst", worstAppendUs},
      {"query_24h_10groups_2000pts_ms", queryMs},
      {"query_median_ms", queryMedianMs},
      {"query_points", points},
      {"bytes_per_sample_row", bytesPerSample},
      {"bytes_per_rollup_row", bytesPerRollup},
      {"week_full_resolution_bytes", weekBytes},
      {"week_measured", fullWeek},
      {"file_and_wal_after_insert_bytes", fullBytes},
      {"rollups_rest_days", restDays},
      {"rollups_rest_bytes", rollupRowsRest * bytesPerRollup},
      {"wal_after_retention_bytes", walAfterRetention},
      {"steady_state_bytes", steadyBytes},
      {"retention_seconds", retentionSeconds},
  };
  std::ofstream(jsonPath) << j.dump(2) << "\n";
  std::printf("wrote %s\n", jsonPath.c_str());
  return 0;
}
