import { createHash } from 'node:crypto';
import { assertWrite } from './store-arguments.js';

/**
 * Lua for the operations that must be atomic on Redis, and for a batch of key operations in one
 * command. A call touches keys of one slot only (one key on a Redis Cluster), so it runs there too.
 *
 * Values are stored as `<expiresAt>:<value>`, expiresAt in ms on the store's clock. A value is
 * absent once expiresAt <= now (ARGV[1], the store's clock); a real PEXPIRE of the TTL removes
 * it later as garbage collection (a test clock only runs ahead of real time, so the logical
 * expiry always comes first). A value that does not parse counts as absent.
 */
export interface RedisScript {
  readonly name: string;
  readonly lua: string;
  /** Its SHA-1 (hex), as EVALSHA names it. */
  readonly sha: string;
}

function script(name: string, lua: string): RedisScript {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

const LIVE_EXPIRY = `
local function live_expiry(raw, now)
  if not raw then return nil end
  local sep = string.find(raw, ':', 1, true)
  if not sep then return nil end
  local expires_at = tonumber(string.sub(raw, 1, sep - 1))
  -- NaN and infinities (which Lua's tonumber reads from 'nan', 'inf', '1e400') do not parse, as in get.
  if not expires_at or expires_at ~= expires_at or expires_at == math.huge or expires_at <= now then return nil end
  return expires_at, string.sub(raw, sep + 1)
end
`;

/**
 * The key operations of the store (`StoreOperation`), any number in one call: KEYS are their keys,
 * ARGV[1] is now, then per key its operation's letter and arguments: `g` get and `d` delete none;
 * `s` set and `a` setIfAbsent the encoded value and ttlMs; `i` increment by, ttlMs and a fresh
 * counter's `<expiresAt>:` (now + ttlMs, written by the caller: Lua prints such numbers in exponent
 * form). Answers one reply per key, in order: get the raw value (nil when absent; decoded by the
 * caller), setIfAbsent 1 when this call set the value, increment the counter's raw value, set and
 * delete 1. Increment is a fixed window: a live counter keeps its expiry (KEEPTTL), an absent or
 * expired one restarts at `by`; `r` (same arguments) renews it: the counter then ends ttlMs from now. An operation that fails (a key that is not a counter:
 * NOT_A_COUNTER; a write Redis refuses, as when out of memory) answers { message } and fails alone:
 * the others run and answer. One call is atomic, so its keys must share a slot on a Redis Cluster:
 * there the store sends one key per call.
 */
export const KEY_OPERATIONS = script(
  'keyOperations',
  `${LIVE_EXPIRY}
local now = tonumber(ARGV[1])
local arity = { g = 0, d = 0, s = 2, a = 2, i = 3, r = 3 }
local function operate(key, op, a, b, c)
  if op == 'g' then
    return redis.call('GET', key)
  elseif op == 's' then
    redis.call('SET', key, a, 'PX', b)
    return 1
  elseif op == 'a' then
    if live_expiry(redis.call('GET', key), now) then return 0 end
    redis.call('SET', key, a, 'PX', b)
    return 1
  elseif op == 'd' then
    redis.call('DEL', key)
    return 1
  end
  local raw = redis.call('GET', key)
  local expires_at, current = live_expiry(raw, now)
  if not expires_at then
    local fresh = c .. a
    redis.call('SET', key, fresh, 'PX', b)
    return fresh
  end
  if not string.match(current, '^-?%d+$') then return { 'NOT_A_COUNTER' } end
  local total = string.format('%d', tonumber(current) + tonumber(a))
  if op == 'r' then
    local renewed = c .. total
    redis.call('SET', key, renewed, 'PX', b)
    return renewed
  end
  local counted = string.sub(raw, 1, #raw - #current) .. total
  redis.call('SET', key, counted, 'KEEPTTL')
  return counted
end
local answers = {}
local at = 2
for i, key in ipairs(KEYS) do
  local op = ARGV[at]
  local n = arity[op]
  if not n then return redis.error_reply('UNKNOWN_OPERATION ' .. tostring(op)) end
  local ok, answer = pcall(operate, key, op, ARGV[at + 1], ARGV[at + 2], ARGV[at + 3])
  at = at + 1 + n
  if ok then
    answers[i] = answer
  elseif type(answer) == 'table' and answer.err then
    answers[i] = { answer.err }
  else
    answers[i] = { tostring(answer) }
  end
end
return answers
`,
);

/**
 * ARGV: now, the value expected, the new raw value (`<expiresAt>:<value>`; empty: delete the key) and its PX.
 * Answers 1 when the key's live value was the one expected (and was replaced), else 0.
 */
export const REPLACE_IF_EQUALS = script(
  'replaceIfEquals',
  `${LIVE_EXPIRY}
local expires_at, current = live_expiry(redis.call('GET', KEYS[1]), tonumber(ARGV[1]))
if not expires_at or current ~= ARGV[2] then return 0 end
if ARGV[3] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
end
return 1
`,
);

/** REPLACE_IF_EQUALS on the (prefixed) `redisKey` (VerificationStore.replaceIfEquals): the script, its KEYS and ARGV. */
export function replaceIfEqualsCall(
  redisKey: string,
  now: number,
  expected: string,
  value: string | null,
  ttlMs: number,
): [RedisScript, string[], string[]] {
  if (value !== null) assertWrite(value, ttlMs);
  const raw = value === null ? '' : `${now + ttlMs}:${value}`;
  return [REPLACE_IF_EQUALS, [redisKey], [String(now), expected, raw, String(Math.max(1, Math.ceil(ttlMs)))]];
}

/**
 * ARGV: now, limit, now + leaseMs. Takes the members of the sorted set due at or before now,
 * earliest first, and moves each to the lease's end in the same step.
 */
export const CLAIM_DUE = script(
  'claimDue',
  `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[3], member)
end
return due
`,
);
