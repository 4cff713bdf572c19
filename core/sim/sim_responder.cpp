#include "sim_responder.h"

#include "chat_body_scan.h"
#include "json_text.h"
#include "config_error.h"
#include "secret.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

namespace tg {
namespace {

constexpr int kBadRequest = 400;
constexpr int kNotFound = 404;
constexpr int kMethodNotAllowed = 405;
constexpr int kPayloadTooLarge = 413;
constexpr const char* kSimPrefix = "/__sim/";
constexpr const char* kTierHeader = "x-tollgate-tier";
constexpr const char* kAuthorization = "authorization";
constexpr const char* kApiKey = "x-api-key";
constexpr const char* kUserAgent = "user-agent";
constexpr const char* kTierNames[] = {"P0", "P1", "P2", "none"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? char(c | 0x20) : c; });
  return s;
}

// The API key a request carries: "Authorization: Bearer X" or "x-api-key: X"; empty when none.
std::string apiKeyOf(const HttpRequest& req) {
  if (const auto* a = req.header(kAuthorization)) {
    std::string_view v = *a;
    constexpr std::string_view bearer = "Bearer ";
    if (v.size() > bearer.size() && lower(std::string(v.substr(0, bearer.size()))) == "bearer ")
      return std::string(v.substr(bearer.size()));
    return std::string(v);
  }
  if (const auto* k = req.header(kApiKey)) return *k;
  return {};
}

int tierSlotOf(const HttpRequest& req) {
  const auto* t = req.header(kTierHeader);
  if (!t) return 3;
  const auto tier = parseTier(*t);
  return tier ? int(*tier) : 3;
}

// Distinct paths counted by name; beyond these (or longer than kMaxPathChars) they are counted together, so
// a client inventing paths cannot grow the stats without bound.
constexpr std::size_t kMaxCountedPaths = 256;
constexpr std::size_t kMaxPathChars = 256;
constexpr const char* kOtherPaths = "(other)";
constexpr const char* kDefaultModel = "tollgate-sim";

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

nlohmann::json SimResponder::Counters::toJson() const {
  return {{"requests", requests},
          {"ok", ok},
          {"r429", r429},
          {"r5xx", r5xx},
          {"other4xx", other4xx},
          {"resets", resets},
          {"tokens", tokens},
          {"early", early},
          {"streams_started", streamsStarted},
          {"streams_completed", streamsCompleted},
          {"streams_aborted", streamsAborted}};
}

SimResponder::History::Second& SimResponder::History::at(std::int64_t s) {
  auto& e = ring[static_cast<std::size_t>(s % kHistoryS)];
  if (e.s != s) e = {s, 0, 0};
  return e;
}

nlohmann::json SimResponder::History::toJson(std::int64_t nowS) const {
  auto out = nlohmann::json::array();
  for (std::int64_t s = std::max<std::int64_t>(0, nowS - kHistoryS + 1); s <= nowS; ++s) {
    const auto& e = ring[static_cast<std::size_t>(s % kHistoryS)];
    const bool valid = e.s == s;
    out.push_back({{"t", s}, {"ok", valid ? e.ok : 0}, {"r429", valid ? e.r429 : 0}});
  }
  return out;
}

SimResponder::SimResponder(SimConfig config, TimePoint start)
    : config_(std::move(config)), start_(start),
      headers_(config_.dialect, config_.retryAfter, config_.retryAfterFormat), rng_(config_.seed) {
  if (!config_.groups.count(config_.defaultGroup)) config_.groups[config_.defaultGroup] = SimGroupConfig{};
  for (const auto& [name, cfg] : config_.groups) {
    groupIndex_[name] = static_cast<int>(groups_.size());
    Group g;
    g.name = name;
    g.cfg = cfg;
    groups_.push_back(std::move(g));
  }
  // Lognormal from mean and p95: mean = exp(mu + s^2/2), p95 = exp(mu + 1.645 s).
  const double m = std::max(config_.latency.meanMs, 1e-6), q = std::max(config_.latency.p95Ms, m);
  const double disc = 1.645 * 1.645 - 2 * std::log(q / m);
  lognormalSigma_ = disc > 0 ? 1.645 - std::sqrt(disc) : 1.645;  // beyond p95/mean ~ 3.87 the spread saturates
  lognormalMu_ = std::log(m) - lognormalSigma_ * lognormalSigma_ / 2;
}

