#include "disconnect_watcher.h"

#include "log.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

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
  std::lock_guard lk(mu_);
  epoll_event ev{};
  ev.events = EPOLLRDHUP | EPOLLONESHOT;  // HUP and ERR are always reported
  ev.data.fd = fd;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0 && (errno != EEXIST || epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev) != 0))
    return false;
  tokens_[fd] = token;
  return true;
}

void DisconnectWatcher::unwatch(int fd) {
  std::lock_guard lk(mu_);
  if (tokens_.erase(fd)) epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
}

void DisconnectWatcher::run() {
  epoll_event events[64];
  while (!stop_) {
    const int n = epoll_wait(epoll_, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      logError("gateway", std::string("disconnect watcher stopped: ") + std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_) continue;
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
  }
}

}  // namespace tg::gateway
