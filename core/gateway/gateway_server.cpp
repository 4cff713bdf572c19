#include "gateway_server.h"

#include "disconnect_watcher.h"
#include "error_answer.h"
#include "gateway_metrics.h"
#include "json_text.h"
#include "log.h"
#include "request_deadline.h"
#include "request_policy.h"
#include "request_safety.h"
#include "secret.h"
#include "sse_relay.h"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

namespace tg::gateway {

namespace {

constexpr std::size_t kHighWater = 1024 * 1024;  // relay buffer: pause the upstream above this
constexpr std::size_t kLowWater = 256 * 1024;    // and continue it below this
constexpr std::size_t kBlockSize = 32 * 1024;
constexpr std::size_t kMaxWholeAnswer = 256u * 1024 * 1024;  // a non-streamed answer held before it is sent
constexpr std::uint64_t kDiscardUpTo = 64u * 1024 * 1024;     // a body over the limit is read and dropped up to this

}  // namespace

// One client request, from its first byte to the end of its answer. Shared by the MHD thread (handler,
// reader, completion), the engine thread (sink, result) and the watcher; every field below `mu` is guarded
// by it. `suspended` mirrors libmicrohttpd's state exactly: suspend and resume happen only under `mu`, and
// nothing touches `conn` once `closed` is set (the connection is gone then).
struct Exchange {
  std::uint64_t id = 0;
  MHD_Connection* conn = nullptr;
  std::string rawUri;

  std::mutex mu;
  bool started = false;
  std::string method;
  std::string path, query;
  HeaderList headers;
  std::string body;
  bool tooLarge = false;
  std::uint64_t received = 0;
  // Answered by the gateway itself once the request is read (not on its head: libmicrohttpd closes a
  // keep-alive connection after an answer queued before the body, and a scraper reconnected every time).
  enum class Own { None, Health, Metrics } own = Own::None;
  const RouteConfig* route = nullptr;
  std::string rest;
  std::string client = "anonymous";
  Dialect dialect = Dialect::OpenAI;
  std::string group;
  std::string baseUrl;  // the group's: a redirect into it is rewritten onto the route's prefix
  Tier tier = Tier::P1;
  double budgetS = std::numeric_limits<double>::quiet_NaN();

  bool submitted = false;
  RequestHandle handle = 0;
  bool suspended = false;
  bool closed = false;
  bool gone = false;  // the watcher saw the client hang up
  int fd = -1;

  bool headReady = false;
  int headStatus = 0;
  HeaderList head;
  std::int64_t contentLength = -1;
  bool queued = false;
  std::string buf;
  std::size_t bufOffset = 0;
  bool upstreamPaused = false;
  bool finished = false;
  bool brokenStream = false;
  std::optional<Answer> answer;
  std::unique_ptr<SseRelay> relay;

  std::size_t buffered() const { return buf.size() - bufOffset; }
};

// An upstream header's value as the gateway's client gets it: a Location into the upstream points through the
// gateway (gatewayLocation); anything else as it came.
static std::string clientValue(const Exchange& x, const std::string& name, const std::string& value) {
  return equalsIgnoreCase(name, "location") && x.route ? gatewayLocation(value, x.baseUrl, x.route->prefix) : value;
}

namespace {

struct Holder {  // what libmicrohttpd carries for us (con_cls, reader cls): a strong reference
  std::shared_ptr<Exchange> x;
  GatewayServer* server = nullptr;
};

class ExchangeSink : public ResponseSink {
 public:
  ExchangeSink(std::weak_ptr<Exchange> x, std::function<void(Exchange&)> wake) : x_(std::move(x)), wake_(std::move(wake)) {}

  bool onHead(int status, const HeaderList& headers) override {
    auto x = x_.lock();
    if (!x) return false;
    std::lock_guard lk(x->mu);
    if (x->closed || x->gone) return false;
    x->headReady = true;
    x->headStatus = status;
    for (const auto& [k, v] : headers) {
      if (equalsIgnoreCase(k, "content-length")) {
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (end && *end == '\0' && n >= 0) x->contentLength = n;
      }
      // A stream the request did not announce (a generic route reads no body; Ollama streams unasked), or framed
      // otherwise than announced ("stream": true answered in JSON lines): its type says so, and it is relayed as it
      // comes, not held until its end. Not for HEAD: its answer has no body to frame.
      if (x->method != "HEAD" && equalsIgnoreCase(k, "content-type"))
        if (const auto framing = streamFramingOf(v); framing && (!x->relay || x->relay->framing() != *framing))
          x->relay = std::make_unique<SseRelay>(false, *framing);
      // The client of a gateway that adds the key must never see it; a Location into the upstream (201 Created)
      // points through the gateway, as a redirect's does.
      relayResponseHeader(x->head, k, clientValue(*x, k, v));
    }
    if (x->relay) wake_(*x);  // a stream starts now; a plain answer goes out whole, with Content-Length
    return true;
  }