double SimResponder::sampleLatencyS() {
  const auto& l = config_.latency;
  if (l.meanMs <= 0) return 0;
  switch (l.distribution) {
    case LatencyDistribution::Fixed: return l.meanMs / 1000;
    case LatencyDistribution::Uniform: {
      // Symmetric around the mean, p95 at 90% of the half-width above it.
      const double h = std::min(l.meanMs, (l.p95Ms - l.meanMs) / 0.9);
      return std::uniform_real_distribution<double>(l.meanMs - h, l.meanMs + h)(rng_) / 1000;
    }
    case LatencyDistribution::Lognormal:
      return std::lognormal_distribution<double>(lognormalMu_, lognormalSigma_)(rng_) / 1000;
  }
  return 0;
}

bool SimResponder::chance(double share) {
  if (share >= 1) return true;
  if (share <= 0) return false;
  return std::uniform_real_distribution<double>(0, 1)(rng_) < share;
}

int SimResponder::groupFor(const HttpRequest& req) const {
  const int fallback = groupIndex_.at(config_.defaultGroup);
  switch (config_.groupBy) {
    case GroupBy::Header: {
      const auto* v = req.header(lower(config_.groupHeader));
      if (!v) return fallback;
      const auto it = groupIndex_.find(*v);
      return it == groupIndex_.end() ? fallback : it->second;
    }
    case GroupBy::Path: {
      const std::string_view path = req.path();
      int best = fallback;
      std::size_t bestLen = 0;
      for (std::size_t i = 0; i < groups_.size(); ++i)
        for (const auto& p : groups_[i].cfg.paths)
          if (p.size() > bestLen && path.substr(0, p.size()) == p) best = int(i), bestLen = p.size();
      return best;
    }
    case GroupBy::UserAgent: {
      const auto* ua = req.header(kUserAgent);
      if (!ua) return fallback;
      int best = fallback;
      std::size_t bestLen = 0;
      for (std::size_t i = 0; i < groups_.size(); ++i) {
        const auto& s = groups_[i].cfg.userAgent;
        if (s.size() > bestLen && ua->find(s) != std::string::npos) best = int(i), bestLen = s.size();
      }
      return best;
    }
  }
  return fallback;
}

SimResponder::Quota& SimResponder::quotaFor(Group& g, const std::string& keyId, TimePoint now) {
  auto& q = g.quotas[g.cfg.perKey ? keyId : std::string()];
  if (!q.requests) {
    const double burst = g.cfg.burst > 0 ? std::max(1.0, g.cfg.burst * g.scale) : 0;
    q.requests = makeLimiter(g.cfg.algorithm, {g.requestLimit(), g.cfg.windowS, burst}, now);
    if (g.cfg.tokensPerWindow > 0)
      q.tokens = makeLimiter(g.cfg.algorithm == LimitAlgorithm::LeakyBucket ? LimitAlgorithm::Gcra : g.cfg.algorithm,
                             {g.tokenLimit(), g.cfg.windowS, 0}, now);
    if (q.tokens && g.cfg.tokensStartSpent) q.tokens->consume(q.tokens->check(0, now).remaining, now);
  }
  return q;
}

void SimResponder::count(Group& g, KeyState& k, int tierSlot, std::uint64_t Counters::*field, TimePoint now) {
  ++(g.usage.c.*field);
  ++(k.c.*field);
  ++(g.tiers[tierSlot].*field);
  ++(total_.c.*field);
  ++(totalTiers_[tierSlot].*field);
  if (field == &Counters::ok || field == &Counters::r429) {
    const auto s = static_cast<std::int64_t>(toSeconds(now - start_));
    if (s < 0) return;
    auto& gs = g.history.at(s);
    auto& ts = totalHistory_.at(s);
    if (field == &Counters::ok) ++gs.ok, ++ts.ok;
    else ++gs.r429, ++ts.r429;
  }
}

