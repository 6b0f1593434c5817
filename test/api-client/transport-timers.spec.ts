/**
 * The transports' own clocks, on jest's fake timers: the exchange's deadline, the time an idle keep-alive
 * socket is kept, and undici's connect time-out, each at its bound with no slack for a loaded machine
 * (transport.e2e.part.ts bounds the deadline in real time, within a loaded run's slack).
 *
 * A file of its own: undici runs its timers of a second or more on one shared timer of its module, made at
 * its first such timer; in a merged file, another part's requests would have made it on the real clock.
 * Only the timers are faked: sockets, `setImmediate` and the process' ticks run as they do.
 */
import http from 'node:http';
import type net from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  VerificationApiClient,
  VerificationApiUnavailableError,
  type ApiTransport,
  type VerificationApiClientOptions,
} from '../../src/index.js';
import { gatedServer } from './gated-server.js';
import { API_TRANSPORTS, SuiteClients } from './sandbox-control.js';

const BALANCE = { balance: { amount: 12.5, currency: 'RUB' } };
const TIMEOUT_MS = 60_000;

/** Lets sockets, immediates and promises run (the timers are fake: nothing here waits on the clock). */
async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A promise's state without waiting for it. */
function watch<T>(promise: Promise<T>): {
  state: () => 'pending' | 'resolved' | 'rejected';
  result: Promise<unknown>;
} {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  const result = promise.then(
    (value) => {
      state = 'resolved';
      return value;
    },
    (err: unknown) => {
      state = 'rejected';
      return err;
    },
  );
  return { state: () => state, result };
}

/** A client of the time-out these tests pass the clock through, no retries. */
function timersClient(
  clients: SuiteClients,
  options: Partial<VerificationApiClientOptions>,
): VerificationApiClient {
  return clients.create({
    apiKey: 'key_timers',
    apiSecret: 'sk_test_timers',
    timeoutMs: TIMEOUT_MS,
    // A GET is cut short by the retry deadline: this one leaves it its whole time-out.
    retryDeadlineMs: 2 * TIMEOUT_MS,
    maxRetries: 0,
    ...options,
  } as VerificationApiClientOptions);
}

beforeAll(() => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'] });
});
afterAll(() => {
  jest.useRealTimers();
});

describe.each(API_TRANSPORTS)('the transport’s clocks (transport: %s)', (transport: ApiTransport) => {
  let handler: http.RequestListener = () => undefined;
  let server: http.Server;
  const clients = new SuiteClients();
  let baseUrl = '';

  const makeClient = (extra: Partial<VerificationApiClientOptions> = {}): VerificationApiClient =>
    timersClient(clients, { baseUrl, transport, ...extra });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => handler(req, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/api/`;
  });
  beforeEach(() => {
    handler = (_req, res) => {
      const text = JSON.stringify(BALANCE);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('an answer that never ends fails the call at timeoutMs exactly: pending a tick before, ETIMEDOUT at it', async () => {
    // Its head and the start of its body come at once (axios' own timer of the connect phase stops there),
    // then nothing more: only the exchange's deadline ends it.
    const sent = new Promise<void>((resolve) => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"balance":', () => resolve());
      };
    });
    const call = watch(makeClient().getBalance());
    await sent;
    await settle(50);
    jest.advanceTimersByTime(TIMEOUT_MS - 1);
    await settle();
    expect(call.state()).toBe('pending');
    jest.advanceTimersByTime(1);
    await settle();
    expect(call.state()).toBe('rejected');
    const e = await call.result;
    expect(e).toBeInstanceOf(VerificationApiUnavailableError);
    expect(e).toMatchObject({ reason: 'timeout', code: 'ETIMEDOUT', operation: 'getBalance' });
  });

  it('an answered call leaves no timer behind: a process holds nothing for its deadline', async () => {
    const client = makeClient();
    await client.getBalance();
    await settle();
    const before = jest.getTimerCount();
    expect(await client.getBalance()).toEqual(BALANCE);
    await settle();
    expect(jest.getTimerCount()).toBe(before);
  });
});

describe('the transport’s clocks (transport: undici)', () => {
  const clients = new SuiteClients();
  const servers: http.Server[] = [];
  afterEach(async () => {
    clients.closeAll();
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** An upstream answering every call, its connections counted; `keepAliveMs` 0 sends no `Keep-Alive` hint. */
  async function upstream(keepAliveMs: number): Promise<{ baseUrl: string; connections: () => number }> {
    let connections = 0;
    const server = http.createServer((_req, res) => {
      const text = JSON.stringify(BALANCE);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    // Node's server keeps an idle connection this long and says so (`Keep-Alive: timeout=`), unless 0.
    server.keepAliveTimeout = keepAliveMs;
    server.on('connection', () => (connections += 1));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    return { baseUrl: `http://127.0.0.1:${port}/api/`, connections: () => connections };
  }

  const makeClient = (baseUrl: string): VerificationApiClient =>
    timersClient(clients, { baseUrl, transport: 'undici' });

  // undici's timers of a second or more tick every 499 ms: an idle socket of 4 s is closed between 3,992 and
  // 4,491 ms of idleness. The server keeps it far longer (and says so, or says nothing): only the client's time tells.
  it.each([
    ['says nothing of its idle time', 0],
    ['says it keeps idle connections 10 minutes', 600_000],
  ])(
    'an idle connection is kept about 4 s when the upstream %s: a call 3.9 s after the last reuses it, one 4.5 s after opens a new one',
    async (_what, keepAliveMs) => {
      const server = await upstream(keepAliveMs);
      const client = makeClient(server.baseUrl);
      expect(await client.getBalance()).toEqual(BALANCE);
      await settle();
      jest.advanceTimersByTime(3_900);
      await settle();
      expect(await client.getBalance()).toEqual(BALANCE);
      expect(server.connections()).toBe(1);
      await settle();
      jest.advanceTimersByTime(4_500);
      await settle();
      expect(await client.getBalance()).toEqual(BALANCE);
      expect(server.connections()).toBe(2);
    },
  );

  it('a connection the upstream never accepts fails at undici’s 10 s connect time-out as a time-out (ETIMEDOUT), before a longer deadline', async () => {
    const gated = await gatedServer();
    const ours: net.Socket[] = [];
    try {
      ours.push(...(await gated.fill()));
      const call = watch(makeClient(`http://127.0.0.1:${gated.port}/api/`).getBalance());
      await settle();
      jest.advanceTimersByTime(9_000);
      await settle();
      expect(call.state()).toBe('pending');
      jest.advanceTimersByTime(1_500);
      await settle();
      expect(call.state()).toBe('rejected');
      const e = await call.result;
      expect(e).toBeInstanceOf(VerificationApiUnavailableError);
      expect(e).toMatchObject({ reason: 'timeout', code: 'ETIMEDOUT', operation: 'getBalance' });
    } finally {
      for (const socket of ours) socket.destroy();
      await gated.close();
    }
  });
});
