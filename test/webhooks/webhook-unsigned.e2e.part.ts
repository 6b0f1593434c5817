import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryStore, VerificationStoreUnavailableError } from '../../src/index.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  CapturingLogger,
  moduleOptions,
  payloadFor,
  postWebhook,
  startAccountHost,
  startSession,
} from './harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** A session id of the right shape that no deployment started. */
const UNKNOWN = '4d7c2a1e-0000-4000-8000-00000000b207';

/** A store whose claims, or its schedule's writes, fail on demand, as a store that went away mid-delivery. */
class FlakyStore extends MemoryStore {
  down = false;
  scheduleDown = false;
  override async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.down) throw new VerificationStoreUnavailableError('setIfAbsent', 'connection lost');
    return super.setIfAbsent(key, value, ttlMs);
  }
  override async schedule(queue: string, member: string, dueAt: number): Promise<void> {
    if (this.scheduleDown) throw new VerificationStoreUnavailableError('schedule', 'connection lost');
    return super.schedule(queue, member, dueAt);
  }
}

/**
 * What a sender sees of deliveries the signature check does not gate (`signature: 'none'`): one without a
 * `webhook-id`, or with an empty one, is handled every time (never taken for a copy of another); a store
 * that fails while the delivery claims its id is a 503 the sender retries; and a route a factory switched
 * off answers 404. Hosts booted once per suite.
 */
describe.each(PLATFORMS)('webhook route: ids, store outage, route switched off (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let off: TestApp;
  let store: FlakyStore;
  const logger = new CapturingLogger();
  const route = (): string => `${host.url}/verification/webhooks`;
  const deliver = (
    headers: Record<string, string>,
    body: unknown = payloadFor('verification.verified', UNKNOWN),
  ) =>
    postWebhook(route(), {
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    sb = suite.sb;
    store = new FlakyStore({ clock: () => sb.now() });
    host = await suite.boot(() =>
      startAccountHost(platform, sb, {
        module: { webhooks: { signature: 'none' }, store },
        logger,
      }),
    );
    // Nest's logger is one per process: the second app logs to the same lines.
    off = await suite.boot({
      platform,
      logger,
      module: VerificationModule.forRootAsync({
        webhooks: { enabled: true },
        useFactory: () => moduleOptions(sb, { webhooks: { enabled: false } }),
      }),
    });
  });
  afterAll(async () => {
    await store?.close();
  });

  it('a delivery without a webhook-id, or with an empty one, is handled each time, never a duplicate', async () => {
    const results: unknown[] = [];
    const deliveries: Record<string, string>[] = [{}, {}, { 'webhook-id': '' }, { 'webhook-id': '' }];
    for (const headers of deliveries) {
      const res = await deliver(headers);
      results.push(res.status === 200 ? res.body.result : res.status);
    }
    expect(results).toEqual(['ignored', 'ignored', 'ignored', 'ignored']);
    // An id is still remembered: the same one again is a duplicate.
    expect((await deliver({ 'webhook-id': 'w_unsigned' })).body.result).toBe('ignored');
    expect((await deliver({ 'webhook-id': 'w_unsigned' })).body.result).toBe('duplicate');
  });

  it('a store that fails while the delivery claims its id: 503 with Retry-After: 5, an error naming the store, and the retry is handled', async () => {
    store.down = true;
    try {
      const res = await deliver({ 'webhook-id': 'w_store' });
      expect([res.status, res.retryAfter, res.contentType?.split(';')[0]]).toEqual([
        503,
        '5',
        'application/problem+json',
      ]);
      expect(res.body).toMatchObject({
        status: 503,
        error_code: 'service_unavailable',
        detail: 'The webhook could not be processed now; retry later',
      });
    } finally {
      store.down = false;
    }
    expect(logger.at('error').filter((m) => m.startsWith('webhook answered 503: '))).toEqual([
      'webhook answered 503: store unavailable (Verification store unavailable: setIfAbsent failed (connection lost))',
    ]);
    const line = logger.lines.filter((l) => l.message.includes('webhook_id=w_store '));
    expect(line.map((l) => `${l.level}: ${l.message.replace(/ latency_ms=\d+$/, '')}`)).toEqual([
      'warn: webhook route=webhook result=failed webhook_id=w_store http_status=503',
    ]);
    // The time the route took, in milliseconds: a few, never a clock reading.
    expect(Number(/latency_ms=(\d+)$/.exec(line[0]!.message)?.[1])).toBeLessThan(30_000);
    // Nothing was claimed: the sender's retry is handled.
    expect((await deliver({ 'webhook-id': 'w_store' })).body.result).toBe('ignored');
  });

  it('an outcome the API does not show yet, whose look-again the store fails to schedule: 503, and the retry is deferred', async () => {
    const { requestId } = await startSession(host, sb, 'sms');
    const early = () =>
      deliver({ 'webhook-id': `w_early_${requestId}` }, payloadFor('verification.verified', requestId));
    store.scheduleDown = true;
    try {
      const res = await early();
      expect([res.status, res.retryAfter, res.body.error_code]).toEqual([503, '5', 'service_unavailable']);
    } finally {
      store.scheduleDown = false;
    }
    // Nothing was claimed: the sender's retry is handled, and the session looked at again soon.
    expect((await early()).body).toEqual({ received: true, result: 'deferred' });
  });

  it('a route the factory switched off answers 404 not_found as a problem, whatever the delivery', async () => {
    const res = await postWebhook(`${off.url}/verification/webhooks`, {
      headers: { 'content-type': 'application/json', 'webhook-id': 'w_off' },
      body: JSON.stringify(payloadFor('verification.verified', UNKNOWN)),
    });
    expect([res.status, res.contentType?.split(';')[0]]).toEqual([404, 'application/problem+json']);
    expect(res.body).toMatchObject({
      status: 404,
      error_code: 'not_found',
      detail: 'Webhooks are switched off here',
    });
    // A delivery the route would refuse for its type is still told the route is off, never asked to fix
    // its type (a 415 would tell the sender the route is on).
    const plain = await postWebhook(`${off.url}/verification/webhooks`, {
      headers: { 'content-type': 'text/plain', 'webhook-id': 'w_off_text' },
      body: JSON.stringify(payloadFor('verification.verified', UNKNOWN)),
    });
    expect([plain.status, plain.body.error_code]).toEqual([404, 'not_found']);
  });
});
