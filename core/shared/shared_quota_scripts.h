// The Lua scripts that make every shared-quota decision atomic on the Redis clock (redis.call('TIME')), so
// instances whose clocks disagree still agree on the quota. Loaded once per connection (EVALSHA; NOSCRIPT
// loads them again). Documented in docs/SHARED_QUOTA.md.
#pragma once

namespace tg::shared_scripts {

// Admission: refill the scope's request and token buckets, then grant up to the asked lease.
// KEYS: scope hash, lease hash, instances zset, stats hash.
// ARGV: instance, tier, want requests, want tokens, rate hint (req/s, 0 = none), token rate hint (tokens/s),
//       request burst (with the rate hint), P0 reserve share, requests used since the last call, key ttl ms,
//       dead-after ms, token burst (with the token rate hint), burst seconds (for a learnt rate), this
//       instance's stats JSON or "" (with stats the call is a heartbeat too, see kHeartbeat).
// A lease is granted whole, usable at once or reserved for when the bucket will hold it (ready ms, at most
// a second ahead; beyond that nothing is granted and wait ms says when to ask again).
// Returns {granted requests, granted tokens (string), wait ms, rate (string), live instances, blocked ms,
//          ready ms}, then with stats the live instances and their stats as kHeartbeat does (instance, JSON).
extern const char* const kLease;

// Gives back what a lease did not use. KEYS: scope hash, lease hash. ARGV: instance, requests, tokens,
// requests sent since the last ask (they leave the instance's outstanding lease, as with a lease call).
// Returns the bucket level after it (string).
extern const char* const kGiveBack;

// The upstream's word: hold the scope for wait ms (Retry-After, an exhausted window), and tell the fleet.
// For a refusal that states no quota (a bare 429), the fleet's accepted rate of the last second sets the
// scope's rate (cut to 85%, at most once a second). KEYS: scope hash, word channel.
// ARGV: wait ms, reason, scope name (group \t fingerprint), instance, refusal (0/1).
// Returns the ms the scope is held from now.
extern const char* const kWord;

// Heartbeat: this instance is alive (zset score = Redis ms), its stats for the fleet view; forgets
// instances dead for long. KEYS: instances zset, stats hash. ARGV: instance, stats JSON, dead-after ms.
// Returns {redis ms, then pairs of instance id and stats JSON of every live instance}.
extern const char* const kHeartbeat;

}  // namespace tg::shared_scripts
