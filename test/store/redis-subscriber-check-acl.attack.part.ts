/**
 * Attack (atk-221): a Redis ACL user (Redis 7: `acl-pubsub-default resetchannels`, a user reaches only the channels
 * it is granted) granted the channel the module publishes and subscribes to, `<keyPrefix>session-changed`, as it
 * was until this minor release. The subscriber now also SUBSCRIBEs, on every connection it opens, to a check channel
 * of its own (`<keyPrefix>subscriber-check:<uuid>`), which that user may not: the SUBSCRIBE is refused (NOPERM), the
 * whole subscriber connection is given up, and every status stream fails to subscribe, where it worked before the
 * upgrade. The check's PUBLISH being refused is taken as "no proof", but its SUBSCRIBE being refused breaks all.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

describe('attack: the check channel and an ACL user granted the channels the module uses', () => {
  it.each(['ioredis', 'redis'] as const)(
    'over %s: a store whose user may use <keyPrefix>session-changed still subscribes and hears',
    async (driver) => {
      const keyPrefix = `pv-acl-${randomUUID().slice(0, 8)}:`;
      const user = `atk221-${randomUUID().slice(0, 8)}`;
      const admin = new Redis(sharedRedisUrl());
      await admin.call(
        'ACL',
        'SETUSER',
        user,
        'on',
        '>secret',
        '~*',
        `&${keyPrefix}session-changed`,
        '+@all',
      );
      const url = new URL(sharedRedisUrl());
      url.username = user;
      url.password = 'secret';
      const store = new RedisStore({ url: url.toString(), keyPrefix, driver });
      try {
        const heard: string[] = [];
        const subscribed = await store
          .subscribe('session-changed', (message) => void heard.push(message))
          .then(
            () => 'subscribed',
            (error: unknown) => `refused: ${(error as Error).message}`,
          );
        expect(subscribed).toBe('subscribed');
        await store.publish('session-changed', 'req-1');
        await eventually(async () => expect(heard).toEqual(['req-1']), 5_000);
      } finally {
        await store.close();
        await admin.call('ACL', 'DELUSER', user);
        await admin.quit();
      }
    },
    20_000,
  );
});
