#include "history_sample_source.h"

#include "epoch_floor.h"

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
  bucketMs_ = 0;  // a growing file may have filled buckets read before
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
  // Not past the recording's end: an incident's padding ran a minute past the file, and the playhead there
  // showed no group at all (the cards and the Group box emptied).
  if (!fileRange_.empty && playheadMs_ > fileRange_.toMs && fileRange_.toMs >= fromMs) playheadMs_ = fileRange_.toMs;
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

namespace {

// The bucket size for a downsampled window: the smallest grid step that keeps the series within
// `buckets` buckets. Steps are whole rollup rows where possible (10, 20, 30 s on the 10 s tier; whole
// minutes on the 1 min tier), and a raw step gives way to the 10 s tier when that is at most twice as coarse:
// reading rollup rows costs a fraction of aggregating raw rows.
std::int64_t gridBucketMs(EpochMs windowMs, int buckets) {
  const std::int64_t need = std::max<std::int64_t>(1, (windowMs + buckets - 1) / buckets);
  static constexpr std::int64_t kRaw[] = {1'000, 2'000, 3'000, 5'000, 6'000};
  static constexpr std::int64_t kTiered[] = {10'000, 20'000, 30'000, 60'000, 120'000, 180'000, 300'000,
                                             600'000, 900'000, 1'200'000, 1'800'000, 3'600'000};
  if (need <= 10'000 && 2 * need >= 10'000) return 10'000;
  for (std::int64_t b : kRaw)
    if (b >= need) return b;
  for (std::int64_t b : kTiered)
    if (b >= need) return b;
  return (need + 3'600'000 - 1) / 3'600'000 * 3'600'000;
}


void appendBuckets(const std::vector<SampleSeries>& series, std::map<std::string, std::vector<Sample>>& out) {
  for (const auto& ser : series) {
    auto& v = out[ser.group];
    v.reserve(v.size() + ser.buckets.size() * 2);
    for (const auto& b : ser.buckets) {
      v.push_back(bucketSample(ser.group, b, ser.bucketMs, false));
      v.push_back(bucketSample(ser.group, b, ser.bucketMs, true));
    }
  }
}

}  // namespace

bool HistorySampleSource::readBuckets(EpochMs fromMs, EpochMs toMs, std::int64_t bucketMs,
                                      std::map<std::string, std::vector<Sample>>& out) const {
  if (toMs <= fromMs) return true;
  // Both ends on the grid and maxPoints = bucket count: the reader's bucket is exactly bucketMs, on the same
  // grid, so pieces read separately line up.
  const int count = int((toMs - fromMs) / bucketMs);
  auto series = reader_->samples(fromMs, toMs, {}, count);
  if (!series.ok()) {
    lastError_ = QString::fromStdString(series.error);
    return false;
  }
  appendBuckets(series.value, out);
  return true;
}

void HistorySampleSource::fillBuckets(EpochMs fromMs, EpochMs toMs) const {
  const std::int64_t b = gridBucketMs(toMs - fromMs, std::max(8, budget_ / 2));
  const EpochMs a = history::floorTo(fromMs, b);
  const EpochMs e = history::floorTo(addSaturating(toMs, 1), b);  // complete buckets end here; the rest is read every time
  const bool overlap = b == bucketMs_ && a < bucketTo_ && e > bucketFrom_;
  if (!overlap) {
    buckets_.clear();
    bucketMs_ = b;
    bucketFrom_ = bucketTo_ = a;
  }
  if (a < bucketFrom_) {  // moved back: read the stretch before the cached buckets, then put it in front
    std::map<std::string, std::vector<Sample>> front;
    if (!readBuckets(a, bucketFrom_, b, front)) {
      bucketMs_ = 0;
      return;
    }
    for (auto& [g, v] : buckets_) {
      auto& f = front[g];
      f.insert(f.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    }
    buckets_ = std::move(front);
    bucketFrom_ = a;
  }
  if (e > bucketTo_) {
    if (!readBuckets(bucketTo_, e, b, buckets_)) {
      bucketMs_ = 0;
      return;
    }
    bucketTo_ = e;
  }
  // Drop what the window has left behind (buckets are in time order per group).
  if (bucketFrom_ < a || bucketTo_ > e) {
    for (auto& [g, v] : buckets_) {
      auto lo = std::lower_bound(v.begin(), v.end(), a, [](const Sample& s, EpochMs t) { return s.tsMs < t; });
      auto hi = std::lower_bound(lo, v.end(), e, [](const Sample& s, EpochMs t) { return s.tsMs < t; });
      v.erase(hi, v.end());
      v.erase(v.begin(), lo);
    }
    bucketFrom_ = a;
    bucketTo_ = e;
  }
  cache_ = buckets_;
  if (toMs + 1 > e) {  // the newest, incomplete bucket: data after the playhead must not show
    std::map<std::string, std::vector<Sample>> tail;
    auto series = reader_->samples(e, toMs + 1, {}, 1);
    if (series.ok()) {
      appendBuckets(series.value, tail);
      for (auto& [g, v] : tail) {
        auto& c = cache_[g];
        c.insert(c.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
      }
    } else {
      lastError_ = QString::fromStdString(series.error);
    }
  }
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
  fillBuckets(fromMs, toMs);
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
  const auto& v = it->second;
  auto lo = std::lower_bound(v.begin(), v.end(), fromMs, [](const Sample& s, EpochMs t) { return s.tsMs < t; });
  for (; lo != v.end() && lo->tsMs <= toMs; ++lo) fn(*lo);
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
