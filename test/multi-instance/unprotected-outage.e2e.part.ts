/**
 * With every protection off nothing touches the store before the paid initiation, so the start
 * itself must check that the session can be recorded: during a Redis outage it answers 503 and
 * sends nothing to the API (a session it could not record would never be followed).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { ThrowawayRedisServer } from '../support/redis-server.js';
import { call } from '../support/verification-app.js';
import { nextPhone } from '../webhooks/harness.js';
import { startInstance, uniqueKeyPrefix, type Instance } from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('a start with every protection off while Redis is away', () => {
  // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
  afterAll(async () => {
    await instance?.shutdown();
    await server?.stop();
  });
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let server: ThrowawayRedisServer;
  let instance: Instance;

  beforeAll(async () => {
    sb = suite.sb;
    server = await ThrowawayRedisServer.start();
    instance = await startInstance(sb, 'A', {
      platform: 'express',
      wiring: 'store-ioredis-url',
      redisUrl: server.url,
      keyPrefix: uniqueKeyPrefix('unprotected-outage'),
      commandTimeoutMs: 250,
      module: { limits: { enabled: false } },
    });
  });

  it('answers 503 and pays for nothing; works again when Redis returns', async () => {
    const up = await call(instance.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'sms',
    });
    expect(up.status).toBe(201);
    await server.stop();
    const posts = sb.requestCount('POST /v1/verify');
    const down = await call(instance.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'sms',
    });
    expect({ status: down.status, code: down.body.error_code }).toEqual({
      status: 503,
      code: 'service_unavailable',
    });
    expect(sb.requestCount('POST /v1/verify')).toBe(posts);
    await server.start();
    const deadline = Date.now() + 10_000;
    let back = await call(instance.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'sms',
    });
    while (back.status !== 201 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      back = await call(instance.url, 'POST', '/verification/start', {
        phone_number: nextPhone(),
        method: 'sms',
      });
    }
    expect(back.status).toBe(201);
    expect(sb.requestCount('POST /v1/verify')).toBe(posts + 1);
  });
});