  SinkVerdict onChunk(std::string_view data) override {
    auto x = x_.lock();
    if (!x) return SinkVerdict::Abort;
    std::lock_guard lk(x->mu);
    if (x->closed || x->gone) return SinkVerdict::Abort;
    if (!x->relay) {
      // Not a stream: kept whole, so the answer carries a Content-Length (node-fetch 2 on Node 18, the
      // openai SDK's HTTP client, fails some chunked answers with "Premature close").
      if (x->buf.size() + data.size() > kMaxWholeAnswer) return SinkVerdict::Abort;
      x->buf.append(data);
      return SinkVerdict::Accept;
    }
    if (x->buffered() >= kHighWater) {  // the client reads slower than the upstream sends
      x->upstreamPaused = true;
      return SinkVerdict::Pause;      // curl offers this same piece again after resumeTransfer
    }
    x->buf.append(x->relay ? x->relay->feed(data) : std::string(data));
    if (x->buffered() > 0) wake_(*x);
    return SinkVerdict::Accept;
  }

 private:
  std::weak_ptr<Exchange> x_;
  std::function<void(Exchange&)> wake_;
};

MHD_Result accessTrampoline(void* cls, MHD_Connection* c, const char*, const char* method, const char*,
                            const char* upload, size_t* uploadSize, void** conCls) {
  return static_cast<GatewayServer*>(cls)->onRequest(c, method, upload, uploadSize, conCls) ? MHD_YES : MHD_NO;
}

void completedTrampoline(void* cls, MHD_Connection* c, void** conCls, MHD_RequestTerminationCode why) {
  static_cast<GatewayServer*>(cls)->onCompleted(c, conCls, static_cast<int>(why));
}

void* uriTrampoline(void* cls, const char* uri, MHD_Connection* c) {
  return static_cast<GatewayServer*>(cls)->onUri(uri, c);
}

void connectionTrampoline(void* cls, MHD_Connection* c, void**, MHD_ConnectionNotificationCode code) {
  static_cast<GatewayServer*>(cls)->onConnection(c, code == MHD_CONNECTION_NOTIFY_STARTED);
}

// libmicrohttpd's word on a client that went away (mid-request, while queued, mid-stream): the client's doing,
// told at debug level. At WARN, 500 clients leaving were 500 lines that read as Tollgate's faults. The same words
// follow the gateway's own failures (no response could be made: logged as errors where they happen) and an
// upstream stream that broke off (the engine logs the transfer's error).
bool isClientGoneMessage(std::string_view s) {
  for (std::string_view m : {"closed by remote side", "Application reported internal error",
                             "application error generating response", "Connection reset by peer", "Broken pipe",
                             "detected connection closure"})
    if (s.find(m) != std::string_view::npos) return true;
  return false;
}

// Any client, with no token, can make libmicrohttpd complain (a header too large, a bad Content-Length: a line or
// two each; 100 probes wrote 98 warnings). Past kMhdLinesPerMinute in a minute they are counted and the count
// said with the next one after the minute, so a hostile client cannot fill the log or hide what else is in it.
constexpr int kMhdLinesPerMinute = 10;
struct MhdLogBudget {
  std::mutex mu;
  std::chrono::steady_clock::time_point windowStart{};
  int shown = 0;
  long long suppressed = 0;
};
MhdLogBudget gMhdLog;

void sayMhdSuppressed() {  // with gMhdLog.mu held
  if (gMhdLog.suppressed > 0)
    logWarn("gateway", std::to_string(gMhdLog.suppressed) + " more libmicrohttpd message(s) not shown (ten a minute "
                       "are written; malformed requests from a client?)");
  gMhdLog.suppressed = 0;
}

void logTrampoline(void*, const char* fmt, va_list ap) {
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, ap);
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (isClientGoneMessage(s)) {
    logDebug("gateway", SecretRegistry::redact(s));
    return;
  }
  std::lock_guard lk(gMhdLog.mu);
  const auto now = std::chrono::steady_clock::now();
  if (now - gMhdLog.windowStart >= std::chrono::minutes(1)) {
    sayMhdSuppressed();
    gMhdLog.windowStart = now;
    gMhdLog.shown = 0;
    gMhdLog.suppressed = 0;
  }
  if (gMhdLog.shown < kMhdLinesPerMinute) {
    ++gMhdLog.shown;
    logWarn("gateway", SecretRegistry::redact(s));
  } else {
    ++gMhdLog.suppressed;
  }
}

MHD_Result collectHeader(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<HeaderList*>(cls)->emplace_back(key ? key : "", value ? value : "");
  return MHD_YES;
}

ssize_t readRelay(void* cls, uint64_t, char* out, size_t max) {
  auto* h = static_cast<Holder*>(cls);
  return h->server->readBody(*h->x, out, max);
}
void freeHolder(void* cls) { delete static_cast<Holder*>(cls); }
ssize_t noBody(void*, uint64_t, char*, size_t) { return MHD_CONTENT_READER_END_OF_STREAM; }  // a HEAD answer's

}  // namespace

GatewayServer::GatewayServer(Engine& engine, GatewayConfig config, GatewayMetrics* metrics)
    : engine_(engine), cfg_(std::move(config)), routes_(cfg_.routes), metrics_(metrics) {}

GatewayServer::~GatewayServer() { stop(); }

