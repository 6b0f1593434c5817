import type { ServerResponse } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { openSse, type SseOpen, type SseStream } from '../support/sse-client.js';
import { createTestApp, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { moduleOptions, startSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/**
 * What a compression middleware does to a response (Express `compression`, or one a host mounts on
 * Fastify's raw response): it holds what is written until the response is flushed (`res.flush()`) or
 * ended. The stand-in here holds every write whole, so that a stream which does not flush shows nothing.
 */
function holdUntilFlushed(res: ServerResponse): void {
  const write = res.write.bind(res) as (chunk: unknown) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const held: unknown[] = [];
  const flush = (): void => {
    for (const chunk of held.splice(0)) write(chunk);
  };
  Object.assign(res, {
    write: (chunk: unknown) => {
      held.push(chunk);
      return true;
    },
    flush,
    end: (...args: unknown[]) => {
      flush();
      return end(...args);
    },
  });
}

/** The host's middleware, mounted before the module's routes, on either platform. */
function mountHoldingMiddleware(platform: Platform, app: INestApplication): void {
  if (platform === 'express') {
    app.use((_req: unknown, res: ServerResponse, next: () => void) => {
      holdUntilFlushed(res);
      next();
    });
    return;
  }
  const fastify = app.getHttpAdapter().getInstance() as {
    addHook(
      name: 'onRequest',
      hook: (req: unknown, reply: { raw: ServerResponse }, done: () => void) => void,
    ): void;
  };
  fastify.addHook('onRequest', (_req, reply, done) => {
    holdUntilFlushed(reply.raw);
    done();
  });
}

/** Resolves with `opening`, or rejects once `ms` of real time passed without it (nothing came through). */
async function within<T>(opening: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      opening,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: nothing came within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A status stream behind a host's buffering middleware (compression): each event is flushed as it is
 * written, so the page sees the current status at once, not everything at the stream's end (a pending
 * session's stream lasts minutes).
 */
describe.each(PLATFORMS)('status stream behind a buffering (compression) middleware (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;
  const open: SseStream[] = [];

  beforeAll(() => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await host?.close();
    host = undefined;
  });

  it('sends the head, the retry line and the current status at once, not at the stream’s end', async () => {
    host = await createTestApp({
      platform,
      module: moduleOptions(sb),
      parsers: (app) => mountHoldingMiddleware(platform, app),
    });
    const s = await startSession(host, sb, 'sms');
    const opened: SseOpen = await within(
      openSse(`${host.url}/verification/status/${s.verificationId}/events`, { 'x-user': s.owner }),
      3000,
      'the stream head',
    );
    open.push(opened.stream!);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await opened.stream!.until((m) => m.some((x) => x.event === 'status'));
    expect(first[0]).toEqual({ retry: 2500 });
    expect(opened.stream!.statuses()).toEqual([expect.objectContaining({ status: 'sent' })]);
  });
});
