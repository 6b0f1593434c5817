/**
 * Attack (lane attack-p, the store's compact records: 1b49674a open spends, b16b826e session records,
 * 9a0e50f1 the figures' day claims): the privacy dumps (test/privacy) run with the spend cap off, so a
 * session's open spend (its callers) and the method figures' claims under `auto` are not in them.
 * Here with the cap on (pumping enforced), `auto` learning, paid and free starts from one address and
 * one owner, a switch, a verified reverse call, a third start past the giver's share: no number,
 * address, network or owner in clear or as a plain digest in a MemoryStore's dump, then none of the
 * number and owner after their erasure. Held on attack-base (e6f8de49) when written.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VERIFICATION_METHODS } from '../../src/core/verification-method.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { dumpMemoryStore, leaks } from '../support/store-dump.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { freshPhone, protectedHost, protectionFixture } from '../protection/protection-host.js';

const IP = '203.0.113.77';
const OWNER = 'owner-dump-p-42';

describe.each(ONE_PLATFORM)('a dump with the spend cap and the figures on (%s)', (platform) => {
  const fx = protectionFixture();

  it('MemoryStore: no number, address or owner, before and after the erasure', async () => {
    const store = new MemoryStore({ clock: () => fx.sb.now() });
    fx.host = await protectedHost(fx.sb, platform, {}, { store, history: {} });
    const headers = { 'x-forwarded-for': IP, 'x-user': OWNER };
    const post = (path: string, body: unknown) =>
      call(fx.host!.url, 'POST', `/verification/${path}`, body, headers);
    const numbers: string[] = [];
    for (const method of ['sms', 'reverse_flash_call', 'flash_call', 'auto', 'reverse_flash_call']) {
      const n = freshPhone();
      numbers.push(n);
      const r = await post('start', { phone_number: n, method, device: 'mobile' });
      expect(r.status).toBe(201);
      const id = String(r.body.verification_id);
      await fx.sb.advance(6_000);
      await call(fx.host.url, 'GET', `/verification/status/${id}`, undefined, headers);
      if (method === 'flash_call')
        expect((await post('switch', { verification_id: id, method: 'sms' })).status).toBe(201);
      if (r.body.method === 'reverse_flash_call' && numbers.length === 2) {
        const [session] = fx.sb.sessionsFor(n).filter((s) => s.status === 'sent');
        await fx.sb.call(session!.request_id, n);
        await fx.sb.webhooksIdle();
        await call(fx.host.url, 'GET', `/verification/status/${id}`, undefined, headers);
      }
    }
    const addresses = [IP, '203.0.113.0', '203.0.113.0/24'];
    const subjects = { numbers, owners: [OWNER], addresses, methods: [...VERIFICATION_METHODS] };
    const networks = addresses.flatMap((a) => [`network:${a}`, `address:${a}`]);
    const dumpLeaks = () => [
      ...leaks(dumpMemoryStore(store), subjects),
      ...leaks(dumpMemoryStore(store), { numbers: [], owners: networks, addresses: [], methods: [] }),
    ];
    // The dump holds the open spends and the figures' claims.
    const lines = dumpMemoryStore(store);
    expect(lines.some((line) => line.startsWith('stats-number:'))).toBe(true);
    expect(lines.some((line) => line.startsWith('protect:spend-open:') && line.includes('"c":['))).toBe(true);
    expect(dumpLeaks()).toEqual([]);
    const erasure = fx.host.app.get(VerificationErasure, { strict: false });
    await erasure.forget({ owner: OWNER });
    for (const phoneNumber of numbers) await erasure.forget({ phoneNumber });
    expect(dumpLeaks()).toEqual([]);
    await store.close();
  }, 60_000);
});
