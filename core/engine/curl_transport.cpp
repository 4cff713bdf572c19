#include "curl_transport.h"

#include "curl_options.h"
#include "log.h"
#include "request_safety.h"
#include "usage_tokens.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <strings.h>
#include <utility>

namespace tg {
namespace {

constexpr const char* kScope = "engine";

std::once_flag gCurlInit;

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return std::string(s);
}

// The status of an "HTTP/1.1 200 OK" (or "HTTP/2 200") line, 0 when there is none.
int statusOf(std::string_view line) {
  const std::size_t sp = line.find(' ');
  if (sp == std::string_view::npos || sp + 4 > line.size()) return 0;
  int status = 0;
  for (std::size_t i = sp + 1; i < sp + 4; ++i) {
    if (line[i] < '0' || line[i] > '9') return 0;
    status = status * 10 + (line[i] - '0');
  }
  return status;
}

bool isEventStream(const HeaderList& headers) {
  static constexpr std::string_view kType = "text/event-stream";
  for (const auto& [name, value] : headers)
    if (strcasecmp(name.c_str(), "content-type") == 0)
      return value.size() >= kType.size() && strncasecmp(value.c_str(), kType.data(), kType.size()) == 0;
  return false;
}

ErrorKind errorKindForCurl(CURLcode rc) {
  switch (rc) {
    case CURLE_OK: return ErrorKind::None;
    case CURLE_OPERATION_TIMEDOUT: return ErrorKind::Timeout;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_NOT_BUILT_IN:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
      return ErrorKind::Config;
    case CURLE_FILESIZE_EXCEEDED: return ErrorKind::Http;  // the response is over max_response_bytes
    // libcurl (7.88) answers a response header line over its 100 KB limit so: the upstream's answer, not the
    // network's, and the same again on a retry (which also fed the breaker as a network failure).
    case CURLE_OUT_OF_MEMORY: return ErrorKind::Http;
    // A Content-Encoding libcurl cannot decode (asked for identity, sent something else): the upstream's answer,
    // the same on every retry, which it was given as a network error.
    case CURLE_BAD_CONTENT_ENCODING: return ErrorKind::Http;
    default: return ErrorKind::Network;
  }
}

// The upstream's certificate is not trusted here (or the trust settings cannot be read): the same on every retry,
// which ran six times into the breaker and answered a gateway client "retry" each time.
bool isTrustFailure(CURLcode rc) {
  switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return true;
    default:
      return false;
  }
}

// Where a Location points, for a message: scheme, host, port and path only (a user:password, a query or a
// fragment may hold a token), at most 200 characters. A relative one: its path.
std::string redirectTarget(const std::string& location) {
  const auto parts = urlParts(location);
  const std::string shown = parts ? parts->origin + parts->path : location.substr(0, location.find_first_of("?#"));
  return printable(shown.substr(0, 200));
}

}  // namespace

TransferOutcome classifyTransfer(CURLcode rc, int status) {
  if (rc == CURLE_OK) return {errorKindForStatus(status), false};
  const ErrorKind kind = errorKindForCurl(rc);
  return {kind, (kind != ErrorKind::Network && kind != ErrorKind::Timeout) || isTrustFailure(rc)};
}

struct CurlTransport::Transfer {
  CurlEasyPtr easy;
  Ticket ticket = 0;
  CurlSlistPtr ownedHeaders;  // null when the list is a cached one
  CurlTransport* transport = nullptr;
  std::string body;
  std::int64_t maxBody = 0;
  bool bodyTooLarge = false;  // the write callback refused more (a chunked body has no size up front)
  int sends = 0;              // CURLOPT_PREREQFUNCTION calls: libcurl's own resends are counted
  bool resendRefused = false;
  bool paused = false;        // a write callback returned CURL_WRITEFUNC_PAUSE; resume() continues it
  HeaderList headers;
  int headStatus = 0;         // of the head being read (a 100 Continue comes before the final one)
  char error[CURL_ERROR_SIZE] = {0};

