/**
 * Two instances of one deployment on one Redis: a change observed on A (its webhook, its check)
 * reaches a status stream held by B, through the store's pub/sub on B's own subscriber connection.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { drive, sendCode, startSession } from '../webhooks/harness.js';
import { startInstance, uniqueKeyPrefix, type Instance, type StoreWiring } from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe.each(ONE_PLATFORM)('status stream across two instances on Redis (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const open: SseStream[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  let keyPrefix = '';
  const deployment = async (wiringA: StoreWiring, wiringB: StoreWiring): Promise<[Instance, Instance]> => {
    keyPrefix = uniqueKeyPrefix('status-stream');
    const common = { platform, redisUrl: sharedRedisUrl(), keyPrefix };
    const a = await startInstance(sb, 'A', { ...common, wiring: wiringA });
    const b = await startInstance(sb, 'B', { ...common, wiring: wiringB });
    // Webhooks reach A only.
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${a.url}/verification/webhooks` });
    return [a, b];
  };

  const streamOn = async (instance: Instance, verificationId: string, owner: string): Promise<SseStream> => {
    const opened = await openSse(`${instance.url}/verification/status/${verificationId}/events`, {
      'x-user': owner,
    });
    expect(opened.status).toBe(200);
    open.push(opened.stream!);
    await opened.stream!.statusCount(1);
    return opened.stream!;
  };

  for (const [wiringA, wiringB] of [
    ['store-ioredis-url', 'host-ioredis'],
    ['host-node-redis', 'store-node-redis-url'],
  ] as const)
    it(`a webhook on A reaches the stream on B (A: ${wiringA}, B: ${wiringB})`, async () => {
      const [a, b] = await deployment(wiringA, wiringB);
      try {
        const s = await startSession(a, sb, 'reverse_flash_call');
        const events = await streamOn(b, s.verificationId, s.owner);
        await drive(sb, s, 'verified');
        await events.ends();
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
      } finally {
        await b.shutdown();
        await a.shutdown();
      }
    });

  it('a check on A reaches the stream on B; shutting B down ends its stream and closes its subscriber', async () => {
    const [a, b] = await deployment('host-ioredis', 'host-ioredis');
    try {
      const s = await startSession(a, sb, 'sms');
      const events = await streamOn(b, s.verificationId, s.owner);
      await sendCode(sb, s);
      const code = sb.getSession(s.requestId)!.code as string;
      await call(
        a.url,
        'POST',
        '/verification/check',
        { verification_id: s.verificationId, code },
        { 'x-user': s.owner },
      );
      await events.ends();
      expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);

      const next = await startSession(a, sb, 'sms');
      const held = await streamOn(b, next.verificationId, next.owner);
      const redis = new Redis(sharedRedisUrl());
      const subscribers = async (): Promise<number> => {
        const [, count] = (await redis.pubsub('NUMSUB', `${keyPrefix}session-changed`)) as [string, number];
        return Number(count);
      };
      try {
        expect(await subscribers()).toBe(1);
        await b.shutdown();
        await held.ends();
        expect(await subscribers()).toBe(0);
      } finally {
        redis.disconnect();
      }
    } finally {
      await b.shutdown();
      await a.shutdown();
    }
  });
});
