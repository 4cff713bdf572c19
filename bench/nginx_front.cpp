#include "nginx_front.h"

#include "nginx_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tgbench {

std::string NginxFront::start(const std::string& simUrl) {
  const int simPort = std::atoi(simUrl.c_str() + simUrl.rfind(':') + 1);
  dir_ = std::make_unique<TempDir>("nginx-front");
  proc_ = std::make_unique<ChildProcess>();
  const int port = freeLoopbackPort();
  const auto conf = dir_->write("nginx.conf", nginxConfig(dir_->path(), port, simPort, rate, burst, retryAfter));
  proc_->start({nginx, "-p", dir_->path(), "-e", dir_->path() + "/error.log", "-c", conf}, dir_->path() + "/nginx.log");
  if (!waitForListener(port, 10)) {
    std::ifstream in(dir_->path() + "/error.log");
    std::stringstream log;
    log << in.rdbuf();
    throw std::runtime_error("nginx did not start: " + log.str());
  }
  return "http://127.0.0.1:" + std::to_string(port);
}

void NginxFront::stop() {
  if (proc_) proc_->stop();
  proc_.reset();
  dir_.reset();
}

}  // namespace tgbench
