/**
 * A Redis slow to take a connection (a TLS handshake answered late: a loaded server, a far network) is still
 * reached by a store with a short `commandTimeoutMs`: its connection attempts wait at least a second, whatever
 * the operations' deadline, on either client library. The handshake is the client's to time (ioredis and
 * node-redis wait for it under their connect time-out), so Redis is reached over TLS: a proxy passes each
 * connection on late to a TLS front of the shared Redis (the test-only certificate for 127.0.0.1).
 */
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import tls, { createServer, type Server } from 'node:tls';
import { describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { RedisProxy } from '../support/redis-proxy.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

/** How late each connection is passed on: past the operations' deadline, well within a second. */
const ACCEPT_DELAY_MS = 550;
const COMMAND_TIMEOUT_MS = 250;

/** The shared Redis behind TLS, on a free port of 127.0.0.1. */
async function tlsFront(): Promise<{ url: string; server: Server }> {
  const { hostname, port } = new URL(sharedRedisUrl());
  const tls = (name: string) => readFileSync(new URL(`../support/tls/${name}.pem`, import.meta.url));
  const server = createServer({ cert: tls('cert'), key: tls('key') }, (secure) => {
    const upstream = createConnection({ host: hostname, port: Number(port || 6379) });
    for (const side of [secure, upstream]) {
      side.on('error', () => undefined);
      side.once('close', () => (side === secure ? upstream : secure).destroy());
    }
    secure.pipe(upstream).pipe(secure);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('store: a RedisStore opened from a URL, Redis slow to take a connection', () => {
  it(`is reached when each handshake is answered ${ACCEPT_DELAY_MS} ms late, past its ${COMMAND_TIMEOUT_MS} ms deadline, whichever library`, async () => {
    // The certificate is the tests' own, trusted by this test's connections alone: neither library takes a CA
    // from a URL, and jest gives a test a copy of the environment (NODE_TLS_REJECT_UNAUTHORIZED would not reach
    // Node's TLS).
    const connect = tls.connect;
    const ca = readFileSync(new URL('../support/tls/cert.pem', import.meta.url));
    tls.connect = ((options: tls.ConnectionOptions, ...rest: never[]) =>
      connect({ ...options, ca }, ...rest)) as typeof tls.connect;
    const front = await tlsFront();
    const opened = await Promise.all(
      (['ioredis', 'redis'] as const).map(async (driver) => {
        const proxy = await RedisProxy.start(front.url);
        proxy.passAfterMs = ACCEPT_DELAY_MS;
        const url = proxy.url.replace(/^redis:/, 'rediss:');
        const store = new RedisStore({
          url,
          driver,
          commandTimeoutMs: COMMAND_TIMEOUT_MS,
          keyPrefix: 'pv:slow:',
        });
        return { driver, proxy, store };
      }),
    );
    try {
      const reached = await Promise.all(
        opened.map(({ driver, store }) =>
          eventually(() => store.get('probe'), 3_000).then(
            () => [driver, 'reached'],
            (error: unknown) => [driver, String(error)],
          ),
        ),
      );
      expect(reached).toEqual([
        ['ioredis', 'reached'],
        ['redis', 'reached'],
      ]);
    } finally {
      for (const { store, proxy } of opened) {
        await store.close();
        await proxy.stop();
      }
      await new Promise((resolve) => front.server.close(resolve));
      tls.connect = connect;
    }
  });
});
