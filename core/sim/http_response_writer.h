// The simulator's HTTP/1.1 response head and body as bytes: status line, Server, a Date header kept per
// wall-clock second, Content-Type JSON, Content-Length, the extra headers; or the head of an SSE stream whose
// body follows in chunks. Not thread-safe (one per responder).
#pragma once

#include "rate_limit_header_writer.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tg {

class HttpResponseWriter {
 public:
  // "HTTP/1.1 <status> <reason>" head with Date, Content-Length, Content-Type JSON, the extra headers, then
  // the body; "Connection: close" when `close`. `wallNowS`: seconds since the epoch, for the Date header.
  std::string serialize(int status, const HeaderList& headers, const std::string& body, bool close,
                        double wallNowS);
  // The head of a text/event-stream response whose body follows: "Transfer-Encoding: chunked" when
  // `chunked`, else the body ends when the connection closes (HTTP/1.0), so "Connection: close".
  std::string serializeStreamHead(int status, const HeaderList& headers, bool chunked, bool close, double wallNowS);
  // `data` as one chunk of a chunked body ("<hex size>\r\n<data>\r\n"); empty data gives an empty string,
  // since a zero-size chunk would end the body.
  static std::string chunk(std::string_view data);
  static constexpr const char* kLastChunk = "0\r\n\r\n";

 private:
  void head(std::string& out, int status, double wallNowS);
  std::int64_t dateSecond_ = -1;
  std::string dateHeader_;  // formatted once a second, not once a response
};

}  // namespace tg
