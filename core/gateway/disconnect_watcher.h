// Notices a client hanging up while its request is parked. libmicrohttpd does not watch a suspended
// connection at all (no reads, no timeouts), so a client that gave up while queued would otherwise stay in
// the tier queue and be sent upstream anyway. One thread, one epoll set with EPOLLRDHUP on parked sockets.
// Most requests are parked for a few milliseconds (a send and its answer): a socket joins the epoll set only
// once it has been parked kDelay, so those cost no epoll_ctl at all. Adding a socket whose peer already left
// reports it at once, so a hang-up during the delay is still seen, kDelay later.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
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
  static constexpr std::chrono::milliseconds kDelay{20};
  // Stops watching before the connection is handed back to the server (which may close and reuse the fd).
  void unwatch(int fd);

 private:
  void run();

  std::function<void(std::uint64_t)> onGone_;
  int epoll_ = -1;
  int wake_ = -1;  // eventfd: stop
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::unordered_map<int, std::uint64_t> tokens_;  // in the epoll set
  struct Soon {
    std::uint64_t token;
    std::chrono::steady_clock::time_point due;
  };
  std::unordered_map<int, Soon> soon_;  // parked, not in the epoll set yet
  bool sleeping_ = true;                // the thread waits with no timeout: a first soon_ entry wakes it
  std::thread thread_;
};

}  // namespace tg::gateway
