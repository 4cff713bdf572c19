// One connection to a redis-server (hiredis, synchronous): connect with a timeout, AUTH (password or ACL
// user + password), SELECT, then commands and Lua scripts, each bounded by the same timeout. Any failure
// (refused, timed out, a protocol error) closes the connection and is reported as an error string that
// never holds the password; the next call reconnects. Not thread-safe: one thread owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace tg {

struct RedisEndpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  int database = 0;
  std::string user;      // ACL user, empty = the default user
  std::string password;  // empty = no AUTH (never logged)
  double timeoutS = 0.05;
};

// "host:port" for messages, an IPv6 address in brackets ("[::1]:6379", as the config takes it).
std::string redisAddress(const std::string& host, int port);

// A reply as a value: nil, integer, string (also status), error or array.
struct RedisReply {
  enum class Type { Nil, Integer, String, Error, Array };
  Type type = Type::Nil;
  long long integer = 0;
  std::string str;
  std::vector<RedisReply> elements;

  bool isError() const { return type == Type::Error; }
  // An integer reply, or a string holding one (Lua numbers come back as integers; floats as strings).
  double number(double fallback = 0) const;
};

class RedisConnection {
 public:
  explicit RedisConnection(RedisEndpoint endpoint);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  bool connected() const { return ctx_ != nullptr; }
  // Connects (and authenticates, selects) unless connected. False with lastError() set on failure.
  bool ensureConnected();
  void close();

  // A command as separate arguments (binary-safe). An error reply is a reply (type Error), not a failure;
  // a failure (connection lost, timeout) returns false, closes the connection and sets lastError().
  bool call(const std::vector<std::string>& args, RedisReply& out);
  // EVALSHA of a script loaded once per connection; NOSCRIPT (a restarted or flushed server) loads it
  // again and retries once.
  bool eval(const std::string& script, const std::vector<std::string>& keys, const std::vector<std::string>& args,
            RedisReply& out);

  const std::string& lastError() const { return lastError_; }
  std::uint64_t roundTrips() const { return roundTrips_; }  // commands sent (for the bench)

  // The file descriptor of the socket, -1 when closed (a subscriber polls it).
  int fd() const;
  // Subscriber use: sends a command without reading its reply (PING on a subscribed connection: the answer comes
  // among the pushes). False on failure (closed).
  bool send(const std::vector<std::string>& args);
  // Subscriber use: reads one pushed message, waiting at most the connection's timeout. False on timeout
  // (with timedOut set) or failure (closed).
  bool readPush(RedisReply& out, bool& timedOut);

 private:
  struct Lookup;
  bool fail(std::string why);
  // The host's addresses, looked up within the timeout (at least a second); nullopt with lastError() set.
  std::optional<std::vector<std::string>> resolve(const std::string& where);
  RedisEndpoint ep_;
  std::shared_ptr<Lookup> lookup_;  // a name lookup still running, or answered and not yet taken
  redisContext* ctx_ = nullptr;
  std::string lastError_;
  std::vector<std::pair<std::string, std::string>> loaded_;  // script text -> sha1, for this connection
  std::uint64_t roundTrips_ = 0;
};

}  // namespace tg
