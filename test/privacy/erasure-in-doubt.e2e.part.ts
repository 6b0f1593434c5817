/**
 * Erasure of an owner whose start is in doubt (its POST timed out, the session exists upstream): the
 * session's first webhook, arriving after `forget({ owner })`, adopts nothing, so no record, history
 * or event of the forgotten owner comes back. And a start erased while the API was asked: its session's late
 * webhook, past the session's end, is not adopted by a later start of the number in doubt, nor takes that start's place.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, type TestApp } from '../support/verification-app.js';
import {
  drive,
  eventsOf,
  nextPhone,
  payloadFor,
  postWebhook,
  settle,
  signed,
  startHost,
  upstreamSessions,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('erasure of an owner with a start in doubt', () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    await host.close();
  });

  // The erasure's mark must outlast every way back of the session (the in-doubt start's lifetime), however
  // short the claims' lifetime the host chose: a webhook after the claims' lifetime adopts nothing either.
  it.each([
    ['owner', 0],
    ['phoneNumber', 0],
    ['owner', 150_000],
    ['phoneNumber', 150_000],
    // Past the session's life (10 min) and within the in-doubt start's (its time-out, that life and the
    // sender's late hour): the mark lasts as long as a record of the subject may come back.
    ['owner', 1_800_000],
    ['phoneNumber', 1_800_000],
  ] as const)('by %s: its late webhook (%i ms after the erasure) adopts nothing', async (by, lateMs) => {
    host = await startHost('express', sb, {
      module: {
        verifiedPhone: { claimTtlMs: 60_000 },
        api: {
          baseUrl: sb.url,
          apiKey: sb.demoAccount.apiKey,
          apiSecret: sb.demoAccount.apiSecret,
          timeoutMs: 1000,
          maxRetries: 0,
        },
        history: {},
        limits: {},
      },
    });
    const [phone, owner] = [nextPhone(), `owner-in-doubt-${by}-${lateMs}`];
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    const answer = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'operator_id' },
      { 'x-user': owner },
    );
    expect(answer.status).toBe(503);
    const requestId = (await upstreamSessions(sb, phone, 1))[0]!.request_id;

    await host.app
      .get(VerificationErasure, { strict: false })
      .forget(by === 'owner' ? { owner } : { phoneNumber: phone });
    await sb.advance(lateMs);
    if (lateMs < 600_000)
      await drive(sb, { requestId, phone, method: 'operator_id', owner, verificationId: '' }, 'verified');
    // Past the session's ten minutes its webhooks were lost; the sender's late retry (within its hour) comes.
    else
      expect(
        (
          await postWebhook(
            `${host.url}/verification/webhooks`,
            signed(sb.demoAccount.webhookSecret, payloadFor('verification.expired', requestId), {
              timestampSeconds: Math.floor(sb.now() / 1000),
            }),
          )
        ).status,
      ).toBeLessThan(300);
    await settle(sb);

    expect(eventsOf(host, requestId)).toEqual([]);
    expect(await host.app.get(SessionRecordRepository, { strict: false }).get(requestId)).toBeNull();
    const history = host.app.get(VerificationHistory, { strict: false });
    expect(await history.list({ owner })).toEqual([]);
    // The number's history keeps what an owner's erasure leaves of it (no owner), and no outcome.
    const numbers = await history.list({ phoneNumber: phone });
    if (by === 'phoneNumber') expect(numbers).toEqual([]);
    expect(numbers.filter((e) => e.owner !== undefined || e.kind === 'outcome')).toEqual([]);
    // The webhook that found the subject erased gave back the erasure index slots it took for the session
    // it did not adopt (an owner's erasure; a number's drops its starts in doubt at once): the store names
    // the erased subject by its digest in its erasure mark (and a number's own limits) alone.
    const digest = keysOf(host).digest(by === 'owner' ? owner : phone);
    const store = host.app.get<VerificationStore>(VerificationStore);
    expect(store).toBeInstanceOf(MemoryStore);
    const erasureMark = (line: string) => line.split(' ')[0]!.endsWith(':forgotten');
    const limit = (line: string) => by === 'phoneNumber' && /(^|:)protect:[\w:-]+ [\d:]+$/.test(line);
    expect(
      dumpMemoryStore(store as MemoryStore).filter(
        (line) => line.includes(digest) && !erasureMark(line) && !limit(line),
      ),
    ).toEqual([]);
  });

  // A start erased while the API was asked paid for a session: its mark must outlast that session by the
  // record's retention, as every way back of it does. Past the session's end, a later start of the number in
  // doubt (another owner, after the erasure) is waiting for a webhook: the erased session's late one must not
  // be taken for it.
  it("a start erased in flight: past its session's end, its late webhook is not adopted by a later start in doubt, whose own session still is", async () => {
    const expirySeconds = 60;
    host = await startHost('express', sb, {
      module: {
        expirySeconds,
        api: {
          baseUrl: sb.url,
          apiKey: sb.demoAccount.apiKey,
          apiSecret: sb.demoAccount.apiSecret,
          // The first start's answer (600 ms late) must land within the time-out on a loaded machine too.
          timeoutMs: 2500,
          maxRetries: 0,
        },
        history: {},
        limits: { spendCap: false, resendCooldownMs: false },
      },
    });
    const phone = nextPhone();
    const start = (owner: string) =>
      call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-user': owner },
      );

    // The API answers the first start late (within the time-out): the number is forgotten meanwhile.
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 600, count: 1 });
    const before = sb.requestCount('POST /v1/verify');
    const erasedStart = start('owner-erased-in-flight');
    while (sb.requestCount('POST /v1/verify') === before) await new Promise((r) => setTimeout(r, 10));
    await host.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: phone });
    expect((await erasedStart).status).toBe(404);
    const erasedId = sb.sessionsFor(phone).at(-1)!.request_id;

    // Its session ends; then another owner's start of the number is in doubt (its POST timed out).
    await sb.advance(expirySeconds * 1000 + 30_000);
    await settle(sb);
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 3000, count: 1 });
    expect((await start('owner-in-doubt-after')).status).toBe(503);
    const until = Date.now() + 8000;
    while (sb.sessionsFor(phone).length < 2 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));

    // The sender's late retry of the erased session's webhook (within its hour) comes: nothing is adopted.
    await sb.advance(10_000);
    const late = await postWebhook(
      `${host.url}/verification/webhooks`,
      signed(sb.demoAccount.webhookSecret, payloadFor('verification.expired', erasedId), {
        timestampSeconds: Math.floor(sb.now() / 1000),
      }),
    );
    expect(late.status).toBeLessThan(300);
    await settle(sb);
    expect(eventsOf(host, erasedId)).toEqual([]);
    expect(await host.app.get(SessionRecordRepository, { strict: false }).get(erasedId)).toBeNull();

    // The later start's own session is still adopted by its webhook, for its owner.
    const ownId = sb.sessionsFor(phone).find((s) => s.request_id !== erasedId)!.request_id;
    sb.addFault({ webhooks: { drop_next: 1 } });
    await sb.fail(ownId);
    await settle(sb);
    const own = await postWebhook(
      `${host.url}/verification/webhooks`,
      signed(sb.demoAccount.webhookSecret, payloadFor('verification.failed', ownId), {
        timestampSeconds: Math.floor(sb.now() / 1000),
      }),
    );
    expect(own.body).toEqual({ received: true, result: 'processed' });
    expect(eventsOf(host, ownId)).toEqual(['verification.failed']);
    expect(host.events.find((e) => e.requestId === ownId)?.owner).toBe('owner-in-doubt-after');
  });
});

/** The host's data keys: a subject's store keys are named by digests under them. */
function keysOf(host: TestApp) {
  return host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, { strict: false }).dataKeys;
}
