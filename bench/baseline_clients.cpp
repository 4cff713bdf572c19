#include "baseline_clients.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <queue>
#include <random>
#include <stdexcept>
#include <strings.h>

namespace tgbench {
namespace {

constexpr const char* kRetryAfter = "retry-after:";
constexpr const char* kRetryAfterMs = "retry-after-ms:";  // OpenAI's; the SDKs read it before Retry-After
constexpr double kMaxPollS = 0.02;

struct Transfer {
  CURL* easy = nullptr;
  int request = -1;
  double startS = 0;
  double retryAfterS = -1;  // from the response, -1 = none
  bool retryAfterFromMs = false;  // retryAfterS came from retry-after-ms: a plain Retry-After does not replace it
  std::string body;               // kept alive while libcurl sends it
};

size_t discardBody(char*, size_t size, size_t n, void*) { return size * n; }

size_t readHeader(char* data, size_t size, size_t n, void* user) {
  const size_t len = size * n;
  auto* t = static_cast<Transfer*>(user);
  const size_t mlen = std::char_traits<char>::length(kRetryAfterMs);
  const size_t klen = std::char_traits<char>::length(kRetryAfter);
  if (len > mlen && strncasecmp(data, kRetryAfterMs, mlen) == 0) {
    t->retryAfterS = std::atof(std::string(data + mlen, len - mlen).c_str()) / 1000.0;
    t->retryAfterFromMs = true;
  } else if (len > klen && strncasecmp(data, kRetryAfter, klen) == 0 && !t->retryAfterFromMs) {
    t->retryAfterS = std::atof(std::string(data + klen, len - klen).c_str());
  }
  return len;
}

void check(CURLcode c, const char* what) {
  if (c != CURLE_OK) throw std::runtime_error(std::string(what) + ": " + curl_easy_strerror(c));
}
void check(CURLMcode c, const char* what) {
  if (c != CURLM_OK) throw std::runtime_error(std::string(what) + ": " + curl_multi_strerror(c));
}

}  // namespace

const char* baselineName(BaselineStrategy s) {
  switch (s) {
    case BaselineStrategy::Naive: return "naive";
    case BaselineStrategy::Backoff: return "backoff+jitter";
    case BaselineStrategy::RetryAfter: return "retry-after";
  }
  return "?";
}

BaselineClient::BaselineClient(BaselineOptions options) : o_(std::move(options)) {}

RunLog BaselineClient::run(const std::vector<Arrival>& arrivals, double durationS, std::vector<TimedAction> actions) {
  RunLog log;
  log.strategy = baselineName(o_.strategy);
  log.durationS = durationS;
  log.requests.resize(arrivals.size());
  log.attempts.reserve(arrivals.size() * 4);
  const int groups = static_cast<int>(o_.groups.size());
  std::sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) { return a.atS < b.atS; });

  // Header lists per (group, tier).
  std::vector<curl_slist*> headers(static_cast<std::size_t>(groups * tg::kTierCount), nullptr);
  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < tg::kTierCount; ++t) {
      curl_slist* h = nullptr;
      h = curl_slist_append(h, "Content-Type: application/json");
      h = curl_slist_append(h, ("Authorization: Bearer " + o_.keys[static_cast<std::size_t>(g)]).c_str());
      h = curl_slist_append(h, ("X-RateLimit-Group: " + o_.groups[static_cast<std::size_t>(g)]).c_str());
      h = curl_slist_append(h, ("X-Tollgate-Tier: " + std::string(tg::tierName(static_cast<tg::Tier>(t)))).c_str());
      headers[static_cast<std::size_t>(g * tg::kTierCount + t)] = h;
    }
  const std::string url = o_.baseUrl + o_.path;

  CURLM* multi = curl_multi_init();
  if (!multi) throw std::runtime_error("curl_multi_init failed");
  std::vector<Transfer*> idle;
  std::vector<Transfer*> all;
  std::vector<int> inFlight(static_cast<std::size_t>(groups), 0);
  std::vector<std::deque<int>> queues(static_cast<std::size_t>(groups));
  using Due = std::pair<double, int>;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> retries;
  std::mt19937_64 rng(o_.seed);

  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  auto start = [&](int idx, double now) {
    Transfer* t;
    if (idle.empty()) {
      t = new Transfer;
      t->easy = curl_easy_init();
      if (!t->easy) throw std::runtime_error("curl_easy_init failed");
      all.push_back(t);
    } else {
      t = idle.back();
      idle.pop_back();
    }
    const Arrival& a = arrivals[static_cast<std::size_t>(idx)];
    t->request = idx;
    t->startS = now;
    t->retryAfterS = -1;
    t->retryAfterFromMs = false;
    CURL* e = t->easy;
    check(curl_easy_setopt(e, CURLOPT_URL, url.c_str()), "CURLOPT_URL");
    t->body = chatBody(a);
    check(curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.c_str()), "CURLOPT_POSTFIELDS");
    check(curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers[static_cast<std::size_t>(a.group * tg::kTierCount + int(a.tier))]),
          "CURLOPT_HTTPHEADER");
    check(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discardBody), "CURLOPT_WRITEFUNCTION");
    check(curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, readHeader), "CURLOPT_HEADERFUNCTION");
    check(curl_easy_setopt(e, CURLOPT_HEADERDATA, t), "CURLOPT_HEADERDATA");
    check(curl_easy_setopt(e, CURLOPT_PRIVATE, t), "CURLOPT_PRIVATE");
    check(curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 60000L), "CURLOPT_TIMEOUT_MS");
    check(curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L), "CURLOPT_NOSIGNAL");
    check(curl_multi_add_handle(multi, e), "curl_multi_add_handle");
    ++inFlight[static_cast<std::size_t>(a.group)];
    ++log.requests[static_cast<std::size_t>(idx)].attempts;
  };

  auto retryDelay = [&](int attempt, double retryAfterS) {
    switch (o_.strategy) {
      case BaselineStrategy::Naive: return 0.0;
      case BaselineStrategy::Backoff: {
        const double cap = std::min(o_.maxBackoffS, o_.baseBackoffS * std::pow(2.0, attempt - 1));
        return std::uniform_real_distribution<double>(0, cap)(rng);
      }
      case BaselineStrategy::RetryAfter: return std::max(0.0, retryAfterS);
    }
    return 0.0;
  };

  auto finish = [&](Transfer* t, CURLcode rc, double now) {
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    const int idx = t->request;
    const Arrival& a = arrivals[static_cast<std::size_t>(idx)];
    RequestLog& r = log.requests[static_cast<std::size_t>(idx)];
    log.attempts.push_back({now, a.group, a.tier, static_cast<int>(status), r.attempts > 1});
    --inFlight[static_cast<std::size_t>(a.group)];
    const bool ok = status >= 200 && status < 300;
    const bool retryable = status == 0 || status == tg::http::kTooManyRequests || status >= 500;
    if (ok || !retryable || r.attempts >= o_.maxAttempts) {
      r.finished = true;
      r.ok = ok;
      r.doneS = now;
      r.waitS = t->startS - a.atS;
    } else {
      retries.push({now + retryDelay(r.attempts, t->retryAfterS), idx});
    }
    curl_multi_remove_handle(multi, t->easy);
    idle.push_back(t);
  };

  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    log.requests[i].group = arrivals[i].group;
    log.requests[i].tier = arrivals[i].tier;
    log.requests[i].arrivalS = arrivals[i].atS;
  }

  std::size_t next = 0, nextAction = 0;
  for (;;) {
    double now = elapsed();
    if (now >= durationS) break;
    while (nextAction < actions.size() && actions[nextAction].atS <= now) actions[nextAction++].fn();
    while (next < arrivals.size() && arrivals[next].atS <= now) {
      queues[static_cast<std::size_t>(arrivals[next].group)].push_back(static_cast<int>(next));
      ++next;
    }
    while (!retries.empty() && retries.top().first <= now) {
      const int idx = retries.top().second;
      retries.pop();
      queues[static_cast<std::size_t>(arrivals[static_cast<std::size_t>(idx)].group)].push_front(idx);
    }
    for (int g = 0; g < groups; ++g) {
      auto& q = queues[static_cast<std::size_t>(g)];
      while (inFlight[static_cast<std::size_t>(g)] < o_.concurrencyPerGroup && !q.empty()) {
        start(q.front(), now);
        q.pop_front();
      }
    }
    int running = 0;
    check(curl_multi_perform(multi, &running), "curl_multi_perform");
    int left = 0;
    bool finished = false;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &t);
      finish(t, m->data.result, elapsed());
      finished = true;
    }
    if (finished) continue;  // retries or free slots may be ready now

    now = elapsed();
    double wake = std::min(durationS, now + kMaxPollS);
    if (next < arrivals.size()) wake = std::min(wake, arrivals[next].atS);
    if (!retries.empty()) wake = std::min(wake, retries.top().first);
    if (nextAction < actions.size()) wake = std::min(wake, actions[nextAction].atS);
    const int waitMs = std::max(0, static_cast<int>(std::ceil((wake - now) * 1000)));
    check(curl_multi_poll(multi, nullptr, 0, waitMs, nullptr), "curl_multi_poll");
  }

  for (Transfer* t : all) {
    curl_multi_remove_handle(multi, t->easy);
    curl_easy_cleanup(t->easy);
    delete t;
  }
  curl_multi_cleanup(multi);
  for (curl_slist* h : headers) curl_slist_free_all(h);
  return log;
}

}  // namespace tgbench
