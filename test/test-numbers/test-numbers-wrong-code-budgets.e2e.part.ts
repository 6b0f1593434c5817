/**
 * A test number's wrong codes, counted per starter: a session's checks take its starter's budget
 * (`wrongCodesPerNumber`, per owner, else per client network), the network's when the starter is an
 * owner (TEST_WRONG_CODES_NETWORK_FACTOR times it: owners behind one network share it), and the number's
 * day across every caller (TEST_WRONG_CODES_DAY_FACTOR times the points; past it each starter's reserve of
 * `maxAttempts`, up to TEST_WRONG_CODES_HARD_FACTOR times it). So one caller's wrong codes never refuse
 * another's right code, and guessing a fixed code from many owners or networks stays bounded.
 * Over real HTTP, Express on Memory and Fastify on Redis; the sandbox clock moves time.
 */
import { describe, expect, it } from '@jest/globals';
import {
  TEST_WRONG_CODES_DAY_FACTOR,
  TEST_WRONG_CODES_HARD_FACTOR,
  TEST_WRONG_CODES_NETWORK_FACTOR,
} from '../../src/test-numbers/test-number-wrong-codes.js';
import type { StoreKind } from '../verified-phone/guard-host.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, type Platform } from '../support/verification-app.js';
import { REVIEWER_CODE, reviewerHosts } from './reviewer-host.js';

const CODE = REVIEWER_CODE;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const POINTS = 2;
const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004421'],
  ['fastify', 'redis', '+79990004422'],
];

