/**
 * Attack (lane attack-44): reviewer numbers open to every caller (no `testNumbers.owners`: the only
 * choice of a host that verifies before sign-in, where no caller has an owner) take the per-client
 * limits only: no per-number limit (so that a stranger cannot lock the reviewer out), no spend cap,
 * no pumping defence (nothing is paid). Each start keeps about 3 entries in the store for an hour
 * (the played session, its record, its index), so a caller with many addresses (an IPv6 /48 is 65,536
 * /64 networks, each allowed 10 starts an hour) grows the store without bound: 300 starts from 300
 * /64s were all admitted and kept ~1,000 entries, where the same 300 starts of a real number are
 * capped at 15.
 *
 * On a MemoryStore, whose kept entries are bounded (`maxEntries`, default 1,000,000: ~330,000 such
 * starts, half an hour of one /48), the flood evicts other users' kept entries: their pending
 * session's coalescing key and cooldown. The test scales the store down (`maxEntries: 3,000`) to show
 * what a user then sees: the same browser starting the same number again is not handed its pending
 * verification back but gets a second, paid session.
 *
 * Expected: test starts of one number keep a bounded amount of state whatever the callers (or the
 * flood never evicts what real sessions keep). Medium. Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const REVIEWER = '+79990000001';

describe('open reviewer numbers flooded from many networks (fastify, MemoryStore)', () => {
  const suite = sandboxSuite();

  it("a flood of free test starts does not cost a real user's pending verification", async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now(), maxEntries: 3_000 });
    suite.host = await startAccountHost('fastify', suite.sb, {
      trustProxy: true,
      module: {
        limits: {},
        owner: undefined,
        store,
        testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '123456' }] },
      },
    });
    const start = (phone: string, headers: Record<string, string>) =>
      call(suite.host!.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' }, headers);

    // A real user, anonymous, in a browser (its key cookie), starts their number.
    const user = { 'x-forwarded-for': '198.51.100.7' };
    const phone = '+79161234501';
    const first = await start(phone, user);
    expect(first.status).toBe(201);
    const cookie = { ...user, cookie: (first.headers.get('set-cookie') ?? '').split(';')[0]! };

    // The flood: test starts of the reviewer's number from 1,000 /64 networks of one /48.
    let admitted = 0;
    for (let i = 0; i < 1000; i++) {
      const ip = `2001:db8:42:${i.toString(16)}::1`;
      if ((await start(REVIEWER, { 'x-forwarded-for': ip })).status === 201) admitted += 1;
    }
    expect(admitted).toBeGreaterThan(900);

    // The user starts again (a reload): handed the pending verification back, nothing paid again.
    const again = await start(phone, cookie);
    expect({
      status: again.status,
      sessions: suite.sb.sessionsFor(phone).length,
      body: again.body,
    }).toMatchObject({
      status: 201,
      sessions: 1,
      body: { resumed: true, verification_id: first.body.verification_id },
    });
  }, 180_000);
});
