/**
 * The meters of a lost record's rebuild at their window's bounds, on the module's clock: past a caller's
 * reads the status route answers 429 with a `Retry-After` in seconds that is the real wait, and the guard
 * answers without a read; one tick before the window ends still so, at its end the next handle is rebuilt
 * from the API. The records are lost by a restart on a new MemoryStore (a deploy), the account and keys kept.
 * With the status cache on and off: a rebuilt record is as fresh as a poll, so it is never read a second time
 * (without the cache every refresh reads upstream).
 */
import { describe, expect, it } from '@jest/globals';
import { GUARD_READS_PER_OWNER } from '../../src/guard/guard-read-meter.js';
import { STATUS_READS_PER_CALLER } from '../../src/protection/status-read-meter.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { as, lostRecordsSuite, numbersFrom } from './guard-host.js';

const GETS = 'GET /v1/verify/:id';

const phoneNumber = numbersFrom('+7916448');

const CACHES = [
  ['status cache on', {}],
  ['status cache off', { statusCache: { enabled: false } }],
] as const;

describe.each(PLATFORMS.flatMap((p) => CACHES.map(([name, module]) => [p, name, module] as const)))(
  'rebuild meters at their bounds (%s, %s)',
  (platform: Platform, _cache, module) => {
    const lost = lostRecordsSuite(platform, module);
    const { suite } = lost;

    /** `count` handles of `user`'s free starts, then a restart on a new MemoryStore with the default limits. */
    async function lostHandles(count: number, user: string): Promise<string[]> {
      const account = await suite.sb.createAccount({ balance: 100 });
      await lost.boot(account);
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await lost.start(phoneNumber(), as(user)));
      await lost.deploy(account);
      return ids;
    }

    it("the status route: a caller's reads past the meter are 429 with Retry-After the window in seconds; at its end the next handle is rebuilt", async () => {
      const { points, windowMs } = STATUS_READS_PER_CALLER;
      const ids = await lostHandles(points + 1, 'mallory');
      const status = (id: string) =>
        call(suite.host!.url, 'GET', `/verification/status/${id}`, undefined, as('mallory'));
      const before = suite.sb.requestCount(GETS);
      for (const id of ids.slice(0, points)) expect((await status(id)).status).toBe(200);
      expect(suite.sb.requestCount(GETS) - before).toBe(points);

      const last = ids[points]!;
      const refused = await status(last);
      expect([refused.status, refused.body.error_code]).toEqual([429, 'rate_limit_exceeded']);
      expect(refused.headers.get('retry-after')).toBe(String(windowMs / 1000));
      await suite.sb.advance(windowMs - 1);
      expect((await status(last)).status).toBe(429);
      expect(suite.sb.requestCount(GETS) - before).toBe(points);

      await suite.sb.advance(1);
      const rebuilt = await status(last);
      expect([rebuilt.status, rebuilt.body.status]).toEqual([200, 'sent']);
      expect(suite.sb.requestCount(GETS) - before).toBe(points + 1);
    });

    it("the guard: an owner's rebuilds past its meter read nothing upstream until the window ends, not a tick before", async () => {
      const { points, windowMs } = GUARD_READS_PER_OWNER;
      const ids = await lostHandles(points + 1, 'mallory');
      const guarded = (id: string) =>
        call(suite.host!.url, 'POST', '/account/phone', {}, as('mallory', { 'x-verification-id': id }));
      const before = suite.sb.requestCount(GETS);
      // Each handle is a pending reverse flash call: rebuilt, it is not verified (409).
      for (const id of ids.slice(0, points)) expect((await guarded(id)).status).toBe(409);
      expect(suite.sb.requestCount(GETS) - before).toBe(points);

      const last = ids[points]!;
      // Past the meter the guard knows nothing of a lost record: refused as unknown, without a read.
      const unknown = await guarded(last);
      expect([unknown.status, unknown.body.error_code]).toEqual([403, 'phone_verification_required']);
      await suite.sb.advance(windowMs - 1);
      expect((await guarded(last)).status).toBe(403);
      expect(suite.sb.requestCount(GETS) - before).toBe(points);

      await suite.sb.advance(1);
      const rebuilt = await guarded(last);
      expect([rebuilt.status, rebuilt.body.error_code]).toEqual([409, 'phone_not_verified']);
      expect(suite.sb.requestCount(GETS) - before).toBe(points + 1);
    });
  },
);
