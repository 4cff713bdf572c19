// A real nginx `limit_req` (nginx_config.h) as the limiter in front of an in-process simulator: a fresh nginx
// per start (its own prefix, config and logs in a temp dir, a free loopback port), so no limiter state carries
// over between runs. Used by limiter_bench and probe_accuracy.
#pragma once

#include "child_process.h"

#include <memory>
#include <string>

namespace tgbench {

struct NginxFront {
  std::string nginx = "/usr/sbin/nginx";
  double rate = 50;         // nginx's rate, r/s
  int burst = 10;           // nginx's burst (nodelay)
  bool retryAfter = false;  // answer an overflow with Retry-After: 1 instead of a bare 429

  // Starts nginx in front of `simUrl` ("http://127.0.0.1:PORT") and returns its own URL; throws
  // std::runtime_error with nginx's error log when it does not listen within 10 s.
  std::string start(const std::string& simUrl);
  void stop();  // idempotent

 private:
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<ChildProcess> proc_;
};

}  // namespace tgbench
