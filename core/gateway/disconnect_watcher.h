// Notices a client hanging up while its request is parked. libmicrohttpd does not watch a suspended
// connection at all (no reads, no timeouts), so a client that gave up while queued would otherwise stay in
// the tier queue and be sent upstream anyway. One thread, one epoll set with EPOLLRDHUP on parked sockets.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace tg::gateway {

class DisconnectWatcher {
 public:
  // `onGone(token)` runs on the watcher thread, once per watch that saw its peer hang up.
  explicit DisconnectWatcher(std::function<void(std::uint64_t token)> onGone);
  ~DisconnectWatcher();
  DisconnectWatcher(const DisconnectWatcher&) = delete;
  DisconnectWatcher& operator=(const DisconnectWatcher&) = delete;

  // Starts watching `fd` (a parked connection). False when epoll refuses (the request then just isn't watched).
  bool watch(int fd, std::uint64_t token);
  // Stops watching before the connection is handed back to the server (which may close and reuse the fd).
  void unwatch(int fd);

 private:
  void run();

  std::function<void(std::uint64_t)> onGone_;
  int epoll_ = -1;
  int wake_ = -1;  // eventfd: stop
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::unordered_map<int, std::uint64_t> tokens_;
  std::thread thread_;
};

}  // namespace tg::gateway
