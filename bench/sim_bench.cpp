// sim_bench: keep-alive throughput of tollgate-sim on loopback.
//
//   sim_bench [--connections 64] [--requests 300000] [--seconds 10] [--depth 1] [--port N | --config FILE]
//
// Without --port it starts a SimServer in-process (one unlimited group, no simulated latency, so the figure
// is the server's own capacity); with --port it drives an already running tollgate-sim. One epoll client
// thread keeps `depth` requests outstanding on each connection and stops at the request count or the time
// limit, whichever comes first. Prints requests/s and the status counts.
#include "sim_config.h"
#include "sim_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Conn {
  int fd = -1;
  std::string in;
  int outstanding = 0;
};

int connectTo(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool sendAll(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// Pops complete responses off the front of `in`; returns how many, counting statuses.
int takeResponses(std::string& in, std::map<int, long>& statuses) {
  int done = 0;
  std::size_t pos = 0;
  for (;;) {
    const auto headEnd = in.find("\r\n\r\n", pos);
    if (headEnd == std::string::npos) break;
    const auto cl = in.find("Content-Length: ", pos);
    if (cl == std::string::npos || cl > headEnd) break;
    const std::size_t len = std::strtoul(in.c_str() + cl + 16, nullptr, 10);
    if (in.size() < headEnd + 4 + len) break;
    ++statuses[std::atoi(in.c_str() + pos + 9)];
    pos = headEnd + 4 + len;
    ++done;
  }
  in.erase(0, pos);
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  int connections = 64, depth = 1, port = 0;
  long maxRequests = 300000;
  double maxSeconds = 10;
  std::string configFile;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--connections") connections = std::atoi(v);
    else if (a == "--requests") maxRequests = std::atol(v);
    else if (a == "--seconds") maxSeconds = std::atof(v);
    else if (a == "--depth") depth = std::atoi(v);
    else if (a == "--port") port = std::atoi(v);
    else if (a == "--config") configFile = v;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (connections < 1 || depth < 1 || maxRequests < 1 || maxSeconds <= 0) {
    std::fprintf(stderr, "connections, depth, requests and seconds must be positive\n");
    return 2;
  }

  std::unique_ptr<tg::SimServer> server;
  if (port == 0) {
    tg::SimConfig cfg = configFile.empty() ? tg::SimConfig{} : tg::SimConfig::fromFile(configFile);
    server = std::make_unique<tg::SimServer>(cfg);
    port = server->start();
  }

  const std::string request =
      "GET /v1/bench HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer bench-key\r\n"
      "X-Tollgate-Tier: P1\r\n\r\n";
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<Conn> conns(static_cast<std::size_t>(connections));
  long sent = 0, done = 0;
  std::map<int, long> statuses;
  for (int i = 0; i < connections; ++i) {
    Conn& c = conns[static_cast<std::size_t>(i)];
    c.fd = connectTo(port);
    if (c.fd < 0) {
      std::perror("connect");
      return 1;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    ::epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(maxSeconds));
  auto refill = [&](Conn& c) {
    std::string batch;
    while (c.outstanding < depth && sent < maxRequests) {
      batch += request;
      ++c.outstanding;
      ++sent;
    }
    return batch.empty() || sendAll(c.fd, batch);
  };
  for (auto& c : conns)
    if (!refill(c)) return 1;

  epoll_event events[256];
  char buf[65536];
  while (done < sent && Clock::now() < deadline) {
    const int n = ::epoll_wait(ep, events, 256, 100);
    for (int i = 0; i < n; ++i) {
      Conn& c = conns[events[i].data.u32];
      const ssize_t r = ::recv(c.fd, buf, sizeof buf, 0);
      if (r <= 0) {
        std::fprintf(stderr, "connection closed by the server after %ld responses\n", done);
        return 1;
      }
      c.in.append(buf, static_cast<std::size_t>(r));
      const int got = takeResponses(c.in, statuses);
      c.outstanding -= got;
      done += got;
      if (!refill(c)) return 1;
    }
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("sim_bench: %ld responses in %.2f s over %d keep-alive connections (depth %d): %.0f req/s\n", done,
              elapsed, connections, depth, done / elapsed);
  for (const auto& [status, count] : statuses) std::printf("  status %d: %ld\n", status, count);
  for (auto& c : conns) ::close(c.fd);
  ::close(ep);
  if (server) server->stop();
  return 0;
}