SimReply SimResponder::jsonReply(int status, const nlohmann::json& body, bool close, double wallNowS) {
  SimReply r;
  r.closeAfter = close;
  r.bytes = writer_.serialize(status, {}, dumpJson(body), close, wallNowS);
  return r;
}

SimReply SimResponder::protocolError(int status, const std::string& message, double wallNowS) {
  return jsonReply(status, {{"error", {{"type", "bad_request"}, {"message", message}}}}, true, wallNowS);
}

SimReply SimResponder::handle(const HttpRequest& req, TimePoint now, double wallNowS) {
  if (req.target.rfind(kSimPrefix, 0) == 0) return handleControl(req, now, wallNowS);

  const int gi = groupFor(req);
  Group& g = groups_[static_cast<std::size_t>(gi)];
  const std::string apiKey = apiKeyOf(req);
  const std::string keyId = keyFingerprint(apiKey);
  KeyState& k = g.keys[keyId];
  const int tier = tierSlotOf(req);
  countPath(req.path());

  SimReply reply;
  reply.tierSlot = tier;
  reply.counted = true;
  reply.group = gi;
  reply.keyId = keyId;
  reply.decidedAt = now;
  reply.closeAfter = !req.keepAlive;
  reply.delayS = sampleLatencyS();
  count(g, k, tier, &Counters::requests, now);
  if (now >= k.earlyFrom && now < k.earlyUntil) count(g, k, tier, &Counters::early, now);
  g.usage.maxInFlight = std::max(g.usage.maxInFlight, ++g.usage.inFlight);
  total_.maxInFlight = std::max(total_.maxInFlight, ++total_.inFlight);

  HeaderList h;
  h.emplace_back(simheader::kGroup, g.name);

  // Scheduled trouble comes before quota: an outage or an injected error does not spend quota.
  for (const auto& e : effects_) {
    if (now >= e.until) continue;
    const auto& a = e.action;
    const bool groupMatches = a.group == "*" || a.group == g.name;
    if (a.kind == SimAction::Kind::Outage ||
        (a.kind == SimAction::Kind::Errors && groupMatches && chance(a.share))) {
      const int status = a.kind == SimAction::Kind::Outage ? http::kServiceUnavailable : a.status;
      count(g, k, tier, status >= 500 ? &Counters::r5xx : &Counters::other4xx, now);
      const std::string type = a.kind == SimAction::Kind::Outage ? "outage" : "injected_error";
      const nlohmann::json body = {{"error", {{"type", type}, {"message", "simulated " + type}}}};
      reply.bytes = writer_.serialize(status, h, dumpJson(body), reply.closeAfter, wallNowS);
      return reply;
    }
    if (a.kind == SimAction::Kind::ResetConnections && chance(a.share)) {
      count(g, k, tier, &Counters::resets, now);
      reply.resetConnection = true;
      reply.closeAfter = true;
      return reply;
    }
  }

  const ChatBodyFields fields = scanChatBody(req.body);
  const std::int64_t maxTokens = fields.maxTokens;
  const std::int64_t promptTokens = static_cast<std::int64_t>(req.body.size() / 4);
  const double tokenCost = static_cast<double>(maxTokens + promptTokens);

  if (g.cfg.maxConcurrent > 0 && g.admitted >= g.concurrencyLimit()) {
    // A concurrency limit knows no window: nothing to report but, when sent, a whole-second Retry-After.
    if (config_.retryAfter && config_.dialect != SimDialect::None) {
      h.emplace_back(simheader::kRetryAfter, "1");
      reply.announcedS = 1;
    }
    count(g, k, tier, &Counters::r429, now);
    if (config_.refuseAtOnce) reply.delayS = 0;
    const nlohmann::json body = {
        {"error",
         {{"type", "rate_limit_exceeded"},
          {"dimension", "concurrency"},
          {"message", "Too many requests in flight: group " + g.name + " allows " +
                          std::to_string(g.concurrencyLimit()) + " at once"}}}};
    reply.bytes = writer_.serialize(http::kTooManyRequests, h, dumpJson(body), reply.closeAfter, wallNowS);
    return reply;
  }

  if (g.limited()) {
    Quota& q = quotaFor(g, keyId, now);
    LimitDecision rd = q.requests->check(1, now);
    std::optional<LimitDecision> td;
    if (q.tokens) td = q.tokens->check(tokenCost, now);
    const bool tokensOk = !td || td->allowed;
    RateLimitHeaderInput in;
    in.group = g.name;
    in.windowS = g.cfg.windowS;
    in.wallNowS = wallNowS;
    if (rd.allowed && tokensOk) {
      q.requests->consume(1, now);
      in.requests = q.requests->check(0, now);
      if (q.tokens) {
        q.tokens->consume(tokenCost, now);
        in.tokens = q.tokens->check(0, now);
      }
      headers_.write(in, h);
      if (g.cfg.algorithm == LimitAlgorithm::LeakyBucket && !g.cfg.nodelay) {
        // nginx limit_req without nodelay: the excess waits its turn at the rate (one interval per request
        // ahead of it) before it is served.
        const double interval = g.cfg.windowS / std::max(1e-9, g.requestLimit());
        reply.delayS += std::max(0.0, in.requests.resetInS - interval);
      }
    } else {
      // Some limiters charge refused requests too (a sliding log, nginx-style counters fed by every hit):
      // a client that keeps asking stays refused.
      if (g.cfg.countRejected && !rd.allowed) q.requests->consume(1, now);
      const bool tooLarge = (td && td->retryAfterS == kNever) || rd.retryAfterS == kNever;
      if (tooLarge) {
        count(g, k, tier, &Counters::other4xx, now);
        const nlohmann::json body = {
            {"error",
             {{"type", "request_too_large"},
              {"message", "request needs " + fmt(tokenCost) + " tokens; group " + g.name + " allows " +
                              fmt(g.tokenLimit()) + " per " + fmt(g.cfg.windowS) + " s"}}}};
        reply.bytes = writer_.serialize(kPayloadTooLarge, h, dumpJson(body), reply.closeAfter, wallNowS);
        return reply;
      }
      in.requests = rd;
      in.tokens = td;
      in.limited = true;
      in.requestsBlocked = !rd.allowed;
      in.tokensBlocked = !tokensOk;
      in.retryAfterS = std::max(rd.allowed ? 0.0 : rd.retryAfterS, tokensOk ? 0.0 : td->retryAfterS);
      reply.announcedS = headers_.write(in, h);
      count(g, k, tier, &Counters::r429, now);
      if (config_.refuseAtOnce) reply.delayS = 0;
      const bool github = config_.dialect == SimDialect::GitHub;
      const std::string dim = in.requestsBlocked ? "requests" : "tokens";
      const double lim = in.requestsBlocked ? rd.limit : td->limit;
      nlohmann::json body = {
          {"error",
           {{"type", "rate_limit_exceeded"},
            {"dimension", dim},
            {"message", std::string(github ? "API rate limit exceeded" : "Rate limit exceeded") + ": " + dim +
                            " limit " + fmt(lim) + " per " + fmt(g.cfg.windowS) + " s (" +
                            std::string(limitAlgorithmName(g.cfg.algorithm)) + ") for group " + g.name +
                            "; retry in " + fmt(in.retryAfterS) + " s"},
            {"retry_after_s", in.retryAfterS}}}};
      reply.bytes = writer_.serialize(github ? http::kForbidden : http::kTooManyRequests, h, dumpJson(body),
                              reply.closeAfter, wallNowS);
      return reply;
    }
  }

  if (g.cfg.maxConcurrent > 0) {
    ++g.admitted;
    reply.holdsSlot = true;
  }
  const std::int64_t completion = maxTokens / 2;
  count(g, k, tier, &Counters::ok, now);
  const auto total = static_cast<std::uint64_t>(promptTokens + completion);
  g.usage.c.tokens += total;
  k.c.tokens += total;
  g.tiers[tier].tokens += total;
  total_.c.tokens += total;
  totalTiers_[tier].tokens += total;
  if (fields.stream) {
    // Same accounting as the answer below; only the shape differs. HTTP/1.0 cannot chunk: close-delimited.
    SimStreamRequest sr;
    sr.dialect = config_.dialect;
    const bool anthropic = config_.dialect == SimDialect::Anthropic;
    sr.id = (anthropic ? "msg_sim_" : "chatcmpl-sim-") + std::to_string(nextId_++);
    sr.model = fields.model.empty() ? kDefaultModel : fields.model;
    sr.createdS = static_cast<std::int64_t>(wallNowS);
    sr.promptTokens = promptTokens;
    sr.completionTokens = completion;
    sr.includeUsage = fields.includeUsage;
    sr.chunked = req.versionMinor >= 1;
    if (!sr.chunked) reply.closeAfter = true;
    reply.stream = SimStreamBuilder::build(sr, config_.stream);
    reply.bytes = writer_.serializeStreamHead(http::kOk, h, sr.chunked, reply.closeAfter, wallNowS);
    return reply;
  }
  const auto id = nextId_++;
  nlohmann::json body = {
      {"id", "sim-" + std::to_string(id)},
      {"group", g.name},
      {"usage",
       {{"prompt_tokens", promptTokens}, {"completion_tokens", completion}, {"total_tokens", total}}}};
  if (config_.dialect == SimDialect::OpenAi) {
    // The shape of a chat.completion, so real SDKs pointed at the simulator read an ordinary answer.
    body["object"] = "chat.completion";
    body["created"] = static_cast<std::int64_t>(wallNowS);
    body["model"] = fields.model.empty() ? kDefaultModel : fields.model;
    body["choices"] = nlohmann::json::array(
        {{{"index", 0},
          {"message", {{"role", "assistant"}, {"content", std::string(static_cast<std::size_t>(std::min<std::int64_t>(completion, 64)), 'x')}}},
          {"finish_reason", "stop"}}});
  } else if (config_.dialect == SimDialect::Anthropic) {
    // A Message, as the anthropic SDK reads one: its usage is input and output tokens, no total.
    body["id"] = "msg_sim_" + std::to_string(id);
    body["type"] = "message";
    body["role"] = "assistant";
    body["model"] = fields.model.empty() ? kDefaultModel : fields.model;
    body["content"] = nlohmann::json::array(
        {{{"type", "text"}, {"text", std::string(static_cast<std::size_t>(std::min<std::int64_t>(completion, 64)), 'x')}}});
    body["stop_reason"] = "end_turn";
    body["stop_sequence"] = nullptr;
    body["usage"] = {{"input_tokens", promptTokens}, {"output_tokens", completion}};
  }
  reply.bytes = writer_.serialize(http::kOk, h, dumpJson(body), reply.closeAfter, wallNowS);
  return reply;
}