  // Relaying (Dispatch::sink set).
  std::shared_ptr<ResponseSink> sink;
  bool committed = false;    // a 2xx head went to the sink: so does the body, and nothing is retried
  bool sinkAborted = false;  // the sink refused the head or a chunk
  bool eventStream = false;  // text/event-stream: `body` keeps only the last event carrying "usage"
  std::string event;         // the event being read

  // Keeps what token counting needs of a relayed piece, never the whole body.
  void keep(std::string_view data) {
    if (!eventStream) {
      if (body.size() < kMaxKeptBody) body.append(data.substr(0, kMaxKeptBody - body.size()));
      return;
    }
    event.append(data);
    std::size_t start = 0;
    while (true) {  // events end at a blank line, LF or CRLF style
      const std::size_t lf = event.find("\n\n", start), crlf = event.find("\r\n\r\n", start);
      if (lf == std::string::npos && crlf == std::string::npos) break;
      const bool isCrlf = crlf < lf;
      const std::size_t end = isCrlf ? crlf : lf;
      keepEvent(std::string_view(event).substr(start, end - start));  // of one too large, its tail
      start = end + (isCrlf ? 4 : 2);
    }
    event.erase(0, start);
    if (event.size() > kMaxKeptEvent) {
      // Its tail is kept: a usage object closes the event (the Responses API's response.completed repeats the
      // whole output before it, past 64 KiB for a long answer). A terminator's start may be at the very end.
      event.erase(0, event.size() - kKeptEventTail);
    }
  }
  // The stream ended: an event without its blank line counts too.
  void flushEvent() {
    if (eventStream) keepEvent(event);
    event.clear();
  }
  void keepEvent(std::string_view e) {
    if (e.find("usage") == std::string_view::npos) return;
    body.assign(e);
    usage.add(e);
  }
  StreamUsage usage;  // over every event: the last one alone may not hold it all
};

CurlTransport::CurlTransport(TransportOptions options) : options_(options) {
  std::call_once(gCurlInit, [] {
    if (CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK)
      logError(kScope, std::string("curl_global_init: ") + curl_easy_strerror(rc));
  });
  logNetworkEnvironmentOnce();
  multi_.reset(curl_multi_init());
  if (!multi_) throw std::runtime_error("engine: curl_multi_init failed");
  if (CURLMcode rc = curl_multi_setopt(multi_.get(), CURLMOPT_MAX_HOST_CONNECTIONS, 0L); rc != CURLM_OK)
    logError(kScope, std::string("curl_multi_setopt(CURLMOPT_MAX_HOST_CONNECTIONS): ") + curl_multi_strerror(rc));
}

CurlTransport::~CurlTransport() { abortAll(); }

std::size_t CurlTransport::onBody(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t len = size * n;
  if (t->committed) {
    if (t->sinkAborted) return 0;
    switch (t->sink->onChunk(std::string_view(data, len))) {
      case SinkVerdict::Accept: break;
      case SinkVerdict::Pause:
        t->paused = true;
        return CURL_WRITEFUNC_PAUSE;  // curl holds this piece and offers it again after resume()
      case SinkVerdict::Abort:
        t->sinkAborted = true;
        return 0;  // curl ends the transfer with CURLE_WRITE_ERROR
    }
    t->keep(std::string_view(data, len));
    return len;
  }
  if (t->body.size() + len > static_cast<std::uint64_t>(t->maxBody)) {
    t->bodyTooLarge = true;
    return 0;  // curl aborts the transfer with CURLE_WRITE_ERROR
  }
  t->body.append(data, len);
  return len;
}

