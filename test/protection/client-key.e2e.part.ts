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
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).held).toBe('start_ip_limit');
  });

  it('with trust proxy, the forwarded client IP is the key', async () => {
    fx.host = await protectedHost(fx.sb, platform, twoPerHour, {}, { trustProxy: true });
    const ip = freshIp();
    expect((await startFrom(fx.host, ip, freshPhone())).status).toBe(201);
    expect((await startFrom(fx.host, ip, freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, ip, freshPhone())).held).toBe('start_ip_limit');
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
  });

  it('IPv6: every address of one /64 shares one budget (with the default limits); another /64 has its own', async () => {
    fx.host = await protectedHost(fx.sb, platform, {});
    const net = `2001:db8:${(++v6Net).toString(16)}:7`;
    // Ten distinct addresses of one /64, in the forms a proxy may write them.
    const addresses = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? `${net}::${(i + 1).toString(16)}` : `${net.toUpperCase()}:0:0:0:${(i + 1).toString(16)}`,
    );
    for (const address of addresses)
      expect((await startFrom(fx.host, address, freshPhone())).status).toBe(201);
    const posts = fx.sb.requestCount('POST /v1/verify');
    expect(refusal(await startFrom(fx.host, `${net}:ffff:ffff:ffff:fffe`, freshPhone())).held).toBe(
      'start_ip_limit',
    );
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
    expect((await startFrom(fx.host, `2001:db8:${(++v6Net).toString(16)}:7::1`, freshPhone())).status).toBe(
      201,
    );
  });

  it('an IPv4-mapped IPv6 address counts as the IPv4 address', async () => {
    fx.host = await protectedHost(fx.sb, platform, twoPerHour);
    const ip = freshIp();
    expect((await startFrom(fx.host, ip, freshPhone())).status).toBe(201);
    expect((await startFrom(fx.host, `::ffff:${ip}`, freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, ip, freshPhone())).held).toBe('start_ip_limit');
  });

  it('limits.ipv6PrefixLength: 56 makes a /56 one client', async () => {
    fx.host = await protectedHost(fx.sb, platform, { ...twoPerHour, ipv6PrefixLength: 56 });
    const net = `2001:db8:${(++v6Net).toString(16)}`;
    expect((await startFrom(fx.host, `${net}:100::1`, freshPhone())).status).toBe(201);
    expect((await startFrom(fx.host, `${net}:1ff::1`, freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, `${net}:180::1`, freshPhone())).held).toBe('start_ip_limit');
    expect((await startFrom(fx.host, `${net}:200::1`, freshPhone())).status).toBe(201);
  });
});

let v6Net = Math.floor(Math.random() * 0xf000);
