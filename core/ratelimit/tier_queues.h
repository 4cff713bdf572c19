// Priority queues P0 > P1 > P2 for one group: FIFO within a tier, bounded per tier, each entry with a
// deadline for its first send. Retries re-enter at the front of their tier. Time is an argument;
// not thread-safe.
#pragma once

#include "types.h"

#include <array>
#include <deque>
#include <optional>

namespace tg {

template <class T>
class TierQueues {
 public:
  struct Entry {
    T item;
    TimePoint deadline;  // TimePoint::max() = none
  };

  explicit TierQueues(std::array<int, kTierCount> capacities = {1 << 30, 1 << 30, 1 << 30})
      : capacity_(capacities) {}

  // false when the tier is at capacity: `item` is left untouched and the caller sheds it.
  bool push(Tier t, T&& item, TimePoint deadline) {
    auto& q = q_[idx(t)];
    if (static_cast<int>(q.size()) >= capacity_[idx(t)]) return false;
    q.push_back(Entry{std::move(item), deadline});
    return true;
  }
  // Retries and requests put back after a failed admission: never refused, keep their place.
  void pushFront(Tier t, T item, TimePoint deadline = TimePoint::max()) {
    q_[idx(t)].push_front(Entry{std::move(item), deadline});
  }

  bool empty(Tier t) const { return q_[idx(t)].empty(); }
  int size(Tier t) const { return static_cast<int>(q_[idx(t)].size()); }
  int total() const { return size(Tier::P0) + size(Tier::P1) + size(Tier::P2); }
  T& front(Tier t) { return q_[idx(t)].front().item; }
  // The i-th entry of a tier (0 = front), and taking it out of the middle: for requests that need not wait
  // behind the front one (another client's own key).
  T& at(Tier t, int i) { return q_[idx(t)][static_cast<std::size_t>(i)].item; }
  T takeAt(Tier t, int i) {
    auto& q = q_[idx(t)];
    T item = std::move(q[static_cast<std::size_t>(i)].item);
    q.erase(q.begin() + i);
    return item;
  }
  T popFront(Tier t) {
    auto& q = q_[idx(t)];
    T item = std::move(q.front().item);
    q.pop_front();
    return item;
  }

  // Removes every entry whose deadline is at or before `now`, calling shed(item) for each.
  template <class F>
  int shedExpired(TimePoint now, F&& shed) {
    return removeEntries([now](const Entry& e) { return e.deadline <= now; }, shed);
  }

  // Removes every entry for which pred(item) holds, calling fn(item) for each (a caller's cancel).
  template <class P, class F>
  int removeIf(P&& pred, F&& fn) {
    return removeEntries([&pred](const Entry& e) { return pred(e.item); }, fn);
  }

  // Removes everything (drain/stop), calling fn(item) for each.
  template <class F>
  int clear(F&& fn) {
    int n = 0;
    for (auto& q : q_) {
      for (auto& e : q) fn(std::move(e.item)), ++n;
      q.clear();
    }
    return n;
  }

 private:
  template <class P, class F>
  int removeEntries(P&& pred, F& fn) {
    int n = 0;
    for (auto& q : q_) {
      for (auto it = q.begin(); it != q.end();) {
        if (pred(*it)) {
          fn(std::move(it->item));
          it = q.erase(it);
          ++n;
        } else {
          ++it;
        }
      }
    }
    return n;
  }

  static constexpr std::size_t idx(Tier t) { return static_cast<std::size_t>(t); }
  std::array<std::deque<Entry>, kTierCount> q_;
  std::array<int, kTierCount> capacity_;
};

}  // namespace tg
