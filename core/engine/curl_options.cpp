#include "curl_options.h"

#include "log.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace tg {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Read once: the environment does not change under a running process.
struct NetworkEnvironment {
  std::string caFile, caFileVar, caDir;
  std::string noProxy;

  NetworkEnvironment() {
    for (const char* var : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
      if (std::string v = env(var); !v.empty()) {
        caFile = v;
        caFileVar = var;
        break;
      }
    }
    caDir = env("SSL_CERT_DIR");
    std::string fromEnv = env("no_proxy");
    if (fromEnv.empty()) fromEnv = env("NO_PROXY");
    noProxy = fromEnv == "*" ? fromEnv : "localhost,127.0.0.0/8,::1" + (fromEnv.empty() ? "" : "," + fromEnv);
  }
};

const NetworkEnvironment& networkEnvironment() {
  static const NetworkEnvironment e;
  return e;
}

// host:port of a proxy URL, never its user or password.
std::string proxyHost(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), CURLU_GUESS_SCHEME) != CURLUE_OK)
    return "(not a URL)";
  char* host = nullptr;
  char* port = nullptr;
  std::string out;
  if (curl_url_get(u.get(), CURLUPART_HOST, &host, 0) == CURLUE_OK) out = host;
  if (curl_url_get(u.get(), CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) out += std::string(":") + port;
  curl_free(host);
  curl_free(port);
  return out;
}

}  // namespace

const char* setNetworkOptions(CURL* easy) {
  const NetworkEnvironment& e = networkEnvironment();
  // A libcurl before 7.87 lacks it: the lookup's wait comes back, nothing else is lost.
  if (const CURLcode rc = curl_easy_setopt(easy, CURLOPT_QUICK_EXIT, 1L); rc != CURLE_OK && rc != CURLE_UNKNOWN_OPTION)
    return "CURLOPT_QUICK_EXIT";
  if (!e.caFile.empty() && curl_easy_setopt(easy, CURLOPT_CAINFO, e.caFile.c_str()) != CURLE_OK)
    return "CURLOPT_CAINFO";
  if (!e.caDir.empty() && curl_easy_setopt(easy, CURLOPT_CAPATH, e.caDir.c_str()) != CURLE_OK)
    return "CURLOPT_CAPATH";
  if (curl_easy_setopt(easy, CURLOPT_NOPROXY, e.noProxy.c_str()) != CURLE_OK) return "CURLOPT_NOPROXY";
  return nullptr;
}

std::string networkEnvironmentSummary() {
  const NetworkEnvironment& e = networkEnvironment();
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (!e.caFile.empty()) add("trusting the CA bundle " + e.caFile + " (" + e.caFileVar + ")");
  if (!e.caDir.empty()) add("trusting the CA directory " + e.caDir + " (SSL_CERT_DIR)");
  // libcurl's own reading: http_proxy in lower case only (HTTP_PROXY could be set by a CGI request's header).
  for (const char* var : {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
    if (std::string v = env(var); !v.empty()) add(std::string("proxy ") + proxyHost(v) + " (" + var + ")");
  }
  if (out.find("proxy ") != std::string::npos) add("no proxy for " + e.noProxy);
  return out;
}

std::string caEnvironmentProblem() {
  const NetworkEnvironment& e = networkEnvironment();
  struct stat st {};
  if (!e.caFile.empty() && (::stat(e.caFile.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
                            ::access(e.caFile.c_str(), R_OK) != 0))
    return e.caFileVar + "=" + e.caFile + ": not a readable file (a PEM bundle of the CAs to trust)";
  // OpenSSL reads a list of directories, colon-separated: each must be one.
  for (std::size_t from = 0; !e.caDir.empty() && from <= e.caDir.size();) {
    const std::size_t colon = std::min(e.caDir.find(':', from), e.caDir.size());
    const std::string dir = e.caDir.substr(from, colon - from);
    if (!dir.empty() && (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
      return "SSL_CERT_DIR=" + e.caDir + ": " + dir + " is not a directory (of hashed CA certificates, as c_rehash "
             "makes)";
    from = colon + 1;
  }
  return {};
}

void logNetworkEnvironmentOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (const std::string s = networkEnvironmentSummary(); !s.empty()) logInfo("network", s);
    if (const std::string p = caEnvironmentProblem(); !p.empty())
      logError("network", p + ": every https request will fail until it is fixed");
  });
}

}  // namespace tg
