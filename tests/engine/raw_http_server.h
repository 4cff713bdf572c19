// A tiny HTTP/1.1 upstream on loopback for hostile-input tests: it records every request's raw bytes
// (so a test can see exactly what went over the wire, injected lines included) and answers with whatever
// the test's responder returns. One connection at a time, "Connection: close" on every answer.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <strings.h>
#include <thread>
#include <vector>

namespace tgtest {

class RawHttpServer {
 public:
  struct Received {
    std::string raw;  // request line, headers and body as they arrived
    std::chrono::steady_clock::time_point at;
  };
  struct Reply {
    std::string raw;    // the whole response (or its start, with pieces); empty with hold = answer nothing
    bool hold = false;  // after raw (and pieces), keep the connection open until the client closes it or stop()
    std::vector<std::string> pieces;  // sent one by one after raw, `gap` apart (a slow stream)
    std::chrono::milliseconds gap{0};
  };
  static Reply held() {  // answers nothing and keeps the connection open
    Reply r;
    r.hold = true;
    return r;
  }
  static Reply raw(std::string bytes) {
    Reply r;
    r.raw = std::move(bytes);
    return r;
  }
  // index: 0-based number of the request.
  using Responder = std::function<Reply(const std::string& raw, int index)>;

  static Reply status(int code, const std::string& extraHeaders = {}, const std::string& body = "{}") {
    Reply r;
    r.raw = "HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\nConnection: close\r\n" + extraHeaders + "\r\n" + body;
    return r;
  }

  explicit RawHttpServer(Responder responder = {}) : responder_(std::move(responder)) {
    if (!responder_) responder_ = [](const std::string&, int) { return status(200); };
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 64) != 0)
      throw std::runtime_error("bind/listen failed");
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~RawHttpServer() { stop(); }

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int count() {
    std::lock_guard lock(mutex_);
    return static_cast<int>(received_.size());
  }
  std::vector<Received> received() {
    std::lock_guard lock(mutex_);
    return received_;
  }
  // Connections the client closed before the server was done with them (a hold or a stream cut short).
  int closedByClient() const { return closedByClient_.load(); }
  // When the last piece of a stream was sent (steady clock), per piece index of the latest stream.
  std::vector<std::chrono::steady_clock::time_point> pieceTimes() {
    std::lock_guard lock(mutex_);
    return pieceTimes_;
  }

  // Every byte every request carried, concatenated.
  std::string allBytes() {
    std::lock_guard lock(mutex_);
    std::string all;
    for (const auto& r : received_) all += r.raw;
    return all;
  }

 private:
  bool waitReadable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
  }

  static std::size_t contentLength(const std::string& head) {
    std::size_t pos = 0;
    while ((pos = head.find("\r\n", pos)) != std::string::npos) {
      pos += 2;
      static const char kName[] = "content-length:";
      if (strncasecmp(head.c_str() + pos, kName, sizeof kName - 1) == 0)
        return std::strtoull(head.c_str() + pos + sizeof kName - 1, nullptr, 10);
    }
    return 0;
  }

  static bool sendAll(int c, const std::string& bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(c, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Waits `d`; true as soon as the client closes its end (or resets it).
  static bool clientClosedWithin(int c, std::chrono::milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    do {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count()))) > 0) {
        char b[512];
        const ssize_t n = ::recv(c, b, sizeof b, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
      }
    } while (std::chrono::steady_clock::now() < until);
    return false;
  }

  std::string readRequest(int c) {
    std::string in;
    char buf[65536];
    while (!stop_) {
      const auto end = in.find("\r\n\r\n");
      if (end != std::string::npos && in.size() >= end + 4 + contentLength(in.substr(0, end + 2))) break;
      if (!waitReadable(c, 50)) continue;
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
    }
    return in;
  }

  void run() {
    while (!stop_) {
      if (!waitReadable(fd_, 50)) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string raw = readRequest(c);
      if (raw.empty()) {
        ::close(c);
        continue;
      }
      int index;
      {
        std::lock_guard lock(mutex_);
        index = static_cast<int>(received_.size());
        received_.push_back({raw, std::chrono::steady_clock::now()});
      }
      const Reply reply = responder_(raw, index);
      bool open = sendAll(c, reply.raw);
      {
        std::lock_guard lock(mutex_);
        pieceTimes_.clear();
      }
      for (const std::string& piece : reply.pieces) {
        if (!open) break;
        open = !clientClosedWithin(c, reply.gap) && sendAll(c, piece);
        std::lock_guard lock(mutex_);
        pieceTimes_.push_back(std::chrono::steady_clock::now());
      }
      if (open && reply.hold) {
        while (!stop_ && !clientClosedWithin(c, std::chrono::milliseconds(20))) {
        }
        open = stop_;
      }
      if (!open) ++closedByClient_;
      ::close(c);
    }
  }

  Responder responder_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<Received> received_;
  std::vector<std::chrono::steady_clock::time_point> pieceTimes_;
  std::atomic<int> closedByClient_{0};
  std::thread thread_;
};

}  // namespace tgtest
