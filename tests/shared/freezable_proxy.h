// A TCP proxy on a loopback port the kernel chose, forwarding to a loopback `port`. freeze() makes the
// connections it has go dead without a word: they stay open and what arrives on them is read and dropped (a
// partition neither end's kernel sees: no reset, no close). Connections made after it are forwarded again.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace tgtest {

class FreezableProxy {
 public:
  explicit FreezableProxy(int targetPort) : target_(targetPort) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(listen_, 16) == 0 &&
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~FreezableProxy() {
    stop_ = true;
    thread_.join();
    for (const Pair& p : pairs_) {
      ::close(p.client);
      ::close(p.server);
    }
    for (int fd : dead_) ::close(fd);
    ::close(listen_);
  }
  int port() const { return port_; }  // 0: could not listen
  void freeze() {
    std::lock_guard lk(mu_);
    for (Pair& p : pairs_) p.frozen = true;
  }

 private:
  struct Pair {
    int client, server;
    bool frozen = false;
  };
  void run() {
    char buf[16384];
    while (!stop_) {
      std::vector<pollfd> fds{{listen_, POLLIN, 0}};
      {
        std::lock_guard lk(mu_);
        for (const Pair& p : pairs_) {
          fds.push_back({p.client, POLLIN, 0});
          fds.push_back({p.server, POLLIN, 0});
        }
      }
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      std::lock_guard lk(mu_);
      if (fds[0].revents & POLLIN) {
        const int c = ::accept(listen_, nullptr, nullptr);
        const int s = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(static_cast<uint16_t>(target_));
        if (c >= 0 && ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
          pairs_.push_back({c, s});
        } else {
          if (c >= 0) ::close(c);
          ::close(s);
        }
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Pair* p = nullptr;
        for (Pair& q : pairs_)
          if (q.client == fds[i].fd || q.server == fds[i].fd) p = &q;
        if (!p) continue;
        const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) continue;
        if (n == 0) {  // one end closed: passed on unless frozen (then the other end is kept open, unread)
          if (!p->frozen) ::shutdown(fds[i].fd == p->client ? p->server : p->client, SHUT_WR);
          dead_.push_back(p->client);
          dead_.push_back(p->server);
          std::erase_if(pairs_, [&](const Pair& q) { return q.client == dead_.back() || q.server == dead_.back(); });
          break;  // fds refer to pairs_ as it was
        }
        if (p->frozen) continue;  // dropped
        const int to = fds[i].fd == p->client ? p->server : p->client;
        (void)::send(to, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);
      }
    }
  }
  const int target_;
  int listen_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Pair> pairs_;
  std::vector<int> dead_;  // ends of closed pairs, kept open (a frozen pair's other end must not see a close)
  std::thread thread_;
};

}  // namespace tgtest
