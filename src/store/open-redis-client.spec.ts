import { describe, expect, it } from '@jest/globals';
import { RedisDriverMissingError } from './open-redis-client.js';

describe('RedisDriverMissingError: what a host reads when no Redis library the store may use is installed', () => {
  it.each([
    [['ioredis', 'redis'] as const, 'install one of: ioredis, redis (npm i ioredis)'],
    [['redis', 'ioredis'] as const, 'install one of: redis, ioredis (npm i redis)'],
    [['redis'] as const, 'install one of: redis (npm i redis)'],
  ])('tried %p: names each and the command installing the first', (drivers, words) => {
    const error = new RedisDriverMissingError(drivers);
    expect(error.message).toBe(`RedisStore: connecting by URL needs a Redis client library; ${words}`);
    expect(error.drivers).toStrictEqual(drivers);
  });
});