bool GatewayServer::namesThisGateway(std::string authority, int defaultPort) const {
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);  // user info
  std::string host = authority;
  int port = defaultPort;
  const auto close = authority.find(']');
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && (close == std::string::npos || colon > close)) {
    host = authority.substr(0, colon);
    const std::string digits = authority.substr(colon + 1);
    if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos)
      return false;
    port = std::stoi(digits);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port != port_) return false;
  const bool wildcard = cfg_.listenHost == "0.0.0.0" || cfg_.listenHost == "::";
  return wildcard || isLoopbackHost(host) || equalsIgnoreCase(host, cfg_.listenHost);
}

std::string GatewayServer::listenAddress() const {
  // "localhost" is bound as 127.0.0.1 (start()) and said so: a client that resolves localhost to ::1 first and
  // does not fall back (Node before 20) was refused at the address the banner printed.
  const std::string host = cfg_.listenHost == "localhost" ? "127.0.0.1" : cfg_.listenHost;
  const bool v6 = host.find(':') != std::string::npos;
  // The port bound once listening; before that (a refusal to start) the one asked for, not 0.
  const int bound = port_;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(bound ? bound : cfg_.port);
}

int GatewayServer::openConnections() const {
  MHD_Daemon* const d = daemon_;
  if (!d) return 0;
  const auto* info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
  return info ? static_cast<int>(info->num_connections) : 0;
}

std::map<std::string, std::uint64_t> GatewayServer::requestsByClient() const {
  std::lock_guard lk(mu_);
  return byClient_;
}

void GatewayServer::start() {
  if (daemon_) return;
  // 1,000 open streams hold 2,000 descriptors (client + upstream): take the hard limit.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  sockaddr_in v4{};
  sockaddr_in6 v6{};
  const sockaddr* addr = nullptr;
  // poll, not epoll: libmicrohttpd 0.9.75's edge-triggered epoll misses a close that arrives with the last data
  // (a client that sends part of a request and hangs up), and the connection sat in CLOSE-WAIT, holding a slot,
  // for the whole idle timeout: a few thousand such clients shut the gateway for two minutes.
  unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  const std::string host = cfg_.listenHost == "localhost" ? "127.0.0.1" : cfg_.listenHost;
  if (inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(static_cast<uint16_t>(cfg_.port));
    addr = reinterpret_cast<const sockaddr*>(&v4);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(static_cast<uint16_t>(cfg_.port));
    addr = reinterpret_cast<const sockaddr*>(&v6);
    flags |= MHD_USE_IPv6;
  } else {
    throw std::runtime_error("gateway: listen address " + cfg_.listenHost + " is not an IPv4 or IPv6 address");
  }
  watcher_ = std::make_unique<DisconnectWatcher>([this](std::uint64_t id) {
    std::shared_ptr<Exchange> x;
    {
      std::lock_guard lk(mu_);
      if (auto it = live_.find(id); it != live_.end()) x = it->second.lock();
    }
    if (!x) return;
    RequestHandle h = 0;
    {
      std::lock_guard lk(x->mu);
      x->gone = true;
      h = x->handle;
      unpark(*x);
    }
    if (h) engine_.cancel(h, "the gateway client disconnected");
  });
  // libmicrohttpd's timeout is an idle one, which a client dribbling its request a byte at a time never meets.
  const int idleS = cfg_.idleTimeoutS, headS = cfg_.requestHeadTimeoutS, bodyS = cfg_.requestBodyTimeoutS;
  requestDeadline_ = std::make_unique<RequestDeadline>(
      std::chrono::seconds(idleS), std::chrono::seconds(headS), std::chrono::seconds(bodyS), [=](int n) {
        logInfo("gateway", "closed " + std::to_string(n) + " connection(s) whose request was not whole in time (head " +
                               std::to_string(headS) + " s after the request line, request_head_timeout_s, or " +
                               std::to_string(idleS + headS) + " s after connecting or the last answer; body " +
                               std::to_string(bodyS) + " s after the head, request_body_timeout_s)");
      });
  errno = 0;
  daemon_ = MHD_start_daemon(
      flags, static_cast<uint16_t>(cfg_.port), nullptr, nullptr, &accessTrampoline, this,
      MHD_OPTION_EXTERNAL_LOGGER, &logTrampoline, this,  // first, so every message goes through it
      MHD_OPTION_SOCK_ADDR, addr,
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(cfg_.maxConnections),
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(cfg_.idleTimeoutS),
      // Per connection: the request head and libmicrohttpd's read/write buffers (bodies are ours). The pool
      // is zeroed at every keep-alive reset, so its size is a memset per request: 64 KiB cost ~6% of the
      // gateway's CPU at C=64; 24 KiB still takes a 16 KiB request head.
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(24 * 1024),
      MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
      MHD_OPTION_STRICT_FOR_CLIENT, 1,
      MHD_OPTION_NOTIFY_COMPLETED, &completedTrampoline, this,
      MHD_OPTION_URI_LOG_CALLBACK, &uriTrampoline, this,
      MHD_OPTION_NOTIFY_CONNECTION, &connectionTrampoline, this,
      MHD_OPTION_END);
  if (!daemon_) {
    const int e = errno;
    watcher_.reset();
    requestDeadline_.reset();
    throw std::runtime_error("gateway: cannot listen on " + listenAddress() + ": " +
                             (e ? std::strerror(e) : "libmicrohttpd refused to start"));
  }
  const auto* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  port_ = info ? info->port : cfg_.port;
  stopping_ = false;
  logInfo("gateway", "listening on http://" + listenAddress() + " (" + std::to_string(cfg_.routes.size()) + " routes)");
  if (metrics_ && cfg_.metricsToken.empty() && !isLoopbackHost(cfg_.listenHost))
    logWarn("gateway", "/metrics on " + listenAddress() +
                           " asks for no token: whoever reaches it reads the groups, clients and counts "
                           "(gateway.metrics_token_env sets one)");
}

