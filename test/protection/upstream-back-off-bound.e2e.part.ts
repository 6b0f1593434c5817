/**
 * The API's 429 back-off at its bound, on the sandbox's clock: one tick before its `Retry-After` ends a
 * start is still refused locally (nothing sent), at its end it goes through; free starts alike; a 429 without
 * it (the API always sends one, a gateway before it may not), one second. On a store whose back-off entry
 * outlives its end by a tick (the clock moved between the end's computation and the write, as a real
 * clock does), the start at the end still goes through: no 429 with a `Retry-After` of 0.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import { ONE_PLATFORM, PLATFORMS, type TestApp } from '../support/verification-app.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { freshIp, freshPhone, protectedHost, startFrom } from './protection-host.js';

describe.each(ONE_PLATFORM)('the upstream back-off at its bound (%s)', (platform) => {
  // Registered before the suite's hooks: the sandbox's faults are cleared before the test's host closes.
  afterEach(() => {
    fx.sb.clearFaults();
  });
  // A frozen clock: only `advance` moves it, so the bound is exact.
  const fx = sandboxSuite({ demoAccount: { balance: 100_000 } });

  it.each(['sms', 'reverse_flash_call'])(
    '%s: refused until the last tick, sent at the end',
    async (method) => {
      fx.host = await protectedHost(fx.sb, platform);
      const before = fx.sb.requestCount('POST /v1/verify');
      expect((await startsAtBackOffEnd(fx.sb, fx.host, 29_999, method)).status).toBe(201);
      // The 429 answered start, then the one at the end.
      expect(fx.sb.requestCount('POST /v1/verify')).toBe(before + 2);
    },
  );

  it("a page reload during the back-off is handed its pending session, nothing sent, and leaves the host's process no unhandled rejection", async () => {
    const byOwner = {
      owner: (req: { headers: Record<string, unknown> }) => req.headers['x-user'] as string | undefined,
    };
    fx.host = await protectedHost(fx.sb, platform, {}, byOwner);
    const [ip, phone, user] = [freshIp(), freshPhone(), { 'x-user': 'reloading-user' }];
    const first = await startFrom(fx.host, ip, phone, 'sms', user);
    expect(first.status).toBe(201);
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 429, retry_after_s: 30, count: 1 });
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(429);
    const sent = fx.sb.requestCount('POST /v1/verify');
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const reload = await startFrom(fx.host, ip, phone, 'sms', user);
      expect({ status: reload.status, method: reload.body.method }).toEqual({ status: 201, method: 'sms' });
      expect(fx.sb.requestCount('POST /v1/verify')).toBe(sent);
      // A rejection nobody handles is reported once the tasks queued meanwhile have run.
      await new Promise((settled) => setImmediate(settled));
      await new Promise((settled) => setImmediate(settled));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it('a 429 without Retry-After, from a gateway before the API, backs off one second', async () => {
    // The gateway passes every request on and drops the 429's Retry-After.
    const gateway = http.createServer((req, res) => {
      const body: Buffer[] = [];
      req.on('data', (chunk: Buffer) => body.push(chunk));
      req.on('end', async () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'content-length'),
        ) as Record<string, string>;
        const answer = await fetch(`${fx.sb.url}${req.url}`, {
          method: req.method,
          headers,
          ...(body.length ? { body: Buffer.concat(body) } : {}),
        });
        const kept = [...answer.headers].filter(
          ([name]) =>
            !['retry-after', 'content-length', 'transfer-encoding', 'content-encoding'].includes(name),
        );
        res.writeHead(answer.status, Object.fromEntries(kept));
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = gateway.address() as AddressInfo;
      const api = {
        baseUrl: `http://127.0.0.1:${port}`,
        apiKey: fx.sb.demoAccount.apiKey,
        apiSecret: fx.sb.demoAccount.apiSecret,
      };
      fx.host = await protectedHost(fx.sb, platform, {}, { api });
      expect((await startsAtBackOffEnd(fx.sb, fx.host, 999)).status).toBe(201);
    } finally {
      await fx.host?.close();
      fx.host = undefined;
      await new Promise((resolve) => gateway.close(resolve));
    }
  });
});

/**
 * The API answers a start 429 with Retry-After 30 s: a start `beforeEndMs` later (a tick before the back-off
 * ends) is refused with Retry-After 1 and sends nothing; the start a tick after that is returned.
 */
async function startsAtBackOffEnd(
  sb: VerificationSandbox,
  host: TestApp,
  beforeEndMs: number,
  method = 'sms',
) {
  sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 429, retry_after_s: 30, count: 1 });
  expect((await startFrom(host, freshIp(), freshPhone(), method)).status).toBe(429);
  const sent = sb.requestCount('POST /v1/verify');
  await sb.advance(beforeEndMs);
  const waiting = await startFrom(host, freshIp(), freshPhone(), method);
  expect({ status: waiting.status, retryAfter: waiting.headers.get('retry-after') }).toEqual({
    status: 429,
    retryAfter: '1',
  });
  expect(sb.requestCount('POST /v1/verify')).toBe(sent);
  await sb.advance(1);
  return startFrom(host, freshIp(), freshPhone(), method);
}

/** A MemoryStore on which the API back-off's entry is written a millisecond after its end was computed. */
class LateBackOffWrite extends MemoryStore {
  override async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<void> {
    return super.set(key, value, key.endsWith('api-backoff') ? ttlMs + 1 : ttlMs, options);
  }
}

describe.each(PLATFORMS)('the upstream back-off on a store whose entry outlives its end (%s)', (platform) => {
  afterEach(() => {
    fx.sb.clearFaults();
  });
  const fx = sandboxSuite({ demoAccount: { balance: 100_000 } });

  it('one tick before the end refused with Retry-After 1; at the end, with the entry still stored, sent', async () => {
    const store = new LateBackOffWrite({ clock: () => fx.sb.now() });
    fx.host = await protectedHost(fx.sb, platform, {}, { store });
    const before = fx.sb.requestCount('POST /v1/verify');
    const atEnd = await startsAtBackOffEnd(fx.sb, fx.host, 29_999);
    expect({ status: atEnd.status, retryAfter: atEnd.headers.get('retry-after') }).toEqual({
      status: 201,
      retryAfter: null,
    });
    // The 429 answered start, then the one at the end.
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(before + 2);
  });
});
