/**
 * A store dump after starts from real client addresses (behind a trusted proxy): paid and free starts,
 * a cancel, a switch: no address, network (/24, /48) or number in clear or as a plain digest.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VERIFICATION_METHODS } from '../../src/core/verification-method.js';
import { dumpMemoryStore, leaks } from '../support/store-dump.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { freshPhone, protectedHost, protectionFixture, startFrom } from '../protection/protection-host.js';

const V4 = '203.0.113.77';
const V6 = '2001:db8:5:6::9';

describe.each(ONE_PLATFORM)('a dump after starts from client addresses (%s)', (platform) => {
  const fx = protectionFixture();

  it('MemoryStore: no address or network in clear or as a plain digest', async () => {
    const store = new MemoryStore({ clock: () => fx.sb.now() });
    fx.host = await protectedHost(fx.sb, platform, { spendCap: false }, { store, history: {} });
    const numbers: string[] = [];
    for (const ip of [V4, V6])
      for (const method of ['sms', 'reverse_flash_call', 'flash_call']) {
        const n = freshPhone();
        numbers.push(n);
        const r = await startFrom(fx.host, ip, n, method);
        expect(r.status).toBe(201);
        if (method === 'flash_call') {
          const headers = { 'x-forwarded-for': ip };
          const id = String(r.body.verification_id);
          const switched = await call(
            fx.host.url,
            'POST',
            '/verification/switch',
            { verification_id: id, method: 'sms' },
            headers,
          );
          expect(switched.status).toBe(201);
        }
      }
    const lines = dumpMemoryStore(store);
    const addresses = [
      V4,
      V6,
      '203.0.113.0',
      '2001:db8:5::',
      '2001:db8:5:6::',
      '203.0.113.0/24',
      '2001:db8:5::/48',
      '2001:db8:5:6::/64',
    ];
    const found = leaks(lines, { numbers, owners: [], addresses, methods: [...VERIFICATION_METHODS] });
    const networks = addresses.flatMap((a) => [`network:${a}`, `address:${a}`]);
    const more = leaks(lines, { numbers: [], owners: networks, addresses: [], methods: [] });
    expect([...found, ...more]).toEqual([]);
    await store.close();
  });
});