void GatewayServer::stop(double drainS) {
  if (!daemon_) return;
  stopping_ = true;
  const MHD_socket listen = MHD_quiesce_daemon(daemon_);
  // Quiesced, the socket still listened until its close after MHD_stop_daemon: through a drain the kernel took new
  // connections that nobody read (a client hung for the drain, then got a reset). Refused from now on.
  if (listen != MHD_INVALID_SOCKET) ::shutdown(listen, SHUT_RDWR);
  // Sent requests finish: the upstream is working on them, and on a paid API they are paid for. Cancelling them
  // too (a SIGTERM during a burst) aborted work 20-233 ms under way, which the clients then sent again.
  if (drainS > 0) {
    const SnapshotPtr s = engine_.latestSnapshot();
    const int inFlight = s ? s->globalInFlight : 0;
    if (inFlight > 0)
      logInfo("gateway", "stopping: " + std::to_string(inFlight) + " request(s) in flight get up to " +
                             std::to_string(static_cast<int>(drainS)) + " s to be answered; queued ones are "
                             "answered 503 now");
    if (!engine_.finishInFlight(drainS, "the gateway is stopping"))
      logWarn("gateway", "stopping: requests still in flight after " + std::to_string(static_cast<int>(drainS)) +
                             " s are cancelled");
  }
  auto liveOnes = [this] {
    std::vector<std::shared_ptr<Exchange>> xs;
    std::lock_guard lk(mu_);
    for (auto& [id, w] : live_)
      if (auto x = w.lock()) xs.push_back(std::move(x));
    return xs;
  };
  for (auto& x : liveOnes()) {
    RequestHandle h = 0;
    {
      std::lock_guard lk(x->mu);
      if (x->submitted && !x->finished) h = x->handle;
    }
    if (h) engine_.cancel(h, "the gateway is stopping");
  }
  // Parked clients get their answer (503 from the cancel) before the sockets close: wait briefly.
  for (int i = 0; i < 50; ++i) {
    bool parked = false;
    for (auto& x : liveOnes()) {
      std::lock_guard lk(x->mu);
      parked |= x->suspended;
    }
    if (!parked) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // An answer begun (the drained ones, the 503s) is written by libmicrohttpd's thread; stopping it first closed the
  // socket under it: a request drained to its end reached its client as nothing (one run of the loopback test in a
  // fresh root). Wait, briefly, until it reports them complete.
  for (int i = 0; i < 100; ++i) {
    bool writing = false;
    for (auto& x : liveOnes()) {
      std::lock_guard lk(x->mu);
      writing |= (x->headReady || x->finished) && !x->closed && !x->gone && !x->suspended;
    }
    if (!writing) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // libmicrohttpd must not be stopped with a connection suspended.
  for (auto& x : liveOnes()) {
    std::lock_guard lk(x->mu);
    x->gone = true;
    unpark(*x);
  }
  MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  {
    std::lock_guard lk(gMhdLog.mu);  // a count still untold when the warnings stopped coming
    sayMhdSuppressed();
  }
  if (listen != MHD_INVALID_SOCKET) close(listen);
  watcher_.reset();
  requestDeadline_.reset();
  logInfo("gateway", "stopped");
}

void GatewayServer::onConnection(MHD_Connection* c, bool opened) {
  if (!requestDeadline_) return;
  if (!opened) {
    requestDeadline_->closed(c);
    return;
  }
  if (const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))
    requestDeadline_->opened(c, info->connect_fd);
}

void* GatewayServer::onUri(const char* uri, MHD_Connection* c) {
  if (requestDeadline_) requestDeadline_->requestLine(c);
  auto* h = new Holder{std::make_shared<Exchange>(), this};
  h->x->id = nextId_.fetch_add(1);
  h->x->conn = c;
  h->x->rawUri = uri ? uri : "";
  std::lock_guard lk(mu_);
  live_[h->x->id] = h->x;
  return h;
}

void GatewayServer::park(Exchange& x) {
  if (x.suspended || x.closed) return;
  MHD_suspend_connection(x.conn);
  x.suspended = true;
  if (x.fd >= 0 && watcher_) watcher_->watch(x.fd, x.id);
}

void GatewayServer::unpark(Exchange& x) {
  if (!x.suspended || x.closed) return;
  if (x.fd >= 0 && watcher_) watcher_->unwatch(x.fd);
  x.suspended = false;
  MHD_resume_connection(x.conn);
}

void GatewayServer::finishCount(Exchange& x, int status) {
  // The gateway's own endpoints by name: scrapes and health checks were counted with the unrouted 404s as "-".
  const std::string route = x.route                        ? x.route->prefix
                            : x.own == Exchange::Own::Metrics ? std::string("/metrics")
                            : x.own == Exchange::Own::Health  ? std::string("/healthz")
                                                              : std::string("-");
  if (metrics_) metrics_->countRequest(x.client, route, status);
  std::lock_guard lk(mu_);
  ++byClient_[x.client];
}

int GatewayServer::answerNow(MHD_Connection* c, Exchange& x, int status, const HeaderList& headers,
                             const std::string& body) {
  // A HEAD answer's length is the one a GET would have (RFC 9110 8.6), not the empty body's 0: libmicrohttpd writes
  // the response's size and sends no body for HEAD, so the size is the upstream's (a Content-Length header added
  // here as well went out beside its own 0, which Node's and Go's clients refuse).
  // Read under the exchange's lock: the engine thread's sink may be writing the head (a stop's 503 for a HEAD).
  // Every caller has let the lock go.
  std::int64_t length = -1;
  if (x.method == "HEAD") {
    std::lock_guard lk(x.mu);
    if (x.headReady) length = x.contentLength;
  }
  const bool headLength = length >= 0;
  MHD_Response* r =
      headLength ? MHD_create_response_from_callback(static_cast<uint64_t>(length), kBlockSize, &noBody,
                                                     nullptr, nullptr)
                 : MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (!r) {
    logError("gateway", "could not make a response (out of memory?): the connection is closed");
    return false;
  }
  for (const auto& [k, v] : headers) MHD_add_response_header(r, k.c_str(), v.c_str());
  const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(status), r);
  MHD_destroy_response(r);
  {
    std::lock_guard lk(x.mu);
    x.queued = true;
  }
  finishCount(x, status);
  return ok == MHD_YES;
}

