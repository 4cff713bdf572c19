#include "redraw_stats.h"

#include <QCoreApplication>

#include <algorithm>
#include <chrono>

namespace tg::ui {

std::int64_t RedrawStats::nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RedrawStats::addWork(std::int64_t startNs, std::int64_t durationNs) {
  if (firstNs_ < 0) firstNs_ = startNs;
  work_.emplace_back(startNs, std::max<std::int64_t>(durationNs, 0));
  trim(startNs + durationNs);
}

void RedrawStats::addRedraw(std::int64_t atNs) {
  if (firstNs_ < 0) firstNs_ = atNs;
  redraws_.push_back(atNs);
  ++totalRedraws_;
  trim(atNs);
}

void RedrawStats::trim(std::int64_t nowNs) const {
  while (!work_.empty() && work_.front().first < nowNs - windowNs_) work_.pop_front();
  while (!redraws_.empty() && redraws_.front() < nowNs - windowNs_) redraws_.pop_front();
}

double RedrawStats::busyShare(std::int64_t nowNs) const {
  trim(nowNs);
  if (work_.empty()) return 0;
  std::int64_t busy = 0;
  for (const auto& w : work_) busy += w.second;
  const std::int64_t span = std::max<std::int64_t>(1, std::min(windowNs_, nowNs - firstNs_));
  return std::min(1.0, double(busy) / double(span));
}

double RedrawStats::nsPerRedraw(std::int64_t nowNs) const {
  trim(nowNs);
  if (redraws_.empty()) return 0;
  std::int64_t busy = 0;
  for (const auto& w : work_) busy += w.second;
  return double(busy) / double(redraws_.size());
}

QString RedrawStats::summary(std::int64_t nowNs) const {
  return QCoreApplication::translate("tg::ui::RedrawStats", "%1 ms/redraw, %2% UI thread busy")
      .arg(nsPerRedraw(nowNs) / 1e6, 0, 'f', 2)
      .arg(busyShare(nowNs) * 100, 0, 'f', 1);
}

}  // namespace tg::ui
