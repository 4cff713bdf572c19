// The simulator's listening socket: loopback hosts only (it is a test upstream, never a public server).
#pragma once

#include <string>

namespace tg {

class LoopbackListener {
 public:
  // Binds and listens on `host` ("localhost", 127.0.0.0/8 or ::1) and `port` (0: any free port);
  // non-blocking and close-on-exec. Throws std::runtime_error naming what failed.
  LoopbackListener(const std::string& host, int port);
  ~LoopbackListener();  // closes the socket unless it was released
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int port() const { return port_; }  // the bound port
  int release();                      // the caller owns the socket from now on

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace tg