std::string GatewayServer::healthBody() const {
  nlohmann::json h{{"status", stopping_ ? "stopping" : "ok"}};
  // Serving either way (200): in fallback each instance paces its share locally. But a Redis that refuses this
  // instance for good (a wrong password) looked the same as a healthy one here.
  if (auto snap = engine_.latestSnapshot(); snap && snap->shared.enabled) {
    h["shared_quota"] = snap->shared.mode;
    if (!snap->shared.why.empty()) h["shared_quota_why"] = snap->shared.why;
  }
  return dumpJson(h);  // Redis's words may hold any bytes
}

std::string GatewayServer::metricsBody() const {
  auto snap = engine_.latestSnapshot();
  if (!metrics_ || !snap) return "";
  return metrics_->render(*snap, openConnections());
}

int GatewayServer::onRequest(MHD_Connection* c, const char* method, const char* upload, std::size_t* uploadSize,
                             void** cls) {
  auto* holder = static_cast<Holder*>(*cls);
  if (!holder) {
    logError("gateway", "a request came with no state of its own: the connection is closed");
    return false;
  }
  auto x = holder->x;
  auto fail = [&](int status, const std::string& type, const std::string& message) {
    const Answer a = errorAnswer(status, type, message, x->route ? x->route->dialect : Dialect::OpenAI);
    return answerNow(c, *x, status, a.headers, a.body);
  };

  if (!x->started) {  // headers complete, body (if any) not read yet
    x->started = true;
    if (requestDeadline_) requestDeadline_->headDone(c);
    x->method = method ? method : "";
    // RFC 9112 3.2.2: a server accepts the absolute-form ("POST http://127.0.0.1:8088/openai/v1/..."), sent by a
    // client that was given the gateway as its HTTP proxy. Routed by its path, as the origin-form is, when it names
    // this gateway; a URL for another host is not ours to serve (a client with a global HTTP_PROXY would have sent
    // it upstream, with the group's key, whenever its path matched a route).
    if (strncasecmp(x->rawUri.c_str(), "http://", 7) == 0 || strncasecmp(x->rawUri.c_str(), "https://", 8) == 0) {
      const auto authority = x->rawUri.find("//") + 2;
      const auto end = x->rawUri.find_first_of("/?#", authority);
      const std::string named =
          x->rawUri.substr(authority, end == std::string::npos ? std::string::npos : end - authority);
      if (!namesThisGateway(named, x->rawUri[4] == ':' ? 80 : 443))
        return fail(421, "tollgate_bad_request",
                    "tollgate: the request's URL names " + printable(named) +
                        "; this gateway serves only its own routes (http://" + listenAddress() +
                        "), it is not a proxy for other hosts");
      std::string target = end == std::string::npos ? std::string() : x->rawUri.substr(end);
      if (target.empty() || target.front() != '/') target.insert(0, "/");  // "http://host:port?q" is "/?q"
      x->rawUri = std::move(target);
    }
    const auto q = x->rawUri.find('?');
    x->path = x->rawUri.substr(0, q);
    if (q != std::string::npos) x->query = x->rawUri.substr(q + 1);
    MHD_get_connection_values(c, MHD_HEADER_KIND, &collectHeader, &x->headers);
    if (const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)) x->fd = info->connect_fd;

    // Before anything is routed or logged: a path is joined to base_url and quoted in log lines.
    if (std::string why = targetProblem(x->rawUri); !why.empty())
      return fail(400, "tollgate_bad_request", "tollgate: " + why);
    // Two lengths that differ: which body is the request? (RFC 9112 6.3: an error; a proxy that picks one
    // smuggles the rest as the next request.)
    const std::string* length = nullptr;
    int hosts = 0, codings = 0;
    for (const auto& [k, v] : x->headers) {
      if (equalsIgnoreCase(k, "host")) ++hosts;
      if (equalsIgnoreCase(k, "transfer-encoding")) {
        // Only chunked is read (libmicrohttpd's framing); any other coding, or chunked twice, left the request
        // waiting for a body it would never frame until the idle timeout. RFC 9112 6.1: 501 for an unknown
        // coding, and a body whose length cannot be told is an error (both close the connection).
        if (++codings > 1 || !equalsIgnoreCase(v, "chunked"))
          return fail(501, "tollgate_bad_request",
                      "tollgate: Transfer-Encoding \"" + printable(v) + "\" is not supported: only chunked, once");
      }
      if (!equalsIgnoreCase(k, "content-length")) continue;
      if (length && *length != v)
        return fail(400, "tollgate_bad_request", "tollgate: the request has two Content-Length headers that differ");
      length = &v;
    }
    // Two framings (the smuggling shape: which one ends the body?), or two hosts (RFC 9112 3.2: 400).
    if (codings > 0 && length)
      return fail(400, "tollgate_bad_request", "tollgate: the request has both Content-Length and Transfer-Encoding");
    if (hosts > 1) return fail(400, "tollgate_bad_request", "tollgate: the request has more than one Host header");
    const bool get = x->method == "GET" || x->method == "HEAD";  // libmicrohttpd sends no body to a HEAD
    const bool health = x->path == "/healthz", metrics = x->path == "/metrics" && metrics_;
    if ((health || metrics) && get) {
      x->own = health ? Exchange::Own::Health : Exchange::Own::Metrics;
      if (metrics && !metricsScrapeAllowed(cfg_.metricsToken, x->headers)) {
        Answer a = errorAnswer(401, "tollgate_unauthorized",
                               "tollgate: /metrics needs the metrics token (Authorization: Bearer <token>, "
                               "gateway.metrics_token_env)",
                               Dialect::OpenAI);
        a.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tollgate metrics\"");
        return answerNow(c, *x, 401, a.headers, a.body);
      }
      return true;
    }
    const RouteMatch m = routes_.match(x->path);
    if (!m.route && (health || metrics)) {  // the gateway's own, read-only
      const Answer a = errorAnswer(405, "tollgate_method_not_allowed",
                                   "tollgate: " + x->path + " answers GET and HEAD only", Dialect::OpenAI);
      HeaderList h = a.headers;
      h.emplace_back("Allow", "GET, HEAD");
      return answerNow(c, *x, 405, h, a.body);
    }
    if (!m.route) {
      const Answer a = errorAnswer(404, "tollgate_no_route", "", Dialect::OpenAI);
      return answerNow(c, *x, 404, a.headers, routes_.notFoundBody(x->path));
    }
    x->route = m.route;
    x->rest = m.rest.empty() ? "/" : m.rest;
    x->dialect = m.route->dialect;
    const bool passThrough = m.route->auth == RouteAuth::PassThrough;
    if (!cfg_.clients.empty()) {
      const ClientConfig* who = authenticate(cfg_.clients, x->headers, passThrough);
      if (!who)
        return fail(401, "tollgate_unauthorized",
                    passThrough ? "tollgate: this gateway needs a client token in X-Tollgate-Token (route " +
                                      m.route->prefix + " passes your own API key through)"
                                : std::string("tollgate: this gateway needs a client token (Authorization: Bearer "
                                              "<token>, or x-api-key)"));
      x->client = who->name;
    }
    if (passThrough && shownCredential(x->headers).empty())
      return fail(401, "tollgate_no_api_key",
                  "tollgate: route " + m.route->prefix +
                      " passes the client's own API key through: send it as Authorization: Bearer <key> or x-api-key");
    if (const auto* cl = findHeader(x->headers, "content-length")) {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(cl->c_str(), &end, 10);
      if (end && *end == '\0' && n > static_cast<unsigned long long>(cfg_.maxBodyBytes))
        return fail(413, "tollgate_body_too_large",
                    "tollgate: request body of " + *cl + " bytes is over this gateway's limit of " +
                        std::to_string(cfg_.maxBodyBytes) + " bytes (gateway.max_body_bytes)");
    }
    if (stopping_) return fail(503, "tollgate_stopping", "tollgate: the gateway is stopping");
    return true;
  }

  if (*uploadSize > 0) {  // a piece of the body
    x->received += *uploadSize;
    if (!x->tooLarge && x->body.size() + *uploadSize > static_cast<std::size_t>(cfg_.maxBodyBytes)) {
      x->tooLarge = true;  // a chunked body that grew past the limit: read on and answer 413 at its end
      std::string().swap(x->body);
    }
    if (!x->tooLarge) x->body.append(upload, *uploadSize);
    *uploadSize = 0;
    // A client sending far beyond the limit is not read forever: close. Until then it is read and dropped, so
    // that an upload a few times the limit still gets its 413 (libmicrohttpd cannot answer mid-body): at twice
    // a small limit it was cut off with no answer at all.
    return x->received <= std::max<std::uint64_t>(2 * static_cast<std::uint64_t>(cfg_.maxBodyBytes), kDiscardUpTo);
  }

  // The body is complete, or the connection was resumed.
  if (requestDeadline_) requestDeadline_->requestDone(c);  // no deadline while it is served
  std::unique_lock lk(x->mu);
  if (x->gone || x->queued) return !x->gone;
  if (x->own != Exchange::Own::None) {
    lk.unlock();
    if (x->own == Exchange::Own::Metrics)
      return answerNow(c, *x, 200, {{"Content-Type", GatewayMetrics::kContentType}}, metricsBody());
    // 503 while stopping: a health check on a kept-open connection read 200 and kept sending traffic here.
    return answerNow(c, *x, stopping_ ? 503 : 200, {{"Content-Type", "application/json"}}, healthBody());
  }
  if (x->tooLarge) {
    lk.unlock();
    return fail(413, "tollgate_body_too_large",
                "tollgate: request body is over this gateway's limit of " + std::to_string(cfg_.maxBodyBytes) +
                    " bytes (gateway.max_body_bytes)");
  }
  if (!x->submitted) {
    lk.unlock();
    // A body that was finished during the drain: nothing more is sent (it sat, held, until the drain ended).
    if (stopping_) return fail(503, "tollgate_stopping", "tollgate: the gateway is stopping");
    return submit(c, x);
  }
  if (auto sent = sendWhatIsReady(c, x, lk)) return *sent;
  if (stopping_) {
    lk.unlock();
    return fail(503, "tollgate_stopping", "tollgate: the gateway is stopping");
  }
  park(*x);  // resumed with nothing to say yet: wait again
  return true;
}

