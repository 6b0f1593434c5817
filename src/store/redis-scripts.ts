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
 * expired one restarts at `by`; a key holding something else is left as it is and answers
 * { 'NOT_A_COUNTER' }, failing that operation alone. One call is atomic, so its keys must share a
 * slot on a Redis Cluster: there the store sends one key per call.
 */
export const KEY_OPERATIONS = script(
  'keyOperations',
  `${LIVE_EXPIRY}
local now = tonumber(ARGV[1])
local answers = {}
for i, key in ipairs(KEYS) do
  local op, a, b = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
  if op == 'get' then
    answers[i] = redis.call('GET', key)
  elseif op == 'set' then
    redis.call('SET', key, a, 'PX', b)
    answers[i] = 1
  elseif op == 'setIfAbsent' then
    if live_expiry(redis.call('GET', key), now) then
      answers[i] = 0
    else
      redis.call('SET', key, a, 'PX', b)
      answers[i] = 1
    end
  elseif op == 'delete' then
    redis.call('DEL', key)
    answers[i] = 1
  elseif op == 'increment' then
    local by = tonumber(a)
    local expires_at, current = live_expiry(redis.call('GET', key), now)
    if expires_at then
      if string.match(current, '^-?%d+$') then
        local value = tonumber(current) + by
        redis.call('SET', key, string.format('%d:%d', expires_at, value), 'KEEPTTL')
        answers[i] = { string.format('%d', value), string.format('%d', expires_at) }
      else
        answers[i] = { 'NOT_A_COUNTER' }
      end
    else
      expires_at = now + tonumber(b)
      redis.call('SET', key, string.format('%d:%d', expires_at, by), 'PX', b)
      answers[i] = { string.format('%d', by), string.format('%d', expires_at) }
    end
  else
    return redis.error_reply('UNKNOWN_OPERATION ' .. tostring(op))
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
