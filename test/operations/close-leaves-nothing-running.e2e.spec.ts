/**
 * A host's `app.close()` leaves nothing of the module running: once it resolves, the host process ends by
 * itself, without `process.exit` (no server, socket, timer or connection of the module's left: the API
 * client's keep-alive pool, the store's connections and its subscriber, a status stream still open, the
 * reconciler's and the heartbeat's timers; a Redis connection may take a few milliseconds more to end). The
 * host runs in a process of its own (the built package), so that what this test's side holds open does not
 * count. Express and Fastify; MemoryStore and Redis by URL; the default transport and axios (whose deadline
 * timer of a finished call must not outlive it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/**
 * How soon the host process ends after its close() resolved: what kept it alive is named a loop turn after
 * close() (an idle keep-alive connection, 4 s, would be); this bound is for a process that never ends, and
 * leaves room for a 400 MB process's exit on a loaded machine (2 s were passed at a load of 12 on 2 cores).
 */
const ENDS_WITHIN_MS = 10_000;
const FIXTURE = fileURLToPath(new URL('./support/closing-host.fixture.mjs', import.meta.url));

const suite = sandboxSuite();
let sb: VerificationSandbox;
let child: ChildProcess | undefined;
let stream: SseStream | undefined;
beforeAll(async () => {
  sb = suite.sb;
});
afterEach(() => {
  stream?.close();
  stream = undefined;
  // A host that did not end by itself is not left behind.
  if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

/** Starts the host process; its stdout's JSON lines, in order. */
async function startHost(
  platform: string,
  redisUrl: string,
  transport: string,
): Promise<{ url: string; lines: AsyncIterator<string> }> {
  const account = await sb.createAccount({ balance: 100 });
  child = spawn(
    process.execPath,
    [
      FIXTURE,
      platform,
      sb.url,
      account.apiKey,
      account.apiSecret,
      account.webhookSecret,
      redisUrl,
      transport,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  const { port } = JSON.parse(String(first.value)) as { port: number };
  return { url: `http://127.0.0.1:${port}`, lines };
}

describe.each(PLATFORMS)('app.close() of a host (%s)', (platform) => {
  it.each([
    ['MemoryStore', '', ''],
    ['Redis by URL', 'redis', ''],
    ['MemoryStore and the axios transport', '', 'axios'],
  ])(
    'on %s: nothing of the module runs once it resolves, and the process ends by itself',
    async (_label, store, transport) => {
      const host = await startHost(platform, store === 'redis' ? sharedRedisUrl() : '', transport);
      // The module at work: a start (the API client's pool), a status read, a status stream held open.
      const started = await call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: '+79161234567', method: 'sms' },
        { 'x-user': 'sue' },
      );
      expect(started.status).toBe(201);
      const id = String(started.body.verification_id);
      expect(
        (await call(host.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': 'sue' })).status,
      ).toBe(200);
      const opened = await openSse(`${host.url}/verification/status/${id}/events`, { 'x-user': 'sue' });
      expect(opened.status).toBe(200);
      stream = opened.stream!;
      await stream.statusCount(1);

      const exited = once(child!, 'exit');
      child!.kill('SIGTERM');
      // What still ran a loop turn after close() resolved (a Redis connection may still be ending): named
      // if the process does not end.
      const report = String((await host.lines.next()).value);
      // On MemoryStore nothing at all (on Redis, its connections are still ending then).
      if (store !== 'redis') expect(JSON.parse(report)).toEqual({ runningAfterClose: [] });
      // Real time, bounded: the process ends on its own once close() resolved (it never calls process.exit).
      const [code] = await Promise.race([
        exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`the host did not end: ${report}`)), ENDS_WITHIN_MS).unref(),
        ),
      ]);
      expect(code).toBe(0);
      // The stream the host held open was ended by the host's close.
      await stream.ends();
    },
  );
});