int GatewayServer::submit(MHD_Connection* c, const std::shared_ptr<Exchange>& x) {
  std::array<double, kTierCount> maxWait{};
  for (int t = 0; t < kTierCount; ++t) maxWait[t] = engine_.config().tiers[t].maxWaitS;
  ClientRequest in{x->method, x->rest, x->query, x->headers, std::move(x->body)};
  Admission a = admit(*x->route, std::move(in), maxWait, x->route->auth == RouteAuth::Tollgate);
  if (a.status) {
    const Answer e = errorAnswer(a.status, "tollgate_bad_request", "tollgate: " + a.error, x->dialect);
    return answerNow(c, *x, a.status, e.headers, e.body);
  }
  if (const auto* t = findHeader(x->headers, "x-stainless-timeout")) {
    const double s = std::strtod(t->c_str(), nullptr);
    if (std::isfinite(s) && s > 0) x->budgetS = s;
  }
  Request r;
  r.id = "gw-" + std::to_string(x->id);
  r.group = a.group;
  r.tier = a.tier;
  r.method = x->method;
  r.url = x->rest + (x->query.empty() ? "" : "?" + x->query);
  r.headers = std::move(a.forward);
  r.body = std::move(a.body);
  r.deadlineS = a.deadlineS;
  r.client = x->client;
  if (x->route->auth == RouteAuth::PassThrough) {
    // The key checked on arrival, and the one forwarded: a Connection header naming Authorization drops it from
    // what is forwarded, and an empty ownKey would let the engine send the group's own key instead.
    r.ownKey = std::string(shownCredential(x->headers));
    if (r.ownKey.empty() || shownCredential(r.headers) != r.ownKey) {
      const Answer e = errorAnswer(400, "tollgate_bad_request",
                                   "tollgate: route " + x->route->prefix + " passes your own API key through, but "
                                   "the Connection header names the header that carries it",
                                   x->dialect);
      return answerNow(c, *x, 400, e.headers, e.body);
    }
  }
  std::weak_ptr<Exchange> weak = x;
  r.sink = std::make_shared<ExchangeSink>(weak, [this](Exchange& e) { unpark(e); });
  {
    std::lock_guard lk(x->mu);
    x->submitted = true;
    x->group = a.group;
    for (const auto& g : engine_.config().groups)
      if (g.name == a.group) x->baseUrl = g.baseUrl;
    x->tier = a.tier;
    if (a.stream || a.dropUsageChunk) x->relay = std::make_unique<SseRelay>(a.dropUsageChunk);
  }
  const RequestHandle h = engine_.submit(std::move(r), [this, weak](const Result& res) {
    auto x = weak.lock();
    if (!x) return;
    if (metrics_) {
      metrics_->observeWait(x->group, x->tier, res.waitMs / 1000.0);
      if (res.attempts > 0) metrics_->observeUpstream(x->group, res.latencyMs / 1000.0);  // it was sent
    }
    std::lock_guard lk(x->mu);
    x->finished = true;
    if (x->headReady && x->relay) {  // relayed: end the stream (an error after the head truncates it)
      if (!res.ok()) x->brokenStream = true;
      x->buf += x->relay->finish();
    } else if (x->headReady) {  // a plain 2xx, held whole
      if (res.ok()) {
        x->answer = Answer{x->headStatus, x->head, SecretRegistry::redact(std::move(x->buf))};
      } else {  // none of it reached the client; the upstream was reached, and may have acted on it
        x->answer = errorAnswer(502, "tollgate_network",
                                "tollgate: the upstream's answer (HTTP " + std::to_string(x->headStatus) +
                                    ") broke off: " + res.errorMessage,
                                x->dialect);
      }
      x->buf.clear();
    } else if (res.ok()) {  // a 3xx (redirects are not followed): relayed whole, into the upstream via the route
      Answer a;
      a.status = res.status;
      for (const auto& [k, v] : res.headers) relayResponseHeader(a.headers, k, clientValue(*x, k, v));
      a.body = SecretRegistry::redact(res.body);
      x->answer = std::move(a);
    } else {
      x->answer = answerFor(res, x->dialect, x->budgetS);
    }
    unpark(*x);
  });
  std::unique_lock lk(x->mu);
  x->handle = h;
  if (x->gone) {  // hung up while we were submitting
    lk.unlock();
    engine_.cancel(h, "the gateway client disconnected");
    return false;
  }
  if (auto sent = sendWhatIsReady(c, x, lk)) return *sent;  // answered at once (engine stopped, refused)
  park(*x);
  return true;
}

