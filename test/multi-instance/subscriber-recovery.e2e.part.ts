/**
 * A Redis subscriber connection that failed to open is not kept: the next status stream opens a new
 * one, and hears of changes again. (Were the failed connection kept, every later stream on that
 * instance would be refused, or would wait for changes that never come.)
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { startHost, startSession } from '../webhooks/harness.js';
import { uniqueKeyPrefix } from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe.each(PLATFORMS)('a failed Redis subscriber connection (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;
  let client: Redis | undefined;
  const open: SseStream[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await host?.close();
    host = undefined;
    client?.disconnect();
    client = undefined;
  });

  it('is dropped: the next stream subscribes anew and hears the outcome', async () => {
    client = new Redis(sharedRedisUrl());
    // The host's client: its first duplicate (the subscriber connection) cannot be opened.
    const duplicate = client.duplicate.bind(client);
    let duplicates = 0;
    client.duplicate = ((...args: Parameters<Redis['duplicate']>) => {
      if (++duplicates === 1) throw new Error('ECONNREFUSED (simulated)');
      return duplicate(...args);
    }) as Redis['duplicate'];
    host = await startHost(platform, sb, {
      module: { store: { redis: client, keyPrefix: uniqueKeyPrefix('subscriber-recovery') } },
    });
    const s = await startSession(host, sb, 'reverse_flash_call');
    const url = `${host.url}/verification/status/${s.verificationId}/events`;

    const refused = await openSse(url, { 'x-user': s.owner });
    expect(refused.status).toBe(503);
    const opened = await openSse(url, { 'x-user': s.owner });
    expect(opened.status).toBe(200);
    const stream = opened.stream!;
    open.push(stream);
    await stream.statusCount(1);
    expect(duplicates).toBe(2);

    // The user calls: the webhook's change is published through Redis and reaches the stream.
    await sb.call(s.requestId, s.phone);
    await stream.ends();
    expect(stream.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
  });

  it('one that Redis dropped after it opened subscribes again by itself: the stream still hears the outcome', async () => {
    // Named, so that only this test's connections are dropped (other test files share the Redis).
    const name = `pv-subscriber-recovery-${process.pid}-${Date.now()}`;
    client = new Redis(sharedRedisUrl(), { connectionName: name });
    const keyPrefix = uniqueKeyPrefix('subscriber-recovery');
    host = await startHost(platform, sb, { module: { store: { redis: client, keyPrefix } } });
    const s = await startSession(host, sb, 'reverse_flash_call');
    const opened = await openSse(`${host.url}/verification/status/${s.verificationId}/events`, {
      'x-user': s.owner,
    });
    expect(opened.status).toBe(200);
    const stream = opened.stream!;
    open.push(stream);
    await stream.statusCount(1);
    const admin = new Redis(sharedRedisUrl());
    try {
      const subscribers = async () =>
        String(await admin.call('CLIENT', 'LIST'))
          .split('\n')
          .filter((line) => line.includes(` name=${name} `) && !/ sub=0 /.test(line))
          .map((line) => /(?:^|\s)id=(\d+)/.exec(line)![1]!);
      const killed = await subscribers();
      expect(killed).toHaveLength(1);
      // Redis closes the subscriber connection (a failover, a proxy's idle time-out).
      await admin.call('CLIENT', 'KILL', 'ID', killed[0]!);
      const deadline = Date.now() + 5000;
      for (;;) {
        const now = await subscribers();
        if (now.length === 1 && now[0] !== killed[0]) break;
        if (Date.now() > deadline) throw new Error('the subscriber did not come back');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      admin.disconnect();
    }
    await sb.call(s.requestId, s.phone);
    await stream.ends();
    expect(stream.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
  });
});
