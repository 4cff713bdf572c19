// A tiny HTTP/1.1 upstream on loopback for hostile-input tests: it records every request's raw bytes
// (so a test can see exactly what went over the wire, injected lines included) and answers with whatever
// the test's responder returns. One connection at a time, "Connection: close" on every answer.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
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
    std::string raw;    // the whole response; empty with hold = answer nothing
    bool hold = false;  // keep the connection open without answering until stop()
  };
  // index: 0-based number of the request.
  using Responder = std::function<Reply(const std::string& raw, int index)>;

  static Reply status(int code, const std::string& extraHeaders = {}, const std::string& body = "{}") {
    return {"HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\nConnection: close\r\n" + extraHeaders + "\r\n" + body,
            false};
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
      if (reply.hold) {
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } else {
        std::size_t off = 0;
        while (off < reply.raw.size()) {
          const ssize_t n = ::send(c, reply.raw.data() + off, reply.raw.size() - off, MSG_NOSIGNAL);
          if (n <= 0) break;
          off += static_cast<std::size_t>(n);
        }
      }
      ::close(c);
    }
  }

  Responder responder_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<Received> received_;
  std::thread thread_;
};

}  // namespace tgtest
