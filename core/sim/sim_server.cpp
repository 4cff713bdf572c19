#include "sim_server.h"

#include "log.h"
#include "loopback_listener.h"
#include "sim_responder.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace tg {
namespace {

constexpr std::uint64_t kListenTag = 0;
constexpr std::uint64_t kWakeTag = 1;
constexpr std::size_t kMaxPipelined = 1024;            // replies queued per connection before parsing pauses
// Unparsed bytes per connection before reading pauses: one whole request of the largest size the parser
// accepts must fit, or it could never complete.
constexpr std::size_t kMaxBufferedInput = HttpRequestParser::kMaxRequestBytes;
constexpr std::size_t kMaxBufferedOutput = 4 << 20;    // unsent reply bytes before parsing and reading pause
constexpr auto kAcceptBackoff = std::chrono::milliseconds(250);  // out of fds: retry accept after this
constexpr auto kSweepInterval = std::chrono::milliseconds(50);   // how often timeouts are checked
constexpr int kRequestTimeout = 408;
constexpr int kServiceUnavailable = 503;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr int kMaxEvents = 256;
constexpr const char* kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

double wallNowS() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

struct SimServer::Impl {
  struct Slot {
    std::uint64_t seq = 0;
    bool ready = false;  // due: for a stream, its next step is
    SimReply reply;
    bool streaming = false;  // a stream whose head is written; it stays at the front until its last step
    std::size_t step = 0;    // next stream step
    TimePoint streamStart{};
  };
  struct Conn {
    int fd = -1;
    std::uint64_t id = 0;
    std::string in;
    std::string out;
    std::size_t outOff = 0;
    std::deque<Slot> pending;
    std::uint64_t nextSeq = 0;
    bool closing = false;      // parse no more; close once the queued replies are out
    bool peerDone = false;     // the peer finished sending (EOF): answer what is buffered, then close
    bool continueSent = false;
    std::uint32_t events = 0;
    TimePoint partialSince = TimePoint::max();  // when the unfinished request at the front was first seen
    TimePoint lastActive{};                     // last byte in or out
    // While output is waiting: when it last made progress (or became pending). max when nothing waits.
    TimePoint writeWaitSince = TimePoint::max();
  };
  struct Timer {
    TimePoint due;
    std::uint64_t conn, seq;
    bool operator>(const Timer& o) const { return due > o.due; }
  };

  explicit Impl(SimConfig c) : config(std::move(c)), responder(config, Clock::now()) {}

  // Configuration and the responder (guarded by mu).
  SimConfig config;
  mutable std::mutex mu;
  SimResponder responder;

  // Loop-thread state.
  int listenFd = -1, epollFd = -1, wakeFd = -1;
  int boundPort = 0;
  std::thread thread;
  bool stopping = false;  // loop thread only: stop() is closing every connection
  std::atomic<bool> stopRequested{false};
  std::unordered_map<std::uint64_t, Conn> conns;
  std::uint64_t nextConnId = 2;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
  TimePoint nextSchedule = TimePoint::min();
  TimePoint now{};
  double wall = 0;
  bool acceptPaused = false;  // out of file descriptors: the listening socket is not watched
  TimePoint acceptResumeAt = TimePoint::max();
  bool fdShortageLogged = false, overCapLogged = false;
  TimePoint nextSweep = TimePoint::min();

