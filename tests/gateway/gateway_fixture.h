// Shared set-up for gateway tests over real loopback HTTP: an in-process tollgate-sim, an engine on it, and
// a GatewayServer on a free port in front of the engine; plus a blocking libcurl client and raw sockets for
// what libcurl will not send.
#pragma once

#include "config_loader.h"
#include "engine.h"
#include "gateway_config.h"
#include "gateway_metrics.h"
#include "gateway_server.h"
#include "sim_server.h"

#include <curl/curl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <strings.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

namespace tgtest {

inline constexpr const char* kToken = "test-gateway-token-0123456789";

struct Reply {
  long status = 0;
  tg::HeaderList headers;
  std::string body;
  double seconds = 0;
  std::string error;  // libcurl's, when no answer came
  const std::string* header(const char* name) const {
    for (const auto& [k, v] : headers)
      if (strcasecmp(k.c_str(), name) == 0) return &v;
    return nullptr;
  }
};

inline std::size_t collectBody(char* p, std::size_t s, std::size_t n, void* u) {
  static_cast<std::string*>(u)->append(p, s * n);
  return s * n;
}
inline std::size_t collectHeader(char* p, std::size_t s, std::size_t n, void* u) {
  std::string line(p, s * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  auto* h = static_cast<tg::HeaderList*>(u);
  if (line.rfind("HTTP/", 0) == 0) h->clear();  // a new response head (after 100 Continue)
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string v = line.substr(colon + 1);
    while (!v.empty() && v.front() == ' ') v.erase(0, 1);
    h->emplace_back(line.substr(0, colon), v);
  }
  return s * n;
}

// One blocking request. `headers` are full lines ("X-Tollgate-Tier: P0"). The body goes to `onBody` (with
// `bodyCtx`) when given, else into Reply::body.
inline Reply call(const std::string& url, const std::string& method, const std::vector<std::string>& headers,
                  const std::string& body = {}, double timeoutS = 30, curl_write_callback onBody = nullptr,
                  void* bodyCtx = nullptr) {
  Reply r;
  CURL* c = curl_easy_init();
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (!body.empty() || method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody ? onBody : &collectBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, onBody ? bodyCtx : static_cast<void*>(&r.body));
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &collectHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeoutS * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  const auto t0 = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(c);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != CURLE_OK) r.error = curl_easy_strerror(rc);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(c);
  return r;
}

// A raw TCP connection to 127.0.0.1:port.
inline int connectTo(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `raw` and reads until the peer closes or `timeoutS` passes.
inline std::string rawExchange(int port, const std::string& raw, double timeoutS = 5) {
  const int fd = connectTo(port);
  if (fd < 0) return "(connect failed)";
  timeval tv{static_cast<time_t>(timeoutS), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}

// simJson: tollgate-sim config; engineJson: Tollgate config (groups with base_url "sim") whose "gateway"
// section is used with "listen" forced to 127.0.0.1:0.
class GatewayUnderTest {
 public:
  GatewayUnderTest(const nlohmann::json& simJson, nlohmann::json engineJson)
      : sim_(std::make_unique<tg::SimServer>(tg::SimConfig::fromJson(simJson, "(test sim)"))) {
    simPort_ = sim_->start("127.0.0.1", 0);
    engineJson["simulator"] = simJson;
    engineJson["gateway"]["listen"] = "127.0.0.1:0";
    tg::TollgateConfig c = tg::ConfigLoader::fromJson(engineJson, "(test config)");
    tg::ConfigLoader::bindSimulator(c, "http://127.0.0.1:" + std::to_string(simPort_));
    engine_ = std::make_unique<tg::Engine>(c.engine);
    engine_->start();
    auto gc = tg::gateway::loadGatewayConfig(*c.gateway, c.engine, c.file);
    gateway_ = std::make_unique<tg::gateway::GatewayServer>(*engine_, gc, &metrics_);
    gateway_->start();
  }
  ~GatewayUnderTest() {
    gateway_->stop();
    engine_->stop();
    sim_->stop();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port()) + path; }
  int port() const { return gateway_->port(); }
  tg::Engine& engine() { return *engine_; }
  tg::SimServer& sim() { return *sim_; }
  tg::gateway::GatewayServer& gateway() { return *gateway_; }
  tg::gateway::GatewayMetrics& metrics() { return metrics_; }
  std::int64_t simRequests(const std::string& group) const {
    auto s = sim_->stats();
    return s["groups"].contains(group) ? s["groups"][group]["requests"].get<std::int64_t>() : 0;
  }

 private:
  std::unique_ptr<tg::SimServer> sim_;
  int simPort_ = 0;
  std::unique_ptr<tg::Engine> engine_;
  tg::gateway::GatewayMetrics metrics_;
  std::unique_ptr<tg::gateway::GatewayServer> gateway_;
};

}  // namespace tgtest
