/**
 * Attack (U3, did not succeed): a session recorded as usual, then erased with its owner (`forget({ owner })`
 * drops its record); a minute later another person's start of the same number and method is in doubt (its
 * POST timed out). The erased session's webhook (the code was entered upstream) names a session the module
 * no longer knows: were it matched against the start in doubt (same number, same method, created within its
 * reach), the other person would be handed the erased owner's session and its outcome. It is not adopted: no
 * event, no record, nothing in the other person's history; the start in doubt still adopts its own session.
 *
 * And a number erased while its own start waits for the API's answer (which comes too late): the session
 * the API created for that start is the erased subject's. It was adopted by its webhook when the start in
 * doubt was remembered at the time its wait failed (after the erasure) rather than the time it was sent.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreBatchResults, StoreOperation } from '../../src/store/store-batch.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, type TestApp } from '../support/verification-app.js';
import {
  eventsOf,
  nextPhone,
  payloadFor,
  postWebhook,
  settle,
  signed,
  startHost,
  upstreamSessions,
} from '../webhooks/harness.js';

describe('a session erased with its owner, and a later start of its number in doubt', () => {
  const suite = sandboxSuite();
  let host: TestApp | undefined;
  afterEach(async () => {
    suite.sb.clearFaults();
    await host?.close();
    host = undefined;
  });
  /** A host whose API calls give up after 1 s, with history (on `store` when given). */
  const boot = async (store?: MemoryStore): Promise<TestApp> =>
    (host = await startHost('express', suite.sb, {
      module: {
        ...(store === undefined ? {} : { store }),
        api: {
          baseUrl: suite.sb.url,
          apiKey: suite.sb.demoAccount.apiKey,
          apiSecret: suite.sb.demoAccount.apiSecret,
          timeoutMs: 1000,
          maxRetries: 0,
        },
        history: {},
        limits: { spendCap: false, resendCooldownMs: false },
      },
    }));
  const start = (phone: string, owner: string) =>
    call(
      host!.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'sms' },
      { 'x-user': owner },
    );
  /** A signed webhook of `requestId`, posted as the API would send it now. */
  const webhook = (event: string, requestId: string) =>
    postWebhook(
      `${host!.url}/verification/webhooks`,
      signed(suite.sb.demoAccount.webhookSecret, payloadFor(event, requestId), {
        timestampSeconds: Math.floor(suite.sb.now() / 1000),
      }),
    );

  it("its webhook is not adopted by the other person's start in doubt, whose own session still is", async () => {
    const sb = suite.sb;
    host = await boot();
    const phone = nextPhone();

    expect((await start(phone, 'owner-erased')).status).toBe(201);
    const erasedId = sb.sessionsFor(phone)[0]!.request_id;
    await host.app.get(VerificationErasure, { strict: false }).forget({ owner: 'owner-erased' });

    // A minute later: another person's start of the number, in doubt.
    await sb.advance(60_000);
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    expect((await start(phone, 'owner-in-doubt')).status).toBe(503);
    await upstreamSessions(sb, phone, 2);

    // The erased session ends upstream: its webhook comes.
    sb.addFault({ webhooks: { drop_next: 1 } });
    await sb.fail(erasedId);
    await settle(sb);
    const late = await webhook('verification.failed', erasedId);
    expect(late.status).toBeLessThan(300);
    await settle(sb);
    expect(eventsOf(host, erasedId)).toEqual([]);
    expect(await host.app.get(SessionRecordRepository, { strict: false }).get(erasedId)).toBeNull();
    const history = host.app.get(VerificationHistory, { strict: false });
    // Its own history: the start answered 503, and no outcome.
    expect((await history.list({ owner: 'owner-in-doubt' })).map((e) => [e.kind, e.errorCode])).toEqual([
      ['refusal', 'service_unavailable'],
    ]);

    // The start in doubt's own session is adopted by its own webhook, for its owner.
    const ownId = sb.sessionsFor(phone).find((s) => s.request_id !== erasedId)!.request_id;
    sb.addFault({ webhooks: { drop_next: 1 } });
    await sb.fail(ownId);
    await settle(sb);
    const own = await webhook('verification.failed', ownId);
    expect(own.body).toEqual({ received: true, result: 'processed' });
    expect(eventsOf(host, ownId)).toEqual(['verification.failed']);
    expect(host.events.find((e) => e.requestId === ownId)?.owner).toBe('owner-in-doubt');
  });

  it.each([
    ['a second after it was sent', 1000],
    ['on the module-clock millisecond it was sent', 0],
  ])(
    'a number erased while its start waits for an answer that comes too late (%s): its session is not adopted',
    async (_, stepMs) => {
      const sb = suite.sb;
      host = await boot();
      const phone = nextPhone();
      sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
      const answer = start(phone, 'owner-a');
      // The POST is on its way; a second later (module clock) the number is erased, a second before the
      // module gives up waiting: the start was sent before the erasure, though it fails after it. An
      // erasure on the very millisecond of the send counts as after it.
      await new Promise((resolve) => setTimeout(resolve, 150));
      if (stepMs > 0) await sb.advance(stepMs);
      await host.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: phone });
      if (stepMs > 0) await sb.advance(stepMs);
      expect((await answer).status).toBe(503);
      const id = (await upstreamSessions(sb, phone, 1))[0]!.request_id;

      sb.addFault({ webhooks: { drop_next: 1 } });
      await sb.fail(id);
      await settle(sb);
      const late = await webhook('verification.failed', id);
      expect(late.status).toBeLessThan(300);
      await settle(sb);
      expect(eventsOf(host, id)).toEqual([]);
      expect(await host.app.get(SessionRecordRepository, { strict: false }).get(id)).toBeNull();
      const history = host.app.get(VerificationHistory, { strict: false });
      expect((await history.list({ owner: 'owner-a' })).map((e) => e.kind)).not.toContain('outcome');
    },
  );

  it('a number erased after its start reserved its place and before the start was sent, whose answer comes too late: its session is not adopted', async () => {
    const sb = suite.sb;
    const phone = nextPhone();
    let erase: (() => Promise<void>) | undefined;
    /** Runs `erase` once the start's reservation of its erasure index slots under the number is answered. */
    class ErasingStore extends MemoryStore {
      override async batch<const T extends readonly StoreOperation[]>(
        operations: T,
      ): Promise<StoreBatchResults<T>> {
        const answers = await super.batch(operations);
        const reserves = operations.some((o) => o.op === 'setIfAbsent' && o.key.startsWith('subject:{n:'));
        const run = reserves ? erase : undefined;
        erase = run === undefined ? erase : undefined;
        await run?.();
        return answers;
      }
    }
    host = await boot(new ErasingStore({ clock: () => sb.now() }));
    // The erasure a second (module clock) before the start goes out, after the start read the number's
    // erasure mark: the start did not see it, and its session must not be brought back by its webhook.
    erase = async () => {
      await host!.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: phone });
      await sb.advance(1000);
    };
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    expect((await start(phone, 'owner-a')).status).toBe(503);
    expect(erase).toBeUndefined();
    const id = (await upstreamSessions(sb, phone, 1))[0]!.request_id;

    sb.addFault({ webhooks: { drop_next: 1 } });
    await sb.fail(id);
    await settle(sb);
    const late = await webhook('verification.failed', id);
    expect(late.status).toBeLessThan(300);
    await settle(sb);
    expect(eventsOf(host, id)).toEqual([]);
    expect(await host.app.get(SessionRecordRepository, { strict: false }).get(id)).toBeNull();
  });
});