  void run();
  void acceptAll();
  void pauseAccepting(int err);
  void resumeAccepting();
  void refuseOverCap(int fd);
  void expireConnections();
  void onEvent(std::uint64_t id, std::uint32_t ev);
  bool readConn(Conn& c);
  bool canParse(const Conn& c) const;
  bool parseBuffered(Conn& c);
  bool serve(Conn& c);
  void enqueue(Conn& c, SimReply reply);
  bool flush(Conn& c);
  bool advanceStream(Conn& c);
  void updateInterest(Conn& c);
  void closeConn(Conn& c, bool abort);
  void fireTimers();
  int timeoutMs() const;
  void closeFds();
};

SimServer::SimServer(SimConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

SimServer::~SimServer() { stop(); }

int SimServer::port() const { return impl_->boundPort; }

int SimServer::start(const std::string& hostIn, int port) {
  Impl& s = *impl_;
  if (s.thread.joinable()) throw std::runtime_error("tollgate-sim: already started");
  if (port < 0 || port > 65535) throw std::runtime_error("tollgate-sim: port out of range: " + std::to_string(port));
  LoopbackListener listener(hostIn, port);  // throws, naming what failed
  s.boundPort = listener.port();
  s.listenFd = listener.release();
  try {
    s.epollFd = ::epoll_create1(EPOLL_CLOEXEC);
    if (s.epollFd < 0) throw std::runtime_error(errnoText("tollgate-sim: epoll_create1"));
    s.wakeFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s.wakeFd < 0) throw std::runtime_error(errnoText("tollgate-sim: eventfd"));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenTag;
    if (::epoll_ctl(s.epollFd, EPOLL_CTL_ADD, s.listenFd, &ev) != 0)
      throw std::runtime_error(errnoText("tollgate-sim: epoll_ctl"));
    ev.data.u64 = kWakeTag;
    if (::epoll_ctl(s.epollFd, EPOLL_CTL_ADD, s.wakeFd, &ev) != 0)
      throw std::runtime_error(errnoText("tollgate-sim: epoll_ctl"));
  } catch (...) {
    s.closeFds();
    throw;
  }
  {
    std::lock_guard lock(s.mu);
    s.responder = SimResponder(s.config, Clock::now());
  }
  s.stopping = false;
  s.stopRequested = false;
  s.thread = std::thread([&s] { s.run(); });
  return s.boundPort;
}

void SimServer::stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return;
  s.stopRequested = true;
  const std::uint64_t one = 1;
  if (::write(s.wakeFd, &one, sizeof one) < 0) logWarn("sim", errnoText("eventfd write"));
  s.thread.join();
  s.closeFds();
}

nlohmann::json SimServer::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->responder.stats(Clock::now());
}

void SimServer::scaleQuota(const std::string& group, double factor) {
  std::lock_guard lock(impl_->mu);
  impl_->responder.scaleQuota(group, factor, Clock::now());
}

void SimServer::setLimit(const std::string& group, double limitPerWindow) {
  std::lock_guard lock(impl_->mu);
  impl_->responder.setLimit(group, limitPerWindow, Clock::now());
}

void SimServer::resetStats() {
  std::lock_guard lock(impl_->mu);
  impl_->responder.resetStats(Clock::now());
}

void SimServer::Impl::closeFds() {
  for (int* fd : {&listenFd, &epollFd, &wakeFd})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

int SimServer::Impl::timeoutMs() const {
  TimePoint next = nextSchedule;
  if (!timers.empty()) next = std::min(next, timers.top().due);
  if (acceptPaused) next = std::min(next, acceptResumeAt);
  if (!conns.empty()) next = std::min(next, nextSweep);
  if (next == TimePoint::max()) return 1000;
  const double ms = std::ceil(toSeconds(next - Clock::now()) * 1000);
  return static_cast<int>(std::clamp(ms, 0.0, 1000.0));
}

void SimServer::Impl::run() {
  epoll_event events[kMaxEvents];
  now = Clock::now();
  {
    std::lock_guard lock(mu);
    nextSchedule = responder.runSchedule(now);
  }
  while (!stopRequested.load(std::memory_order_relaxed)) {
    const int n = ::epoll_wait(epollFd, events, kMaxEvents, timeoutMs());
    if (n < 0 && errno != EINTR) {
      logError("sim", errnoText("epoll_wait"));
      break;
    }
    now = Clock::now();
    wall = wallNowS();
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = events[i].data.u64;
      if (id == kListenTag) {
        acceptAll();
      } else if (id == kWakeTag) {
        std::uint64_t v;
        while (::read(wakeFd, &v, sizeof v) > 0) {
        }
      } else {
        onEvent(id, events[i].events);
      }
    }
    fireTimers();
    expireConnections();
    if (acceptPaused && now >= acceptResumeAt) resumeAccepting();
    if (now >= nextSchedule) {
      std::lock_guard lock(mu);
      nextSchedule = responder.runSchedule(now);
    }
  }
  // Shut down: unanswered requests are dropped with their connections.
  stopping = true;
  while (!conns.empty()) closeConn(conns.begin()->second, false);
  while (!timers.empty()) timers.pop();
}

