// Incremental HTTP/1.1 request parser for the simulator: parses one request at a time from the front of a
// connection's input buffer, so pipelined requests are handled one after another, in order.
// Bodies are Content-Length only; chunked request bodies are refused with 411.
// Line endings are strict CRLF: a bare LF or bare CR anywhere in the head is a 400 (RFC 9112 2.2 lets a
// recipient reject them), so a header can never hide inside another one's value.
// Stateless and thread-compatible.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tg {

struct HttpRequest {
  std::string method;
  std::string target;  // as sent, e.g. "/v1/chat?x=1"
  int versionMinor = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;
  bool keepAlive = true;

  // First value of the header with this lower-case name, or nullptr.
  const std::string* header(std::string_view lowerName) const;
  std::string_view path() const;  // target without the query
};

class HttpRequestParser {
 public:
  static constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
  static constexpr std::size_t kMaxBodyBytes = 16 * 1024 * 1024;
  // The most one request can occupy: a connection's input buffer must be able to hold this much, or a
  // request the parser accepts could never complete.
  static constexpr std::size_t kMaxRequestBytes = kMaxHeaderBytes + 4 + kMaxBodyBytes;

  enum class Status { NeedMore, Complete, Error };
  struct Outcome {
    Status status = Status::NeedMore;
    std::size_t consumed = 0;     // Complete: bytes of this request (head + body)
    int errorStatus = 0;          // Error: HTTP status to answer with before closing (400, 411, 413, 431, 505)
    std::string errorMessage;     // Error: why, for the response body
    bool expectContinue = false;  // NeedMore: head complete, body pending, client waits for "100 Continue"
  };

  // Parses the request at the start of `data`; on Complete fills `out`.
  static Outcome parse(std::string_view data, HttpRequest& out);
};

}  // namespace tg
