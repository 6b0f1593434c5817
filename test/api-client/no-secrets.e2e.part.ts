import { randomBytes } from 'node:crypto';
import net from 'node:net';
import util from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  VerificationApiClient,
  VerificationApiError,
  VerificationApiUnavailableError,
  type ApiRequestInfo,
} from '../../src/index.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { API_TRANSPORTS, nextPhone, rejection, SuiteClients } from './sandbox-control.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/**
 * Every kind of failure, serialised every way a host might log it: no API secret, no Basic header, no
 * Authorization header anywhere (axios errors carry the request config; none may escape).
 */
describe.each(API_TRANSPORTS)('no secret in any error, stack or hook report (transport: %s)', (transport) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  const secret = `sk_test_${randomBytes(12).toString('hex')}`;
  const wrongSecret = `sk_wrong_${randomBytes(12).toString('hex')}`;
  const apiKey = `key_${randomBytes(6).toString('hex')}`;
  const basic = (s: string) => Buffer.from(`${apiKey}:${s}`).toString('base64');
  const forbidden = [
    secret,
    wrongSecret,
    basic(secret),
    basic(wrongSecret),
    'Authorization',
    'authorization',
  ];
  const reports: ApiRequestInfo[] = [];
  const clients = new SuiteClients();

  function makeClient(apiSecret = secret, baseUrl = sb.url): VerificationApiClient {
    return clients.create({
      baseUrl,
      apiKey,
      apiSecret,
      timeoutMs: 300,
      maxRetries: 1,
      maxRetryAfterMs: 100,
      onRequest: (i) => reports.push(i),
      transport,
    });
  }

  beforeAll(async () => {
    sb = suite.sb;
    await sb.createAccount({ apiKey, apiSecret: secret });
  });

  afterAll(async () => {
    clients.closeAll();
  });

  function renderings(e: unknown): Record<string, string> {
    const err = e as Error;
    return {
      json: JSON.stringify(err),
      inspect: util.inspect(err, { depth: Infinity, showHidden: true, getters: true }),
      stack: String(err.stack),
      string: String(err),
      message: err.message,
      props: JSON.stringify(
        Object.fromEntries(Object.getOwnPropertyNames(err).map((k) => [k, String(Reflect.get(err, k))])),
      ),
    };
  }

  function expectClean(label: string, e: unknown): void {
    expect(e instanceof VerificationApiError || e instanceof VerificationApiUnavailableError).toBe(true);
    expect((e as Error).cause).toBeUndefined();
    for (const [how, text] of Object.entries(renderings(e))) {
      for (const needle of forbidden) {
        if (text.includes(needle))
          throw new Error(`${label}: ${how} contains a secret (${needle.slice(0, 6)}…)`);
      }
    }
  }

  it('holds for every failure kind', async () => {
    const client = makeClient();
    const cases: [string, () => Promise<unknown>][] = [
      ['401', () => makeClient(wrongSecret).getBalance()],
      ['400 problem', () => client.initiate({ phoneNumber: 'nope', method: 'sms' })],
      ['404 problem', () => client.getSession('00000000-0000-4000-8000-000000000000')],
      [
        'timeout',
        async () => {
          sb.addFault({ route: 'GET /v1/balance', kind: 'latency', latency_ms: 1000, count: 0 });
          return client.getBalance();
        },
      ],
      [
        'reset',
        async () => {
          sb.addFault({ route: 'POST /v1/verify', kind: 'reset', count: 1 });
          return client.initiate({ phoneNumber: nextPhone(), method: 'sms' });
        },
      ],
      [
        'garbage',
        async () => {
          sb.addFault({ route: 'GET /v1/prices', kind: 'garbage', count: 1 });
          return client.getPrices();
        },
      ],
      [
        'html',
        async () => {
          sb.addFault({ route: 'GET /v1/usage', kind: 'html', count: 0 });
          return client.getUsage();
        },
      ],
      [
        '403 empty',
        async () => {
          sb.addFault({ route: 'GET /v1/balance', kind: 'status', status: 403, count: 1 });
          return client.getBalance();
        },
      ],
      [
        '429',
        async () => {
          sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 429, retry_after_s: 5, count: 1 });
          return client.initiate({ phoneNumber: nextPhone(), method: 'sms' });
        },
      ],
      [
        '5xx',
        async () => {
          sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 500, count: 0 });
          return client.getSession('00000000-0000-4000-8000-000000000000');
        },
      ],
      ['refused', async () => makeClient(secret, `http://127.0.0.1:${await closedPort()}`).getBalance()],
    ];
    for (const [label, run] of cases) {
      sb.clearFaults();
      expectClean(label, await rejection(run()));
    }
    sb.clearFaults();
    expect(reports.length).toBeGreaterThanOrEqual(cases.length);
    const reported = JSON.stringify(reports);
    for (const needle of forbidden) expect(reported).not.toContain(needle);
  });

  it('the client itself does not show its credentials when inspected or serialised', () => {
    const client = makeClient();
    const shown = util.inspect(client, { depth: Infinity, showHidden: true }) + JSON.stringify(client);
    for (const needle of forbidden) expect(shown).not.toContain(needle);
  });

  it('toJSON gives only the safe fields', async () => {
    const e = await rejection(makeClient().getSession('00000000-0000-4000-8000-000000000000'));
    expect(Object.keys((e as VerificationApiError).toJSON()).sort()).toEqual(
      [
        'attemptsRemaining',
        'detail',
        'errorCode',
        'message',
        'name',
        'operation',
        'problem',
        'retryAfterMs',
        'status',
        'title',
      ].sort(),
    );
    sb.addFault({ route: 'GET /v1/balance', kind: 'reset', count: 0 });
    const u = await rejection(makeClient().getBalance());
    sb.clearFaults();
    expect((u as VerificationApiUnavailableError).toJSON()).toEqual({
      name: 'VerificationApiUnavailableError',
      message: 'Verification API getBalance: no usable answer (network, ECONNRESET)',
      operation: 'getBalance',
      reason: 'network',
      status: undefined,
      code: 'ECONNRESET',
    });
  });
});

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
