// The local gateway: an HTTP/1.1 server (libmicrohttpd, one epoll thread) that takes any request under a
// route's prefix and sends it through the engine to the route group's upstream. A request waiting for quota
// is parked (its connection suspended, no thread held); a 2xx answer is relayed while it arrives (SSE chunk
// by chunk); anything else comes back whole after the engine's retries, so the client sees one answer.
#pragma once

#include "engine.h"
#include "gateway_config.h"
#include "route_table.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

struct MHD_Daemon;
struct MHD_Connection;

namespace tg::gateway {

class DisconnectWatcher;
class GatewayMetrics;
class RequestDeadline;
struct Exchange;

class GatewayServer {
 public:
  // `engine` must outlive the server and be started before requests arrive. `metrics` may be null.
  GatewayServer(Engine& engine, GatewayConfig config, GatewayMetrics* metrics = nullptr);
  ~GatewayServer();  // stop()
  GatewayServer(const GatewayServer&) = delete;
  GatewayServer& operator=(const GatewayServer&) = delete;

  // Binds and starts serving; throws std::runtime_error naming the address and the reason (port in use).
  void start();
  // Stops accepting, cancels every request still in the engine, answers parked clients, stops the server.
  // Closes the listening socket and answers every client. With `drainS` > 0, what the upstream is already working
  // on gets that long to be answered (what waits is answered 503 at once); what is still in flight then is cancelled.
  void stop(double drainS = 0);

  int port() const { return port_; }             // the bound port (config port 0: the one the OS chose)
  std::string listenAddress() const;             // "127.0.0.1:8088"
  // An absolute-form target's authority ("127.0.0.1:8088", "user@localhost:8088") names this gateway: its port, and
  // a loopback host or the one it listens on (any host when it listens on all of them).
  bool namesThisGateway(std::string authority, int defaultPort) const;
  int openConnections() const;
  // Requests answered per client name ("anonymous" without tokens), since start.
  std::map<std::string, std::uint64_t> requestsByClient() const;
  const GatewayConfig& config() const { return cfg_; }

  // libmicrohttpd callbacks (public for the C trampolines in gateway_server.cpp only).
  int onRequest(MHD_Connection* c, const char* method, const char* upload, std::size_t* uploadSize, void** cls);
  void onCompleted(MHD_Connection* c, void** cls, int why);
  void* onUri(const char* uri, MHD_Connection* c);
  void onConnection(MHD_Connection* c, bool opened);
  long readBody(Exchange& x, char* out, std::size_t max);  // the relay's content reader

 private:
  friend struct Exchange;
  int answerNow(MHD_Connection* c, Exchange& x, int status, const HeaderList& headers, const std::string& body);
  int submit(MHD_Connection* c, const std::shared_ptr<Exchange>& x);
  int queueRelay(MHD_Connection* c, const std::shared_ptr<Exchange>& x);
  // A whole answer or a stream's head, if the engine has one: sent (`lk` released), else nothing (`lk` held).
  std::optional<int> sendWhatIsReady(MHD_Connection* c, const std::shared_ptr<Exchange>& x,
                                     std::unique_lock<std::mutex>& lk);
  void park(Exchange& x);            // call with x.mu held
  void unpark(Exchange& x);          // call with x.mu held
  void finishCount(Exchange& x, int status);
  std::string healthBody() const;  // {"status", and "shared_quota" with its why when Redis is used}
  std::string metricsBody() const;

  Engine& engine_;
  GatewayConfig cfg_;
  RouteTable routes_;
  GatewayMetrics* metrics_;
  // Set by the starting thread after libmicrohttpd's own has begun, which reads them (/metrics, absolute-form URLs).
  std::atomic<MHD_Daemon*> daemon_{nullptr};
  std::unique_ptr<DisconnectWatcher> watcher_;
  std::unique_ptr<RequestDeadline> requestDeadline_;  // before daemon_ starts, gone after it stops
  std::atomic<int> port_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> nextId_{1};

  mutable std::mutex mu_;  // guards live_ and byClient_
  std::map<std::uint64_t, std::weak_ptr<Exchange>> live_;
  std::map<std::string, std::uint64_t> byClient_;
};

}  // namespace tg::gateway
