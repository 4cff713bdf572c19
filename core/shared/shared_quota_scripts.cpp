#include "shared_quota_scripts.h"

namespace tg::shared_scripts {

// Shared by the scripts: Redis time in ms.
#define TG_REDIS_NOW "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

const char* const kLease = TG_REDIS_NOW R"LUA(
local inst = ARGV[1]
local tier = tonumber(ARGV[2])
local wantR = tonumber(ARGV[3])
local wantT = tonumber(ARGV[4])
local hintR = tonumber(ARGV[5])
local hintT = tonumber(ARGV[6])
local hintBR = tonumber(ARGV[7])
local reserve = tonumber(ARGV[8])
local usedR = tonumber(ARGV[9])
local ttl = tonumber(ARGV[10])
local deadMs = tonumber(ARGV[11])

local hintBT = tonumber(ARGV[12])
local burstS = tonumber(ARGV[13])
local s = redis.call('HMGET', KEYS[1], 'rate', 'trate', 'lr', 'lt', 'ts', 'blocked', 'learnt', 'cut', 'gw', 'gc', 'gp',
                     'br', 'bt', 'free')
local rate = tonumber(s[1]) or 0
local trate = tonumber(s[2]) or 0
local ts = tonumber(s[5]) or now
local blocked = tonumber(s[6]) or 0
local learnt = tonumber(s[7]) or 0
local cut = tonumber(s[8]) or 0
local gw = tonumber(s[9]) or now
local gc = tonumber(s[10]) or 0
local gp = tonumber(s[11]) or 0
-- A stated rate (configured, or limit/window from headers) wins over a learnt one.
local burstR = tonumber(s[12]) or 0
local burstT = tonumber(s[13]) or 0
local free = tonumber(s[14]) or 0
local wasUnknown = rate <= 0
if hintR > 0 then rate = hintR; learnt = 0; burstR = hintBR end
if hintT > 0 then trate = hintT; burstT = hintBT end
local dt = math.max(0, now - ts) / 1000
-- A learnt rate probes upwards between refusals (5% a second), as TCP's additive increase does.
if learnt == 1 and rate > 0 then rate = rate * (1 + 0.05 * math.min(dt, 1)) end
-- The bucket holds what the stated limit leaves room for (or burst seconds of a learnt rate).
if learnt == 1 or burstR <= 0 then burstR = math.max(1, rate * burstS) end
if burstT <= 0 then burstT = math.max(1, trate * burstS) end
-- A new bucket (or one lost with a restarted server) starts empty: no burst on top of what the upstream
-- already counted.
local lr = tonumber(s[3]) or 0
local lt = tonumber(s[4]) or 0
-- What went out before anyone knew the rate was counted by the upstream all the same: the bucket starts
-- that far in debt, so the first window holds no more than the rate allows.
if wasUnknown and rate > 0 then
  lr = -free
  free = 0
  dt = 0
end
lr = math.min(burstR, lr + rate * dt)
lt = math.min(burstT, lt + trate * dt)

-- A lease call is a sign of life too: a busy instance needs no separate heartbeat to count as alive (and after a
-- FLUSHALL its first lease call counts it again). With stats it is a heartbeat as well (the fleet view comes back
-- with the lease).
local stats = ARGV[14] or ''
redis.call('ZADD', KEYS[3], now, inst)
if stats ~= '' then redis.call('HSET', KEYS[4], inst, stats) end
-- Leases of instances that stopped heart-beating come back to the bucket.
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - deadMs)
for _, d in ipairs(dead) do
  local held = tonumber(redis.call('HGET', KEYS[2], d) or '0') or 0
  if held > 0 then lr = math.min(burstR, lr + held) end
  redis.call('HDEL', KEYS[2], d)
end
if usedR > 0 then
  local held = tonumber(redis.call('HINCRBYFLOAT', KEYS[2], inst, -usedR))
  if held < 0 then redis.call('HSET', KEYS[2], inst, 0) end
end

local grantR, grantT, waitMs, readyMs = 0, 0, 0, 0
if blocked > now then
  waitMs = blocked - now
elseif rate <= 0 then
  grantR = wantR
  if wantT > 0 then grantT = wantT end
else
  -- P0's reserve, where the bucket has room for it and two more requests: in a smaller bucket (a small
  -- limit) a reserve would make the others wait for a full bucket and waste the refill beyond it.
  local floor, floorT = 0, 0
  if tier > 0 and burstR * (1 - reserve) >= 2 then floor = reserve * burstR end
  if tier > 0 and trate > 0 and burstT * (1 - reserve) >= 2 * wantT then floorT = reserve * burstT end
  -- A lease is granted whole: at once when the bucket holds it, else reserved for when it will (the bucket
  -- goes into debt and later asks queue behind it). One round trip per lease however many instances wait.
  -- Reservations reach at most horizon seconds ahead (P1/P2 half as far as P0, so a P0 ask never queues
  -- behind more than a second of others' leases); beyond that, come back when the debt has shrunk.
  local horizon = 1
  if tier == 0 then horizon = 2 end
  local needR = floor + wantR - lr
  local needT = 0
  if wantT > 0 and trate > 0 then needT = floorT + wantT - lt end
  local aheadMs = 0
  if needR > 0 then aheadMs = needR / rate * 1000 end
  if needT > 0 then aheadMs = math.max(aheadMs, needT / trate * 1000) end
  if aheadMs <= horizon * 1000 then
    grantR = wantR
    if wantT > 0 then grantT = wantT end
    readyMs = math.ceil(aheadMs)
  else
    waitMs = math.ceil(aheadMs - horizon * 1000)
  end
end
if rate > 0 then lr = lr - grantR else free = free + grantR end
if trate > 0 then lt = lt - grantT end
if grantR > 0 then redis.call('HINCRBYFLOAT', KEYS[2], inst, grantR) end
-- Grants per second, for the rate a bare refusal cuts to.
if now - gw >= 1000 then
  if now - gw >= 2000 then gp = 0 else gp = gc end
  gc = 0
  gw = now - ((now - gw) % 1000)
end
gc = gc + grantR
redis.call('HSET', KEYS[1], 'rate', rate, 'trate', trate, 'lr', lr, 'lt', lt, 'ts', now, 'learnt', learnt,
           'gw', gw, 'gc', gc, 'gp', gp, 'br', burstR, 'bt', burstT, 'free', free)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
local live = redis.call('ZCOUNT', KEYS[3], now - deadMs, '+inf')
local blockedMs = 0
if blocked > now then blockedMs = blocked - now end
local out = {grantR, tostring(grantT), waitMs, tostring(rate), live, blockedMs, readyMs}
if stats ~= '' then
  for _, l in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], now - deadMs, '+inf')) do
    table.insert(out, l)
    table.insert(out, redis.call('HGET', KEYS[4], l) or '{}')
  end
