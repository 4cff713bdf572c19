#include "probe.h"

#include "log.h"

#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <mutex>

namespace tg {
namespace {

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

CURL* makeEasy(const ProbeOptions& o, curl_slist* headers) {
  CURL* e = curl_easy_init();
  const std::string url = o.baseUrl + o.path;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, "{\"max_tokens\":1}");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
  return e;
}

}  // namespace

ProbeReport runProbe(const ProbeOptions& o) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Expect:");
  if (!o.key.secret.empty()) headers = curl_slist_append(headers, (o.key.header + ": " + o.key.prefix + o.key.secret).c_str());
  if (!o.groupHeader.empty()) headers = curl_slist_append(headers, (o.groupHeader + ": " + o.group).c_str());
  headers = curl_slist_append(headers, "X-Tollgate-Tier: probe");

  ProbeReport report;
  CURLM* multi = curl_multi_init();
  for (int conc : o.steps) {
    ProbeStep step;
    step.concurrency = conc;
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(o.stepS));
    int active = 0;
    for (int i = 0; i < conc; ++i) {
      curl_multi_add_handle(multi, makeEasy(o, headers));
      ++active;
      ++step.sent;
    }
    while (active > 0) {
      int running = 0;
      curl_multi_perform(multi, &running);
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL* e = m->easy_handle;
        long status = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && status < 300) ++step.ok;
        else if (status == 429) ++step.r429;
        else ++step.other;
        curl_multi_remove_handle(multi, e);
        if (std::chrono::steady_clock::now() < end) {
          curl_multi_add_handle(multi, e);  // closed loop: next request at once
          ++step.sent;
        } else {
          curl_easy_cleanup(e);
          --active;
        }
      }
      if (active > 0) curl_multi_poll(multi, nullptr, 0, 50, nullptr);
    }
    step.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  curl_multi_cleanup(multi);
  curl_slist_free_all(headers);
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