void SimResponder::countPath(std::string_view path) {
  auto it = paths_.find(path);
  if (it == paths_.end()) {
    const bool named = path.size() <= kMaxPathChars && paths_.size() < kMaxCountedPaths;
    it = paths_.try_emplace(std::string(named ? path : std::string_view(kOtherPaths)), 0).first;
  }
  ++it->second;
}

void SimResponder::countStream(const SimReply& reply, std::uint64_t Counters::*field) {
  if (!reply.counted || reply.group < 0 || reply.group >= int(groups_.size())) return;
  auto& g = groups_[static_cast<std::size_t>(reply.group)];
  count(g, g.keys[reply.keyId], std::clamp(reply.tierSlot, 0, kTierSlots - 1), field, reply.decidedAt);
}

void SimResponder::onStreamStarted(const SimReply& reply) { countStream(reply, &Counters::streamsStarted); }

void SimResponder::onStreamAborted(const SimReply& reply) { countStream(reply, &Counters::streamsAborted); }

void SimResponder::retire(const SimReply& reply) {
  if (!reply.counted || reply.group < 0 || reply.group >= int(groups_.size())) return;
  auto& g = groups_[static_cast<std::size_t>(reply.group)];
  g.usage.inFlight = std::max(0, g.usage.inFlight - 1);
  total_.inFlight = std::max(0, total_.inFlight - 1);
  if (reply.holdsSlot) g.admitted = std::max(0, g.admitted - 1);
}

