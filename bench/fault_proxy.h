// A loopback HTTP/1.1 proxy in front of tollgate-sim for the soak: it injects the faults the simulator does
// not have (slow responses, an outage with refused or hanging connections) and counts, per request id (a
// request header), how often each request reached the upstream and what came back.
//
//   FaultProxy proxy(simPort, "x-soak-id");
//   const int port = proxy.start();          // 127.0.0.1, ephemeral port
//   proxy.setMode(FaultProxy::Mode::Hang);   // from any thread
//   proxy.stop();
//   proxy.writeCounts("upstream.tsv");
//
// One accept thread, one thread per client connection (blocking sockets polled with a short timeout so mode
// changes and stop() are seen within kPollMs). Requests are parsed with the simulator's own parser; responses
// are delimited by Content-Length, which is all tollgate-sim sends.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tgbench {

class FaultProxy {
 public:
  enum class Mode {
    Pass,    // forward as is
    Slow,    // every request waits slowMinMs..slowMaxMs before it is forwarded
    Refuse,  // no listening socket (connect: ECONNREFUSED); open connections are reset
    Hang,    // connections are accepted but nothing is read or answered; when the hang ends they are reset
  };
  static std::string_view modeName(Mode m);

  // What the upstream saw of one request id.
  struct IdCount {
    int sends = 0;
    int transientRetries = 0;  // sends whose previous send did not end in a 429 delivered to the client
    int quotaRetries = 0;      // sends after a delivered 429
    int lastStatus = -1;       // -1 in flight, 0 no response delivered (reset, outage, timeout)
    std::vector<int> statuses; // one per send, in order
  };

  FaultProxy(int upstreamPort, std::string idHeaderLower, double slowMinMs = 500, double slowMaxMs = 2500);
  ~FaultProxy();  // calls stop()
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int start();  // binds 127.0.0.1 on an ephemeral port; throws std::runtime_error naming the call that failed
  void stop();  // closes everything and joins every thread; idempotent
  void setMode(Mode m);  // thread-safe
  Mode mode() const { return mode_.load(); }

  // After stop(): one line per id, "id<TAB>sends<TAB>transient<TAB>quota<TAB>status,status,...".
  // Returns false (and sets *error) if the file cannot be written.
  bool writeCounts(const std::string& path, std::string* error) const;
  std::uint64_t connectionsAccepted() const { return accepted_.load(); }
  std::uint64_t requestsWithoutId() const { return noId_.load(); }

 private:
  struct Conn {
    int client = -1;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void acceptLoop();
  bool openListener();
  void serve(Conn& c);
  int onSend(const std::string& id);  // returns the send's index for onOutcome
  void onOutcome(const std::string& id, int send, int status);
  bool sleepUnlessStopped(double ms);

  int upstreamPort_;
  std::string idHeader_;
  double slowMinMs_, slowMaxMs_;
  int port_ = 0;
  int listenFd_ = -1;  // accept thread only, once started
  std::atomic<Mode> mode_{Mode::Pass};
  std::atomic<bool> stopping_{false};
  std::thread acceptThread_;
  std::list<Conn> conns_;  // accept thread adds and reaps; stop() joins after the accept thread is gone
  std::atomic<std::uint64_t> accepted_{0}, noId_{0};
  mutable std::mutex countsMu_;
  std::map<std::string, IdCount> counts_;
  bool started_ = false;
};

}  // namespace tgbench
