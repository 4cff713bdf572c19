// tollgate-sim's HTTP/1.1 server on loopback: one epoll loop thread, keep-alive, pipelined requests answered
// in order, simulated latency from a timer heap, the schedule applied from the loop. A streamed reply (SSE)
// is written step by step from the same timer heap, so a stream between chunks holds no thread.
//
//   SimServer sim(SimConfig::fromFile("examples/sim/default.json"));
//   const int port = sim.start();          // 127.0.0.1, ephemeral port
//   ... GET http://127.0.0.1:<port>/__sim/stats ...
//   sim.stop();                            // also done by the destructor
#pragma once

#include "sim_config.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace tg {

class SimServer {
 public:
  explicit SimServer(SimConfig config);
  ~SimServer();  // calls stop()
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  // Binds host:port (0 = ephemeral) and starts the loop thread; returns the bound port. The schedule's
  // clock starts here. Throws std::runtime_error for a non-loopback host, a bind failure, or a second
  // start. Call from the owning thread, not concurrently with stop().
  int start(const std::string& host = "127.0.0.1", int port = 0);
  // Stops the loop, closes every connection and joins the thread. Idempotent; owning thread.
  void stop();
  int port() const;  // 0 before start

  // Thread-safe. The same JSON as GET /__sim/stats.
  nlohmann::json stats() const;
  // Thread-safe runtime control, as POST /__sim/control. group "*" = every group; throws
  // std::invalid_argument for an unknown group or a non-positive value.
  void scaleQuota(const std::string& group, double factor);    // limits = configured * factor
  void setLimit(const std::string& group, double limitPerWindow);  // new base request limit
  void resetStats();  // counters and history to zero; quota state is kept

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg
