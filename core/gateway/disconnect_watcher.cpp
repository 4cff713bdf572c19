#include "disconnect_watcher.h"

#include "log.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tg::gateway {

DisconnectWatcher::DisconnectWatcher(std::function<void(std::uint64_t)> onGone) : onGone_(std::move(onGone)) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_ < 0 || wake_ < 0) throw std::runtime_error(std::string("gateway: epoll/eventfd: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
  thread_ = std::thread([this] { run(); });
}

DisconnectWatcher::~DisconnectWatcher() {
  stop_ = true;
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = write(wake_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  close(wake_);
  close(epoll_);
}

bool DisconnectWatcher::watch(int fd, std::uint64_t token) {
  bool wake = false;
  {
    std::lock_guard lk(mu_);
    soon_[fd] = Soon{token, std::chrono::steady_clock::now() + kDelay};
    wake = sleeping_;
    sleeping_ = false;
  }
  if (wake) {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = write(wake_, &one, sizeof one);
  }
  return true;
}

void DisconnectWatcher::unwatch(int fd) {
  std::lock_guard lk(mu_);
  if (soon_.erase(fd)) return;
  if (tokens_.erase(fd)) epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
}

void DisconnectWatcher::run() {
  epoll_event events[64];
  int timeoutMs = -1;
  while (!stop_) {
    const int n = epoll_wait(epoll_, events, 64, timeoutMs);
    if (n < 0 && errno != EINTR) {
      logError("gateway", std::string("disconnect watcher stopped: ") + std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_) {
        std::uint64_t drained = 0;
        [[maybe_unused]] auto r = read(wake_, &drained, sizeof drained);
        continue;
      }
      std::uint64_t token = 0;
      {
        std::lock_guard lk(mu_);
        auto it = tokens_.find(fd);
        if (it == tokens_.end()) continue;  // unwatched meanwhile
        token = it->second;
        tokens_.erase(it);
        epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
      }
      onGone_(token);
    }
    // Sockets parked long enough join the set; the wait is until the next one is due.
    std::lock_guard lk(mu_);
    const auto now = std::chrono::steady_clock::now();
    auto next = std::chrono::steady_clock::time_point::max();
    for (auto it = soon_.begin(); it != soon_.end();) {
      if (it->second.due > now) {
        next = std::min(next, it->second.due);
        ++it;
        continue;
      }
      epoll_event ev{};
      ev.events = EPOLLRDHUP | EPOLLONESHOT;  // HUP and ERR are always reported
      ev.data.fd = it->first;
      if (epoll_ctl(epoll_, EPOLL_CTL_ADD, it->first, &ev) == 0 ||
          (errno == EEXIST && epoll_ctl(epoll_, EPOLL_CTL_MOD, it->first, &ev) == 0))
        tokens_[it->first] = it->second.token;  // else: not watched (as before: the request just isn't)
      it = soon_.erase(it);
    }
    if (next == std::chrono::steady_clock::time_point::max()) {
      timeoutMs = -1;
      sleeping_ = true;
    } else {
      timeoutMs = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
      sleeping_ = false;
    }
  }
}

}  // namespace tg::gateway
