import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import util from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  VerificationApiClient,
  VerificationApiUnavailableError,
  type VerificationApiClientOptions,
} from '../../src/index.js';
import { gatedServer } from './gated-server.js';
import { API_TRANSPORTS, SuiteClients } from './sandbox-control.js';

/** The time-out the time-out test sets. */
const TIMEOUT_MS = 300;
/** Every other client's: a loaded full run can take longer than 300 ms over a 1 MiB answer. */
const STEADY_TIMEOUT_MS = 5000;
const BALANCE = { balance: { amount: 12.5, currency: 'RUB' } };

/**
 * What every transport promises besides the API's own answers (the sandbox cannot misbehave at the HTTP
 * level in these ways, so a local HTTP server plays a broken upstream): the request it sends, keep-alive,
 * the 1 MiB body cap, no redirects, a hard deadline on the whole exchange, answers cut short, bytes that are
 * not HTTP, and no credential in any failure.
 */
describe.each(API_TRANSPORTS)('the HTTP exchange (transport: %s)', (transport) => {
  const apiKey = `key_${randomBytes(6).toString('hex')}`;
  const apiSecret = `sk_test_${randomBytes(12).toString('hex')}`;
  const basic = Buffer.from(`${apiKey}:${apiSecret}`).toString('base64');
  const forbidden = [apiSecret, basic, 'Authorization', 'authorization'];
  let handler: http.RequestListener = () => undefined;
  let server: http.Server;
  let connections = 0;
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const clients = new SuiteClients();
  let baseUrl = '';

  function makeClient(extra: Partial<VerificationApiClientOptions> = {}): VerificationApiClient {
    return clients.create({
      baseUrl,
      apiKey,
      apiSecret,
      timeoutMs: STEADY_TIMEOUT_MS,
      maxRetries: 0,
      transport,
      ...extra,
    });
  }

  async function failure<T>(promise: Promise<T>): Promise<unknown> {
    const e = await promise.then(
      () => {
        throw new Error('expected the call to fail');
      },
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(VerificationApiUnavailableError);
    const rendered = [
      JSON.stringify(e),
      util.inspect(e, { depth: Infinity, showHidden: true, getters: true }),
      String((e as Error).stack),
    ].join('\n');
    for (const needle of forbidden) expect(rendered).not.toContain(needle);
    expect((e as Error).cause).toBeUndefined();
    return e;
  }

  function json(res: http.ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        handler(req, res);
      });
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/api/`;
  });

  beforeEach(() => {
    seen.length = 0;
    handler = (_req, res) => json(res, 200, BALANCE);
  });

  afterAll(async () => {
    clients.closeAll();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the Basic credentials, the accepted types, its name and the base path', async () => {
    const client = makeClient();
    expect(await client.getBalance()).toEqual(BALANCE);
    handler = (_req, res) =>
      json(res, 201, {
        request_id: '0b7d1c2e-5f3a-4e9b-8c6d-1a2b3c4d5e6f',
        phone_number: '+79123456789',
        method: 'sms',
        status: 'sent',
      });
    await client.initiate({ phoneNumber: '+79123456789', method: 'sms' });
    const [get, post] = seen;
    expect(get).toMatchObject({ method: 'GET', url: '/api/v1/balance', body: '' });
    expect(get.headers).toMatchObject({
      authorization: `Basic ${basic}`,
      accept: 'application/json, application/problem+json',
      'user-agent': 'nestjs-phone-verification',
    });
    // A GET declares no body type; no compression asked for, so none to undo (axios asks, and
    // decompresses, with its own adapter).
    expect(get.headers['content-type']).toBeUndefined();
    if (transport !== 'axios') expect(get.headers['accept-encoding']).toBeUndefined();
    expect(post).toMatchObject({ method: 'POST', url: '/api/v1/verify' });
    expect(JSON.parse(post.body)).toMatchObject({ phone_number: '+79123456789', method: 'sms' });
    expect(post.headers).toMatchObject({
      authorization: `Basic ${basic}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(post.body)),
    });
  });

  it('keeps connections alive: twenty consecutive calls open at most two', async () => {
    const client = makeClient();
    const before = connections;
    for (let i = 0; i < 20; i++) await client.getBalance();
    // node:http reuses the one socket; undici's pool waits one event-loop turn before reusing a socket, so a
    // call made as the previous one ends may take a second connection.
    expect(connections - before).toBeGreaterThanOrEqual(1);
    expect(connections - before).toBeLessThanOrEqual(2);
  });

  it('closes a connection left idle about 4 s after its last answer, while the upstream would keep it a minute', async () => {
    const kept = server.keepAliveTimeout;
    server.keepAliveTimeout = 60_000;
    try {
      // Not a sleep: the close is awaited, with a bound far below a unit slip (4,000 s).
      const closed = new Promise<number>((resolve) =>
        server.once('connection', (socket: net.Socket) =>
          socket.once('close', () => resolve(performance.now())),
        ),
      );
      await makeClient().getBalance();
      const answered = performance.now();
      const idle = (await closed) - answered;
      expect(idle).toBeGreaterThanOrEqual(3_500);
      expect(idle).toBeLessThan(10_000);
    } finally {
      server.keepAliveTimeout = kept;
    }
  }, 15_000);

  it('after close(), a new call opens a new connection and succeeds', async () => {
    const client = makeClient();
    await client.getBalance();
    const before = connections;
    client.close();
    expect(await client.getBalance()).toEqual(BALANCE);
    expect(connections - before).toBe(1);
  });

  it('asks for usage without a query string when no range is given', async () => {
    handler = (_req, res) => json(res, 500, {});
    await makeClient()
      .getUsage()
      .catch(() => undefined);
    expect(seen.map((r) => r.url)).toEqual(['/api/v1/usage']);
  });

  it('reads an answer just under 1 MiB', async () => {
    handler = (_req, res) => json(res, 200, { ...BALANCE, padding: 'x'.repeat(1024 * 1024 - 100) });
    expect((await makeClient().getBalance()).balance).toEqual(BALANCE.balance);
  });

  // The cap's bound, byte for byte: a body of exactly 1 MiB is an answer, one byte more is not.
  /** A JSON answer of `bytes` bytes, streamed in 64 KiB chunks without a length. */
  function sized(bytes: number): http.RequestListener {
    const head = JSON.stringify({ ...BALANCE, padding: '' }).slice(0, -2);
    const body = `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < body.length; at += 64 * 1024) res.write(body.slice(at, at + 64 * 1024));
      res.end();
    };
  }

  it('reads an answer of exactly 1 MiB, and abandons one a byte longer', async () => {
    handler = sized(1024 * 1024);
    expect((await makeClient().getBalance()).balance).toEqual(BALANCE.balance);
    handler = sized(1024 * 1024 + 1);
    expect(await failure(makeClient().getBalance())).toMatchObject({ reason: 'bad_response' });
  });

  it('abandons an answer over 1 MiB as "bad_response"', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Streamed without a length, well past the cap.
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const write = (): void => {
        while (sent < 64 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    };
    const e = await failure(makeClient().getBalance());
    expect(e).toMatchObject({ reason: 'bad_response', operation: 'getBalance', code: 'ERR_BODY_TOO_LARGE' });
  });

  it('follows no redirect: the 302 is the answer and the credentials go nowhere else', async () => {
    let elsewhere = 0;
    const other = http.createServer((_req, res) => {
      elsewhere++;
      json(res, 200, BALANCE);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = other.address() as net.AddressInfo;
      handler = (_req, res) => {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/v1/balance`, 'content-length': 0 });
        res.end();
      };
      const e = await failure(makeClient().getBalance());
      expect(e).toMatchObject({ reason: 'bad_response', status: 302 });
      expect(elsewhere).toBe(0);
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('bounds the whole exchange: a body that trickles in forever times out at timeoutMs', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"balance":');
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 50);
      res.on('close', () => clearInterval(drip));
    };
    const started = Date.now();
    const e = await failure(makeClient({ timeoutMs: TIMEOUT_MS }).getBalance());
    const ms = Date.now() - started;
    expect(e).toMatchObject({ reason: 'timeout', code: 'ETIMEDOUT', operation: 'getBalance' });
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    // The body would trickle forever: failing at all shows the deadline; a loaded run delays timers.
    expect(ms).toBeLessThan(TIMEOUT_MS + 1700);
  });

  it('a deadline that passes while connecting fails the call, and the request is never sent later', async () => {
    const gated = await gatedServer();
    const ours: net.Socket[] = [];
    try {
      ours.push(...(await gated.fill()));
      const client = makeClient({ baseUrl: `http://127.0.0.1:${gated.port}/api/`, timeoutMs: TIMEOUT_MS });
      const started = Date.now();
      const e = await failure(client.initiate({ phoneNumber: '+79123456789', method: 'sms' }));
      const ms = Date.now() - started;
      // What a host sees: a time-out of a POST, which may have been processed (in doubt).
      expect(e).toMatchObject({ reason: 'timeout', code: 'ETIMEDOUT', operation: 'initiate' });
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
      expect(ms).toBeLessThan(TIMEOUT_MS + 1700);
      // A late socket, its SYN dropped like the client's and retransmitted on the same schedule: once it
      // gets through, so has any connection the client still tries to make.
      const late = net.connect(gated.port, '127.0.0.1').on('error', () => undefined);
      ours.push(late);
      // Node issues the connect (and so the SYN, over loopback) on the next tick: released before, the late
      // socket would get straight in and bound nothing.
      await new Promise((resolve) => setImmediate(resolve));
      expect(late.localPort).toEqual(expect.any(Number));
      gated.release();
      const clientPorts = (): number[] => [
        ...new Set(
          gated.events
            .filter((ev) => ev.event === 'connection' && !ours.some((s) => s.localPort === ev.port))
            .map((ev) => ev.port),
        ),
      ];
      const over = (port: number): boolean =>
        gated.events.some((ev) => ev.port === port && (ev.event === 'close' || ev.event === 'request'));
      // undici keeps the timed-out request queued until its connection is made, and then must drop it
      // unsent (ExchangeHandler.onRequestStart); so, over undici, the test waits for that connection. axios's
      // abort destroys the connecting socket: no connection comes at all, and the late socket bounds the wait.
      await gated.until('every connection end', () => {
        const ports = clientPorts();
        const lateIn = gated.events.some((ev) => ev.event === 'connection' && ev.port === late.localPort);
        return lateIn && (transport !== 'undici' || ports.length > 0) && ports.every(over);
      });
      expect(gated.events.filter((ev) => ev.event === 'request')).toEqual([]);
    } finally {
      for (const socket of ours) socket.destroy();
      await gated.close();
    }
  });

  it('an answer cut short (fewer bytes than its Content-Length) is a failure, never a partial body', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"balance":{"amount":1');
      setTimeout(() => res.destroy(), 20);
    };
    const e = await failure(makeClient().getBalance());
    // axios reports the aborted stream as ERR_BAD_RESPONSE.
    expect(e).toMatchObject(
      transport === 'axios'
        ? { reason: 'bad_response', operation: 'getBalance' }
        : { reason: 'network', code: 'ECONNRESET', operation: 'getBalance' },
    );
  });

  it('bytes that are not HTTP are a network failure, with a code', async () => {
    const raw = net.createServer((socket) => {
      socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = raw.address() as net.AddressInfo;
      const e = await failure(makeClient({ baseUrl: `http://127.0.0.1:${port}` }).getBalance());
      expect(e).toMatchObject({ reason: 'network', code: expect.stringMatching(/^[A-Z0-9_]+$/) });
    } finally {
      await new Promise((resolve) => raw.close(resolve));
    }
  });

  it('an answer without a body reads as empty: a 403 with no body is "forbidden"', async () => {
    handler = (_req, res) => {
      res.writeHead(403, { 'content-length': 0 });
      res.end();
    };
    expect(await failure(makeClient().getBalance())).toMatchObject({ reason: 'forbidden', status: 403 });
  });

  it('a call in flight when the client is closed fails as a network failure, ECONNRESET', async () => {
    const asked = new Promise<void>((resolve) => {
      handler = () => resolve();
    });
    const client = makeClient();
    const call = failure(client.getBalance());
    await asked;
    client.close();
    expect(await call).toMatchObject({ reason: 'network', code: 'ECONNRESET', operation: 'getBalance' });
  });

  it('a connection closed before any answer is ECONNRESET; a GET is retried once it has retries', async () => {
    let calls = 0;
    handler = (req, res) => {
      calls++;
      if (calls === 1) req.socket.destroy();
      else json(res, 200, BALANCE);
    };
    const e = await failure(makeClient().getBalance());
    expect(e).toMatchObject({ reason: 'network', code: 'ECONNRESET' });
    calls = 0;
    expect(await makeClient({ maxRetries: 1 }).getBalance()).toEqual(BALANCE);
    expect(calls).toBe(2);
  });
});
