#include "sim_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

SimTestClient::SimTestClient(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  timeval tv{5, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // a server that stops reading fails the send
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

SimTestClient::~SimTestClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::string SimTestClient::format(const std::string& method, const std::string& path, const Headers& headers,
                                  const std::string& body) {
  std::string r = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [k, v] : headers) r += k + ": " + v + "\r\n";
  if (!body.empty() || method == "POST") r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return r + "\r\n" + body;
}

bool SimTestClient::sendRaw(const std::string& bytes) {
  std::size_t off = 0;
  while (fd_ >= 0 && off < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return fd_ >= 0;
}

SimTestResponse SimTestClient::request(const std::string& method, const std::string& path, const Headers& headers,
                                       const std::string& body) {
  if (!sendRaw(format(method, path, headers, body))) return {};
  return readResponse();
}

bool SimTestClient::fill() {
  if (fd_ < 0) return false;
  char tmp[16384];
  const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<std::size_t>(n));
  return true;
}

SimTestResponse SimTestClient::readHead() {
  SimTestResponse r;
  std::size_t headEnd;
  while ((headEnd = buf_.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return r;
  const std::string head = buf_.substr(0, headEnd);
  std::size_t lineEnd = head.find("\r\n");
  const std::string statusLine = head.substr(0, lineEnd);
  const int status = std::atoi(statusLine.substr(statusLine.find(' ') + 1).c_str());
  std::size_t pos = lineEnd == std::string::npos ? head.size() : lineEnd + 2;
  while (pos < head.size()) {
    std::size_t e = head.find("\r\n", pos);
    if (e == std::string::npos) e = head.size();
    const std::string line = head.substr(pos, e - pos);
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers[name] = value;
    }
    pos = e + 2;
  }
  buf_.erase(0, headEnd + 4);
  r.status = status;
  return r;
}

SimTestResponse SimTestClient::readResponse() {
  SimTestResponse r = readHead();
  if (r.status == 0) return r;
  const std::size_t length = std::strtoul(r.header("content-length").c_str(), nullptr, 10);
  while (buf_.size() < length)
    if (!fill()) return SimTestResponse{};
  r.body = buf_.substr(0, length);
  buf_.erase(0, length);
  return r;
}

std::optional<std::string> SimTestClient::readChunk() {
  std::size_t lineEnd;
  while ((lineEnd = buf_.find("\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  char* end = nullptr;
  const std::size_t size = std::strtoul(buf_.c_str(), &end, 16);
  if (end == buf_.c_str()) return std::nullopt;  // not a chunk size line
  while (buf_.size() < lineEnd + 2 + size + 2)
    if (!fill()) return std::nullopt;
  if (buf_.compare(lineEnd + 2 + size, 2, "\r\n") != 0) return std::nullopt;
  std::string data = buf_.substr(lineEnd + 2, size);
  buf_.erase(0, lineEnd + 2 + size + 2);
  return data;
}

std::optional<std::string> SimTestClient::readChunkedBody() {
  std::string body;
  while (auto chunk = readChunk()) {
    if (chunk->empty()) return body;
    body += *chunk;
  }
  return std::nullopt;
}

std::string SimTestClient::readToClose() {
  while (fill()) {
  }
  return std::exchange(buf_, {});
}

void SimTestClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool SimTestClient::shutdownWrite() { return fd_ >= 0 && ::shutdown(fd_, SHUT_WR) == 0; }

bool SimTestClient::closedByPeer(int timeoutMs) {
  if (fd_ < 0 || !buf_.empty()) return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, timeoutMs) <= 0) return false;
  char tmp[256];
  const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}
