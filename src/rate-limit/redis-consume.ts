/**
 * The Redis rate-limit script: one decision, atomically (both windows, the refusal count and the ban).
 * KEYS[1]: the subject's hash. ARGV: now, perMinute, perDay, banAfter, banMs, count (1 consume, 0 peek).
 * Returns {outcome (0 allowed, 1 limited, 2 banned), minuteCount, dayCount, refusedBy (0 minute, 1 day,
 * -1 none), retryAfterMs, bannedUntil}. Same rules as memory-store.ts; both pass one contract suite.
 */
export const CONSUME_SCRIPT = `
local now = tonumber(ARGV[1])
local perMinute, perDay = tonumber(ARGV[2]), tonumber(ARGV[3])
local banAfter, banMs = tonumber(ARGV[4]), tonumber(ARGV[5])
local count = ARGV[6] == '1'

local minuteStart = now - (now % 60000)
local dayStart = now - (now % 86400000)
local minuteEnd, dayEnd = minuteStart + 60000, dayStart + 86400000

local s = redis.call('HMGET', KEYS[1], 'ms', 'mc', 'mr', 'ds', 'dc', 'dr', 'bu')
local ms, mc, mr = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0
local ds, dc, dr = tonumber(s[4]) or 0, tonumber(s[5]) or 0, tonumber(s[6]) or 0
local bu = tonumber(s[7]) or 0
if ms ~= minuteStart then ms, mc, mr = minuteStart, 0, 0 end
if ds ~= dayStart then ds, dc, dr = dayStart, 0, 0 end

local outcome, refusedBy, retry = 0, -1, 0
if bu > now then
  outcome, retry = 2, bu - now
elseif mc < perMinute and dc < perDay then
  if count then mc, dc = mc + 1, dc + 1 end
else
  -- Of the exhausted windows, the one that frees last (on a tie, the minute, as the memory store).
  if dc >= perDay and (mc < perMinute or dayEnd > minuteEnd) then refusedBy = 1 else refusedBy = 0 end
  local refused
  if refusedBy == 0 then mr = mr + 1; refused = mr else dr = dr + 1; refused = dr end
  if count and refused > banAfter then
    bu, mr, dr = now + banMs, 0, 0
    outcome, retry = 2, banMs
  else
    outcome = 1
    if refusedBy == 0 then retry = minuteEnd - now else retry = dayEnd - now end
  end
end

if count then
  redis.call('HSET', KEYS[1], 'ms', ms, 'mc', mc, 'mr', mr, 'ds', ds, 'dc', dc, 'dr', dr, 'bu', bu)
  redis.call('PEXPIREAT', KEYS[1], math.max(dayEnd, bu))
end
return {outcome, mc, dc, refusedBy, retry, bu}
`
