import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  VerificationApiClient,
  VerificationApiError,
  VerificationApiUnavailableError,
  type ApiRequestInfo,
  type VerificationApiClientOptions,
} from '../../src/index.js';
import { API_TRANSPORTS, rejection, SuiteClients } from './sandbox-control.js';

const BALANCE = { balance: { amount: 12.5, currency: 'RUB' } };

/** One scripted answer of the upstream: a status, its headers and its body text. */
interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
const html = (status: number): Answer => ({
  status,
  headers: { 'content-type': 'text/html' },
  body: '<html><body>Bad gateway</body></html>',
});

/**
 * Runs `body` with `Date.now()` standing still (timers, sockets and ticks run as they do): the retry rule
 * reads its deadline from the clock, so a wait lands on it exactly however long the exchange took.
 */
async function withDateStill<T>(body: () => Promise<T>): Promise<T> {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
  try {
    return await body();
  } finally {
    jest.useRealTimers();
  }
}

/**
 * The retry rule at its bounds, on an upstream that answers from a script (one answer per request, the
 * last repeated): a Retry-After equal to `maxRetryAfterMs` is waited for and one second more is not; an
 * HTML page is retried on a GET from status 500 up, not below; `maxRetries` counts retries, not attempts;
 * each attempt is reported with the milliseconds it took.
 */
