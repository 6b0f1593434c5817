import { createHash } from 'node:crypto';

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
  readonly sha1: string;
}

function script(name: string, lua: string): RedisScript {
  return { name, lua, sha1: createHash('sha1').update(lua).digest('hex') };
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
 * ARGV[1] is now, then three per key: the operation's name and its two arguments (set and
 * setIfAbsent: the encoded value and ttlMs; increment: by and ttlMs; get and delete: two blanks).
 * Answers one reply per key, in order: get the raw value (nil when absent; decoded by the caller),
 * setIfAbsent 1 when this call set the value, increment { value, expiresAt } as strings, set and
 * delete 1. Increment is a fixed window: a live counter keeps its expiry (KEEPTTL), an absent or
 * expired one restarts at `by`. An operation that fails (a key that is not a counter:
 * NOT_A_COUNTER; a write Redis refuses, as when out of memory) answers { message } and fails alone:
 * the others run and answer. One call is atomic, so its keys must share a slot on a Redis Cluster:
 * there the store sends one key per call.
 */
export const KEY_OPERATIONS = script(
  'keyOperations',
  `${LIVE_EXPIRY}
local now = tonumber(ARGV[1])
local function operate(key, op, a, b)
  if op == 'get' then
    return redis.call('GET', key)
  elseif op == 'set' then
    redis.call('SET', key, a, 'PX', b)
    return 1
  elseif op == 'setIfAbsent' then
    if live_expiry(redis.call('GET', key), now) then return 0 end
    redis.call('SET', key, a, 'PX', b)
    return 1
  elseif op == 'delete' then
    redis.call('DEL', key)
    return 1
  elseif op == 'increment' then
    local by = tonumber(a)
    local expires_at, current = live_expiry(redis.call('GET', key), now)
    if not expires_at then
      expires_at = now + tonumber(b)
      redis.call('SET', key, string.format('%d:%d', expires_at, by), 'PX', b)
      return { string.format('%d', by), string.format('%d', expires_at) }
    end
    if not string.match(current, '^-?%d+$') then return { 'NOT_A_COUNTER' } end
    local value = tonumber(current) + by
    redis.call('SET', key, string.format('%d:%d', expires_at, value), 'KEEPTTL')
    return { string.format('%d', value), string.format('%d', expires_at) }
  end
  error({ err = 'UNKNOWN_OPERATION ' .. tostring(op) })
end
local answers = {}
for i, key in ipairs(KEYS) do
  local ok, answer = pcall(operate, key, ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1])
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
