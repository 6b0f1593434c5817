import { describe, expect, it } from '@jest/globals';
import { PLATFORMS } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  refusal,
  startFrom,
  protectionFixture,
} from './protection-host.js';

const twoPerHour = { startPerIp: { points: 2, windowMs: 3_600_000 }, resendCooldownMs: false as const };

describe.each(PLATFORMS)('client IP and trust proxy (%s)', (platform) => {
  const fx = protectionFixture();

  it('without trust proxy, X-Forwarded-For is ignored: a client cannot rotate its key by forging it', async () => {
    fx.host = await protectedHost(fx.sb, platform, twoPerHour, {}, { trustProxy: false });
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('start_ip_limit');
  });

  it('with trust proxy, the forwarded client IP is the key', async () => {
    fx.host = await protectedHost(fx.sb, platform, twoPerHour, {}, { trustProxy: true });
    const ip = freshIp();
    expect((await startFrom(fx.host, ip, freshPhone())).status).toBe(201);
    expect((await startFrom(fx.host, ip, freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, ip, freshPhone())).reason).toBe('start_ip_limit');
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
  });
});
