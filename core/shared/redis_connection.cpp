#include "redis_connection.h"

#include "secret.h"

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

namespace tg {

std::string redisAddress(const std::string& host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

timeval toTimeval(double s) {
  timeval tv{};
  const double clamped = std::max(0.001, s);
  tv.tv_sec = static_cast<time_t>(clamped);
  tv.tv_usec = static_cast<suseconds_t>((clamped - static_cast<double>(tv.tv_sec)) * 1e6);
  return tv;
}

bool isNumericHost(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

// The longest a name lookup may hold a connect: the call's own timeout, but not under a second (a first lookup
// that misses every cache takes some tens of ms, more than the 50-ms default).
constexpr double kMinLookupS = 1.0;

RedisReply convert(const redisReply* r) {
  RedisReply out;
  if (!r) return out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::String;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::Array;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default: break;  // nil
  }
  return out;
}

}  // namespace

double RedisReply::number(double fallback) const {
  if (type == Type::Integer) return static_cast<double>(integer);
  if (type == Type::String && !str.empty()) {
    char* end = nullptr;
    const double v = std::strtod(str.c_str(), &end);
    if (end && *end == '\0' && std::isfinite(v)) return v;
  }
  return fallback;
}

struct RedisConnection::Lookup {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
  int error = 0;  // errno of an EAI_SYSTEM failure (errno is the lookup thread's own)
  std::vector<std::string> addresses;  // numeric, in the resolver's order, each once
};

RedisConnection::RedisConnection(RedisEndpoint endpoint) : ep_(std::move(endpoint)) {}
RedisConnection::~RedisConnection() { close(); }

void RedisConnection::close() {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
  loaded_.clear();
}

bool RedisConnection::fail(std::string why) {
  lastError_ = std::move(why);
  close();
  return false;
}

int RedisConnection::fd() const { return ctx_ ? ctx_->fd : -1; }

std::optional<std::vector<std::string>> RedisConnection::resolve(const std::string& where) {
  if (isNumericHost(ep_.host)) return std::vector<std::string>{ep_.host};
  // hiredis resolves on the calling thread, where no timeout bounds getaddrinfo: a DNS server answering in 10 s
  // held the worker, and stop() with it, for 10 s. The lookup runs on a thread of its own; one that answers
  // late serves the next attempt instead of starting another.
  if (!lookup_) {
    auto fresh = std::make_shared<Lookup>();
    try {
      std::thread([l = fresh, host = ep_.host] {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
        const int error = errno;
        std::vector<std::string> addresses;
        for (const addrinfo* a = rc == 0 ? found : nullptr; a; a = a->ai_next) {
          char text[NI_MAXHOST];
          if (getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0 &&
              std::find(addresses.begin(), addresses.end(), text) == addresses.end())
            addresses.emplace_back(text);
        }
        if (found) freeaddrinfo(found);
        std::lock_guard lock(l->mu);
        l->done = true;
        l->rc = rc;
        l->error = error;
        l->addresses = std::move(addresses);
        l->cv.notify_all();
      }).detach();
    } catch (const std::system_error& e) {  // no thread to be had (a pids limit): this attempt fails, not the process
      fail("redis " + where + ": cannot start the name lookup: " + e.what());
      return std::nullopt;
    }
    lookup_ = std::move(fresh);
  }
  const std::shared_ptr<Lookup> l = lookup_;
  const double limitS = std::max(kMinLookupS, ep_.timeoutS);
  std::unique_lock lock(l->mu);
  if (!l->cv.wait_for(lock, std::chrono::duration<double>(limitS), [&] { return l->done; })) {
    char took[32];
    std::snprintf(took, sizeof took, "%.3g", limitS);
    fail("redis " + where + ": the name did not resolve within " + took + " s (DNS)");
    return std::nullopt;
  }
  lookup_.reset();  // each attempt after this one asks DNS afresh (an address moved by DNS is followed)
  if (l->rc != 0)
    fail("redis " + where + ": cannot resolve the name: " +
         (l->rc == EAI_SYSTEM ? std::string(std::strerror(l->error)) : std::string(gai_strerror(l->rc))));
  else if (l->addresses.empty())
    fail("redis " + where + ": the name resolved to no address");
  else
    return l->addresses;
  return std::nullopt;
}

bool RedisConnection::ensureConnected() {
  if (ctx_) return true;
  const std::string where = redisAddress(ep_.host, ep_.port);
  const auto addresses = resolve(where);
  if (!addresses) return false;
  std::string refused;
  for (const std::string& address : *addresses) {  // as hiredis would: the next address when one refuses
    ctx_ = redisConnectWithTimeout(address.c_str(), ep_.port, toTimeval(ep_.timeoutS));
    if (!ctx_) return fail("redis " + where + ": out of memory");
    if (!ctx_->err) break;
    refused = ctx_->errstr;
    close();
  }
  if (!ctx_) return fail("redis " + where + ": " + refused);
  if (redisSetTimeout(ctx_, toTimeval(ep_.timeoutS)) != REDIS_OK) return fail("redis " + where + ": cannot set timeout");
  // A peer gone without a word (a partition, a NAT that dropped the flow) is noticed by the kernel too.
  (void)redisEnableKeepAlive(ctx_);
  RedisReply r;
  if (!ep_.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!ep_.user.empty()) auth.push_back(ep_.user);
    auth.push_back(ep_.password);
    if (!call(auth, r)) return false;
    // The server's own words ("WRONGPASS invalid username-password pair") never hold the password.
    if (r.isError()) return fail("redis " + where + ": authentication refused: " + r.str);
    // Anything else than +OK is not a Redis that took the password (an echo server passed here, then failed
    // with an empty reason).
    if (r.type != RedisReply::Type::String || r.str != "OK")
      // Redacted before it is cut: a peer echoing the password would show its first part past any redaction.
      return fail("redis " + where + ": AUTH answered \"" + SecretRegistry::redact(r.str).substr(0, 40) +
                  "\", not OK: not a Redis server?");
  }
  if (ep_.database != 0) {
    if (!call({"SELECT", std::to_string(ep_.database)}, r)) return false;
    if (r.isError()) return fail("redis " + where + ": SELECT " + std::to_string(ep_.database) + ": " + r.str);
  }
  return true;
}