void SimResponder::onSent(const SimReply& reply, TimePoint now) {
  retire(reply);
  if (reply.streamed()) countStream(reply, &Counters::streamsCompleted);
  if (!reply.counted || reply.announcedS <= 0) return;
  auto& g = groups_[static_cast<std::size_t>(reply.group)];
  auto& k = g.keys[reply.keyId];
  const TimePoint until = reply.decidedAt + fromSeconds(reply.announcedS);
  if (now < k.earlyUntil) {
    k.earlyUntil = std::max(k.earlyUntil, until);
  } else {
    // Requests that arrive within the grace were sent before the client could have read this 429.
    k.earlyFrom = now + fromSeconds(config_.earlyGraceMs / 1000);
    k.earlyUntil = until;
  }
}

void SimResponder::onDropped(const SimReply& reply) { retire(reply); }

std::vector<int> SimResponder::groupsMatching(const std::string& group) const {
  std::vector<int> out;
  if (group == "*") {
    for (std::size_t i = 0; i < groups_.size(); ++i) out.push_back(int(i));
    return out;
  }
  const auto it = groupIndex_.find(group);
  if (it == groupIndex_.end()) throw std::invalid_argument("unknown group \"" + group + "\"");
  out.push_back(it->second);
  return out;
}

void SimResponder::scaleQuota(const std::string& group, double factor, TimePoint now) {
  if (!(factor > 0)) throw std::invalid_argument("scale factor must be > 0");
  for (int i : groupsMatching(group)) {
    auto& g = groups_[static_cast<std::size_t>(i)];
    if (!g.limited() && g.cfg.maxConcurrent <= 0) continue;
    g.scale = factor;  // max_concurrent too: requests already admitted over a lowered one finish
    if (!g.limited()) continue;
    for (auto& [key, q] : g.quotas) {
      q.requests->setLimit(g.requestLimit(), now);
      if (q.tokens) q.tokens->setLimit(g.tokenLimit(), now);
    }
  }
}