void SimServer::Impl::acceptAll() {
  for (;;) {
    const int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      // Out of descriptors or memory: the pending connection stays queued and the listening socket
      // stays readable, so retrying at once would spin. Wait for a connection to close or a short timer.
      pauseAccepting(errno);
      return;
    }
    fdShortageLogged = false;
    if (conns.size() >= static_cast<std::size_t>(config.connections.maxConnections)) {
      refuseOverCap(fd);
      continue;
    }
    overCapLogged = false;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const std::uint64_t id = nextConnId++;
    Conn& c = conns[id];
    c.fd = fd;
    c.id = id;
    c.lastActive = now;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (::epoll_ctl(epollFd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      logWarn("sim", errnoText("epoll_ctl add"));
      ::close(fd);
      conns.erase(id);
      continue;
    }
    c.events = EPOLLIN;
  }
}

void SimServer::Impl::pauseAccepting(int err) {
  if (!fdShortageLogged) {
    logWarn("sim", std::string("accept: ") + std::strerror(err) + "; not accepting for now (" +
                       std::to_string(conns.size()) + " connections open), again when one closes");
    fdShortageLogged = true;  // once per shortage: a successful accept re-arms it
  }
  acceptResumeAt = now + kAcceptBackoff;
  if (acceptPaused) return;
  epoll_event ev{};
  ev.events = 0;
  ev.data.u64 = kListenTag;
  if (::epoll_ctl(epollFd, EPOLL_CTL_MOD, listenFd, &ev) != 0) logWarn("sim", errnoText("epoll_ctl listen pause"));
  acceptPaused = true;
}

void SimServer::Impl::resumeAccepting() {
  if (!acceptPaused) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenTag;
  if (::epoll_ctl(epollFd, EPOLL_CTL_MOD, listenFd, &ev) != 0) {
    logWarn("sim", errnoText("epoll_ctl listen resume"));
    return;
  }
  acceptPaused = false;
  acceptResumeAt = TimePoint::max();
}

