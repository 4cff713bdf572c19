// A tiny blocking HTTP/1.1 client for the simulator tests: one keep-alive connection to 127.0.0.1,
// Content-Length responses, or a head and then its chunked (or close-delimited) body piece by piece, as a
// stream arrives. Every read and send has a 5 s timeout.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// Polls `cond` until it holds or the deadline passes; a wait with a deadline, never a fixed sleep.
template <typename F>
bool waitFor(F cond, std::chrono::milliseconds deadline = std::chrono::milliseconds(3000)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

struct SimTestResponse {
  int status = 0;  // 0: connection closed or reset before a response
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool has(const std::string& lowerName) const { return headers.count(lowerName) > 0; }
  std::string header(const std::string& lowerName) const {
    auto it = headers.find(lowerName);
    return it == headers.end() ? std::string() : it->second;
  }
};

class SimTestClient {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  explicit SimTestClient(int port);
  ~SimTestClient();
  SimTestClient(const SimTestClient&) = delete;
  SimTestClient& operator=(const SimTestClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  SimTestResponse request(const std::string& method, const std::string& path, const Headers& headers = {},
                          const std::string& body = {});
  static std::string format(const std::string& method, const std::string& path, const Headers& headers,
                            const std::string& body);
  bool sendRaw(const std::string& bytes);
  SimTestResponse readResponse();
  // Only the head of the next response (status, headers); its body is read with readChunk or readToClose.
  SimTestResponse readHead();
  // The next chunk of a chunked body as it arrives: its data, "" for the last chunk, nullopt when the
  // connection closes, resets or times out first.
  std::optional<std::string> readChunk();
  // The rest of a chunked body, through its last chunk; nullopt when the connection ends first.
  std::optional<std::string> readChunkedBody();
  std::string readToClose();  // the rest of a close-delimited body
  void close();               // the client goes away (a full close, not a half-close)
  bool shutdownWrite();  // half-close: the server sees EOF after what was sent
  // True when the server closes (EOF or reset) within `timeoutMs` with no more response bytes.
  bool closedByPeer(int timeoutMs);

 private:
  bool fill();
  int fd_ = -1;
  std::string buf_;
};