end
return out
)LUA";

const char* const kGiveBack = TG_REDIS_NOW R"LUA(
local inst = ARGV[1]
local r = tonumber(ARGV[2])
local tk = tonumber(ARGV[3])
local usedR = tonumber(ARGV[4]) or 0
local s = redis.call('HMGET', KEYS[1], 'rate', 'trate', 'lr', 'lt', 'br', 'bt', 'gc', 'gp')
local rate = tonumber(s[1]) or 0
local trate = tonumber(s[2]) or 0
-- What the instance holds shrinks by what it gives back and by what it sent since its last ask: both are
-- no longer outstanding, and a dead instance's return must not hand out what it already spent.
local function release()
  if r + usedR <= 0 or redis.call('HEXISTS', KEYS[2], inst) == 0 then return end
  local held = tonumber(redis.call('HINCRBYFLOAT', KEYS[2], inst, -(r + usedR)))
  if held < 0 then redis.call('HSET', KEYS[2], inst, 0) end
end
if s[3] == false then
  release()
  return '0'
end
local lr = tonumber(s[3]) or 0
local lt = tonumber(s[4]) or 0
if rate > 0 then lr = math.min(tonumber(s[5]) or 1, lr + r) end
if trate > 0 then lt = math.min(tonumber(s[6]) or 1, lt + tk) end
-- Returned grants were never sent: the grants per second a bare refusal cuts the rate from leave them out
-- (this second's first, then the last second's).
local gc = tonumber(s[7]) or 0
local gp = tonumber(s[8]) or 0
local fromGc = math.min(gc, r)
gc = gc - fromGc
gp = math.max(0, gp - (r - fromGc))
redis.call('HSET', KEYS[1], 'lr', lr, 'lt', lt, 'gc', gc, 'gp', gp)
release()
return tostring(lr)
)LUA";

const char* const kWord = TG_REDIS_NOW R"LUA(
local waitMs = tonumber(ARGV[1])
local reason = ARGV[2]
local scope = ARGV[3]
local inst = ARGV[4]
local refusal = tonumber(ARGV[5])
local s = redis.call('HMGET', KEYS[1], 'blocked', 'rate', 'cut', 'gw', 'gc', 'gp', 'learnt')
local blocked = tonumber(s[1]) or 0
if waitMs > 0 and now + waitMs > blocked then
  blocked = now + waitMs
  redis.call('HSET', KEYS[1], 'blocked', blocked)
end
if refusal == 1 then
  local cut = tonumber(s[3]) or 0
  local learnt = tonumber(s[7]) or 0
  local rate = tonumber(s[2]) or 0
  if now - cut >= 1000 and (learnt == 1 or rate <= 0) then
    local gw = tonumber(s[4]) or now
    local gc = tonumber(s[5]) or 0
    local gp = tonumber(s[6]) or 0
    local frac = math.min(1, math.max(0, (now - gw) / 1000))
    local accepted = gc + gp * (1 - frac)
    local newRate = math.max(1, 0.85 * accepted)
    if rate <= 0 or newRate < rate then rate = newRate end
    redis.call('HSET', KEYS[1], 'rate', rate, 'learnt', 1, 'cut', now)
  end
end
local left = 0
if blocked > now then left = blocked - now end
if left > 0 then
  redis.call('PUBLISH', KEYS[2], scope .. '\t' .. left .. '\t' .. inst .. '\t' .. reason)
end
return left
)LUA";

const char* const kHeartbeat = TG_REDIS_NOW R"LUA(
local inst = ARGV[1]
local deadMs = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, inst)
redis.call('HSET', KEYS[2], inst, ARGV[2])
-- Forget instances gone for 20 heartbeats' worth of dead time (their leases were returned long before).
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - 20 * deadMs)
for _, g in ipairs(gone) do redis.call('HDEL', KEYS[2], g) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 20 * deadMs)
local out = {now}
local live = redis.call('ZRANGEBYSCORE', KEYS[1], now - deadMs, '+inf')
for _, l in ipairs(live) do
  table.insert(out, l)
  table.insert(out, redis.call('HGET', KEYS[2], l) or '{}')
end
return out
)LUA";

#undef TG_REDIS_NOW

}  // namespace tg::shared_scripts