describe.each(CASES)(
  'test numbers: wrong codes per starter (%s, %s store)',
  (platform, storeKind, reviewer) => {
    const suite = sandboxSuite();
    const reviewerHost = reviewerHosts(suite);

    /** `owners`: the `testNumbers.owners` list, when the number is played for listed owners only. */
    async function boot(owners?: string[]) {
      await reviewerHost(platform, reviewer, storeKind, {
        // The resend cooldown (which test starts take, as a real number's) is not what these tests weigh.
        limits: { resendCooldownMs: false },
        testNumbers: {
          numbers: [{ phoneNumber: reviewer, code: CODE }],
          maxAttempts: 3,
          wrongCodesPerNumber: { points: POINTS, windowMs: HOUR },
          ...(owners === undefined ? {} : { owners }),
        },
      });
    }

    /** A caller: its client address and, when signed in, its owner. */
    const caller = (ip: string, user?: string) => ({
      'x-forwarded-for': ip,
      ...(user === undefined ? {} : { 'x-user': user }),
    });
    const post = (path: string, body: unknown, headers: Record<string, string>) =>
      call(suite.host!.url, 'POST', `/verification/${path}`, body, headers);
    const start = async (headers: Record<string, string>) => {
      const started = await post('start', { phone_number: reviewer, method: 'sms' }, headers);
      expect(started.status).toBe(201);
      return String(started.body.verification_id);
    };
    /** A check's answer: `verified`, or the attempts left after a wrong code (0: no code compared). */
    const check = async (id: string, code: string, headers: Record<string, string>) => {
      const answer = await post('check', { verification_id: id, code }, headers);
      if (answer.body.verified === true) return 'verified';
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ status: 400, error_code: 'invalid_code' });
      return answer.body.attempts_remaining as number;
    };

    it("an owner's wrong codes spend its own budget; the owners of one network share the network's, another network is not touched", async () => {
      await boot();
      const office = '203.0.113.7';
      // Owner 1: its 2 wrong codes are compared, the 3rd (a new session) is not, nor then its right code.
      const first = await start(caller(office, 'o1'));
      expect([
        await check(first, '000000', caller(office, 'o1')),
        await check(first, '000001', caller(office, 'o1')),
      ]).toEqual([2, 1]);
      const again = await start(caller(office, 'o1'));
      expect(await check(again, '000002', caller(office, 'o1'))).toBe(0);
      expect(await check(await start(caller(office, 'o1')), CODE, caller(office, 'o1'))).toBe(0);
      // The network's other owners still have theirs: the network's points (3 × 2) are then spent.
      for (let n = 2; n <= TEST_WRONG_CODES_NETWORK_FACTOR; n++) {
        const owner = `o${n}`;
        const id = await start(caller(office, owner));
        expect([
          await check(id, '000003', caller(office, owner)),
          await check(id, '000004', caller(office, owner)),
        ]).toEqual([2, 1]);
      }
      // The network's points spent: a spender is refused, but an owner of it that never guessed is still
      // compared within its reserve (its first maxAttempts codes), so its right code verifies.
      expect(await check(await start(caller(office, 'o2')), CODE, caller(office, 'o2'))).toBe(0);
      expect(await check(await start(caller(office, 'late')), CODE, caller(office, 'late'))).toBe('verified');
      // The same owner from another network, and an anonymous caller of another network, verify.
      expect(
        await check(await start(caller('198.51.100.7', 'late')), CODE, caller('198.51.100.7', 'late')),
      ).toBe('verified');
      expect(await check(await start(caller('192.0.2.7')), CODE, caller('192.0.2.7'))).toBe('verified');
    });

    it("the number's day: past its ceiling a caller who never guessed is compared (its reserve); past its block's hard ceiling nobody of the block, one tick before the day ends still not, at its end again", async () => {
      await boot();
      const ceiling = POINTS * TEST_WRONG_CODES_DAY_FACTOR;
      const hard = ceiling * TEST_WRONG_CODES_HARD_FACTOR;
      const began = suite.sb.now();
      /** Anonymous callers of distinct networks of one /16, each within its own budget, make `count` wrong codes. */
      const guess = async (count: number, from: number) => {
        for (let n = 0; n < count / POINTS; n++) {
          const ip = `10.0.${from + n}.7`;
          const id = await start(caller(ip));
          expect([await check(id, '000000', caller(ip)), await check(id, '000001', caller(ip))]).toEqual([
            2, 1,
          ]);
        }
      };
      await guess(ceiling, 0);
      // A caller who never guessed today: its right code is compared past the ceiling, and verifies.
      const reviewerCaller = caller('198.51.100.9', 'apple-review');
      expect(await check(await start(reviewerCaller), CODE, reviewerCaller)).toBe('verified');
      // Fresh callers' reserves spend the block's hard ceiling: then no code of the block is compared;
      // the reviewer, of another block, still is.
      await guess(hard - ceiling, 100);
      const blockCaller = (n: number) => caller(`10.0.${200 + n}.7`);
      expect(await check(await start(blockCaller(0)), CODE, blockCaller(0))).toBe(0);
      expect(await check(await start(reviewerCaller), CODE, reviewerCaller)).toBe('verified');
      await suite.sb.advance(began + DAY - 1 - suite.sb.now());
      expect(await check(await start(blockCaller(1)), CODE, blockCaller(1))).toBe(0);
      await suite.sb.advance(1);
      expect(await check(await start(blockCaller(2)), CODE, blockCaller(2))).toBe('verified');
    });

    it("past the number's day, signed-in owners of one /16 share its block's hard ceiling (no `owners` list): a fresh owner of the block is not compared, one of another block is", async () => {
      await boot();
      const ceiling = POINTS * TEST_WRONG_CODES_DAY_FACTOR;
      const hard = ceiling * TEST_WRONG_CODES_HARD_FACTOR;
      /** Owners, each of its own network of one /16 and within its own budget, make `count` wrong codes. */
      const guess = async (count: number, from: number) => {
        for (let n = 0; n < count / POINTS; n++) {
          const who = caller(`10.2.${from + n}.7`, `guesser-${from + n}`);
          const id = await start(who);
          expect([await check(id, '000000', who), await check(id, '000001', who)]).toEqual([2, 1]);
        }
      };
      await guess(ceiling, 0);
      // Fresh owners' reserves spend the block's hard ceiling: a new owner changes nothing of the block.
      await guess(hard - ceiling, 100);
      const fresh = caller('10.2.200.7', 'fresh-owner');
      expect(await check(await start(fresh), CODE, fresh)).toBe(0);
      const elsewhere = caller('198.51.100.9', 'apple-review');
      expect(await check(await start(elsewhere), CODE, elsewhere)).toBe('verified');
    });

    it("past the number's day, with an `owners` list each listed owner's hard ceiling is its own: listed owners of one /16 spending theirs leave a fresh one of it compared", async () => {
      const ceiling = POINTS * TEST_WRONG_CODES_DAY_FACTOR;
      const hard = ceiling * TEST_WRONG_CODES_HARD_FACTOR;
      const guessers = hard / POINTS;
      await boot([...Array.from({ length: guessers }, (_, n) => `guesser-${n}`), 'fresh-owner']);
      // Listed owners, each of its own network of one /16 and within its own budget: the number's day, then
      // as many codes past it as the block's hard ceiling would hold.
      for (let n = 0; n < guessers; n++) {
        const who = caller(`10.3.${n}.7`, `guesser-${n}`);
        const id = await start(who);
        expect([await check(id, '000000', who), await check(id, '000001', who)]).toEqual([2, 1]);
      }
      const fresh = caller('10.3.200.7', 'fresh-owner');
      expect(await check(await start(fresh), CODE, fresh)).toBe('verified');
    });

    it('the right code costs no budget: more verifications than the network has points leave a wrong code compared', async () => {
      await boot();
      const office = '203.0.113.8';
      const owners = POINTS * TEST_WRONG_CODES_NETWORK_FACTOR + 1;
      for (let n = 0; n < owners; n++)
        expect(await check(await start(caller(office, `v${n}`)), CODE, caller(office, `v${n}`))).toBe(
          'verified',
        );
      expect(await check(await start(caller(office, 'next')), '000000', caller(office, 'next'))).toBe(2);
    });

    // The reserve is the starter's for the whole day: spread over hours (its hourly budget refilled), it
    // is still spent once, until the day of its first wrong code ends.
    it("past the number's day, a starter's reserve (maxAttempts) spread over three hours is spent for the day: its next code is not compared, at the day's end it is", async () => {
      await boot();
      const ceiling = POINTS * TEST_WRONG_CODES_DAY_FACTOR;
      for (let n = 0; n < ceiling / POINTS; n++) {
        const ip = `10.1.${n}.7`;
        const id = await start(caller(ip));
        expect([await check(id, '000000', caller(ip)), await check(id, '000001', caller(ip))]).toEqual([
          2, 1,
        ]);
      }
      const late = caller('198.51.100.44');
      const began = suite.sb.now();
      const first = await start(late);
      expect([await check(first, '000000', late), await check(first, '000001', late)]).toEqual([2, 1]);
      await suite.sb.advance(HOUR + 1);
      expect(await check(await start(late), '000002', late)).toBe(2);
      await suite.sb.advance(HOUR + 1);
      expect(await check(await start(late), CODE, late)).toBe(0);
      await suite.sb.advance(began + DAY - suite.sb.now());
      expect(await check(await start(late), CODE, late)).toBe('verified');
    });
  },
);
