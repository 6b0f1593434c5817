import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { freshIp, freshPhone, protectedHost, refusal, startFrom } from './protection-host.js';

const twoPerHour = { startPerIp: { points: 2, windowMs: 3_600_000 }, resendCooldownMs: false as const };

describe.each(PLATFORMS)('client IP and trust proxy (%s)', (platform) => {
  let sb: VerificationSandbox;
  let host: TestApp | undefined;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, demoAccount: { balance: 100_000 } });
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('without trust proxy, X-Forwarded-For is ignored: a client cannot rotate its key by forging it', async () => {
    host = await protectedHost(sb, platform, twoPerHour, {}, { trustProxy: false });
    expect((await startFrom(host, freshIp(), freshPhone())).status).toBe(201);
    expect((await startFrom(host, freshIp(), freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(host, freshIp(), freshPhone())).reason).toBe('start_ip_limit');
  });

  it('with trust proxy, the forwarded client IP is the key', async () => {
    host = await protectedHost(sb, platform, twoPerHour, {}, { trustProxy: true });
    const ip = freshIp();
    expect((await startFrom(host, ip, freshPhone())).status).toBe(201);
    expect((await startFrom(host, ip, freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(host, ip, freshPhone())).reason).toBe('start_ip_limit');
    expect((await startFrom(host, freshIp(), freshPhone())).status).toBe(201);
  });
});
