#include "probe.h"

#include "request_safety.h"
#include "types.h"

#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace tg {
namespace {

constexpr long kTransferTimeoutMs = 30000;
constexpr int kPollMs = 50;
constexpr const char* kProbeBody = "{\"max_tokens\":1}";

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

struct EasyFree {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
using EasyPtr = std::unique_ptr<CURL, EasyFree>;
struct MultiFree {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
using MultiPtr = std::unique_ptr<CURLM, MultiFree>;
struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistFree>;

void append(SlistPtr& list, const std::string& line) {
  curl_slist* grown = curl_slist_append(list.get(), line.c_str());
  if (!grown) throw std::runtime_error("probe: out of memory building the request headers");
  list.release();
  list.reset(grown);
}

// One transfer of the probe, or an exception naming the option libcurl refused.
EasyPtr makeEasy(const std::string& url, curl_slist* headers) {
  EasyPtr e(curl_easy_init());
  if (!e) throw std::runtime_error("probe: curl_easy_init failed");
  auto set = [&](CURLoption option, const char* name, auto value) {
    if (CURLcode rc = curl_easy_setopt(e.get(), option, value); rc != CURLE_OK)
      throw std::runtime_error(std::string("probe: ") + name + ": " + curl_easy_strerror(rc));
  };
  set(CURLOPT_URL, "CURLOPT_URL", url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "CURLOPT_PROTOCOLS_STR", kAllowedProtocols);
  set(CURLOPT_COPYPOSTFIELDS, "CURLOPT_COPYPOSTFIELDS", kProbeBody);
  set(CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER", headers);
  set(CURLOPT_WRITEFUNCTION, "CURLOPT_WRITEFUNCTION", discard);
  set(CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL", 1L);
  set(CURLOPT_TIMEOUT_MS, "CURLOPT_TIMEOUT_MS", kTransferTimeoutMs);
  return e;
}

void addHandle(CURLM* multi, EasyPtr e) {
  if (CURLMcode rc = curl_multi_add_handle(multi, e.get()); rc != CURLM_OK)
    throw std::runtime_error(std::string("probe: curl_multi_add_handle: ") + curl_multi_strerror(rc));
  (void)e.release();  // the multi handle's now; cleaned up when its transfer is done
}

}  // namespace

std::string probeProblem(const ProbeOptions& o) {
  if (!(o.stepS > 0 && o.stepS <= kMaxProbeStepS))
    return "step_s " + std::to_string(o.stepS) + " is not in (0, " + std::to_string(static_cast<int>(kMaxProbeStepS)) + "]";
  if (o.path.empty() || o.path.front() != '/')
    return "path \"" + printable(o.path) + "\" does not start with /: it would change the host the key goes to";
  std::string why;
  const std::string base = originOf(o.baseUrl, &why);
  if (base.empty()) return "base_url \"" + printable(o.baseUrl) + "\": " + why;
  const std::string joined = originOf(o.baseUrl + o.path, &why);
  if (joined.empty()) return "path \"" + printable(o.path) + "\": " + why;
  if (joined != base) return "path \"" + printable(o.path) + "\" moves the request from " + base + " to " + joined;
  if (!o.key.secret.empty())  // names the header, never the secret
    if (std::string p = headerProblem(o.key.header, o.key.prefix + o.key.secret, "key \"" + o.key.name + "\"");
        !p.empty())
      return p;
  if (!o.groupHeader.empty())
    if (std::string p = headerProblem(o.groupHeader, o.group, "group_header"); !p.empty()) return p;
  return {};
}

ProbeReport runProbe(const ProbeOptions& o) {
  if (std::string p = probeProblem(o); !p.empty()) throw std::invalid_argument(p);
  static std::once_flag init;
  static CURLcode initRc = CURLE_OK;
  std::call_once(init, [] { initRc = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (initRc != CURLE_OK) throw std::runtime_error(std::string("probe: curl_global_init: ") + curl_easy_strerror(initRc));

  const std::string url = o.baseUrl + o.path;
  SlistPtr headers;
  append(headers, "Content-Type: application/json");
  append(headers, "Expect:");
  if (!o.key.secret.empty()) append(headers, o.key.header + ": " + o.key.prefix + o.key.secret);
  if (!o.groupHeader.empty()) append(headers, o.groupHeader + ": " + o.group);
  append(headers, "X-Tollgate-Tier: probe");

  ProbeReport report;
  MultiPtr multi(curl_multi_init());
  if (!multi) throw std::runtime_error("probe: curl_multi_init failed");
  for (int conc : o.steps) {
    ProbeStep step;
    step.concurrency = conc;
    const auto start = Clock::now();
    const TimePoint end = addSaturating(start, fromSeconds(o.stepS));
    int active = 0;
    for (int i = 0; i < conc; ++i) {
      addHandle(multi.get(), makeEasy(url, headers.get()));
      ++active;
      ++step.sent;
    }
    while (active > 0) {
      int running = 0;
      if (CURLMcode rc = curl_multi_perform(multi.get(), &running); rc != CURLM_OK)
        throw std::runtime_error(std::string("probe: curl_multi_perform: ") + curl_multi_strerror(rc));
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi.get(), &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL* e = m->easy_handle;
        long status = 0;
        if (m->data.result != CURLE_OK || curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK) status = 0;
        if (status >= 200 && status < 300) ++step.ok;
        else if (status == 429) ++step.r429;
        else ++step.other;
        curl_multi_remove_handle(multi.get(), e);
        EasyPtr owned(e);
        if (Clock::now() < end) {
          addHandle(multi.get(), std::move(owned));  // closed loop: next request at once
          ++step.sent;
        } else {
          --active;
        }
      }
      if (active > 0)
        if (CURLMcode rc = curl_multi_poll(multi.get(), nullptr, 0, kPollMs, nullptr); rc != CURLM_OK)
          throw std::runtime_error(std::string("probe: curl_multi_poll: ") + curl_multi_strerror(rc));
    }
    step.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (step.share429() < 0.01 && step.okPerS() > report.softLimit) {
      report.softLimit = step.okPerS();
      report.softConcurrency = conc;
    }
    if (step.okPerS() > report.hardLimit) {
      report.hardLimit = step.okPerS();
      report.hardConcurrency = conc;
    }
    report.steps.push_back(step);
  }
  return report;
}
std::string formatProbeTable(const ProbeReport& r) {
  std::string out = "concurrency  seconds     sent   qps_sent    ok/s   429_share  other\n";
  char buf[160];
  for (const auto& s : r.steps) {
    std::snprintf(buf, sizeof buf, "%11d  %7.1f  %7ld  %9.1f  %6.1f  %9.1f%%  %5ld\n", s.concurrency, s.seconds, s.sent,
                  s.qps(), s.okPerS(), 100 * s.share429(), s.other);
    out += buf;
  }
  std::snprintf(buf, sizeof buf,
                "soft limit (highest ok/s with <1%% 429s): %.1f req/s at concurrency %d\n"
                "hard limit (highest ok/s reached):        %.1f req/s at concurrency %d\n",
                r.softLimit, r.softConcurrency, r.hardLimit, r.hardConcurrency);
  out += buf;
  return out;
}

}  // namespace tg
