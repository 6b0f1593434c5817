import { createHash } from 'node:crypto';

/**
 * Lua for the operations that must be atomic on Redis. Every script touches exactly one key
 * (KEYS[1]), so it runs on Redis Cluster whatever slot the key hashes to.
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

/** ARGV: now, encoded value, ttlMs (integer). Returns 1 when this call set the value. */
export const SET_IF_ABSENT = script(
  'setIfAbsent',
  `${LIVE_EXPIRY}
if live_expiry(redis.call('GET', KEYS[1]), tonumber(ARGV[1])) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`,
);

/**
 * ARGV: now, by, ttlMs (integer). Fixed window: a live counter keeps its expiry (KEEPTTL), an
 * absent or expired one restarts at `by`. Returns { value, expiresAt } as strings, or the error
 * NOT_A_COUNTER when the key holds something else.
 */
export const INCREMENT = script(
  'increment',
  `${LIVE_EXPIRY}
local now = tonumber(ARGV[1])
local by = tonumber(ARGV[2])
local expires_at, current = live_expiry(redis.call('GET', KEYS[1]), now)
if expires_at then
  if not string.match(current, '^-?%d+$') then return redis.error_reply('NOT_A_COUNTER') end
  local value = tonumber(current) + by
  redis.call('SET', KEYS[1], string.format('%d:%d', expires_at, value), 'KEEPTTL')
  return { string.format('%d', value), string.format('%d', expires_at) }
end
expires_at = now + tonumber(ARGV[3])
redis.call('SET', KEYS[1], string.format('%d:%d', expires_at, by), 'PX', ARGV[3])
return { string.format('%d', by), string.format('%d', expires_at) }
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
