// The engine's HTTP transport: a libcurl multi handle, a pool of easy handles, one Transfer per send.
// Knows nothing of groups, keys or quota: it sends a Dispatch and hands back a Response.
#pragma once

#include "dispatch.h"

#include <curl/curl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tg {

struct CurlEasyCleanup {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
struct CurlMultiCleanup {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct CurlSlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlEasyPtr = std::unique_ptr<CURL, CurlEasyCleanup>;
using CurlMultiPtr = std::unique_ptr<CURLM, CurlMultiCleanup>;
using CurlSlistPtr = std::unique_ptr<curl_slist, CurlSlistFree>;

// How a finished transfer counts: its error kind, and whether the failure is the request's own (permanent:
// the same request would fail the same way again, so it is not retried or held against the upstream).
struct TransferOutcome {
  ErrorKind kind = ErrorKind::None;
  bool permanent = false;
  bool operator==(const TransferOutcome&) const = default;
};

// The one mapping from a transfer's CURLcode and HTTP status to the engine's error kinds. A transfer that
// completed (CURLE_OK) is judged by its status; CURLE_FILESIZE_EXCEEDED (over max_response_bytes) is Http.
// Pure and thread-safe.
TransferOutcome classifyTransfer(CURLcode rc, int status);

struct TransportOptions {
  std::int64_t maxResponseBytes = 64 * 1024 * 1024;
  double requestTimeoutS = 60;
  double connectTimeoutS = 10;
};

// One thread (the engine's loop) owns it; only wakeup() is thread-safe.
class CurlTransport {
 public:
  // Throws std::runtime_error when libcurl cannot make a multi handle.
  explicit CurlTransport(TransportOptions options);
  ~CurlTransport();  // removes and frees what is in flight without answering it: call abortAll() first
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  // libcurl sends a request again by itself when a reused connection dies before any response byte. Each
  // send after the first asks this gate; refused, the transfer fails as a lost connection. Set before start().
  void setResendGate(std::function<bool(Ticket)> gate) { resendGate_ = std::move(gate); }

  // Starts a send. On an error nothing is left in flight and no Response will come for the ticket.
  std::optional<SendError> start(const Dispatch& d);

  // Waits up to timeoutMs for socket activity or a wakeup(), then drives the transfers.
  void poll(int timeoutMs);
  // Hands each finished transfer's Response to fn (the handle goes back to the pool first).
  void takeFinished(const std::function<void(Response)>& fn);
  // Aborts every transfer in flight, and drops Responses not yet taken; returns their tickets (no Response
  // comes for them).
  std::vector<Ticket> abortAll();
  // Aborts one transfer (its caller gave up): out of the multi handle, the easy handle back to the pool, and
  // no Response comes for it. false when the ticket is not in flight.
  bool abort(Ticket ticket);
  // Continues a transfer its ResponseSink paused. false when the ticket is not in flight or not paused.
  bool resume(Ticket ticket);

  void wakeup();  // thread-safe: makes a poll() in progress (or the next one) return at once
  std::size_t inFlight() const { return active_.size(); }

 private:
  struct Transfer;
  static std::size_t onBody(char* data, std::size_t size, std::size_t n, void* user);
  static std::size_t onHeader(char* data, std::size_t size, std::size_t n, void* user);
  static int onPrereq(void* user, char*, char*, int, int);
  bool headerList(const Dispatch& d, CurlSlistPtr& owned, curl_slist*& list);
  std::optional<SendError> configure(CURL* easy, Transfer& t, const Dispatch& d);
  void release(CURL* easy);  // out of the multi handle
  void recycle(std::unique_ptr<Transfer> t);  // its easy handle reset and back to the pool
  // Takes a transfer that ended (rc: how) out of the multi handle and describes it.
  Response finish(CURL* easy, CURLcode rc);

  TransportOptions options_;
  CurlMultiPtr multi_;  // declared first: destroyed after every easy handle
  std::vector<CurlEasyPtr> pool_;
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> active_;
  std::unordered_map<Ticket, CURL*> byTicket_;  // the same transfers, for abort() and resume()
  std::vector<Response> endedEarly_;            // ended outside curl_multi_perform; handed out by takeFinished
  // Native header lists built once per shared Dispatch::headerLines (kept alive here, so the key is stable).
  std::unordered_map<const std::vector<std::string>*,
                     std::pair<std::shared_ptr<const std::vector<std::string>>, CurlSlistPtr>>
      headerCache_;
  std::function<bool(Ticket)> resendGate_;
};

}  // namespace tg
