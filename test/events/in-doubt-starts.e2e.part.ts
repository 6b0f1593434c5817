import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { InDoubtStarts } from '../../src/verification/in-doubt-starts.js';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import type { VerificationSandbox, SandboxMethod } from '../../src/testing/index.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import type { DataKeys } from '../../src/core/data-keys.js';
import { call, ONE_PLATFORM, type Platform, type TestApp } from '../support/verification-app.js';
import {
  apiCheck,
  apiInitiate,
  drive,
  eventsOf,
  moduleOptions,
  nextPhone,
  payloadFor,
  postWebhook,
  reconcilerOf,
  settle,
  signed,
  startHost,
  type Outcome,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** Long enough that no other answer of the sandbox times out on a loaded CI machine. */
const TIMEOUT_MS = 1000;
/** Past the module's time-out: the module gives up, the sandbox creates the session a moment later. */
const LATE_MS = 2500;

/**
 * An initiation whose outcome is unknown (time-out, reset, unreadable answer) may still have created
 * a session upstream, and the API cannot be asked which. The module answers 503, keeps the caller's
 * cooldown (no second paid SMS), remembers the start, and adopts the session when its first signed
 * webhook names it: recorded with the start's owner, followed by the reconciler, its outcome emitted
 * exactly once.
 */
describe.each(ONE_PLATFORM)('in-doubt starts (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let registry: Registry;
  /** A counter's value for the given labels (0 when never incremented). */
  const counter = async (name: string, labels: Record<string, string>): Promise<number> => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === `verification_${name}`);
    const sample = metric?.values.find((v) =>
      Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l),
    );
    return sample?.value ?? 0;
  };

  beforeAll(async () => {
    sb = suite.sb;
  });
  const boot = (expirySeconds?: number) => {
    registry = new Registry();
    return startHost(platform, sb, {
      module: {
        expirySeconds,
        metrics: { enabled: true, registry },
        api: { ...moduleOptions(sb).api, timeoutMs: TIMEOUT_MS },
        // The defaults: the resend cooldown is what stops a second paid start while the first is in doubt.
        limits: {},
      },
    });
  };
  beforeEach(async () => {
    host = await boot();
  });
  afterEach(async () => {
    sb.clearFaults();
    await host.close();
  });

  /** Starts through the host while the sandbox answers the POST too late; resolves once the session exists upstream. */
  const startTooLate = async (
    method: SandboxMethod,
    owner: string,
    purpose?: string,
    phone = nextPhone(),
  ): Promise<{ phone: string; requestId: string; answer: Awaited<ReturnType<typeof call>> }> => {
    const known = new Set(sb.sessionsFor(phone).map((s) => s.request_id));
    const created = () => sb.sessionsFor(phone).find((s) => !known.has(s.request_id));
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: LATE_MS, count: 1 });
    const answer = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method, ...(purpose === undefined ? {} : { purpose }) },
      { 'x-user': owner },
    );
    const until = Date.now() + 5000;
    while (created() === undefined && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return { phone, requestId: created()!.request_id, answer };
  };

  const cases: { method: SandboxMethod; outcome: Outcome }[] = [
    { method: 'operator_id', outcome: 'verified' },
    { method: 'sms', outcome: 'expired' },
    { method: 'msgr1_otp', outcome: 'failed' },
    { method: 'reverse_flash_call', outcome: 'expired' },
  ];

  it.each(cases)(
    '$method started past the time-out and then $outcome: 503, no second initiation, adopted by its webhook with one event',
    async ({ method, outcome }) => {
      const { phone, requestId, answer } = await startTooLate(method, 'user-a');
      expect(answer.status).toBe(503);
      expect(answer.body.error_code).toBe('service_unavailable');
      expect(answer.text).not.toContain(requestId);

      // The user tries again at once: the cooldown was kept, so no second paid initiation goes out.
      const again = await call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method },
        { 'x-user': 'user-a' },
      );
      expect(again.status).toBe(429);
      expect(sb.sessionsFor(phone)).toHaveLength(1);

      const store = host.app.get(SessionRecordRepository, { strict: false });
      expect(await store.get(requestId)).toBeNull();

      await drive(sb, { requestId, phone, method, owner: 'user-a', verificationId: '' }, outcome);
      await settle(sb);

      const events = host.events.filter((e) => e.requestId === requestId);
      expect(events.map((e) => e.event)).toEqual([`verification.${outcome}`]);
      expect(events[0]).toMatchObject({
        owner: 'user-a',
        phoneNumber: phone,
        method,
        status: outcome,
        source: 'webhook',
      });
      const record = await store.get(requestId);
      expect(record).toMatchObject({ requestId, owner: 'user-a', status: outcome });
      // msgr1_otp is charged at initiation: the adopted record knows what it cost.
      if (method === 'msgr1_otp') expect(record!.cost?.amount).toBeGreaterThan(0);
      // The operator sees the start in doubt, then its session adopted and counted as a paid start.
      expect(await counter('in_doubt_starts_total', { method, result: 'remembered' })).toBe(1);
      expect(await counter('in_doubt_starts_total', { method, result: 'adopted' })).toBe(1);
      expect(await counter('starts_total', { method })).toBe(1);
      // Settled: nothing left for the reconciler, and the webhook's retries change nothing.
      expect(await reconcilerOf(host).pending()).toBe(0);
      await sb.advance(60_000);
      await settle(sb);
      expect(eventsOf(host, requestId)).toEqual([`verification.${outcome}`]);
    },
  );

  it("the webhook that adopts a session asks the API about it once: the adoption's answer is the one observed", async () => {
    const { phone, requestId } = await startTooLate('operator_id', 'user-c');
    const gets = sb.requestCount('GET /v1/verify/:id');
    await drive(
      sb,
      { requestId, phone, method: 'operator_id', owner: 'user-c', verificationId: '' },
      'verified',
    );
    await settle(sb);
    expect(eventsOf(host, requestId)).toEqual(['verification.verified']);
    expect(sb.requestCount('GET /v1/verify/:id') - gets).toBe(1);
  });

  it('an adopted session whose outcome webhook is lost is settled by the reconciler', async () => {
    const { requestId } = await startTooLate('operator_id', 'user-b');
    // The SMS fallback's code_required reveals the session; the verified webhook is then lost.
    await sb.operator(requestId, 'fallback');
    await settle(sb);
    expect(eventsOf(host, requestId)).toEqual(['verification.code_required']);
    expect(await reconcilerOf(host).pending()).toBe(1);
    sb.addFault({ webhooks: { drop_next: 1 } });
    expect(await apiCheck(sb, requestId, sb.getSession(requestId)!.code!)).toBe(200);
    // The operator's result follows the accepted code after a moment of sandbox time.
    await sb.advance(1000);
    await settle(sb);
    expect(eventsOf(host, requestId)).toEqual(['verification.code_required']);
    await sb.advance(15_000);
    await reconcilerOf(host).runOnce();
    expect(eventsOf(host, requestId)).toEqual(['verification.code_required', 'verification.verified']);
    expect(host.events.find((e) => e.event === 'verification.verified')?.owner).toBe('user-b');
    expect(await reconcilerOf(host).pending()).toBe(0);
  });

  it('adopted by its first webhook to arrive, the verified one (the earlier lost): the host sees verified once', async () => {
    const { requestId } = await startTooLate('operator_id', 'user-c');
    // The SMS fallback's code_required webhook is lost: the session is first seen verified.
    sb.addFault({ webhooks: { drop_next: 1 } });
    await sb.operator(requestId, 'fallback');
    await settle(sb);
    expect(eventsOf(host, requestId)).toEqual([]);
    expect(await apiCheck(sb, requestId, sb.getSession(requestId)!.code!)).toBe(200);
    await sb.advance(1000);
    await settle(sb);
    expect(eventsOf(host, requestId)).toEqual(['verification.verified']);
    expect(host.events.find((e) => e.requestId === requestId)?.owner).toBe('user-c');
    const store = host.app.get(SessionRecordRepository, { strict: false });
    expect(await store.get(requestId)).toMatchObject({ owner: 'user-c', status: 'verified' });
  });

  it("a session that answers no remembered start is not adopted: another method, another number, or the API's definite refusal", async () => {
    const { phone } = await startTooLate('sms', 'user-c');
    const log = (): string[] =>
      sb
        .webhookLog()
        .filter((d) => d.status === 200)
        .map((d) => d.request_id);
    // Another integration on the same account: the same number by another method, and another number.
    const otherMethod = await apiInitiate(sb, phone, 'flash_call');
    const otherNumber = await apiInitiate(sb, nextPhone(), 'sms');
    // A start the API refused with a problem document was not processed: nothing is remembered.
    const refusedPhone = nextPhone();
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 500, count: 1 });
    const refused = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: refusedPhone, method: 'sms' },
      { 'x-user': 'user-c' },
    );
    expect(refused.status).toBe(503);
    const sameAsRefused = await apiInitiate(sb, refusedPhone, 'sms');

    for (const id of [otherMethod, otherNumber, sameAsRefused]) await sb.fail(id);
    await settle(sb);
    for (const id of [otherMethod, otherNumber, sameAsRefused]) expect(log()).toContain(id);
    const records = host.app.get(SessionRecordRepository, { strict: false });
    for (const id of [otherMethod, otherNumber, sameAsRefused]) {
      expect(eventsOf(host, id)).toEqual([]);
      expect(await records.get(id)).toBeNull();
    }
    // The in-doubt start is still remembered for its own session.
    const store = host.app.get<VerificationStore>(VerificationStore);
    expect(await store.get(InDoubtStarts.inDoubtKey(keysOf(host), phone))).not.toBeNull();
    expect(await store.get(InDoubtStarts.inDoubtKey(keysOf(host), refusedPhone))).toBeNull();
  });
  it("a later session of the same number and method is not adopted: the start's window has an upper bound", async () => {
    // Sessions live ten minutes here, so the in-doubt start's own session is still pending (and its
    // start still remembered) when another integration starts the same number much later.
    await host.close();
    host = await boot(600);
    const { phone, requestId: own } = await startTooLate('sms', 'user-d');
    // Past the start's window: its time-out plus the allowed clock skew (five minutes).
    await sb.advance(6 * 60_000);
    const later = await apiInitiate(sb, phone, 'sms');
    await sb.fail(later);
    await settle(sb);
    expect(
      sb
        .webhookLog()
        .filter((d) => d.status === 200)
        .map((d) => d.request_id),
    ).toContain(later);
    const records = host.app.get(SessionRecordRepository, { strict: false });
    expect(eventsOf(host, later)).toEqual([]);
    expect(await records.get(later)).toBeNull();
    // The start is still remembered for its own session, which is adopted when it reveals itself.
    const store = host.app.get<VerificationStore>(VerificationStore);
    expect(await store.get(InDoubtStarts.inDoubtKey(keysOf(host), phone))).not.toBeNull();
    await sb.fail(own);
    await settle(sb);
    expect(eventsOf(host, own)).toEqual(['verification.failed']);
  });

  it("an adopted session is the start's twin: its events and its record carry the start's purpose, as a start answered in time does", async () => {
    const { requestId } = await startTooLate('sms', 'user-e', 'login');
    const onTime = nextPhone();
    const answered = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: onTime, method: 'sms', purpose: 'login' },
      { 'x-user': 'user-e' },
    );
    expect(answered.status).toBe(201);
    const twin = sb.sessionsFor(onTime)[0]!.request_id;
    for (const id of [requestId, twin]) await sb.fail(id);
    await settle(sb);
    for (const id of [requestId, twin]) {
      expect(host.events.filter((e) => e.requestId === id).map((e) => [e.event, e.purpose])).toEqual([
        ['verification.failed', 'login'],
      ]);
      const record = await host.app.get(SessionRecordRepository, { strict: false }).get(id);
      expect(record?.purpose).toBe('login');
    }
  });

  it("an adopted session is the start's twin in the metrics: a paid start, and its price in spend_total", async () => {
    const { phone, requestId } = await startTooLate('msgr1_otp', 'user-f');
    await drive(sb, { requestId, phone, method: 'msgr1_otp', owner: 'user-f', verificationId: '' }, 'failed');
    await settle(sb);
    const cost = (await host.app.get(SessionRecordRepository, { strict: false }).get(requestId))!.cost!;
    expect(cost.amount).toBeGreaterThan(0);
    expect(await counter('starts_total', { method: 'msgr1_otp' })).toBe(1);
    expect(await counter('spend_total', { method: 'msgr1_otp', currency: cost.currency })).toBe(cost.amount);
  });

  it('two starts of one number and method both in doubt: adopting the first leaves the second remembered, and its webhook adopts it', async () => {
    const first = await startTooLate('sms', 'user-h');
    // Past the resend cooldown the user tries again, and that start times out too.
    await sb.advance(120_000);
    const second = await startTooLate('sms', 'user-h', undefined, first.phone);
    expect([first.answer.status, second.answer.status]).toEqual([503, 503]);
    expect(second.requestId).not.toBe(first.requestId);
    await sb.fail(first.requestId);
    await settle(sb);
    await sb.fail(second.requestId);
    await settle(sb);
    for (const { requestId } of [first, second])
      expect(host.events.filter((e) => e.requestId === requestId).map((e) => [e.event, e.owner])).toEqual([
        ['verification.failed', 'user-h'],
      ]);
    expect(await counter('in_doubt_starts_total', { method: 'sms', result: 'adopted' })).toBe(2);
  });

  it("a webhook the sender retries up to an hour after the session's expiry still adopts it; one past that hour does not", async () => {
    // Sessions live ten minutes: the start stays in doubt for its time-out, that life and the sender's late hour.
    await host.close();
    host = await boot(600);
    const route = `${host.url}/verification/webhooks`;
    const deliver = (id: string) =>
      postWebhook(
        route,
        signed(sb.demoAccount.webhookSecret, payloadFor('verification.expired', id), {
          timestampSeconds: Math.floor(sb.now() / 1000),
        }),
      );
    const late = await startTooLate('sms', 'user-f');
    const lost = await startTooLate('sms', 'user-g');
    // Every webhook of their expiry is lost: only the sender's late retries reveal the sessions.
    sb.addFault({ webhooks: { drop_next: 1000 } });
    await sb.advance(600_000 + 3_600_000 - 1_000);
    await settle(sb);
    sb.clearFaults();
    expect((await deliver(late.requestId)).body).toEqual({ received: true, result: 'processed' });
    expect(host.events.filter((e) => e.requestId === late.requestId).map((e) => [e.event, e.owner])).toEqual([
      ['verification.expired', 'user-f'],
    ]);
    // Past the start's time-out, its session's life and the late hour, the start is no longer in doubt.
    await sb.advance(TIMEOUT_MS + 1_000);
    expect((await deliver(lost.requestId)).body).toEqual({ received: true, result: 'ignored' });
    expect(eventsOf(host, lost.requestId)).toEqual([]);
  });
});

/** The host's data keys: the in-doubt keys are digests under them. */
function keysOf(host: TestApp): DataKeys {
  return host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, { strict: false }).dataKeys;
}