std::optional<int> GatewayServer::sendWhatIsReady(MHD_Connection* c, const std::shared_ptr<Exchange>& x,
                                                  std::unique_lock<std::mutex>& lk) {
  if (x->answer) {
    Answer a = std::move(*x->answer);
    x->answer.reset();
    lk.unlock();
    return answerNow(c, *x, a.status, a.headers, a.body);
  }
  if (x->headReady && x->relay) {
    lk.unlock();
    return queueRelay(c, x);
  }
  return std::nullopt;
}

int GatewayServer::queueRelay(MHD_Connection* c, const std::shared_ptr<Exchange>& x) {
  int status = 0;
  HeaderList head;
  std::int64_t length = -1;
  {
    std::lock_guard lk(x->mu);
    if (x->queued) return true;
    x->queued = true;
    status = x->headStatus;
    head = x->head;
    length = x->relay ? -1 : x->contentLength;  // a filtered stream's length is not the upstream's
  }
  auto* holder = new Holder{x, this};
  MHD_Response* r = MHD_create_response_from_callback(length >= 0 ? static_cast<uint64_t>(length) : MHD_SIZE_UNKNOWN,
                                                      kBlockSize, &readRelay, holder, &freeHolder);
  if (!r) {
    delete holder;
    logError("gateway", "could not make a response to relay (out of memory?): the connection is closed");
    return false;
  }
  for (const auto& [k, v] : head) MHD_add_response_header(r, k.c_str(), v.c_str());
  const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(status), r);
  MHD_destroy_response(r);
  finishCount(*x, status);
  return ok == MHD_YES;
}

