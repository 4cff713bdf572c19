// The simulator's HTTP/1.1 response head and body as bytes: status line, Server, a Date header kept per
// wall-clock second, Content-Type JSON, Content-Length, the extra headers. Not thread-safe (one per responder).
#pragma once

#include "rate_limit_header_writer.h"

#include <cstdint>
#include <string>

namespace tg {

class HttpResponseWriter {
 public:
  // "HTTP/1.1 <status> <reason>" head with Date, Content-Length, Content-Type JSON, the extra headers, then
  // the body; "Connection: close" when `close`. `wallNowS`: seconds since the epoch, for the Date header.
  std::string serialize(int status, const HeaderList& headers, const std::string& body, bool close,
                        double wallNowS);

 private:
  std::int64_t dateSecond_ = -1;
  std::string dateHeader_;  // formatted once a second, not once a response
};

}  // namespace tg