// Over the connection cap: a short 503 and an orderly close, without reading the request.
void SimServer::Impl::refuseOverCap(int fd) {
  if (!overCapLogged) {
    logWarn("sim", "connection limit reached (" + std::to_string(config.connections.maxConnections) +
                       "); refusing new connections with 503 until one closes");
    overCapLogged = true;
  }
  std::string bytes;
  {
    std::lock_guard lock(mu);
    bytes = responder.protocolError(kServiceUnavailable, "too many connections", wall).bytes;
  }
  if (::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
    logDebug("sim", errnoText("send 503 to a refused connection"));
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

// Answers 408 to a request that has been arriving for too long, closes connections idle for too long and
// resets those whose replies have not moved for too long (a client that pipelines and never reads would
// otherwise hold its buffers, megabytes in and out, forever: it is neither idle nor mid-request).
void SimServer::Impl::expireConnections() {
  if (now < nextSweep) return;
  nextSweep = now + kSweepInterval;
  const auto requestTimeout = fromSeconds(config.connections.requestTimeoutS);
  const auto idleTimeout = fromSeconds(config.connections.idleTimeoutS);
  const auto writeTimeout = fromSeconds(config.connections.writeTimeoutS);
  std::vector<std::uint64_t> late, idle, stalled;
  for (const auto& [id, c] : conns) {
    if (c.writeWaitSince != TimePoint::max() && now - c.writeWaitSince >= writeTimeout)
      stalled.push_back(id);
    else if (!c.closing && c.partialSince != TimePoint::max() && now - c.partialSince >= requestTimeout)
      late.push_back(id);
    else if (c.in.empty() && c.pending.empty() && c.outOff == c.out.size() && now - c.lastActive >= idleTimeout)
      idle.push_back(id);
  }
  for (const auto id : idle) closeConn(conns.at(id), false);
  for (const auto id : stalled) closeConn(conns.at(id), true);
  for (const auto id : late) {
    Conn& c = conns.at(id);
    SimReply r;
    {
      std::lock_guard lock(mu);
      r = responder.protocolError(kRequestTimeout, "request not complete within " +
                                                       std::to_string(config.connections.requestTimeoutS) + " s",
                                  wall);
    }
    enqueue(c, std::move(r));
    c.closing = true;
    c.in.clear();
    c.partialSince = TimePoint::max();
    flush(c);
  }
}

void SimServer::Impl::onEvent(std::uint64_t id, std::uint32_t ev) {
  auto it = conns.find(id);
  if (it == conns.end()) return;
  Conn& c = it->second;
  if (ev & (EPOLLERR | EPOLLHUP)) {  // reset or fully closed: nobody is left to read replies
    closeConn(c, false);
    return;
  }
  if ((ev & EPOLLIN) && !readConn(c)) return;
  if (ev & (EPOLLIN | EPOLLOUT)) serve(c);
}

// Returns false when the connection was closed.
bool SimServer::Impl::readConn(Conn& c) {
  for (;;) {
    // Receive into a reused buffer and append what came: resizing the input string by a whole chunk
    // first zero-filled 64 KiB per read, a third of the simulator's CPU under load (callgrind).
    static thread_local char chunk[kReadChunk];
    const ssize_t n = ::recv(c.fd, chunk, kReadChunk, 0);
    if (n > 0) {
      c.in.append(chunk, static_cast<std::size_t>(n));
      c.lastActive = now;
      if (static_cast<std::size_t>(n) < kReadChunk || c.in.size() >= kMaxBufferedInput) return true;
      continue;
    }
    if (n == 0) {
      // Peer finished sending: answer what it asked, then close.
      c.peerDone = true;
      if (c.pending.empty() && c.out.size() == c.outOff && c.in.empty()) {
        closeConn(c, false);
        return false;
      }
      return true;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    closeConn(c, false);
    return false;
  }
}

bool SimServer::Impl::canParse(const Conn& c) const {
  return !c.closing && c.pending.size() < kMaxPipelined && c.out.size() - c.outOff < kMaxBufferedOutput;
}

// Parses buffered requests while there is room for their replies; returns true when it consumed any.
bool SimServer::Impl::parseBuffered(Conn& c) {
  std::size_t off = 0;
  bool needMore = false;
  while (off < c.in.size() && canParse(c)) {
    HttpRequest req;
    const auto o = HttpRequestParser::parse(std::string_view(c.in).substr(off), req);
    if (o.status == HttpRequestParser::Status::NeedMore) {
      if (o.expectContinue && !c.continueSent && c.pending.empty()) {
        c.out += kContinue;
        c.continueSent = true;
      }
      needMore = true;
      break;
    }
    if (o.status == HttpRequestParser::Status::Error) {
      SimReply r;
      {
        std::lock_guard lock(mu);
        r = responder.protocolError(o.errorStatus, o.errorMessage, wall);
      }
      enqueue(c, std::move(r));
      c.closing = true;
      off = c.in.size();
      break;
    }
    off += o.consumed;
    c.continueSent = false;
    c.partialSince = TimePoint::max();
    SimReply r;
    {
      std::lock_guard lock(mu);
      r = responder.handle(req, now, wall);
    }
    if (r.closeAfter) c.closing = true;
    enqueue(c, std::move(r));
  }
  c.in.erase(0, off);
  if (needMore && c.partialSince == TimePoint::max()) c.partialSince = now;
  // After EOF a partial request can never complete.
  if (c.peerDone && (needMore || c.in.empty())) c.closing = true;
  if (c.closing) {
    c.in.clear();
    c.partialSince = TimePoint::max();
  }
  return off > 0;
}

// Parses what is buffered and writes what is ready, until neither makes progress: replies that leave
// make room for more of the buffered (pipelined) input, which the socket will not signal again.
// Returns false when the connection was closed.
bool SimServer::Impl::serve(Conn& c) {
  for (;;) {
    const bool parsed = parseBuffered(c);
    if (!flush(c)) return false;
    if (!parsed || c.in.empty() || !canParse(c)) return true;
  }
}

void SimServer::Impl::enqueue(Conn& c, SimReply reply) {
  Slot s;
  s.seq = c.nextSeq++;
  s.ready = reply.delayS <= 0;
  if (!s.ready) timers.push({now + fromSeconds(reply.delayS), c.id, s.seq});
  s.reply = std::move(reply);
  c.pending.push_back(std::move(s));
}

void SimServer::Impl::fireTimers() {
  while (!timers.empty() && timers.top().due <= now) {
    const Timer t = timers.top();
    timers.pop();
    auto it = conns.find(t.conn);
    if (it == conns.end()) continue;  // connection gone; its replies were dropped with it
    Conn& c = it->second;
    if (c.pending.empty() || t.seq < c.pending.front().seq) continue;
    const std::size_t idx = static_cast<std::size_t>(t.seq - c.pending.front().seq);
    if (idx >= c.pending.size()) continue;
    c.pending[idx].ready = true;
    if (idx != 0) continue;  // an earlier reply on this connection is still due: keep the order
    serve(c);
  }
}

// The stream at the front is due: writes its head (the first time) and every step that is due. Returns
// true when its last step is out and the slot is gone; otherwise a timer is set for the next step, and the
// loop serves other connections meanwhile.
bool SimServer::Impl::advanceStream(Conn& c) {
  Slot& s = c.pending.front();
  if (!s.streaming) {
    c.out += s.reply.bytes;
    s.streaming = true;
    s.streamStart = now;
    std::lock_guard lock(mu);
    responder.onStreamStarted(s.reply);
  }
  const auto& steps = s.reply.stream;
  const auto due = [&] { return s.streamStart + fromSeconds(steps[s.step].atS); };
  while (s.step < steps.size() && due() <= now) c.out += steps[s.step++].bytes;
  if (s.step < steps.size()) {
    s.ready = false;
    timers.push({due(), c.id, s.seq});
    return false;
  }
  {
    std::lock_guard lock(mu);
    responder.onSent(s.reply, now);
  }
  if (s.reply.closeAfter) c.closing = true;
  c.pending.pop_front();
  return true;
}

// Moves ready replies (in request order) to the output and writes. Returns false when the connection closed.
bool SimServer::Impl::flush(Conn& c) {
  while (!c.pending.empty() && c.pending.front().ready) {
    if (c.pending.front().reply.streamed()) {
      if (!advanceStream(c)) break;
      continue;
    }
    Slot s = std::move(c.pending.front());
    c.pending.pop_front();
    {
      std::lock_guard lock(mu);
      responder.onSent(s.reply, now);
    }
    if (s.reply.resetConnection) {
      closeConn(c, true);
      return false;
    }
    c.out += s.reply.bytes;
    if (s.reply.closeAfter) c.closing = true;
  }
  bool wrote = false;
  while (c.outOff < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.outOff, c.out.size() - c.outOff, MSG_NOSIGNAL);
    if (n > 0) {
      c.outOff += static_cast<std::size_t>(n);
      c.lastActive = now;
      wrote = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    closeConn(c, false);
    return false;
  }
  if (c.outOff == c.out.size()) {
    c.writeWaitSince = TimePoint::max();
  } else if (wrote || c.writeWaitSince == TimePoint::max()) {
    c.writeWaitSince = now;  // every byte of output reaches the socket through here, so no wait goes unseen
  }
  if (c.outOff == c.out.size()) {
    c.out.clear();
    c.outOff = 0;
    if (c.closing && c.pending.empty()) {
      closeConn(c, false);
      return false;
    }
  } else if (c.outOff > (1u << 20)) {
    c.out.erase(0, c.outOff);
    c.outOff = 0;
  }
  updateInterest(c);
  return true;
}

void SimServer::Impl::updateInterest(Conn& c) {
  const bool canRead = !c.closing && !c.peerDone && c.pending.size() < kMaxPipelined &&
                       c.in.size() < kMaxBufferedInput && c.out.size() - c.outOff < kMaxBufferedOutput;
  const std::uint32_t want = (canRead ? EPOLLIN : 0u) | (c.outOff < c.out.size() ? EPOLLOUT : 0u);
  if (want == c.events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = c.id;
  if (::epoll_ctl(epollFd, EPOLL_CTL_MOD, c.fd, &ev) == 0) c.events = want;
}

void SimServer::Impl::closeConn(Conn& c, bool abort) {
  {
    std::lock_guard lock(mu);
    // A stream cut short by the client (gone, or not reading: write timeout), not by stop().
    if (!stopping && !c.pending.empty() && c.pending.front().streaming)
      responder.onStreamAborted(c.pending.front().reply);
    for (const auto& s : c.pending) responder.onDropped(s.reply);
  }
  ::epoll_ctl(epollFd, EPOLL_CTL_DEL, c.fd, nullptr);
  if (abort) {
    // A reset, not an orderly close: the client sees ECONNRESET, as with a flaky upstream.
    const linger l{1, 0};
    ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  ::close(c.fd);
  conns.erase(c.id);
  resumeAccepting();  // a descriptor is free again
}

}  // namespace tg