bool RedisConnection::call(const std::vector<std::string>& args, RedisReply& out) {
  if (!ensureConnected()) return false;
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  ++roundTrips_;
  ReplyPtr reply(static_cast<redisReply*>(
      redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data())));
  if (!reply) {
    const bool timeout = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    return fail("redis " + redisAddress(ep_.host, ep_.port) + " " + (args.empty() ? "" : args[0]) + ": " +
                (timeout ? "timed out" : (ctx_->errstr[0] ? ctx_->errstr : "connection lost")));
  }
  out = convert(reply.get());
  return true;
}

bool RedisConnection::eval(const std::string& script, const std::vector<std::string>& keys,
                           const std::vector<std::string>& args, RedisReply& out) {
  if (!ensureConnected()) return false;
  std::string sha;
  for (const auto& [text, s] : loaded_)
    if (text == script) sha = s;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (sha.empty()) {
      RedisReply loaded;
      if (!call({"SCRIPT", "LOAD", script}, loaded)) return false;
      // A proxy that refuses SCRIPT (LiteLLM #32232's trap) is an error to report, never a silent fallback.
      if (loaded.isError() && loaded.str.rfind("NOAUTH", 0) == 0)
        return fail("redis " + redisAddress(ep_.host, ep_.port) +
                    " asks for a password: set shared_quota.password_env (" + loaded.str + ")");
      if (loaded.isError() || loaded.type != RedisReply::Type::String)
        return fail("redis " + redisAddress(ep_.host, ep_.port) + " SCRIPT LOAD refused: " +
                    (loaded.str.empty() ? "an answer that is not a script's id: not a Redis server?" : loaded.str));
      sha = loaded.str;
      loaded_.emplace_back(script, sha);
    }
    std::vector<std::string> a{"EVALSHA", sha, std::to_string(keys.size())};
    a.insert(a.end(), keys.begin(), keys.end());
    a.insert(a.end(), args.begin(), args.end());
    if (!call(a, out)) return false;
    if (out.isError() && out.str.rfind("NOSCRIPT", 0) == 0) {  // the server lost its scripts: load again
      std::erase_if(loaded_, [&](const auto& l) { return l.second == sha; });
      sha.clear();
      continue;
    }
    return true;
  }
  return fail("redis EVALSHA: NOSCRIPT after loading the script");
}

bool RedisConnection::send(const std::vector<std::string>& args) {
  if (!ensureConnected()) return false;
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  ++roundTrips_;
  if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()) != REDIS_OK)
    return fail("redis " + (args.empty() ? std::string() : args[0]) + ": cannot send");
  for (int done = 0; !done;)  // bounded by the socket's send timeout
    if (redisBufferWrite(ctx_, &done) != REDIS_OK)
      return fail("redis " + (args.empty() ? std::string() : args[0]) + ": " +
                  (ctx_->errstr[0] ? ctx_->errstr : "connection lost"));
  return true;
}

bool RedisConnection::readPush(RedisReply& out, bool& timedOut) {
  timedOut = false;
  if (!ctx_) return fail("redis subscriber: not connected");
  void* raw = nullptr;
  if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) return fail("redis subscriber: protocol error");
  if (!raw) {
    pollfd p{ctx_->fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(ep_.timeoutS * 1000));
    if (n == 0) {
      timedOut = true;
      return false;
    }
    if (n < 0 && errno == EINTR) {
      timedOut = true;
      return false;
    }
    if (n < 0 || redisBufferRead(ctx_) != REDIS_OK) return fail("redis subscriber: connection lost");
    if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) return fail("redis subscriber: protocol error");
    if (!raw) {
      timedOut = true;  // part of a message: the rest comes with the next read
      return false;
    }
  }
  ReplyPtr reply(static_cast<redisReply*>(raw));
  out = convert(reply.get());
  return true;
}

}  // namespace tg
