// The quota-aware request engine. One background thread owns the Scheduler (queues, buckets, breakers:
// scheduler.h) and the CurlTransport (curl_transport.h); other threads talk to it through a command queue
// woken by curl_multi_wakeup.
#pragma once

#include "engine_config.h"
#include "event.h"
#include "request.h"
#include "snapshot.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tg {

class EngineLoop;  // engine.cpp

class Engine {
 public:
  explicit Engine(EngineConfig config);
  ~Engine();  // stops the loop; pending callbacks get ErrorKind::Cancelled
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Listeners: each call adds one (none replaces another). Add them before start(); not thread-safe.
  // Called on the engine thread; keep them short and non-blocking.
  void onSnapshot(std::function<void(SnapshotPtr)> fn);
  void onEvent(std::function<void(const Event&)> fn);
  void onAttempt(std::function<void(const AttemptRecord&)> fn);

  void start();  // spawns the loop thread
  void stop();   // cancels queued and in-flight work (each gets its callback), waits for the thread. Idempotent.
  // An orderly stop: sends nothing more (queued requests and retries wait for stop() to cancel them) and waits up
  // to `maxS` for what is in flight to be answered. True when nothing is in flight (or the engine is not running).
  // With `cancelWaitingWhy`, what waits is cancelled with that reason at once instead of at stop() (a gateway's
  // queued clients get their answer now, not after the drain).
  bool finishInFlight(double maxS, const std::string& cancelWaitingWhy = {});

  // --- thread-safe from here on ---
  // Queues a request. The callback runs exactly once: on the engine thread, or, when the engine has
  // stopped, at once on the calling thread (ErrorKind::Cancelled). A request that cannot be admitted
  // (unknown group, a URL naming a host the group does not allow, a header that would not make one HTTP
  // line, queue full, engine stopped) completes with an error, never silently.
  // Returns a handle naming the request for cancel() and resumeTransfer() (never 0).
  RequestHandle submit(Request request, ResultCallback done);

  // The caller no longer wants the request (its client went away). Queued or backing off: removed, never sent.
  // In flight: the transfer is aborted. Either way its callback runs once with ErrorKind::Cancelled (`why`).
  // Unknown or finished handles are ignored.
  void cancel(RequestHandle h, std::string why = "cancelled by the caller");
  // Continues a transfer its ResponseSink paused. Ignored when not paused or finished.
  void resumeTransfer(RequestHandle h);

  // Operator commands: applied within one loop turn, each recorded as an OperatorAction event.
  void setGlobalConcurrency(int limit, const std::string& actor = "operator");
  void setGroupConcurrency(const std::string& group, int limit, const std::string& actor = "operator");
  // group empty = the ceiling on all groups together; zero rates lift it
  void setRateCeiling(const std::string& group, RateCeilingConfig ceiling, const std::string& actor = "operator");
  // group empty = every group (the global tier switch)
  void setTierPaused(Tier tier, bool paused, const std::string& group = {},
                     const std::string& actor = "operator");
  void setGroupPaused(const std::string& group, bool paused, const std::string& actor = "operator");
  // Cancels what is queued for the group (ErrorKind::Cancelled); in-flight requests finish.
  void drainGroup(const std::string& group, const std::string& actor = "operator");
  // An event of the caller's own (serve's config reload), delivered to the listeners (history, the event log) like
  // the engine's; its time is now when tsMs is 0.
  void recordEvent(Event e);

  SnapshotPtr latestSnapshot() const;  // never null after start()
  const EngineConfig& config() const;  // immutable after construction

 private:
  std::unique_ptr<EngineLoop> loop_;
};

}  // namespace tg
