/**
 * Attack (Redis capacity; issue 47's per-operator figures): an `auto` start reads its number's figure
 * cells to choose the first method, before any limit, captcha or `beforeStart` may refuse it (the hook
 * is given the chosen method). The country's and every number's cells are the same for all of a
 * country's operator prefixes; read again for each fresh prefix, a bot walking a country's prefixes made
 * each refused start read over a thousand store keys (1,274 on +7, against 56 on a known prefix). Now a
 * fresh prefix's start reads its own cells only (168 keys here, against 588 before), the country's
 * shared by all its prefixes for a short while.
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { FIRST_METHOD_MIN_TTL_MS } from '../../src/verification/first-method.chooser.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture, journeyHost, start } from '../journeys/journey-host.js';
import { from, seedFigures } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)('auto starts on fresh operator prefixes (%s)', (platform) => {
  const fx = journeyFixture();

  it('a start on a fresh prefix reads its own cells, the country’s read once for all its prefixes', async () => {
    const read: string[] = [];
    const inner = new MemoryStore({ clock: () => fx.sb.now() });
    const store = new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== 'get' || typeof value !== 'function') return value;
        return (key: string) => {
          read.push(key);
          return (value as (k: string) => Promise<string | null>).call(target, key);
        };
      },
    }) as VerificationStore;
    const host = await journeyHost(fx, platform, { store });
    const stats = host.app.get(MethodStats, { strict: false });
    await seedFigures(fx, stats, 'sms', 'mobile', 60, 51, 40_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 60, 48, 25_000);
    const groups = async (phone: string) => {
      read.length = 0;
      const res = await start(
        host,
        { phone_number: phone, method: 'auto', device: 'mobile' },
        'u',
        from('192.0.2.7'),
      );
      expect(res.status).toBe(201);
      const cells = read.filter((key) => key.startsWith('stats:')).map((key) => key.split(':')[3]!);
      return { keys: cells.length, cells: [...new Set(cells)].sort() };
    };
    const own = (prefix: string) => (cell: string) => cell.startsWith(`7~${prefix}`);
    const first = await groups('+79161234567');
    expect(first.cells).toEqual(expect.arrayContaining(['7~*', '7~.mobile', 'all~.mobile', '7~916.mobile']));
    // Another fresh prefix of the country: its own cells only.
    const second = await groups('+79171234567');
    expect(second.cells.filter((cell) => !own('917')(cell))).toEqual([]);
    expect(second.keys).toBeLessThan(first.keys / 3);
    // The country's choice cells are read again once FIRST_METHOD_MIN_TTL_MS has passed, its health
    // cell once HEALTH_READ_MS has: not a tick before.
    await fx.sb.advance(FIRST_METHOD_MIN_TTL_MS - 1);
    expect((await groups('+79181234567')).cells.filter((cell) => !own('918')(cell))).toEqual([]);
    await fx.sb.advance(1);
    expect((await groups('+79191234567')).cells.filter((cell) => !own('919')(cell))).toEqual(
      expect.arrayContaining(['7~.mobile', 'all~.mobile']),
    );
    expect((await groups('+79201234567')).cells).not.toContain('7~*');
    await fx.sb.advance(HEALTH_READ_MS - FIRST_METHOD_MIN_TTL_MS);
    expect((await groups('+79211234567')).cells).toContain('7~*');
  });
});
