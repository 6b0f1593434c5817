/**
 * History at its bounds, as support reads it: `list`'s `from` and `to` take an entry whose time equals
 * them; an owner's erasure keeps that owner's entries in a number's ring, without the owner, until their
 * own end (`at` + retentionDays, not a new retention from the erasure); and a number's erasure takes every
 * entry of its ring whatever `history` says now (made smaller, or off, since the entries were written); an
 * entry the store refuses is lost and logged, and the verification goes on.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { CapturingLogger } from '../support/log-capture.js';
import { dumpMemoryStore, dumpRedisPrefix } from '../support/store-dump.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const DAY = 86_400_000;

describe.each(PLATFORMS)('history at its bounds (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let store: VerificationStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  let serial = 0;
  const phoneNumber = () =>
    `+7916${platform === 'express' ? 55 : 56}${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(3, '0')}`;

  /** A host of the sandbox's demo account: its data keys (from the API secret) open what an earlier boot wrote. */
  async function boot(module: Partial<VerificationModuleOptions>): Promise<VerificationHistory> {
    await suite.host?.close();
    suite.host = await createTestApp({ platform, module: moduleOptions(suite.sb, module) });
    return suite.host.app.get(VerificationHistory);
  }
  /** A start of `phone` by `user` over HTTP; its answer. */
  const startAs = (phone: string, user: string, method = 'sms') =>
    call(suite.host!.url, 'POST', '/verification/start', { phone_number: phone, method }, { 'x-user': user });
  const start = async (phone: string, user: string, method = 'sms') =>
    expect((await startAs(phone, user, method)).status).toBe(201);

  it('from and to take an entry at their very time; a tick past either leaves it out', async () => {
    const history = await boot({ history: {} });
    const phone = phoneNumber();
    await start(phone, 'alice');
    const at = suite.sb.now();
    const kinds = async (from: number, to: number) =>
      (await history.list({ phoneNumber: phone, from: new Date(from), to: new Date(to) })).map((e) => e.kind);
    expect(await kinds(at, at)).toEqual(['start']);
    expect(await kinds(at + 1, at + 1000)).toEqual([]);
    expect(await kinds(at - 1000, at - 1)).toEqual([]);
    expect((await history.list({ owner: 'alice', to: new Date(at) })).map((e) => e.kind)).toEqual(['start']);
    expect(await history.list({ owner: 'alice', from: new Date(at + 1) })).toEqual([]);
  });

  it('a folded entry keeps its count and last time as long as the entry, not the hour it folds in', async () => {
    // The default limits: a browser's start of a number it has pending is handed back.
    const history = await boot({ history: { retentionDays: 2 }, limits: {} });
    const phone = phoneNumber();
    // One start and three more of the same browser within the hour: handed back, one entry counted 3.
    for (let i = 0; i < 4; i += 1) await start(phone, 'erin');
    const lastAt = suite.sb.now();
    const counted = async () =>
      (await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.count ?? 1, e.lastAt?.getTime()]);
    const folded = await counted();
    expect(folded).toEqual([
      ['start', 1, undefined],
      ['start', 3, lastAt],
    ]);
    // Two hours on (the fold's own hour long gone), and one tick before the entries' end: still counted.
    await suite.sb.advance(2 * 3_600_000);
    expect(await counted()).toEqual(folded);
    await suite.sb.advance(lastAt + 2 * DAY - 1 - suite.sb.now());
    expect((await counted()).at(-1)).toEqual(['start', 3, lastAt]);
  });

  it('an owner erased a day after its start: the number keeps the entry, without the owner, one tick before its own end, not at it', async () => {
    const history = await boot({ history: { retentionDays: 2 } });
    const phone = phoneNumber();
    const written = suite.sb.now();
    await start(phone, 'mallory');
    await suite.sb.advance(DAY);
    await suite.host!.app.get(VerificationErasure).forget({ owner: 'mallory' });

    expect(await history.list({ owner: 'mallory' })).toEqual([]);
    const kept = await history.list({ phoneNumber: phone });
    expect(kept.map((e) => [e.kind, e.method, e.owner])).toEqual([['start', 'sms', undefined]]);
    expect(kept[0]!.at.getTime()).toBe(written);

    await suite.sb.advance(written + 2 * DAY - 1 - suite.sb.now());
    expect((await history.list({ phoneNumber: phone })).map((e) => e.kind)).toEqual(['start']);
    await suite.sb.advance(1);
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
  });

  // Missing await: an entry whose write fails is lost and logged, never an unhandled rejection.
  it("a store that refuses history's writes: the start still answers 201, the entry is lost and logged as a warning", async () => {
    const logger = new CapturingLogger();
    store = new (class extends MemoryStore {
      override async increment(key: string, by: number, ttlMs: number) {
        if (key.startsWith('history:')) throw new Error('store down for history');
        return super.increment(key, by, ttlMs);
      }
    })({ clock: () => suite.sb.now() });
    const history = await boot({ history: {}, store, logger });
    const phone = phoneNumber();
    await start(phone, 'dave');
    const warned = logger.lines.filter((line) => line.includes('history: an entry could not be written'));
    expect(warned).toHaveLength(1);
    // What was lost and why, by the error's name: never its message (it may hold a key) or the number.
    expect(warned[0]).toMatch(/^warn .*kind=start error=Error\b/);
    expect(warned[0]).not.toContain('store down');
    expect(warned[0]).not.toContain(phone.slice(1));
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
  });

  it("a host's store that rejects history's writes with something other than an Error: logged as 'Error', the start answers 201", async () => {
    const logger = new CapturingLogger();
    store = new (class extends MemoryStore {
      override async increment(key: string, by: number, ttlMs: number) {
        if (key.startsWith('history:')) throw null;
        return super.increment(key, by, ttlMs);
      }
    })({ clock: () => suite.sb.now() });
    await boot({ history: {}, store, logger });
    await start(phoneNumber(), 'dave');
    const warned = logger.lines.filter((line) => line.includes('history: an entry could not be written'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/error=Error\b/);
  });

  // Missing await: an erasure that answered before its history's deletions landed.
  it('an erasure answers once the history is gone: on a store whose deletions land a turn late, a list right after it is empty', async () => {
    store = new (class extends MemoryStore {
      override async delete(key: string) {
        if (!key.startsWith('history:')) return super.delete(key);
        await new Promise((landed) => setImmediate(landed));
        // A deletion nobody waited for may land after the test closed the store: it is lost then.
        return super.delete(key).catch(() => undefined);
      }
    })({ clock: () => suite.sb.now() });
    const history = await boot({ history: {}, store });
    const phone = phoneNumber();
    await start(phone, 'frank');
    expect((await history.list({ phoneNumber: phone })).map((e) => e.kind)).toEqual(['start']);

    const report = await suite.host!.app.get(VerificationErasure).forget({ phoneNumber: phone });
    expect(report.historyEntries).toBe(1);
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
    expect(await history.list({ owner: 'frank' })).toEqual([]);
  });

  let redisPrefix = '';
  describe.each([
    [
      'one MemoryStore instance',
      () => new MemoryStore({ clock: () => suite.sb.now() }),
      (made: VerificationStore) => Promise.resolve(dumpMemoryStore(made as MemoryStore)),
    ],
    [
      'one RedisStore instance',
      () =>
        new RedisStore({
          url: sharedRedisUrl(),
          keyPrefix: (redisPrefix = `history-bounds:${randomUUID()}:`),
          clock: () => suite.sb.now(),
          // Its first command connects: on a loaded machine that may take past the 1 s default.
          commandTimeoutMs: 10_000,
        }),
      () => dumpRedisPrefix(sharedRedisUrl(), redisPrefix),
    ],
  ])(
    'a number erased after history changed (%s)',
    (_label, make: () => VerificationStore, dump: (made: VerificationStore) => Promise<string[]>) => {
      // A dump of the store after the erasure: nothing of the number's history, its counters and folds included
      // (a key under the number's digest says the number was there).
      it('a number erased: no key of its history is left in the store, its counters, repeats and folds included', async () => {
        store = make();
        const phone = phoneNumber();
        const refusing = {
          beforeStart: ({ method }: { method: string }) =>
            method === 'sms' || { allow: false, reason: 'captcha' },
        };
        const history = await boot({ history: {}, store, limits: { ...refusing, resendCooldownMs: false } });
        await start(phone, 'nina');
        for (let i = 0; i < 2; i += 1) expect((await startAs(phone, 'nina', 'flash_call')).status).toBe(403);
        expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.count ?? 1])).toEqual([
          ['start', 1],
          ['refusal', 2],
        ]);
        const numberKeys = async () => (await dump(store!)).filter((line) => line.includes('history:{n:'));
        expect((await numberKeys()).length).toBeGreaterThan(0);

        await suite.host!.app.get(VerificationErasure).forget({ phoneNumber: phone });
        expect(await numberKeys()).toEqual([]);
      });

      it.each([
        ['made smaller (maxEntries: 1)', { history: { maxEntries: 1 } }],
        ['turned off', {}],
      ] as const)(
        'history %s since its entries were written: the erasure takes them all',
        async (_shape, since: Partial<VerificationModuleOptions>) => {
          store = make();
          const phone = phoneNumber();
          await boot({ history: {}, store });
          const methods = ['sms', 'flash_call', 'msgr1_otp'];
          for (const method of methods) await start(phone, 'carol', method);
          // Read back by the next boot: the ring outlives a host.
          const again = await boot({ history: {}, store });
          expect((await again.list({ phoneNumber: phone })).map((e) => e.method)).toEqual(methods);

          await boot({ ...since, store });
          await suite.host!.app.get(VerificationErasure).forget({ phoneNumber: phone });

          const history = await boot({ history: {}, store });
          expect(await history.list({ phoneNumber: phone })).toEqual([]);
          expect(await history.list({ owner: 'carol' })).toEqual([]);
        },
      );

      // A retention made shorter since: an entry already past it (to the millisecond) is deleted, not
      // re-written for no time (a store refuses a TTL of 0); a younger one stays without its owner.
      it("retentionDays made shorter since: an owner erased at one entry's new end: that entry goes, a younger one stays without its owner", async () => {
        store = make();
        const [first, second] = [phoneNumber(), phoneNumber()];
        await boot({ history: {}, store });
        const written = suite.sb.now();
        await start(first, 'oscar');
        // Redis expires by its own clock: the younger entry's rest is long enough not to end during the test.
        await suite.sb.advance(60_000);
        await start(second, 'oscar');
        const history = await boot({ history: { retentionDays: 1 }, store });
        await suite.sb.advance(written + DAY - suite.sb.now());
        await suite.host!.app.get(VerificationErasure).forget({ owner: 'oscar' });

        expect(await history.list({ owner: 'oscar' })).toEqual([]);
        expect(await history.list({ phoneNumber: first })).toEqual([]);
        const kept = await history.list({ phoneNumber: second });
        expect(kept.map((e) => [e.kind, e.owner, e.at.getTime()])).toEqual([
          ['start', undefined, written + 60_000],
        ]);
      });
    },
  );

  it("an owner erased while history is off: the number keeps the entry, without the owner, until the default retention's end (30 days)", async () => {
    store = new MemoryStore({ clock: () => suite.sb.now() });
    const phone = phoneNumber();
    await boot({ history: {}, store });
    const written = suite.sb.now();
    await start(phone, 'peggy');
    await boot({ store });
    await suite.sb.advance(DAY);
    await suite.host!.app.get(VerificationErasure).forget({ owner: 'peggy' });

    const history = await boot({ history: {}, store });
    expect(await history.list({ owner: 'peggy' })).toEqual([]);
    expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.owner])).toEqual([
      ['start', undefined],
    ]);
    await suite.sb.advance(written + 30 * DAY - 1 - suite.sb.now());
    expect(await history.list({ phoneNumber: phone })).toHaveLength(1);
    await suite.sb.advance(1);
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
  });

  it('a number erased after a refused start, refused twice: its entry goes, and the same refusal within the hour is written afresh', async () => {
    const history = await boot({
      history: {},
      limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
    });
    const phone = phoneNumber();
    const refusedStart = async () =>
      expect((await startAs(phone, 'trent', 'sms')).body).toMatchObject({
        status: 403,
        error_code: 'start_refused',
      });
    await refusedStart();
    await refusedStart();
    const listed = async () =>
      (await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.errorCode, e.count ?? 1]);
    expect(await listed()).toEqual([['refusal', 'start_refused', 2]]);

    await suite.host!.app.get(VerificationErasure).forget({ phoneNumber: phone });
    expect(await listed()).toEqual([]);
    await refusedStart();
    expect(await listed()).toEqual([['refusal', 'start_refused', 1]]);
  });

  it("one number's refusals by two owners within the hour: one entry of the number counted twice; each owner's history holds its own", async () => {
    const history = await boot({
      history: {},
      limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
    });
    const phone = phoneNumber();
    for (const user of ['uma', 'walt']) expect((await startAs(phone, user, 'sms')).status).toBe(403);
    expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.owner, e.count ?? 1])).toEqual([
      ['refusal', 'uma', 2],
    ]);
    for (const user of ['uma', 'walt'])
      expect((await history.list({ owner: user })).map((e) => [e.kind, e.count ?? 1])).toEqual([
        ['refusal', 1],
      ]);
  });

  it('the same refusal three times at once, then once more: one entry, no warning; the repeats a race left uncounted are carried by the next', async () => {
    const logger = new CapturingLogger();
    const history = await boot({
      history: {},
      logger,
      limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
    });
    const phone = phoneNumber();
    const refused = async () => (await startAs(phone, 'xena', 'sms')).status;
    expect(await Promise.all([refused(), refused(), refused()])).toEqual([403, 403, 403]);
    expect(await refused()).toBe(403);
    const entries = await history.list({ phoneNumber: phone });
    expect(entries.map((e) => [e.kind, e.count])).toEqual([['refusal', 4]]);
    expect(logger.lines.filter((line) => line.startsWith('warn') && line.includes('history'))).toEqual([]);
  });

  it("a number erased takes its entries out of its owner's history and leaves the owner's other numbers; an owner erased leaves other owners' entries of its numbers as they were", async () => {
    const history = await boot({ history: {} });
    const [shared, own] = [phoneNumber(), phoneNumber()];
    await start(shared, 'nora');
    await start(own, 'nora');
    await start(shared, 'otto');
    await suite.host!.app.get(VerificationErasure).forget({ phoneNumber: own });
    expect((await history.list({ owner: 'nora' })).map((e) => e.phoneNumber)).toEqual([shared]);

    await suite.host!.app.get(VerificationErasure).forget({ owner: 'nora' });
    expect((await history.list({ phoneNumber: shared })).map((e) => e.owner)).toEqual([undefined, 'otto']);
    expect((await history.list({ owner: 'otto' })).map((e) => e.phoneNumber)).toEqual([shared]);
  });

  it("a number whose start had no owner (the host's own call) is erased whole", async () => {
    const history = await boot({ history: {} });
    const phone = phoneNumber();
    // No x-user: the test host's owner(req) answers undefined.
    expect(
      (await call(suite.host!.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' }))
        .status,
    ).toBe(201);
    expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.owner])).toEqual([
      ['start', undefined],
    ]);
    await expect(
      suite.host!.app.get(VerificationErasure).forget({ phoneNumber: phone }),
    ).resolves.toMatchObject({
      historyEntries: 1,
    });
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
  });

  it('an erasure that names no number: a validation_error naming phoneNumber, nothing erased', async () => {
    const history = await boot({ history: {} });
    const phone = phoneNumber();
    await start(phone, 'pia');
    await expect(
      suite.host!.app.get(VerificationErasure).forget({ phoneNumber: 'not a number' }),
    ).rejects.toMatchObject({
      errorCode: 'validation_error',
      extra: { errors: [expect.objectContaining({ field: 'phoneNumber' })] },
    });
    expect(await history.list({ phoneNumber: phone })).toHaveLength(1);
  });

  // One slot per shelf: a refusal pushed out by another is gone; a repeat of it within its hour must not
  // be counted on the entry that took its slot.
  it('maxEntries 1: a repeat of a refusal pushed out of its slot is not counted on the refusal that took the slot', async () => {
    const history = await boot({
      history: { maxEntries: 1 },
      limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }), resendCooldownMs: false },
    });
    const phone = phoneNumber();
    for (const method of ['sms', 'flash_call', 'sms'])
      expect((await startAs(phone, 'quinn', method)).status).toBe(403);
    expect((await history.list({ phoneNumber: phone })).map((e) => [e.method, e.count, e.lastAt])).toEqual([
      ['flash_call', undefined, undefined],
    ]);
  });

  // A repeat written late in the hour keeps its count for the entry's retention from then: it outlives the
  // entry by up to an hour, and an erasure in that time must take it too.
  it("a number erased after its refusal's entry ended but before its repeat count did: no key of its history is left (MemoryStore)", async () => {
    const memory = new MemoryStore({ clock: () => suite.sb.now() });
    store = memory;
    const history = await boot({
      history: { retentionDays: 1 },
      store,
      limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
    });
    const phone = phoneNumber();
    // At an hour's start, and its repeat at the hour's last millisecond: one fold.
    const HOUR = 3_600_000;
    await suite.sb.advance(HOUR - (suite.sb.now() % HOUR));
    const written = suite.sb.now();
    expect((await startAs(phone, 'rhea')).status).toBe(403);
    await suite.sb.advance(HOUR - 1);
    expect((await startAs(phone, 'rhea')).status).toBe(403);
    expect((await history.list({ phoneNumber: phone })).map((e) => e.count)).toEqual([2]);
    await suite.sb.advance(written + DAY - suite.sb.now());
    expect(await history.list({ phoneNumber: phone })).toEqual([]);
    // Live keys of the number's ring (a MemoryStore drops an ended key when it is next read).
    const numberKeys = async () => {
      const keys = dumpMemoryStore(memory)
        .map((line) => line.split(' ')[0]!)
        .filter((key) => key.includes('history:{n:'));
      const values = await Promise.all(keys.map((key) => memory.get(key)));
      return keys.filter((_key, i) => values[i] !== null);
    };
    expect((await numberKeys()).length).toBeGreaterThan(0);
    await suite.host!.app.get(VerificationErasure).forget({ phoneNumber: phone });
    expect(await numberKeys()).toEqual([]);
  });

  // History never fails a verification: a refusal whose callers' budget cannot be counted is not written.
  it("a store that cannot count the callers' refusal budget: a refused start of a new number still answers its 403, and no entry is written", async () => {
    let counting = true;
    store = new (class extends MemoryStore {
      override async increment(key: string, by: number, ttlMs: number, options?: { evictable?: boolean }) {
        if (!counting && key.startsWith('history:refusals:')) throw new Error('store down for the budget');
        return super.increment(key, by, ttlMs, options);
      }
    })({ clock: () => suite.sb.now() });
    const history = await boot({
      history: {},
      store,
      limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
    });
    const refused = async (phone: string) => {
      const answer = await startAs(phone, 'victor', 'sms');
      expect(answer.body).toMatchObject({ status: 403, error_code: 'start_refused' });
      return (await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.errorCode]);
    };
    // Counted, the refusal is written; not counted, it is not.
    expect(await refused(phoneNumber())).toEqual([['refusal', 'start_refused']]);
    counting = false;
    expect(await refused(phoneNumber())).toEqual([]);
  });
});
