/**
 * Attack (lane attack-44): with `history` on, every refused start of a number writes an entry to
 * that number's ring (a slot, two counters and a fold counter: 4 kept store entries, kept
 * `retentionDays`, 30 days by default). Refusals are free and the ring is per number, so ONE address
 * asking starts of ever new numbers (after its 10 paid starts an hour, every further one is refused
 * `409 method_held` by the pumping defence, and none is limited further) grows the store without
 * bound: 500 refusals from one address kept ~2,000 more entries; with history off, none. On Redis
 * that is memory for a month per request; on a MemoryStore, whose kept entries are bounded
 * (`maxEntries`, default 1,000,000: ~250,000 such requests), it evicts what other users' sessions keep.
 * The test scales the store down (`maxEntries: 3,000`) to show what a user then sees: the same
 * browser starting the same number again gets a second, paid session instead of its pending one.
 *
 * Expected: what free refusals write is bounded per caller (or not kept per number for a month).
 * Medium. Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

describe('history: free refusals of ever new numbers from one address (fastify, MemoryStore)', () => {
  const suite = sandboxSuite();

  it("1,000 refused starts from one address do not cost a real user's pending verification", async () => {
    const store = new MemoryStore({ clock: () => suite.sb.now(), maxEntries: 3_000 });
    suite.host = await startAccountHost('fastify', suite.sb, {
      trustProxy: true,
      module: { limits: {}, owner: undefined, store, history: {} },
    });
    const start = (phone: string, headers: Record<string, string>) =>
      call(suite.host!.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' }, headers);

    const user = { 'x-forwarded-for': '198.51.100.7' };
    const phone = '+79161234502';
    const first = await start(phone, user);
    expect(first.status).toBe(201);
    const cookie = { ...user, cookie: (first.headers.get('set-cookie') ?? '').split(';')[0]! };

    const attacker = { 'x-forwarded-for': '203.0.113.66' };
    let refused = 0;
    for (let i = 0; i < 1000; i++) {
      const answer = await start(`+7916${String(3_000_000 + i).padStart(7, '0')}`, attacker);
      if (answer.status >= 400) refused += 1;
    }
    expect(refused).toBeGreaterThan(950);

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
