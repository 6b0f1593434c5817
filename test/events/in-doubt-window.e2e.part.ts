/**
 * Which sessions a start in doubt adopts, on the module's (frozen) clock: one created within its window, from
 * five minutes of clock skew before the start to its time-out and five minutes after, at both bounds and not
 * a millisecond past them; one session only (a second of its number and method is another integration's),
 * while a number's other start in doubt keeps its whole lifetime once one is adopted;
 * and what the operator reads of it (the start remembered, the session adopted: method and masked number,
 * never the number).
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { InDoubtStarts } from '../../src/verification/in-doubt-starts.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { CapturingLogger } from '../support/log-capture.js';
import { call, type TestApp } from '../support/verification-app.js';
import {
  apiInitiate,
  moduleOptions,
  nextPhone,
  payloadFor,
  postWebhook,
  settle,
  signed,
  startHost,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** The module's time-out of the initiation. */
const TIMEOUT_MS = 1000;
/** The clock skew a session's `created_at` may show either side of its start's window. */
const SKEW_MS = 5 * 60_000;

describe("in-doubt starts: a start's window and its one session", () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  beforeAll(() => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    await host.close();
  });
  const boot = async (
    /** null: not set (the API's default). */
    expirySeconds: number | null = 600,
    webhooks = true,
    logger?: CapturingLogger,
    registry?: Registry,
  ) => {
    // Sessions of ten minutes by default: the ones revealed below are still the API's when their webhook comes.
    host = await startHost('express', sb, {
      logger,
      module: {
        ...(expirySeconds === null ? {} : { expirySeconds }),
        ...(registry === undefined ? {} : { metrics: { enabled: true, registry } }),
        api: { ...moduleOptions(sb).api, timeoutMs: TIMEOUT_MS },
        ...(webhooks ? {} : { webhooks: { enabled: false } }),
      },
    });
  };
  /** A start the sandbox answers past the module's time-out (503); resolves with its session once it exists. */
  const startTooLate = async (
    phone: string,
    owner: string,
    /** Run once the module answered, before the API creates the session (it answers 1.5 s after the time-out). */
    answered?: () => Promise<void>,
  ): Promise<string> => {
    const known = new Set(sb.sessionsFor(phone).map((s) => s.request_id));
    const created = () => sb.sessionsFor(phone).find((s) => !known.has(s.request_id));
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    const answer = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'sms' },
      { 'x-user': owner },
    );
    expect(answer.status).toBe(503);
    await answered?.();
    const until = Date.now() + 5000;
    while (created() === undefined && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return created()!.request_id;
  };
  /**
   * The session ends (failed, unless it expired already) and its webhook is lost; the sender's retry then
   * names it: the route's answer.
   */
  const reveal = async (requestId: string): Promise<unknown> => {
    if (!['failed', 'expired'].includes(sb.getSession(requestId)!.status)) {
      sb.addFault({ webhooks: { drop_next: 1 } });
      await sb.fail(requestId);
      await settle(sb);
    }
    const event = `verification.${sb.getSession(requestId)!.status}`;
    const delivered = await postWebhook(
      `${host.url}/verification/webhooks`,
      signed(sb.demoAccount.webhookSecret, payloadFor(event, requestId), {
        timestampSeconds: Math.floor(sb.now() / 1000),
      }),
    );
    return delivered.body;
  };
  const PROCESSED = { received: true, result: 'processed' };
  const IGNORED = { received: true, result: 'ignored' };

  it('adopts a session created five minutes before the start or its time-out and five minutes after it, at the bound; not one a millisecond further', async () => {
    await boot();
    // Another integration's sessions of the same numbers and method, created before the starts in doubt.
    const [early, tooEarly] = [nextPhone(), nextPhone()];
    const tooEarlyId = await apiInitiate(sb, tooEarly, 'sms');
    await sb.advance(1);
    const earlyId = await apiInitiate(sb, early, 'sms');
    await sb.advance(SKEW_MS);
    // Both started now: `early`'s session five minutes before, `tooEarly`'s a millisecond more.
    await startTooLate(early, 'user-early');
    await startTooLate(tooEarly, 'user-too-early');
    expect([await reveal(earlyId), await reveal(tooEarlyId)]).toEqual([PROCESSED, IGNORED]);

    // And after them: created at the start's time-out plus the skew, then a millisecond later.
    const [late, tooLate] = [nextPhone(), nextPhone()];
    await startTooLate(late, 'user-late');
    await startTooLate(tooLate, 'user-too-late');
    await sb.advance(TIMEOUT_MS + SKEW_MS);
    const lateId = await apiInitiate(sb, late, 'sms');
    await sb.advance(1);
    const tooLateId = await apiInitiate(sb, tooLate, 'sms');
    expect([await reveal(lateId), await reveal(tooLateId)]).toEqual([PROCESSED, IGNORED]);
  });

  it('two starts of one number in doubt 1.5 s apart: each session goes to the start whose wait it was created in, whichever webhook comes first', async () => {
    await boot();
    const ownerOf = (id: string) => host.events.find((e) => e.requestId === id)?.owner;
    const pair = async (phone: string): Promise<[string, string]> => {
      // The API takes the first start 0.9 s into the module's wait (queued); the second at once, 1.5 s later.
      const first = await startTooLate(phone, `${phone}-first`, () => sb.advance(900));
      await sb.advance(600);
      return [first, await startTooLate(phone, `${phone}-second`)];
    };
    const [one, two] = [nextPhone(), nextPhone()];
    const [oneFirst, oneSecond] = await pair(one);
    expect([await reveal(oneFirst), await reveal(oneSecond)]).toEqual([PROCESSED, PROCESSED]);
    const [twoFirst, twoSecond] = await pair(two);
    expect([await reveal(twoSecond), await reveal(twoFirst)]).toEqual([PROCESSED, PROCESSED]);
    expect([oneFirst, oneSecond, twoFirst, twoSecond].map(ownerOf)).toEqual([
      `${one}-first`,
      `${one}-second`,
      `${two}-first`,
      `${two}-second`,
    ]);
  });

  it('an API answer without created_at: the session is adopted by its number and method alone, once', async () => {
    await boot();
    const phone = nextPhone();
    const own = await startTooLate(phone, 'user-undated');
    // The API's answer names no creation time.
    sb.addFault({ route: 'GET /v1/verify/:id', kind: 'field', field: 'created_at', value: null, count: 0 });
    expect(await reveal(own)).toEqual(PROCESSED);
    expect(host.events.filter((e) => e.requestId === own).map((e) => e.owner)).toContain('user-undated');
    const other = await apiInitiate(sb, phone, 'sms');
    expect(await reveal(other)).toEqual(IGNORED);
  });

  it('adopts one session: a second one of its number and method, revealed after the first, is not adopted', async () => {
    await boot();
    const phone = nextPhone();
    const own = await startTooLate(phone, 'user-once');
    expect(await reveal(own)).toEqual(PROCESSED);
    const other = await apiInitiate(sb, phone, 'sms');
    expect(await reveal(other)).toEqual(IGNORED);
  });

  it("a number's other start in doubt, after one of its starts is adopted, stays in doubt its whole lifetime: its session's late webhook, past the session's life, adopts it", async () => {
    // Sessions of ten minutes: the second start stays in doubt 1 s + 10 min + 1 h.
    await boot();
    const phone = nextPhone();
    const first = await startTooLate(phone, 'user-pair-first');
    await sb.advance(120_000);
    const second = await startTooLate(phone, 'user-pair-second');
    expect(await reveal(first)).toEqual(PROCESSED);
    // Every webhook of the second session's expiry is lost: the sender's retry half an hour later reveals it.
    sb.addFault({ webhooks: { drop_next: 1000 } });
    await sb.advance(600_000 + 1_800_000);
    await settle(sb);
    sb.clearFaults();
    expect(await reveal(second)).toEqual(PROCESSED);
    expect([first, second].map((id) => host.events.find((e) => e.requestId === id)?.owner)).toEqual([
      'user-pair-first',
      'user-pair-second',
    ]);
  });

  it('a number erased a millisecond before its start in doubt: the session is adopted (an erasure forgets what came before it)', async () => {
    await boot();
    const [phone, owner] = [nextPhone(), 'user-erased-before'];
    await host.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: phone });
    await sb.advance(1);
    const own = await startTooLate(phone, owner);
    expect(await reveal(own)).toEqual(PROCESSED);
    expect(host.events.filter((e) => e.requestId === own).map((e) => [e.event, e.owner])).toEqual([
      ['verification.failed', owner],
    ]);
  });

  it('a start stays in doubt its time-out, the session’s life and the late hour, even while later starts of its number keep their list alive: gone at that bound, kept a millisecond before', async () => {
    // Sessions of five minutes: a start stays in doubt 1 s + 5 min + 1 h.
    await boot(300);
    const lifetime = TIMEOUT_MS + 300_000 + 3_600_000;
    const [gone, kept] = [nextPhone(), nextPhone()];
    const goneId = await startTooLate(gone, 'user-gone-1');
    const keptId = await startTooLate(kept, 'user-kept-1');
    // Every webhook of their expiry is lost: only the sender's late retries reveal the sessions.
    sb.addFault({ webhooks: { drop_next: 1000 } });
    // Other owners start the numbers past the first sessions' reach (the skew): their lists live on.
    await sb.advance(SKEW_MS + 1);
    await startTooLate(gone, 'user-gone-2');
    await startTooLate(kept, 'user-kept-2');
    await sb.advance(lifetime - SKEW_MS - 2);
    await startTooLate(kept, 'user-kept-3');
    await sb.advance(1);
    await startTooLate(gone, 'user-gone-3');
    await settle(sb);
    sb.clearFaults();
    expect([await reveal(keptId), await reveal(goneId)]).toEqual([PROCESSED, IGNORED]);
  });

  it('without expirySeconds a start stays in doubt as long as the longest session the API may give (10 min), not its default', async () => {
    await boot(null);
    const lifetime = TIMEOUT_MS + 600_000 + 3_600_000;
    const id = await startTooLate(nextPhone(), 'user-default-expiry');
    sb.addFault({ webhooks: { drop_next: 1000 } });
    await sb.advance(lifetime - 1);
    await settle(sb);
    sb.clearFaults();
    expect(await reveal(id)).toEqual(PROCESSED);
  });

  it('with the webhook route off nothing could reveal a session: a start in doubt keeps nothing in the store', async () => {
    await boot(undefined, false);
    const phone = nextPhone();
    await startTooLate(phone, 'user-no-webhooks');
    const store = host.app.get<VerificationStore>(VerificationStore);
    const keys = host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, { strict: false });
    expect(await store.get(InDoubtStarts.inDoubtKey(keys.dataKeys, phone))).toBeNull();
  });

  it('with the webhook route off the operator still reads the start in doubt: a session may exist (and be charged) upstream', async () => {
    const logger = new CapturingLogger();
    const registry = new Registry();
    await boot(undefined, false, logger, registry);
    const phone = nextPhone();
    const masked = `${phone.slice(0, 2)}${'*'.repeat(phone.length - 6)}${phone.slice(-4)}`;
    await startTooLate(phone, 'user-no-webhooks-logged');
    const lines = logger.lines.filter((l) => /outcome unknown/.test(l));
    expect(lines).toEqual([
      expect.stringMatching(
        /^warn initiation outcome unknown: a session may exist upstream; without the webhook route it is never adopted/,
      ),
    ]);
    expect(lines[0]).toContain('sms');
    expect(lines[0]).toContain(masked);
    expect(lines[0]).not.toContain(phone);
    // And counts it, as with the route on: remembered, never adopted.
    const counted = (await registry.getMetricsAsJSON()).find(
      (m) => m.name === 'verification_in_doubt_starts_total',
    );
    expect(counted?.values.map((v) => [v.labels, v.value])).toStrictEqual([
      [{ method: 'sms', result: 'remembered' }, 1],
    ]);
  });

  it("the operator reads the start in doubt and its session's adoption: method and masked number, never the number", async () => {
    const logger = new CapturingLogger();
    await boot(600, true, logger);
    const phone = nextPhone();
    const masked = `${phone.slice(0, 2)}${'*'.repeat(phone.length - 6)}${phone.slice(-4)}`;
    const own = await startTooLate(phone, 'user-logged');
    expect(await reveal(own)).toEqual(PROCESSED);
    const lines = logger.lines.filter((l) => /outcome (unknown|was unknown)/.test(l));
    expect(lines).toEqual([
      expect.stringMatching(
        /^warn initiation outcome unknown: a session may exist upstream; .*adopted if a webhook/,
      ),
      expect.stringMatching(/^warn adopted a session whose initiation outcome was unknown/),
    ]);
    for (const line of lines) {
      expect(line).toContain('sms');
      expect(line).toContain(masked);
      expect(line).not.toContain(phone);
    }
  });
});
