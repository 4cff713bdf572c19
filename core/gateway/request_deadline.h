// Deadlines for a request's head and body. libmicrohttpd's own timeout is an idle timeout: any byte restarts it, so
// a client that dribbles its request a byte every minute (slowloris) holds a connection, and one such client per
// slot shuts the gateway. Here each connection still receiving a request has a time by which it must be whole:
// its head `head` after the request line arrived, or `idle + head` after the connection opened or its last answer
// ended (an idle client is closed by libmicrohttpd's idle timeout first; this catches one that dribbles the request
// line itself); its body `body` after the head was whole. A connection past its time is shut down (shutdown(2):
// libmicrohttpd then reads the end and closes it as any other). While a whole request is served there is no
// deadline here (the engine's own deadlines hold it). One thread, waking once a second while any connection is open.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace tg::gateway {

class RequestDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  // `onCut(n)` runs on the deadline's thread after a sweep that shut n connections down.
  RequestDeadline(std::chrono::seconds idle, std::chrono::seconds head, std::chrono::seconds body,
                  std::function<void(int n)> onCut = {});
  ~RequestDeadline();
  RequestDeadline(const RequestDeadline&) = delete;
  RequestDeadline& operator=(const RequestDeadline&) = delete;

  // `conn` is any pointer naming the connection while it is open (libmicrohttpd's MHD_Connection).
  void opened(const void* conn, int fd);  // waiting for its first request: due idle + head from now
  void requestLine(const void* conn);     // the request line arrived: due head from now (no later than before)
  void headDone(const void* conn);        // the head is whole: its body due `body` from now
  void requestDone(const void* conn);     // the body is whole too: no deadline while the request is served
  void answered(const void* conn);        // the answer ended (keep-alive): due idle + head from now
  // Call before the fd is closed: the entry goes, and no shutdown can reach a reused descriptor after it.
  void closed(const void* conn);
  std::uint64_t cut() const;  // connections shut down so far

 private:
  void run();
  void setDue(const void* conn, Clock::time_point due, bool onlyEarlier);

  const std::chrono::seconds idle_, head_, body_;
  std::function<void(int)> onCut_;
  struct Entry {
    int fd = -1;
    Clock::time_point due = Clock::time_point::max();
  };
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_map<const void*, Entry> conns_;
  std::uint64_t cut_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tg::gateway