std::size_t CurlTransport::onHeader(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t len = size * n;
  if (t->committed) return len;  // trailers of a relayed body: its head is already out
  std::string_view line(data, len);
  if (line.rfind("HTTP/", 0) == 0) {
    t->headers.clear();  // a new response (100-continue, redirect): only the last one counts
    t->headStatus = statusOf(line);
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    t->headers.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  } else if (t->sink && (line == "\r\n" || line == "\n") && t->headStatus >= 200 && t->headStatus < 300) {
    // The end of a final 2xx head. Other statuses stay buffered: the scheduler may still retry them.
    if (!t->sink->onHead(t->headStatus, t->headers)) {
      t->sinkAborted = true;
      return 0;  // curl ends the transfer with CURLE_WRITE_ERROR
    }
    t->committed = true;
    t->eventStream = isEventStream(t->headers);
  }
  return len;
}

// Called by libcurl (on the loop thread) right before each send of a transfer. A second send is libcurl
// retrying on a reused connection that died before answering: the upstream may have counted the first one,
// so the gate decides whether it is an attempt the request may still spend.
int CurlTransport::onPrereq(void* user, char*, char*, int, int) {
  auto* t = static_cast<Transfer*>(user);
  if (++t->sends == 1) return CURL_PREREQFUNC_OK;
  if (t->transport->resendGate_ && t->transport->resendGate_(t->ticket)) return CURL_PREREQFUNC_OK;
  t->resendRefused = true;
  return CURL_PREREQFUNC_ABORT;
}

// The native list for d.headerLines; false when libcurl runs out of memory building it. No lines: no list.
bool CurlTransport::headerList(const Dispatch& d, CurlSlistPtr& owned, curl_slist*& list) {
  list = nullptr;
  if (!d.headerLines || d.headerLines->empty()) return true;
  if (d.cacheableHeaders) {
    auto it = headerCache_.find(d.headerLines.get());
    if (it != headerCache_.end()) {
      list = it->second.second.get();
      return true;
    }
  }
  CurlSlistPtr built;
  for (const std::string& line : *d.headerLines) {
    curl_slist* grown = curl_slist_append(built.get(), line.c_str());
    if (!grown) return false;  // the partial list is freed with `built`
    built.release();
    built.reset(grown);
  }
  list = built.get();
  if (d.cacheableHeaders) headerCache_.emplace(d.headerLines.get(), std::make_pair(d.headerLines, std::move(built)));
  else owned = std::move(built);
  return true;
}