void SimResponder::setLimit(const std::string& group, double limitPerWindow, TimePoint now) {
  if (!(limitPerWindow >= 1)) throw std::invalid_argument("limit must be at least 1 request per window");
  for (int i : groupsMatching(group)) {
    auto& g = groups_[static_cast<std::size_t>(i)];
    // The new limit is the base from now on; a later scale_quota applies to it.
    if (g.limited() && g.cfg.burst > 0) g.cfg.burst *= limitPerWindow / g.requestLimit();
    g.cfg.tokensPerWindow *= g.scale;
    g.cfg.maxConcurrent = g.concurrencyLimit();
    g.cfg.limit = limitPerWindow;
    g.scale = 1;
    for (auto& [key, q] : g.quotas) {
      q.requests->setLimit(g.requestLimit(), now);
      if (q.tokens) q.tokens->setLimit(g.tokenLimit(), now);
    }
  }
}

void SimResponder::apply(const SimAction& a, TimePoint now) {
  switch (a.kind) {
    case SimAction::Kind::ScaleQuota: scaleQuota(a.group, a.factor, now); return;
    case SimAction::Kind::SetLimit: setLimit(a.group, a.limit, now); return;
    case SimAction::Kind::Errors:
      if (a.group != "*") groupsMatching(a.group);  // validates
      [[fallthrough]];
    case SimAction::Kind::ResetConnections:
    case SimAction::Kind::Outage:
      effects_.erase(std::remove_if(effects_.begin(), effects_.end(), [&](const Effect& e) { return now >= e.until; }),
                     effects_.end());
      effects_.push_back({a, now + fromSeconds(a.durationS)});
      return;
  }
}

TimePoint SimResponder::runSchedule(TimePoint now) {
  while (nextSchedule_ < config_.schedule.size()) {
    const auto& a = config_.schedule[nextSchedule_];
    const TimePoint due = start_ + fromSeconds(a.atS);
    if (due > now) return due;
    try {
      apply(a, now);
    } catch (const std::invalid_argument&) {
      // Validated at load; a group can only be missing if the config changed underneath.
    }
    ++nextSchedule_;
  }
  return TimePoint::max();
}