describe.each(API_TRANSPORTS)('the retry rule at its bounds (transport: %s)', (transport) => {
  let server: http.Server;
  let baseUrl = '';
  let script: Answer[] = [];
  const requests: { method: string; url: string }[] = [];
  const clients = new SuiteClients();

  function makeClient(extra: Partial<VerificationApiClientOptions> = {}): VerificationApiClient {
    return clients.create({
      baseUrl,
      apiKey: 'key_retry_bounds',
      apiSecret: 'sk_test_retry_bounds_0123456789',
      timeoutMs: 5000,
      maxRetries: 2,
      retryDeadlineMs: 10_000,
      maxRetryAfterMs: 1000,
      transport,
      ...extra,
    });
  }

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests.push({ method: req.method ?? '', url: req.url ?? '' });
        const answer = script.length > 1 ? script.shift()! : script[0]!;
        const send = (): void => {
          res.writeHead(answer.status, {
            ...answer.headers,
            'content-length': Buffer.byteLength(answer.body ?? ''),
          });
          res.end(answer.body ?? '');
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });

  beforeEach(() => {
    requests.length = 0;
    script = [json(200, BALANCE)];
  });

  afterAll(async () => {
    clients.closeAll();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a 429 whose Retry-After equals maxRetryAfterMs is waited for, then the GET succeeds', async () => {
    script = [json(429, { error_code: 'rate_limit_exceeded' }, { 'retry-after': '1' }), json(200, BALANCE)];
    const started = Date.now();
    expect(await makeClient({ maxRetryAfterMs: 1000 }).getBalance()).toEqual(BALANCE);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(requests).toHaveLength(2);
  });

  it('a 429 whose Retry-After is one second above maxRetryAfterMs fails at once with it', async () => {
    script = [json(429, { error_code: 'rate_limit_exceeded' }, { 'retry-after': '2' }), json(200, BALANCE)];
    const e = await rejection(makeClient({ maxRetryAfterMs: 1999 }).getBalance());
    expect(e).toBeInstanceOf(VerificationApiError);
    expect(e).toMatchObject({ status: 429, retryAfterMs: 2000, errorCode: 'rate_limit_exceeded' });
    expect(requests).toHaveLength(1);
  });

  it('a retry is made only when its wait ends more than 50 ms before the deadline', async () => {
    const limited = json(429, { error_code: 'rate_limit_exceeded' }, { 'retry-after': '1' });
    await withDateStill(async () => {
      script = [limited, json(200, BALANCE)];
      const e = await rejection(makeClient({ retryDeadlineMs: 1050 }).getBalance());
      expect(e).toMatchObject({ status: 429, retryAfterMs: 1000 });
      expect(requests).toHaveLength(1);
      requests.length = 0;
      script = [limited, json(200, BALANCE)];
      expect(await makeClient({ retryDeadlineMs: 1051 }).getBalance()).toEqual(BALANCE);
      expect(requests).toHaveLength(2);
    });
  });

  it("a GET's first retry waits under 100 ms: at the jitter's top it fits a 400 ms deadline", async () => {
    // The back-off's jitter at its top: the first retry waits 99 ms, 301 ms before the deadline (the deadline's
    // room keeps each attempt's own time-out long on a loaded machine).
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.999);
    try {
      script = [json(503, { error_code: 'service_unavailable' }), json(200, BALANCE)];
      expect(await withDateStill(() => makeClient({ retryDeadlineMs: 400 }).getBalance())).toEqual(BALANCE);
      expect(requests).toHaveLength(2);
    } finally {
      random.mockRestore();
    }
  });

  it('a Retry-After with text around its digits is no wait: the GET is retried on its back-off', async () => {
    for (const retryAfter of ['2abc', 'abc2']) {
      const unavailable = json(503, { error_code: 'service_unavailable' }, { 'retry-after': retryAfter });
      script = [unavailable];
      const e = await rejection(makeClient({ maxRetries: 0 }).getBalance());
      expect({ retryAfter, e }).toMatchObject({ retryAfter, e: { status: 503, retryAfterMs: undefined } });
      requests.length = 0;
      script = [unavailable, json(200, BALANCE)];
      expect(await makeClient().getBalance()).toEqual(BALANCE);
      expect(requests).toHaveLength(2);
    }
  });

  it('an HTML page from a proxy is retried on a GET from 500 up, not at 499, nor on a 200', async () => {
    script = [html(500), json(200, BALANCE)];
    expect(await makeClient().getBalance()).toEqual(BALANCE);
    expect(requests).toHaveLength(2);
    for (const status of [499, 200]) {
      requests.length = 0;
      script = [html(status), json(200, BALANCE)];
      const e = await rejection(makeClient().getBalance());
      expect(e).toBeInstanceOf(VerificationApiUnavailableError);
      expect({ status, e, requests: requests.length }).toMatchObject({
        status,
        e: { reason: 'bad_response', status },
        requests: 1,
      });
    }
  });

  it('maxRetries counts retries: 1 makes two attempts, 0 one, and a POST answered 503 is never repeated', async () => {
    script = [json(503, { error_code: 'service_unavailable' })];
    for (const maxRetries of [1, 0]) {
      requests.length = 0;
      const e = await rejection(makeClient({ maxRetries }).getBalance());
      expect({ maxRetries, e, attempts: requests.length }).toMatchObject({
        maxRetries,
        e: { status: 503 },
        attempts: maxRetries + 1,
      });
    }
    requests.length = 0;
    const e = await rejection(
      makeClient({ maxRetries: 2 }).check({
        requestId: '0b7d1c2e-5f3a-4e9b-8c6d-1a2b3c4d5e6f',
        code: '1234',
      }),
    );
    expect(e).toMatchObject({ status: 503, operation: 'check' });
    expect(requests).toEqual([{ method: 'POST', url: '/v1/verify/check' }]);
  });

  it('an answer over 1 MiB is not asked for again, even with retries left', async () => {
    script = [json(200, { ...BALANCE, padding: 'x'.repeat(1024 * 1024 + 10) })];
    const e = await rejection(makeClient({ maxRetries: 2 }).getBalance());
    expect(e).toBeInstanceOf(VerificationApiUnavailableError);
    expect(e).toMatchObject({ reason: 'bad_response', operation: 'getBalance' });
    expect(requests).toHaveLength(1);
  });

  it('a POST gets its whole timeoutMs past a shorter retryDeadlineMs; a GET is cut short at the deadline', async () => {
    const tight = makeClient({ timeoutMs: 4000, retryDeadlineMs: 300 });
    script = [
      {
        ...json(200, {
          request_id: '0b7d1c2e-5f3a-4e9b-8c6d-1a2b3c4d5e6f',
          status: 'verified',
          phone_number: '+79123456789',
        }),
        delayMs: 1000,
      },
    ];
    const checked = await tight.check({ requestId: '0b7d1c2e-5f3a-4e9b-8c6d-1a2b3c4d5e6f', code: '1234' });
    expect(checked.status).toBe('verified');
    requests.length = 0;
    script = [{ ...json(200, BALANCE), delayMs: 1000 }];
    const started = Date.now();
    const e = await rejection(tight.getBalance());
    expect(e).toMatchObject({ reason: 'timeout', operation: 'getBalance' });
    // Failing well before the answer shows the deadline cut the attempt (a loaded run delays timers).
    expect(Date.now() - started).toBeLessThan(950);
    expect(requests).toHaveLength(1);
  });

  it('reports each attempt with the milliseconds it took', async () => {
    const seen: ApiRequestInfo[] = [];
    script = [{ ...json(200, BALANCE), delayMs: 200 }];
    await makeClient({ onRequest: (info) => seen.push(info) }).getBalance();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ operation: 'getBalance', status: 200, attempt: 1, willRetry: false });
    expect(seen[0]!.error).toBeUndefined();
    expect(seen[0]!.durationMs).toBeGreaterThanOrEqual(190);
    expect(seen[0]!.durationMs).toBeLessThan(5000);
  });
});
