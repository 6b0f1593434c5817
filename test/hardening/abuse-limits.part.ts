import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { freshIp, protectedHost, refusal, startFrom } from '../protection/protection-host.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { PhoneNumbers } from './support/phone-numbers.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const RUNS = Number(process.env.ABUSE_RUNS ?? 20);
const TIMEOUT_MS = 180_000;
const HOUR = 3_600_000;
const METHODS = ['sms', 'flash_call', 'msgr1_otp', 'operator_id', 'reverse_flash_call', 'msgr2_bot'] as const;

type Response = Awaited<ReturnType<typeof call>>;
const phones = new PhoneNumbers();
const userHeader = (user: string) => ({ 'x-user-id': user });
const ownerOf = (req: unknown) =>
  (req as { headers: Record<string, string | undefined> }).headers['x-user-id'];

/**
 * The attacks on the start and check limits as properties: whatever a stranger does with their
 * own starts, whatever the API refuses, however many sessions a guesser opens, the limits hold for
 * the number's owner and for the guesser. The defaults are the module's own; each run takes a fresh
 * number and fresh addresses on the sandbox's clock (moved, never slept).
 */
describe.each(ONE_PLATFORM)('hardening: abuse of the start and check limits (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { balance: 1_000_000 } });
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    // Defaults: across runs the strangers' starts of one range are a burst that holds it, and the
    // owner is then offered a method charged on proof, which the owner follows (below).
    host = await suite.boot(() => protectedHost(sb, platform, {}, { owner: ownerOf }));
  });

  /** A stranger's move: a start of the number (any method, as an owner or by IP only), or time passing. */
  const strangerMove = fc.oneof(
    fc.record({ kind: fc.constant('start' as const), method: fc.constantFrom(...METHODS) }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 10 * 60_000 }) }),
  );

  it(
    `no sequence of another caller's starts locks the owner's number out (${RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(strangerMove, { maxLength: 25 }), fc.boolean(), async (moves, signedIn) => {
          const phone = phones.take();
          const strangerIp = freshIp();
          const stranger = signedIn ? userHeader(`mallory-${phone}`) : {};
          for (const move of moves) {
            if (move.kind === 'advance') await sb.advance(move.ms);
            else
              expect((await startFrom(host, strangerIp, phone, move.method, stranger)).status).not.toBe(500);
          }
          const ownerIp = freshIp();
          let owner = await startFrom(host, ownerIp, phone, 'sms', userHeader(`alice-${phone}`));
          // A graded answer (the range is held by the strangers' starts so far) offers a method charged
          // on proof: the owner follows it, as the browser client does, and is served.
          const offered = owner.body.offered_methods as string[] | undefined;
          if (owner.status === 409 && owner.body.error_code === 'method_held' && offered?.[0])
            owner = await startFrom(host, ownerIp, phone, offered[0], userHeader(`alice-${phone}`));
          expect({ status: owner.status, body: owner.body }).toMatchObject({ status: 201 });
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );

  /** A guesser's move: a start by one of three callers, a wrong code on that caller's newest session, or time. */
  const guesserMove = fc.oneof(
    {
      arbitrary: fc.record({ kind: fc.constant('start' as const), caller: fc.integer({ min: 0, max: 2 }) }),
      weight: 2,
    },
    {
      arbitrary: fc.record({ kind: fc.constant('guess' as const), caller: fc.integer({ min: 0, max: 2 }) }),
      weight: 4,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.integer({ min: 30_000, max: 3 * 60_000 }),
      }),
      weight: 2,
    },
  );

  it(
    `wrong codes across any number of sessions and callers never exceed the budget (10 an hour) (${RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(guesserMove, { minLength: 40, maxLength: 80 }), async (moves) => {
          const phone = phones.take();
          const callers = [freshIp(), freshIp(), freshIp()];
          const handles: (unknown | undefined)[] = [undefined, undefined, undefined];
          const openedAt = sb.now();
          let answeredWrong = 0;
          for (const move of moves) {
            // One window: the property is about one hour of guessing.
            if (move.kind === 'advance') {
              if (sb.now() + move.ms < openedAt + HOUR - 60_000) await sb.advance(move.ms);
              continue;
            }
            const ip = callers[move.caller];
            if (move.kind === 'start') {
              const started = await startFrom(host, ip, phone, 'sms');
              if (started.status === 201) handles[move.caller] = started.body.verification_id;
              continue;
            }
            if (handles[move.caller] === undefined) continue;
            const [newest] = sb.sessionsFor(phone);
            const wrong = String(newest.code).replace(/^./, (d) => String((Number(d) + 1) % 10));
            const res: Response = await call(
              host.url,
              'POST',
              '/verification/check',
              { verification_id: handles[move.caller], code: wrong },
              { 'x-forwarded-for': ip },
            );
            expect(res.status).not.toBe(500);
            if (res.body.error_code === 'invalid_code') answeredWrong += 1;
          }
          expect(answeredWrong).toBeLessThanOrEqual(10);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );
});

describe.each(ONE_PLATFORM)('hardening: starts the API refused (%s)', (platform) => {
  const suite = sandboxSuite({
    freezeClock: false,
    demoAccount: { balance: 1_000_000, enabledMethods: ['sms'] },
  });
  let sb: VerificationSandbox;

  beforeAll(async () => {
    // Only sms is enabled: any other method is refused by the API (403 without a body), nothing sent.
    sb = suite.sb;
  });
  afterAll(async () => {
    sb.clearFaults();
  });

  /** How the API refuses: a method not enabled, or an injected problem document (500 or 429). */
  const refusedStart = fc.oneof(
    fc.record({ kind: fc.constant('not_enabled' as const), method: fc.constantFrom(...METHODS.slice(1)) }),
    fc.record({ kind: fc.constant('problem' as const), status: fc.constantFrom(500, 429) }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30_000 }) }),
  );

  it(
    `no sequence of refused-by-API starts consumes any budget (${Math.max(5, Math.floor(RUNS / 2))} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(refusedStart, { maxLength: 30 }), async (moves) => {
          // A host of its own per run: the spend cap is one window for the whole host.
          const host = await protectedHost(sb, platform, {
            startPerIp: { points: 2, windowMs: HOUR },
            startPerPhoneAndCaller: { points: 1, windowMs: HOUR },
            startPerPhone: { points: 1, windowMs: HOUR },
            spendCap: { amount: 6, windowMs: HOUR },
            // The cap to the kopeck: the pumping defence would keep its last share for methods charged on proof.
            pumping: false,
          });
          try {
            const ip = freshIp();
            const [phone, other, third] = [phones.take(), phones.take(), phones.take()];
            for (const move of moves) {
              if (move.kind === 'advance') {
                await sb.advance(move.ms);
                continue;
              }
              if (move.kind === 'problem')
                sb.addFault({
                  route: 'POST /v1/verify',
                  kind: 'status',
                  status: move.status,
                  retry_after_s: 1,
                });
              const method = move.kind === 'problem' ? 'sms' : move.method;
              const res = await startFrom(host, ip, phone, method);
              expect([400, 429, 503]).toContain(res.status);
              // The API's own 429 is honoured for its Retry-After (upstream_rate_limit): no budget of the caller's.
              expect(String(res.body.reason ?? '').replace('upstream_rate_limit', '')).not.toMatch(
                /limit|cooldown|spend/,
              );
            }
            expect(sb.sessionsFor(phone)).toHaveLength(0);
            // Past the API's last Retry-After (1 s); a fault a held start never reached is not the API's.
            sb.clearFaults();
            await sb.advance(1_000);
            // Every budget is whole: the number's one start (no cooldown left), the IP's second, then the cap.
            expect((await startFrom(host, ip, phone, 'sms')).status).toBe(201);
            expect((await startFrom(host, ip, other, 'sms')).status).toBe(201);
            expect(refusal(await startFrom(host, ip, third, 'sms')).reason).toBe('start_ip_limit');
            expect(refusal(await startFrom(host, freshIp(), third, 'sms')).reason).toBe('spend_cap');
          } finally {
            sb.clearFaults();
            await host.close();
          }
        }),
        { numRuns: Math.max(5, Math.floor(RUNS / 2)), endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );
});
