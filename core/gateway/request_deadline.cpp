#include "request_deadline.h"

#include <sys/socket.h>

#include <algorithm>

namespace tg::gateway {

RequestDeadline::RequestDeadline(std::chrono::seconds idle, std::chrono::seconds head, std::chrono::seconds body,
                                 std::function<void(int)> onCut)
    : idle_(idle), head_(head), body_(body), onCut_(std::move(onCut)) {
  thread_ = std::thread([this] { run(); });
}

RequestDeadline::~RequestDeadline() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RequestDeadline::opened(const void* conn, int fd) {
  {
    std::lock_guard lk(mu_);
    conns_[conn] = Entry{fd, Clock::now() + idle_ + head_};
  }
  wake_.notify_all();
}

void RequestDeadline::setDue(const void* conn, Clock::time_point due, bool onlyEarlier) {
  std::lock_guard lk(mu_);
  const auto it = conns_.find(conn);
  if (it == conns_.end()) return;  // opened before notifications were on, or already closed
  it->second.due = onlyEarlier ? std::min(it->second.due, due) : due;
}

void RequestDeadline::requestLine(const void* conn) { setDue(conn, Clock::now() + head_, true); }
void RequestDeadline::headDone(const void* conn) { setDue(conn, Clock::now() + body_, false); }
void RequestDeadline::requestDone(const void* conn) { setDue(conn, Clock::time_point::max(), false); }
void RequestDeadline::answered(const void* conn) { setDue(conn, Clock::now() + idle_ + head_, false); }

void RequestDeadline::closed(const void* conn) {
  std::lock_guard lk(mu_);
  conns_.erase(conn);
}

std::uint64_t RequestDeadline::cut() const {
  std::lock_guard lk(mu_);
  return cut_;
}

void RequestDeadline::run() {
  std::unique_lock lk(mu_);
  while (!stop_) {
    // Idle while no connection is open; else a sweep a second (a deadline is seconds long: a second late is fine).
    if (conns_.empty()) wake_.wait(lk, [this] { return stop_ || !conns_.empty(); });
    else wake_.wait_for(lk, std::chrono::seconds(1), [this] { return stop_; });
    if (stop_) break;
    const auto now = Clock::now();
    int n = 0;
    for (auto& [conn, e] : conns_) {
      if (e.due > now) continue;
      // Under the lock: closed() has not run for it, so libmicrohttpd has not closed the descriptor yet.
      ::shutdown(e.fd, SHUT_RDWR);
      e.due = Clock::time_point::max();  // once; libmicrohttpd closes it on its next turn
      ++n;
    }
    cut_ += static_cast<std::uint64_t>(n);
    if (n > 0 && onCut_) {
      lk.unlock();
      onCut_(n);
      lk.lock();
    }
  }
}

}  // namespace tg::gateway
