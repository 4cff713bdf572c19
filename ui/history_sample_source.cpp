#include "history_sample_source.h"

#include <algorithm>
#include <cmath>

namespace tg::ui {

namespace {

constexpr EpochMs kSmallWindowMs = 10'000;  // card look-ups: read directly, keep the chart window cached

// One Sample carrying either the minimum or the maximum of a bucket. Counts are stored per second times
// the sample's interval, so the chart's per-second rate comes out as the bucket's min/max rate.
Sample bucketSample(const std::string& group, const SampleBucket& b, std::int64_t bucketMs, bool max) {
  Sample s;
  s.group = group;
  const double half = double(bucketMs) / 2.0;
  s.tsMs = b.startMs + EpochMs(max ? 1.5 * half : 0.5 * half);
  s.intervalS = half / 1000.0;
  auto pick = [&](Metric m) { return max ? b[m].max : b[m].min; };
  auto count = [&](Metric m) {
    const double v = pick(m);
    return known(v) ? int(std::lround(v * s.intervalS)) : 0;
  };
  auto gauge = [&](Metric m) {
    const double v = pick(m);
    return known(v) ? int(std::lround(v)) : 0;
  };
  s.sends = count(Metric::Sends);
  s.ok = count(Metric::Ok);
  s.r429 = count(Metric::R429);
  s.r5xx = count(Metric::R5xx);
  s.retries = count(Metric::Retries);
  s.shed = count(Metric::Shed);
  s.inFlight = gauge(Metric::InFlight);
  s.concurrencyLimit = gauge(Metric::ConcurrencyLimit);
  s.queueDepth[int(Tier::P1)] = gauge(Metric::QueueDepth);  // only the sum survives downsampling
  s.reqRemaining = pick(Metric::ReqRemaining);
  s.tokRemaining = pick(Metric::TokRemaining);
  s.p50Ms = pick(Metric::P50Ms);
  s.p95Ms = pick(Metric::P95Ms);
  const double br = b[Metric::Breaker].max;
  s.breaker = known(br) ? static_cast<BreakerState>(std::clamp(int(std::lround(br)), 0, 2)) : BreakerState::Closed;
  return s;
}

}  // namespace

HistorySampleSource* HistorySampleSource::open(const QString& path, HistoryReaderOptions opts, QString* error,
                                               QObject* parent) {
  std::string err;
  auto reader = HistoryReader::open(path.toStdString(), opts, &err);
  if (!reader) {
    if (error) *error = QString::fromStdString(err);
    return nullptr;
  }
  auto* s = new HistorySampleSource(std::move(reader), path, parent);
  s->reload();
  const TimeRange r = s->fileRange_;
  if (!r.empty) s->setRange(std::max(r.fromMs, r.toMs - 15 * 60'000), r.toMs);
  return s;
}

HistorySampleSource::HistorySampleSource(std::unique_ptr<HistoryReader> reader, QString path, QObject* parent)
    : SampleSource(parent), reader_(std::move(reader)), path_(std::move(path)) {}

HistorySampleSource::~HistorySampleSource() = default;

void HistorySampleSource::reload() {
  auto g = reader_->groups();
  if (g.ok()) groups_ = g.value; else lastError_ = QString::fromStdString(g.error);
  auto r = reader_->timeRange();
  if (r.ok()) fileRange_ = r.value; else lastError_ = QString::fromStdString(r.error);
  auto inc = reader_->incidents();
  if (inc.ok()) incidents_ = inc.value; else lastError_ = QString::fromStdString(inc.error);
  cacheFrom_ = cacheTo_ = -1;
  ++revision_;
}

std::vector<std::string> HistorySampleSource::groups() const { return groups_; }

void HistorySampleSource::setRange(EpochMs fromMs, EpochMs toMs) {
  if (toMs < fromMs) std::swap(fromMs, toMs);
  rangeFrom_ = fromMs;
  rangeTo_ = toMs;
  auto ev = reader_->events(fromMs, toMs + 1, {}, {});
  if (ev.ok()) rangeEvents_ = std::move(ev.value); else lastError_ = QString::fromStdString(ev.error);
  playheadMs_ = std::clamp(playheadMs_, fromMs, toMs);
  if (playheadMs_ == fromMs) playheadMs_ = toMs;
  cacheFrom_ = cacheTo_ = -1;
  snapshotAt_ = -1;
  ++revision_;
  emit rangeChanged(fromMs, toMs);
  emit reset();
  emit playheadChanged(playheadMs_);
}

void HistorySampleSource::setPlayhead(EpochMs tsMs) {
  tsMs = std::clamp(tsMs, rangeFrom_, rangeTo_);
  if (tsMs == playheadMs_) return;
  playheadMs_ = tsMs;
  ++revision_;
  emit playheadChanged(tsMs);
}

void HistorySampleSource::setPointBudget(int points) {
  budget_ = std::max(16, points);
}

void HistorySampleSource::fill(EpochMs fromMs, EpochMs toMs) const {
  if (fromMs == cacheFrom_ && toMs == cacheTo_ && budget_ == cacheBudget_) return;
  cacheFrom_ = fromMs;
  cacheTo_ = toMs;
  cacheBudget_ = budget_;
  cache_.clear();
  if ((toMs - fromMs) / 1000 <= budget_) {
    auto rows = reader_->rawSamples(fromMs, toMs + 1, {});
    if (!rows.ok()) {
      lastError_ = QString::fromStdString(rows.error);
      return;
    }
    for (auto& s : rows.value) cache_[s.group].push_back(std::move(s));
    return;
  }
  // Two samples per bucket, so ask for half the budget in buckets.
  auto series = reader_->samples(fromMs, toMs + 1, {}, std::max(8, budget_ / 2));
  if (!series.ok()) {
    lastError_ = QString::fromStdString(series.error);
    return;
  }
  for (const auto& ser : series.value) {
    auto& out = cache_[ser.group];
    out.reserve(ser.buckets.size() * 2);
    for (const auto& b : ser.buckets) {
      out.push_back(bucketSample(ser.group, b, ser.bucketMs, false));
      out.push_back(bucketSample(ser.group, b, ser.bucketMs, true));
    }
  }
}

void HistorySampleSource::forEachSample(const std::string& group, EpochMs fromMs, EpochMs toMs,
                                        const std::function<void(const Sample&)>& fn) const {
  if (toMs - fromMs <= kSmallWindowMs) {
    auto rows = reader_->rawSamples(fromMs, toMs + 1, {group});
    if (!rows.ok()) {
      lastError_ = QString::fromStdString(rows.error);
      return;
    }
    for (const auto& s : rows.value) fn(s);
    return;
  }
  fill(fromMs, toMs);
  auto it = cache_.find(group);
  if (it == cache_.end()) return;
  for (const auto& s : it->second)
    if (s.tsMs >= fromMs && s.tsMs <= toMs) fn(s);
}

std::vector<Event> HistorySampleSource::events(EpochMs fromMs, EpochMs toMs) const {
  std::vector<Event> out;
  for (const auto& e : rangeEvents_)
    if (e.tsMs >= fromMs && e.tsMs <= toMs) out.push_back(e);
  return out;
}

SnapshotPtr HistorySampleSource::latestSnapshot() const {
  if (rangeTo_ == 0) return nullptr;
  if (snapshot_ && snapshotAt_ == playheadMs_) return snapshot_;
  auto rows = reader_->rawSamples(playheadMs_ - 3000, playheadMs_ + 1, {});
  if (!rows.ok()) {
    lastError_ = QString::fromStdString(rows.error);
    return snapshot_;
  }
  std::map<std::string, Sample> last;
  for (const auto& s : rows.value) last[s.group] = s;  // ordered by group, then time
  auto snap = std::make_shared<EngineSnapshot>();
  snap->tsMs = playheadMs_;
  snap->state = last.empty() ? EngineState::Stopped : EngineState::Running;
  for (const auto& name : groups_) {
    auto it = last.find(name);
    if (it == last.end()) continue;
    const Sample& s = it->second;
    GroupSnapshot g;
    g.group = name;
    g.dims[int(Dimension::Requests)].limit = s.reqLimit;
    g.dims[int(Dimension::Requests)].remaining = s.reqRemaining;
    g.dims[int(Dimension::Requests)].resetAtMs = s.resetAtMs;
    g.dims[int(Dimension::Tokens)].limit = s.tokLimit;
    g.dims[int(Dimension::Tokens)].remaining = s.tokRemaining;
    g.inFlight = s.inFlight;
    g.concurrencyLimit = s.concurrencyLimit;
    g.concurrencyCeiling = s.concurrencyLimit;
    g.queueDepth = s.queueDepth;
    g.breaker = s.breaker;
    g.latencyP50Ms = s.p50Ms;
    g.latencyP95Ms = s.p95Ms;
    snap->globalInFlight += s.inFlight;
    snap->groups.push_back(std::move(g));
  }
  snapshot_ = std::move(snap);
  snapshotAt_ = playheadMs_;
  return snapshot_;
}

}  // namespace tg::ui
