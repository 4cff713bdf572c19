// The nginx configuration of a rate limiter no one here wrote: `limit_req` (a leaky bucket with burst, nodelay)
// in front of an upstream, everything under its own prefix so a test or a benchmark can run it unprivileged on
// a free loopback port. Shared by limiter_bench and the nginx integration test (tests/engine). Header-only.
#pragma once

#include <sstream>
#include <string>

namespace tgbench {

// rate: requests per second (nginx takes whole r/s); burst: nginx's burst; retryAfter: answer an overflow with
// `Retry-After: 1` (via error_page) instead of a bare 429. No quota headers either way.
inline std::string nginxConfig(const std::string& prefix, int port, int simPort, double rate, int burst, bool retryAfter) {
  std::ostringstream c;
  c << "daemon off;\nworker_processes 1;\npid " << prefix << "/nginx.pid;\nerror_log " << prefix << "/error.log warn;\n"
    << "events { worker_connections 4096; }\n"
    << "http {\n  access_log off;\n"
    << "  client_body_temp_path " << prefix << "/body;\n  proxy_temp_path " << prefix << "/proxy;\n"
    << "  fastcgi_temp_path " << prefix << "/fastcgi;\n  uwsgi_temp_path " << prefix << "/uwsgi;\n"
    << "  scgi_temp_path " << prefix << "/scgi;\n"
    // One zone for every request (a constant key): the limit of one API key. nginx counts per millisecond:
    // rate in r/s (integer) or r/m.
    << "  limit_req_zone $server_name zone=hidden:1m rate=" << static_cast<int>(rate) << "r/s;\n"
    << "  limit_req_status 429;\n  limit_req_log_level warn;\n"
    << "  upstream sim { server 127.0.0.1:" << simPort << "; keepalive 64; }\n"
    << "  server {\n    listen 127.0.0.1:" << port << ";\n    server_name bench;\n"
    << "    location / {\n      limit_req zone=hidden burst=" << burst << " nodelay;\n"
    << "      proxy_pass http://sim;\n      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n"
    << (retryAfter ? "      error_page 429 = @limited;\n" : "") << "    }\n"
    << "    location @limited {\n      add_header Retry-After 1 always;\n"
    << "      return 429 '{\"error\":\"rate limited\"}';\n    }\n  }\n}\n";
  return c.str();
}

}  // namespace tgbench
