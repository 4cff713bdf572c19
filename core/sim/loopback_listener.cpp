#include "loopback_listener.h"

#include "log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace tg {
namespace {

std::runtime_error sysError(const std::string& what) {
  return std::runtime_error("tollgate-sim: " + what + ": " + std::strerror(errno));
}

std::runtime_error notLoopback(const std::string& host) {
  return std::runtime_error("tollgate-sim: refusing to listen on " + host +
                            ": only loopback hosts (127.0.0.0/8, ::1, localhost) are allowed");
}

}  // namespace

LoopbackListener::LoopbackListener(const std::string& hostIn, int port) {
  const std::string host = hostIn == "localhost" ? "127.0.0.1" : hostIn;
  sockaddr_storage addr{};
  socklen_t addrLen = 0;
  int family = AF_INET;
  in_addr a4{};
  in6_addr a6{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) {
    if ((ntohl(a4.s_addr) >> 24) != 127) throw notLoopback(host);
    auto* sin = reinterpret_cast<sockaddr_in*>(&addr);
    sin->sin_family = AF_INET;
    sin->sin_addr = a4;
    sin->sin_port = htons(static_cast<std::uint16_t>(port));
    addrLen = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &a6) == 1) {
    if (!IN6_IS_ADDR_LOOPBACK(&a6)) throw notLoopback(host);
    family = AF_INET6;
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&addr);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_addr = a6;
    sin6->sin6_port = htons(static_cast<std::uint16_t>(port));
    addrLen = sizeof(sockaddr_in6);
  } else {
    throw std::runtime_error("tollgate-sim: not an IP address or \"localhost\": " + hostIn);
  }

  fd_ = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw sysError("socket");
  try {
    const int one = 1;
    // Only a restart's TIME_WAIT sockets depend on it; listening without it still works.
    if (::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
      logWarn("sim", std::string("setsockopt SO_REUSEADDR: ") + std::strerror(errno));
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), addrLen) != 0)
      throw sysError("bind " + host + ":" + std::to_string(port));
    if (::listen(fd_, SOMAXCONN) != 0) throw sysError("listen");
    sockaddr_storage bound{};
    socklen_t boundLen = sizeof bound;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &boundLen) != 0) throw sysError("getsockname");
    port_ = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                    : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

LoopbackListener::~LoopbackListener() {
  if (fd_ >= 0) ::close(fd_);
}

int LoopbackListener::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

}  // namespace tg
