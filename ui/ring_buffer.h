// Fixed-capacity FIFO: pushing into a full buffer drops the oldest element. Not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

namespace tg::ui {

template <typename T>
class RingBuffer {
 public:
  explicit RingBuffer(std::size_t capacity) : data_(capacity ? capacity : 1) {}

  void push(T value) {
    data_[(head_ + size_) % data_.size()] = std::move(value);
    if (size_ < data_.size())
      ++size_;
    else
      head_ = (head_ + 1) % data_.size();
  }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return data_.size(); }
  bool empty() const { return size_ == 0; }
  // 0 = oldest
  const T& operator[](std::size_t i) const { return data_[(head_ + i) % data_.size()]; }
  const T& back() const { return (*this)[size_ - 1]; }
  // Keeps the oldest `n` elements (n >= size(): all).
  void truncate(std::size_t n) {
    if (n < size_) size_ = n;
  }

  // Index of the first element for which `before(elem)` is false; elements must be partitioned.
  template <typename Pred>
  std::size_t partitionPoint(Pred before) const {
    std::size_t lo = 0, hi = size_;
    while (lo < hi) {
      std::size_t mid = (lo + hi) / 2;
      if (before((*this)[mid]))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

 private:
  std::vector<T> data_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace tg::ui
