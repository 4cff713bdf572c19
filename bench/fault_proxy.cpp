#include "fault_proxy.h"

#include "http_request_parser.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <stdexcept>

namespace tgbench {
namespace {

constexpr int kPollMs = 50;
constexpr int kBacklog = 512;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr int kContinueStatus = 100;
constexpr int kFirstFinalStatus = 200;
constexpr std::string_view kHeadEnd = "\r\n\r\n";
constexpr std::string_view kContinueReply = "HTTP/1.1 100 Continue\r\n\r\n";

std::string errnoText(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

std::string lowerAscii(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? char(c | 0x20) : c; });
  return out;
}

bool sendAll(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Close with an RST instead of a FIN: what a crashed or restarted upstream looks like to the client.
void closeWithReset(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

int connectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One complete response at the front of `buf`: its length and status, or 0 when more bytes are needed.
// tollgate-sim always sends Content-Length.
std::size_t completeResponse(const std::string& buf, int* status, bool* close) {
  const auto headEnd = buf.find(kHeadEnd);
  if (headEnd == std::string::npos) return 0;
  const std::string head = lowerAscii(std::string_view(buf).substr(0, headEnd + 2));
  *status = 0;
  if (head.rfind("http/1.", 0) == 0 && head.size() > 12) *status = std::atoi(head.c_str() + 9);
  std::size_t length = 0;
  if (const auto p = head.find("\r\ncontent-length:"); p != std::string::npos)
    length = std::strtoull(head.c_str() + p + 17, nullptr, 10);
  *close = head.find("\r\nconnection: close\r\n") != std::string::npos;
  const std::size_t total = headEnd + kHeadEnd.size() + length;
  return buf.size() >= total ? total : 0;
}

}  // namespace

std::string_view FaultProxy::modeName(Mode m) {
  switch (m) {
    case Mode::Pass: return "pass";
    case Mode::Slow: return "slow";
    case Mode::Refuse: return "refuse";
    case Mode::Hang: return "hang";
  }
  return "?";
}

FaultProxy::FaultProxy(int upstreamPort, std::string idHeaderLower, double slowMinMs, double slowMaxMs)
    : upstreamPort_(upstreamPort), idHeader_(lowerAscii(idHeaderLower)), slowMinMs_(slowMinMs), slowMaxMs_(slowMaxMs) {}

FaultProxy::~FaultProxy() { stop(); }

bool FaultProxy::openListener() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port_));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, kBacklog) != 0) {
    ::close(fd);
    return false;
  }
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return false;
  }
  port_ = ntohs(a.sin_port);
  listenFd_ = fd;
  return true;
}

int FaultProxy::start() {
  if (started_) throw std::runtime_error("FaultProxy::start called twice");
  if (!openListener()) throw std::runtime_error(errnoText("fault proxy: bind/listen on 127.0.0.1"));
  started_ = true;
  acceptThread_ = std::thread([this] { acceptLoop(); });
  return port_;
}

void FaultProxy::stop() {
  if (!started_ || stopping_.exchange(true)) return;
  if (acceptThread_.joinable()) acceptThread_.join();
  for (auto& c : conns_)
    if (c.thread.joinable()) c.thread.join();
  conns_.clear();
  if (listenFd_ >= 0) ::close(listenFd_);
  listenFd_ = -1;
}

void FaultProxy::setMode(Mode m) { mode_.store(m); }

bool FaultProxy::sleepUnlessStopped(double ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<long>(ms * 1000));
  while (std::chrono::steady_clock::now() < until) {
    if (stopping_) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(kPollMs), until - std::chrono::steady_clock::now()));
  }
  return !stopping_;
}