SimReply SimResponder::handleControl(const HttpRequest& req, TimePoint now, double wallNowS) {
  const bool close = !req.keepAlive;
  const std::string_view path = req.path();
  if (path == "/__sim/stats") {
    if (req.method != "GET") return jsonReply(kMethodNotAllowed, {{"error", "use GET"}}, close, wallNowS);
    return jsonReply(http::kOk, stats(now), close, wallNowS);
  }
  if (path == "/__sim/reset") {
    if (req.method != "POST") return jsonReply(kMethodNotAllowed, {{"error", "use POST"}}, close, wallNowS);
    resetStats(now);
    return jsonReply(http::kOk, {{"ok", true}}, close, wallNowS);
  }
  if (path == "/__sim/control") {
    if (req.method != "POST") return jsonReply(kMethodNotAllowed, {{"error", "use POST"}}, close, wallNowS);
    // Outside bytes: depth-limited, so neither parsing nor an error message about the value recurses deeply.
    const JsonParse body = parseJsonText(req.body);
    if (!body.ok())
      return jsonReply(kBadRequest, {{"error", "body is not JSON: " + body.error}}, close, wallNowS);
    try {
      apply(SimAction::fromJson(body.value, "control request", "", false), now);
    } catch (const std::exception& e) {
      return jsonReply(kBadRequest, {{"error", e.what()}}, close, wallNowS);
    }
    return jsonReply(http::kOk, {{"ok", true}}, close, wallNowS);
  }
  return jsonReply(kNotFound, {{"error", "unknown simulator endpoint"}}, close, wallNowS);
}

nlohmann::json SimResponder::stats(TimePoint now) const {
  const double uptime = std::max(0.0, toSeconds(now - start_));
  const auto nowS = static_cast<std::int64_t>(uptime);
  auto tiersJson = [](const std::array<Counters, kTierSlots>& t) {
    nlohmann::json j = nlohmann::json::object();
    for (int i = 0; i < kTierSlots; ++i) j[kTierNames[i]] = t[static_cast<std::size_t>(i)].toJson();
    return j;
  };
  nlohmann::json totals = total_.c.toJson();
  totals["in_flight"] = total_.inFlight;
  totals["max_concurrent"] = total_.maxInFlight;
  totals["tiers"] = tiersJson(totalTiers_);
  totals["history"] = totalHistory_.toJson(nowS);
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& g : groups_) {
    nlohmann::json j = g.usage.c.toJson();
    j["in_flight"] = g.usage.inFlight;
    j["max_concurrent"] = g.usage.maxInFlight;
    j["algorithm"] = limitAlgorithmName(g.cfg.algorithm);
    j["limit"] = g.limited() ? nlohmann::json(g.requestLimit()) : nlohmann::json(nullptr);
    j["tokens_limit"] = g.cfg.tokensPerWindow > 0 ? nlohmann::json(g.tokenLimit()) : nlohmann::json(nullptr);
    j["window_s"] = g.cfg.windowS;
    if (g.cfg.maxConcurrent > 0) {
      j["concurrency_limit"] = g.concurrencyLimit();
      j["admitted_in_flight"] = g.admitted;
    }
    j["scale"] = g.scale;
    j["tiers"] = tiersJson(g.tiers);
    j["history"] = g.history.toJson(nowS);
    nlohmann::json keys = nlohmann::json::object();
    for (const auto& [id, k] : g.keys) keys[id] = k.c.toJson();
    j["keys"] = std::move(keys);
    groups[g.name] = std::move(j);
  }
  return {{"uptime_s", uptime},
          {"dialect", simDialectName(config_.dialect)},
          {"totals", std::move(totals)},
          {"paths", paths_},
          {"groups", std::move(groups)}};
}

void SimResponder::resetStats(TimePoint now) {
  total_.c = {};
  total_.maxInFlight = total_.inFlight;
  totalHistory_ = {};
  totalTiers_ = {};
  paths_.clear();
  for (auto& g : groups_) {
    g.usage.c = {};
    g.usage.maxInFlight = g.usage.inFlight;
    g.tiers = {};
    g.history = {};
    for (auto& [id, k] : g.keys) k.c = {};
  }
}

}  // namespace tg
