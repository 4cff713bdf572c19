// Where the scheduler and the transport meet: plain values, neither side's internals.
// The scheduler describes a send (Dispatch); the transport answers with what came back (Response).
#pragma once

#include "request.h"
#include "types.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

using Ticket = std::uint64_t;  // one send of one request; the scheduler's key for it while in flight

// One HTTP send. Header lines are complete ("Name: value"), already checked for CR/LF.
struct Dispatch {
  Ticket ticket = 0;
  std::string method;
  std::string url;
  // The request body. Points into the scheduler's in-flight request, which lives until the transfer's
  // Response is handed back (or the transport aborts it): the transport does not copy it.
  std::string_view body;
  // Shared header lines: the same object for every send of a key and tier without headers of their own, so
  // the transport may build its native list once per object (cacheable) instead of once per send.
  std::shared_ptr<const std::vector<std::string>> headerLines;
  bool cacheableHeaders = false;
  // Empty: the body is buffered into Response::body. Set: a 2xx response is relayed to it as it arrives (see
  // ResponseSink); other statuses are buffered all the same, so they can still be retried.
  std::shared_ptr<ResponseSink> sink;
};

// A send that could not start (a failed curl_easy_setopt, out of memory): the request fails with it.
struct SendError {
  ErrorKind kind = ErrorKind::Network;
  std::string message;
};

// What one transfer produced.
struct Response {
  Ticket ticket = 0;
  int status = 0;                // 0 when no response arrived (network error, timeout, refused resend)
  // Not committed, failed after its head had come (a reset or a timeout mid-body): that head's status. The
  // upstream answered, so it may have done the work: the scheduler resends only what may be done twice.
  int headStatus = 0;
  ErrorKind error = ErrorKind::None;
  // A failure that is the request's own, not the upstream's (too large, malformed URL): no retry, and no
  // mark against the upstream.
  bool permanent = false;
  std::string errorText;         // empty when the transfer itself succeeded
  HeaderList headers;            // of the last response (after 100-continue or redirects)
  // Empty when over max_response_bytes. Committed: only what token counting needs (the last SSE event
  // carrying "usage", or the first kMaxKeptBody bytes), the rest went to the sink.
  std::string body;
  // A committed event stream: the tokens its events stated over the whole stream (StreamUsage); -1 otherwise.
  std::int64_t streamTokens = -1;
  // The head went to the Dispatch's sink: bytes may have reached the client, so the request is never
  // retried, whatever happens later. error Cancelled when the sink refused the head or aborted a chunk.
  bool committed = false;
};

// What a committed transfer keeps of its body for token counting.
inline constexpr std::size_t kMaxKeptBody = 1024 * 1024;
inline constexpr std::size_t kMaxKeptEvent = 64 * 1024;
inline constexpr std::size_t kKeptEventTail = 16 * 1024;  // of a longer event, where its usage would be

}  // namespace tg