void FaultProxy::acceptLoop() {
  while (!stopping_) {
    for (auto it = conns_.begin(); it != conns_.end();) {
      if (it->done) {
        it->thread.join();
        it = conns_.erase(it);
      } else {
        ++it;
      }
    }
    if (mode_ == Mode::Refuse) {
      if (listenFd_ >= 0) ::close(listenFd_);  // queued, unaccepted connections are reset by the kernel
      listenFd_ = -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      continue;
    }
    if (listenFd_ < 0 && !openListener()) {  // same port again (SO_REUSEADDR); retried until it binds
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      continue;
    }
    pollfd p{listenFd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++accepted_;
    auto& c = conns_.emplace_back();
    c.client = fd;
    c.thread = std::thread([this, &c] { serve(c); });
  }
}

int FaultProxy::onSend(const std::string& id) {
  std::lock_guard lock(countsMu_);
  auto& c = counts_[id];
  if (c.sends > 0) {
    if (c.lastStatus == 429) ++c.quotaRetries;
    else ++c.transientRetries;
  }
  ++c.sends;
  c.lastStatus = -1;
  c.statuses.push_back(-1);
  return c.sends - 1;
}

void FaultProxy::onOutcome(const std::string& id, int send, int status) {
  if (id.empty()) return;
  std::lock_guard lock(countsMu_);
  auto& c = counts_[id];
  c.statuses[static_cast<std::size_t>(send)] = status;
  // An older send of the id can end after a newer one started (the engine gave up on it): only the
  // newest send says what the next one is a retry of.
  if (send == c.sends - 1) c.lastStatus = status;
}

void FaultProxy::serve(Conn& c) {
  const int client = c.client;
  int up = -1;
  std::string in, out;
  std::deque<std::pair<std::string, int>> pending;  // (id, send index) forwarded upstream, awaiting a response
  bool continueSent = false;
  std::mt19937_64 rng(accepted_.load() * 0x9e3779b97f4a7c15ULL);
  char buf[kReadChunk];
  auto finish = [&](bool reset) {
    for (const auto& [id, send] : pending) onOutcome(id, send, 0);
    if (reset) closeWithReset(client);
    else ::close(client);
    if (up >= 0) ::close(up);
    c.done = true;
  };
  for (;;) {
    if (stopping_) return finish(false);
    const Mode m = mode_;
    if (m == Mode::Refuse) return finish(true);
    if (m == Mode::Hang) {
      while (mode_ == Mode::Hang && !stopping_) std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      return finish(true);
    }
    pollfd fds[2] = {{client, POLLIN, 0}, {up, POLLIN, 0}};  // a negative fd is ignored by poll
    const int n = ::poll(fds, 2, kPollMs);
    if (n < 0 && errno != EINTR) return finish(false);
    if (n <= 0) continue;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t r = ::recv(client, buf, sizeof buf, 0);
      if (r <= 0) return finish(false);
      in.append(buf, static_cast<std::size_t>(r));
      for (;;) {
        tg::HttpRequest req;
        const auto o = tg::HttpRequestParser::parse(in, req);
        if (o.status == tg::HttpRequestParser::Status::NeedMore) {
          if (o.expectContinue && !continueSent) {
            continueSent = true;
            if (!sendAll(client, kContinueReply.data(), kContinueReply.size())) return finish(false);
          }
          break;
        }
        if (o.status == tg::HttpRequestParser::Status::Error) return finish(true);
        continueSent = false;
        const std::string raw = in.substr(0, o.consumed);
        in.erase(0, o.consumed);
        const std::string* idp = req.header(idHeader_);
        const std::string id = idp ? *idp : std::string();
        if (mode_ == Mode::Slow) {
          std::uniform_real_distribution<double> delay(slowMinMs_, slowMaxMs_);
          if (!sleepUnlessStopped(delay(rng))) return finish(false);
          if (mode_ == Mode::Refuse || mode_ == Mode::Hang) return finish(true);
        }
        if (up < 0 && (up = connectLoopback(upstreamPort_)) < 0) return finish(true);
        if (!sendAll(up, raw.data(), raw.size())) return finish(true);
        if (id.empty()) ++noId_;
        pending.emplace_back(id, id.empty() ? -1 : onSend(id));
      }
    }
    if (up >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t r = ::recv(up, buf, sizeof buf, 0);
      if (r <= 0) return finish(true);  // the simulator reset or closed: pass the reset on
      out.append(buf, static_cast<std::size_t>(r));
      for (;;) {
        int status = 0;
        bool close = false;
        const std::size_t len = completeResponse(out, &status, &close);
        if (len == 0) break;
        if (status >= kContinueStatus && status < kFirstFinalStatus) {  // ours went out already
          out.erase(0, len);
          continue;
        }
        if (!sendAll(client, out.data(), len)) return finish(false);
        out.erase(0, len);
        if (!pending.empty()) {
          onOutcome(pending.front().first, pending.front().second, status);
          pending.pop_front();
        }
        if (close) return finish(false);
      }
    }
  }
}

bool FaultProxy::writeCounts(const std::string& path, std::string* error) const {
  std::ofstream f(path, std::ios::trunc);
  if (!f) {
    if (error) *error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  std::lock_guard lock(countsMu_);
  for (const auto& [id, c] : counts_) {
    f << id << '\t' << c.sends << '\t' << c.transientRetries << '\t' << c.quotaRetries << '\t';
    for (std::size_t i = 0; i < c.statuses.size(); ++i) f << (i ? "," : "") << c.statuses[i];
    f << '\n';
  }
  f.flush();
  if (!f) {
    if (error) *error = "write to " + path + " failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace tgbench
