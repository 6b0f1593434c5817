/**
 * History's refusals that strangers cannot ration: a refusal written into a number's ring that holds a
 * paid entry (a start, switch, check or outcome, kept `retentionDays`) never spends anyone's budget, and
 * a repeat of a refusal already written this hour is counted on its entry, never spending it either; only
 * a new refusal entry of a ring no paid entry made spends the callers' REFUSAL_ENTRIES_PER_CALLER_HOUR.
 * What a ring holds stays bounded whatever its traffic: its slots, one repeat count beside each slot of
 * the free shelf, and the folds of the current hour (each kept an hour). Memory and Redis, both platforms.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { VerificationClientError } from '../../src/core/verification.errors.js';
import { REFUSAL_ENTRIES_PER_CALLER_HOUR } from '../../src/history/refusal-admission.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { MemoryStore } from '../../src/store/memory.store.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const STORES = ['memory', 'redis'] as const;
const CASES = PLATFORMS.flatMap((platform) => STORES.map((store) => [platform, store] as const));

describe.each(CASES)(
  'history: refusals strangers cannot ration (%s, %s store)',
  (platform: Platform, kind) => {
    const suite = sandboxSuite();
    const admin = kind === 'redis' ? new Redis(sharedRedisUrl()) : undefined;
    const keyPrefix = uniqueKeyPrefix(`history-refusal-standing-${platform}`);
    afterAll(async () => {
      if (admin === undefined) return;
      const left = await admin.keys(`${keyPrefix}*`);
      if (left.length > 0) await admin.del(...left);
      admin.disconnect();
    });
    const prefix = `+7916${platform === 'express' ? 7 : 8}${kind === 'redis' ? 7 : 8}${process.pid % 10}`;
    let serial = 0;
    const nextNumber = () => `${prefix}${String(++serial).padStart(4, '0')}`;

    /** `perNumber`: the number's starts an hour (past them, every start of it is refused alike). */
    async function boot(
      history: { maxEntries?: number } = {},
      perNumber?: number,
    ): Promise<VerificationHistory> {
      suite.host = await startAccountHost(platform, suite.sb, {
        balance: 10_000,
        trustProxy: true,
        module: {
          history,
          limits: perNumber === undefined ? {} : { startPerPhone: { points: perNumber, windowMs: 40 * DAY } },
          owner: undefined,
          ...(kind === 'redis' ? { store: { url: sharedRedisUrl(), keyPrefix } } : {}),
        },
      });
      return suite.host.app.get(VerificationHistory);
    }
    const start = (phone: string, ip: string, method = 'sms') =>
      call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method },
        { 'x-forwarded-for': ip },
      );
    /** Starts ever new numbers from `ip` until `n` were refused; answers the refused numbers. */
    async function refusedStarts(ip: string, n: number): Promise<string[]> {
      const refused: string[] = [];
      for (let i = 0; refused.length < n && i < n + 40; i++) {
        const phone = nextNumber();
        if ((await start(phone, ip)).status >= 400) refused.push(phone);
      }
      expect(refused).toHaveLength(n);
      return refused;
    }
    const refusals = async (history: VerificationHistory, phoneNumber: string) =>
      (await history.list({ phoneNumber })).filter((e) => e.kind === 'refusal').map((e) => e.count ?? 1);
    async function written(history: VerificationHistory, numbers: string[]): Promise<boolean[]> {
      const answers: boolean[] = [];
      for (const n of numbers) answers.push((await refusals(history, n)).length > 0);
      return answers;
    }
    /** The live store keys of a number's ring (on the store's clock). */
    async function ringKeys(phoneNumber: string): Promise<string[]> {
      const options = suite.host!.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS);
      const store = suite.host!.app.get<VerificationStore>(VerificationStore);
      const ring = `history:{n:${options.dataKeys.digest(phoneNumber)}}`;
      const all =
        admin === undefined
          ? dumpMemoryStore(store as MemoryStore).map((line) => line.split(' ')[0]!)
          : (await admin.keys(`${keyPrefix}*`)).map((k) => k.slice(keyPrefix.length));
      const mine = all.filter((key) => key.startsWith(ring));
      const live = await Promise.all(mine.map(async (key) => ((await store.get(key)) === null ? [] : [key])));
      return live.flat();
    }

    it("a neighbour's flood on the same network neither keeps the victim's refusals out nor its own refusals of the victim's number", async () => {
      const history = await boot();
      const neighbour = '203.0.113.5';
      const own = nextNumber();
      expect((await start(own, neighbour)).status).toBe(201);
      for (let i = 0; i < 40; i++) expect((await start(own, neighbour)).status).toBeGreaterThanOrEqual(400);
      // Its repeats are one counted entry and spent no budget: its first 30 new numbers' refusals are written.
      expect(await refusals(history, own)).toEqual([40]);
      const spent = await refusedStarts(neighbour, 31);
      expect(await written(history, spent)).toEqual([...Array(30).fill(true), false]);

      // The victim, another address of the network (whose budget is spent): its number's refusal is written.
      const victim = nextNumber();
      expect((await start(victim, '203.0.113.77')).status).toBe(201);
      expect((await start(victim, '203.0.113.77')).status).toBeGreaterThanOrEqual(400);
      expect((await history.list({ phoneNumber: victim })).map((e) => e.kind)).toEqual(['start', 'refusal']);

      // The neighbour, past its budget, refusing the victim's number with a new method: written too.
      expect((await start(victim, neighbour, 'flash_call')).status).toBeGreaterThanOrEqual(400);
      expect(await refusals(history, victim)).toEqual([1, 1]);
    }, 180_000);

    it("a repeat never spends a caller's budget, and a refusal past it leaves nothing that keeps another caller's same refusal out", async () => {
      const history = await boot();
      const refusal = new VerificationClientError('start_refused', 'refused');
      const refuse = (phoneNumber: string, caller: string) =>
        history.refused('start', refusal, { phoneNumber, method: 'sms' }, undefined, [caller]);
      const first = nextNumber();
      for (let i = 0; i < 40; i++) await refuse(first, 'network:x');
      expect(await refusals(history, first)).toEqual([40]);
      const others = Array.from({ length: REFUSAL_ENTRIES_PER_CALLER_HOUR }, nextNumber);
      for (const n of others) await refuse(n, 'network:x');
      expect(await written(history, others)).toEqual([...Array(29).fill(true), false]);
      // The last one, refused again by a caller within its budget: written, once.
      await refuse(others.at(-1)!, 'network:y');
      expect(await refusals(history, others.at(-1)!)).toEqual([1]);

      // An owner's refusal goes into its number's ring and its own: one entry of its budget, not two.
      const owned = Array.from({ length: REFUSAL_ENTRIES_PER_CALLER_HOUR + 1 }, nextNumber);
      for (const phoneNumber of owned)
        await history.refused('start', refusal, { phoneNumber, method: 'sms' }, 'bob', ['owner:bob']);
      expect(await written(history, owned)).toEqual([...Array(30).fill(true), false]);
      // In the owner's ring they are one refusal (the owner's, whatever the number), counted each time.
      expect((await history.list({ owner: 'bob' })).map((e) => e.count)).toEqual([31]);
    }, 60_000);

    it("a paid entry admits the number's refusals for retentionDays: one tick before their end written, at it only within budget", async () => {
      const history = await boot({}, 1);
      const victim = nextNumber();
      const ip = '198.51.100.20';
      expect((await start(victim, ip)).status).toBe(201);
      await suite.sb.advance(30 * DAY - 2);
      // The budget of the network spent (a fresh hour's), then a refusal of the number one tick before the end.
      const spent = await refusedStarts('198.51.100.21', 31);
      expect((await written(history, spent)).at(-1)).toBe(false);
      await suite.sb.advance(1);
      expect((await start(victim, ip, 'flash_call')).status).toBeGreaterThanOrEqual(400);
      expect(await refusals(history, victim)).toHaveLength(1);
      // At the end the start (and the ring's paid mark) is gone: the network's spent budget decides.
      await suite.sb.advance(1);
      expect((await start(victim, ip, 'msgr1_otp')).status).toBeGreaterThanOrEqual(400);
      expect(await refusals(history, victim)).toHaveLength(1);
    }, 180_000);

    it("a number's ring stays bounded under refusals every hour from many addresses; a repeat one tick before the hour's end is counted, at it a new entry", async () => {
      const history = await boot({ maxEntries: 2 }, 1);
      const victim = nextNumber();
      expect((await start(victim, '198.51.100.30')).status).toBe(201);
      const flood = async (hour: number) => {
        for (let i = 0; i < 6; i++)
          expect((await start(victim, `192.0.${hour}.${i + 1}`)).status).toBeGreaterThanOrEqual(400);
      };
      // Into the last millisecond of an hour of the store's clock.
      await suite.sb.advance(HOUR - (suite.sb.now() % HOUR) - 1);
      await flood(1);
      expect(await refusals(history, victim)).toEqual([6]);
      await suite.sb.advance(1);
      await flood(2);
      expect(await refusals(history, victim)).toEqual([6, 6]);
      const after = (await ringKeys(victim)).length;
      for (let hour = 3; hour <= 6; hour++) {
        await suite.sb.advance(HOUR);
        await flood(hour);
      }
      expect(await refusals(history, victim)).toEqual([6, 6]);
      expect((await ringKeys(victim)).length).toBeLessThanOrEqual(after);
    }, 180_000);
  },
);
