/**
 * `limits.freeStartPerCaller` per client key, network and owner, each: a network is a /24 (IPv4) or a
 * /48 (IPv6), as for the method figures' givers, so that the addresses of one network share one
 * free budget; another network keeps its own.
 */
import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import { freshPhone, protectedHost, protectionFixture, startFrom } from './protection-host.js';

describe.each(ONE_PLATFORM)('the free-start budget of a network (%s)', (platform) => {
  const fx = protectionFixture();

  it.each([
    ['IPv4 /24', (i: number) => `203.0.113.${10 + i}`, '203.0.114.10'],
    ['IPv6 /48', (i: number) => `2001:db8:77:${i + 1}::1`, '2001:db8:78:1::1'],
  ])('%s: distinct addresses share it; another network is untouched', async (_, address, other) => {
    fx.host = await protectedHost(fx.sb, platform, {
      freeStartPerCaller: { points: 3, windowMs: 600_000 },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await startFrom(fx.host, address(i), freshPhone(), 'reverse_flash_call')).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    expect((await startFrom(fx.host, other, freshPhone(), 'reverse_flash_call')).status).toBe(201);
  });
});