long GatewayServer::readBody(Exchange& x, char* out, std::size_t max) {
  bool continueUpstream = false;
  ssize_t n = 0;
  RequestHandle handle = 0;
  {
    std::lock_guard lk(x.mu);
    if (x.buffered() > 0) {
      const std::size_t k = std::min(max, x.buffered());
      std::memcpy(out, x.buf.data() + x.bufOffset, k);
      x.bufOffset += k;
      if (x.bufOffset == x.buf.size()) {
        x.buf.clear();
        x.bufOffset = 0;
      } else if (x.bufOffset > kHighWater) {
        x.buf.erase(0, x.bufOffset);
        x.bufOffset = 0;
      }
      if (x.upstreamPaused && x.buffered() < kLowWater) {
        x.upstreamPaused = false;
        continueUpstream = true;
        handle = x.handle;
      }
      n = static_cast<ssize_t>(k);
    } else if (x.finished || x.gone) {
      n = (x.brokenStream || x.gone) ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
    } else {
      // Nothing yet: park until the engine brings the next piece (returning 0 unparked would spin).
      park(x);
      n = 0;
    }
  }
  if (continueUpstream) engine_.resumeTransfer(handle);
  return n;
}

void GatewayServer::onCompleted(MHD_Connection* c, void** cls, int why) {
  if (requestDeadline_) requestDeadline_->answered(c);  // a keep-alive connection waits for its next head
  auto* holder = static_cast<Holder*>(*cls);
  if (!holder) return;
  *cls = nullptr;
  auto x = holder->x;
  RequestHandle cancel = 0;
  bool unanswered = false;
  {
    std::lock_guard lk(x->mu);
    if (x->suspended && x->fd >= 0 && watcher_) watcher_->unwatch(x->fd);
    x->closed = true;
    x->suspended = false;
    if (x->submitted && !x->finished) cancel = x->handle;
    unanswered = x->submitted && !x->queued;
  }
  // A client that left before its answer (while queued, or waiting on the upstream) was counted nowhere: 499, as
  // nginx logs it.
  if (unanswered) finishCount(*x, 499);
  if (cancel) engine_.cancel(cancel, why == MHD_REQUEST_TERMINATED_COMPLETED_OK
                                         ? "the gateway finished answering"
                                         : "the gateway client disconnected mid-transfer");
  {
    std::lock_guard lk(mu_);
    live_.erase(x->id);
  }
  delete holder;
}

}  // namespace tg::gateway