std::optional<SendError> CurlTransport::configure(CURL* easy, Transfer& t, const Dispatch& d) {
  CURLcode rc = CURLE_OK;
  const char* failedOption = nullptr;
  auto set = [&](CURLoption option, const char* name, auto value) {
    if (rc != CURLE_OK) return;
    rc = curl_easy_setopt(easy, option, value);
    if (rc != CURLE_OK) failedOption = name;
  };
  set(CURLOPT_URL, "CURLOPT_URL", d.url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "CURLOPT_PROTOCOLS_STR", kAllowedProtocols);
  if (const char* refused = rc == CURLE_OK ? setNetworkOptions(easy) : nullptr) {
    rc = CURLE_BAD_FUNCTION_ARGUMENT;
    failedOption = refused;
  }
  set(CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL", 1L);
  set(CURLOPT_PRIVATE, "CURLOPT_PRIVATE", static_cast<void*>(&t));
  set(CURLOPT_WRITEFUNCTION, "CURLOPT_WRITEFUNCTION", &CurlTransport::onBody);
  set(CURLOPT_WRITEDATA, "CURLOPT_WRITEDATA", static_cast<void*>(&t));
  set(CURLOPT_HEADERFUNCTION, "CURLOPT_HEADERFUNCTION", &CurlTransport::onHeader);
  set(CURLOPT_HEADERDATA, "CURLOPT_HEADERDATA", static_cast<void*>(&t));
  set(CURLOPT_PREREQFUNCTION, "CURLOPT_PREREQFUNCTION", &CurlTransport::onPrereq);
  set(CURLOPT_PREREQDATA, "CURLOPT_PREREQDATA", static_cast<void*>(&t));
  set(CURLOPT_ERRORBUFFER, "CURLOPT_ERRORBUFFER", t.error);
  set(CURLOPT_MAXFILESIZE_LARGE, "CURLOPT_MAXFILESIZE_LARGE", static_cast<curl_off_t>(options_.maxResponseBytes));
  // Asks for the body as it is ("Accept-Encoding: identity"), yet decodes one compressed anyway: a body is read
  // for usage and redacted of any key it echoes, which a gzip'd one would pass unseen. max_response_bytes
  // bounds what is decoded (onBody), so a small bomb stays small.
  set(CURLOPT_ACCEPT_ENCODING, "CURLOPT_ACCEPT_ENCODING", "identity");
  if (d.sink) {
    // Relayed (the gateway): request_timeout_s bounds the upstream's silence, not the length of the answer, as
    // a proxy's read timeout does; an LLM stream may run for minutes. curl checks the speed each second over
    // its last 5 s (so silence is seen up to ~5 s late), never while the transfer is paused for a slow client.
    set(CURLOPT_TIMEOUT_MS, "CURLOPT_TIMEOUT_MS", 0L);
    set(CURLOPT_LOW_SPEED_LIMIT, "CURLOPT_LOW_SPEED_LIMIT", 1L);
    set(CURLOPT_LOW_SPEED_TIME, "CURLOPT_LOW_SPEED_TIME",
        std::max(1L, static_cast<long>(std::ceil(options_.requestTimeoutS))));
  } else {
    set(CURLOPT_TIMEOUT_MS, "CURLOPT_TIMEOUT_MS", static_cast<long>(options_.requestTimeoutS * 1000));
  }
  set(CURLOPT_CONNECTTIMEOUT_MS, "CURLOPT_CONNECTTIMEOUT_MS", static_cast<long>(options_.connectTimeoutS * 1000));
  set(CURLOPT_TCP_KEEPALIVE, "CURLOPT_TCP_KEEPALIVE", 1L);
  if (d.method == "GET") {
    set(CURLOPT_HTTPGET, "CURLOPT_HTTPGET", 1L);
  } else if (d.method == "HEAD") {
    set(CURLOPT_NOBODY, "CURLOPT_NOBODY", 1L);
  } else {
    // POSTFIELDS is not copied: d.body outlives the transfer (see Dispatch::body).
    set(CURLOPT_POSTFIELDS, "CURLOPT_POSTFIELDS", d.body.data());
    set(CURLOPT_POSTFIELDSIZE_LARGE, "CURLOPT_POSTFIELDSIZE_LARGE", static_cast<curl_off_t>(d.body.size()));
    if (d.method != "POST") set(CURLOPT_CUSTOMREQUEST, "CURLOPT_CUSTOMREQUEST", d.method.c_str());
  }
  curl_slist* headers = nullptr;
  if (!headerList(d, t.ownedHeaders, headers))
    return SendError{ErrorKind::Network, "could not build the request's header list (out of memory)"};
  set(CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER", headers);
  if (rc != CURLE_OK)
    return SendError{classifyTransfer(rc, 0).kind,
                     std::string("curl_easy_setopt(") + failedOption + "): " + curl_easy_strerror(rc)};
  return std::nullopt;
}

std::optional<SendError> CurlTransport::start(const Dispatch& d) {
  auto t = std::make_unique<Transfer>();
  if (!pool_.empty()) {
    t->easy = std::move(pool_.back());
    pool_.pop_back();
  } else {
    t->easy.reset(curl_easy_init());
  }
  if (!t->easy) return SendError{ErrorKind::Network, "curl_easy_init failed"};
  t->ticket = d.ticket;
  t->transport = this;
  t->sink = d.sink;
  t->maxBody = options_.maxResponseBytes;
  CURL* easy = t->easy.get();
  // A transfer that cannot be set up fails here, with its handle back in the pool.
  auto giveBack = [&] {
    curl_easy_reset(easy);
    pool_.push_back(std::move(t->easy));
  };
  if (auto err = configure(easy, *t, d)) {
    giveBack();
    return err;
  }
  if (CURLMcode mrc = curl_multi_add_handle(multi_.get(), easy); mrc != CURLM_OK) {
    giveBack();
    return SendError{ErrorKind::Network, std::string("curl_multi_add_handle: ") + curl_multi_strerror(mrc)};
  }
  byTicket_[d.ticket] = easy;
  active_.emplace(easy, std::move(t));
  return std::nullopt;
}

void CurlTransport::wakeup() {
  if (CURLMcode rc = curl_multi_wakeup(multi_.get()); rc != CURLM_OK)
    logError(kScope, std::string("curl_multi_wakeup: ") + curl_multi_strerror(rc));
}

void CurlTransport::poll(int timeoutMs) {
  int numfds = 0;
  if (CURLMcode rc = curl_multi_poll(multi_.get(), nullptr, 0, timeoutMs, &numfds); rc != CURLM_OK)
    logError(kScope, std::string("curl_multi_poll: ") + curl_multi_strerror(rc));
  int running = 0;
  if (CURLMcode rc = curl_multi_perform(multi_.get(), &running); rc != CURLM_OK)
    logError(kScope, std::string("curl_multi_perform: ") + curl_multi_strerror(rc));
}

void CurlTransport::release(CURL* easy) {
  if (CURLMcode mrc = curl_multi_remove_handle(multi_.get(), easy); mrc != CURLM_OK)
    logError(kScope, std::string("curl_multi_remove_handle: ") + curl_multi_strerror(mrc));
}

void CurlTransport::recycle(std::unique_ptr<Transfer> t) {
  curl_easy_reset(t->easy.get());
  pool_.push_back(std::move(t->easy));
}

Response CurlTransport::finish(CURL* easy, CURLcode rc) {
  auto it = active_.find(easy);
  std::unique_ptr<Transfer> t = std::move(it->second);
  active_.erase(it);
  byTicket_.erase(t->ticket);
  release(easy);
  long status = 0;
  if (curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK) status = 0;

  Response r;
  r.ticket = t->ticket;
  r.status = static_cast<int>(status);
  r.committed = t->committed;
  if (t->committed) t->flushEvent();
  if (t->sinkAborted) {
    r.error = ErrorKind::Cancelled;  // the status stays: the upstream answered
    r.errorText = t->committed ? "the response sink aborted the transfer" : "the response sink refused the head";
  } else if (t->bodyTooLarge || rc == CURLE_FILESIZE_EXCEEDED) {
    const TransferOutcome o = classifyTransfer(CURLE_FILESIZE_EXCEEDED, r.status);
    r.error = o.kind;
    r.permanent = o.permanent;  // the status stays: the upstream answered
    r.errorText = "response body larger than max_response_bytes (" + std::to_string(options_.maxResponseBytes) +
                  " bytes)";
    t->body.clear();
  } else if (t->resendRefused) {
    r.error = ErrorKind::Network;
    r.errorText =
        "connection lost before the response (libcurl's own resend refused: attempts or retry budget spent)";
    r.status = 0;
  } else if (rc != CURLE_OK) {
    const TransferOutcome o = classifyTransfer(rc, 0);
    r.error = o.kind;
    r.permanent = o.permanent;
    r.errorText = t->error[0] ? t->error : curl_easy_strerror(rc);
    if (isTrustFailure(rc)) {
      // Which host (its origin only: a query may hold a key) and where trust comes from.
      char* url = nullptr;
      std::string why;
      const std::string origin =
          curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK && url ? originOf(url, &why) : "";
      r.errorText = (origin.empty() ? "" : origin + ": ") + r.errorText +
                    " (a CA of your own: CURL_CA_BUNDLE, SSL_CERT_FILE or SSL_CERT_DIR)";
    }
    if (rc == CURLE_OUT_OF_MEMORY)
      r.errorText = "response head too large (a header line over libcurl's 100 KB limit), or out of memory: " +
                    r.errorText;
    if (!t->committed) r.headStatus = std::exchange(r.status, 0);  // committed: the head went out with its status
  } else if (!t->sink && r.status >= 300 && r.status < 400 && r.status != 304) {
    // A redirect is not followed (the key would go with it to wherever it points), and it is not the answer
    // asked for: a job counted it a success (an http:// base_url that the provider moves to https:// made every
    // row "ok" with an empty body). The gateway relays it to its client as it came.
    r.error = ErrorKind::Http;
    r.permanent = true;
    std::string location;
    for (const auto& [name, value] : t->headers)
      if (strcasecmp(name.c_str(), "location") == 0) location = redirectTarget(value);
    r.errorText = "HTTP " + std::to_string(r.status) + ": redirected" +
                  (location.empty() ? std::string() : " to " + location) +
                  ", not followed (a key stays on its own host): point base_url where it leads";
  } else {
    r.error = classifyTransfer(CURLE_OK, r.status).kind;
  }
  if (t->eventStream) r.streamTokens = t->usage.tokens();
  else if (r.status >= 200 && r.status < 300 && isEventStream(t->headers))  // a buffered stream (a job's)
    r.streamTokens = streamUsageTokens(t->body);
  r.headers = std::move(t->headers);
  r.body = std::move(t->body);
  recycle(std::move(t));
  return r;
}

void CurlTransport::takeFinished(const std::function<void(Response)>& fn) {
  std::vector<Response> early;
  early.swap(endedEarly_);
  for (Response& r : early) fn(std::move(r));
  int left = 0;
  while (CURLMsg* m = curl_multi_info_read(multi_.get(), &left)) {
    if (m->msg != CURLMSG_DONE) continue;
    CURL* easy = m->easy_handle;
    const CURLcode rc = m->data.result;
    if (!active_.count(easy)) {
      logError(kScope, "a finished transfer that is not the engine's: ignored");
      continue;
    }
    fn(finish(easy, rc));
  }
}

bool CurlTransport::abort(Ticket ticket) {
  auto bt = byTicket_.find(ticket);
  if (bt == byTicket_.end()) {  // ended already, its Response not yet handed over: it never will be now
    auto e = std::find_if(endedEarly_.begin(), endedEarly_.end(), [ticket](const Response& r) { return r.ticket == ticket; });
    if (e == endedEarly_.end()) return false;
    endedEarly_.erase(e);
    return true;
  }
  CURL* easy = bt->second;
  byTicket_.erase(bt);
  auto it = active_.find(easy);
  std::unique_ptr<Transfer> t = std::move(it->second);
  active_.erase(it);
  release(easy);  // closes the connection when the response was not complete
  recycle(std::move(t));
  return true;
}

bool CurlTransport::resume(Ticket ticket) {
  auto bt = byTicket_.find(ticket);
  if (bt == byTicket_.end()) return false;
  CURL* easy = bt->second;
  Transfer& t = *active_.at(easy);
  if (!t.paused) return false;
  t.paused = false;  // before the call: curl may hand over what it held back from inside it
  const CURLcode rc = curl_easy_pause(easy, CURLPAUSE_CONT);
  if (rc != CURLE_OK) {
    // The held-back data could not be delivered; the multi handle would not end the transfer by itself.
    logError(kScope, std::string("curl_easy_pause(CURLPAUSE_CONT): ") + curl_easy_strerror(rc));
    endedEarly_.push_back(finish(easy, rc));
    wakeup();
  }
  return true;
}

std::vector<Ticket> CurlTransport::abortAll() {
  std::vector<Ticket> tickets;
  tickets.reserve(active_.size());
  for (auto& [easy, t] : active_) {
    release(easy);
    tickets.push_back(t->ticket);
  }
  active_.clear();  // each Transfer's easy handle and header list go with it
  byTicket_.clear();
  for (const Response& r : endedEarly_) tickets.push_back(r.ticket);  // ended, but not yet handed over
  endedEarly_.clear();
  return tickets;
}

}  // namespace tg
