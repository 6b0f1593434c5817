/**
 * Attack (lane attack-44c): the guard's read meter is per owner, and "callers without an owner share
 * one" (GUARD_READS_PER_OWNER: 30 a minute). A host that verifies before sign-in (no `owner`, the
 * shape docs/test-numbers.md calls "the only choice of a host that verifies before sign-in") puts
 * `@RequireVerifiedPhone()` on its sign-up route: every visitor's guard reads then come out of ONE
 * meter. One address presenting 30 pending verifications of its own (free reverse flash calls) a
 * minute spends it for the whole site, for as long as it keeps doing so; a real visitor who has just
 * called (verified at the API, the record not yet refreshed) is answered from the stale record, 409
 * `phone_not_verified`, until the reconciler's next pass. The status route's meter keys an anonymous
 * caller by its client address; the guard's does not.
 *
 * Expected: an anonymous caller's guard reads are metered by its client key (as the status route's),
 * so one address cannot spend every visitor's reads. Low (real users refused until the reconciler
 * catches up, for a frontend that goes to the guarded route before it polled the status).
 * Failed on the code it was written against; passes since its fix.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { GUARD_READS_PER_OWNER } from '../../src/guard/guard-read-meter.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { GuardedController } from '../verified-phone/guard-host.js';
import { moduleOptions } from '../webhooks/harness.js';

let serial = 0;
const phoneNumber = () =>
  `+7916448${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

describe.each(PLATFORMS)('anonymous visitors and the guard (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let store: MemoryStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it("one address's pending verifications do not spend another visitor's guard read", async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    store = new MemoryStore({ clock: () => suite.sb.now() });
    suite.host = await createTestApp({
      platform,
      trustProxy: true,
      module: moduleOptions(suite.sb, { owner: undefined, store }, account),
      controllers: [GuardedController],
    });
    const from = (ip: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...extra });
    const start = async (ip: string) => {
      const phone = phoneNumber();
      const started = await call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'reverse_flash_call' },
        from(ip),
      );
      expect(started.status).toBe(201);
      return {
        id: String(started.body.verification_id),
        phone,
        requestId: suite.sb.sessionsFor(phone)[0]!.request_id,
      };
    };
    const guarded = (ip: string, id: string) =>
      call(suite.host!.url, 'POST', '/account/phone', {}, from(ip, { 'x-verification-id': id }));

    const visitor = await start('198.51.100.20');
    const attacker: string[] = [];
    for (let i = 0; i < GUARD_READS_PER_OWNER.points; i++) attacker.push((await start('203.0.113.9')).id);
    // The attacker presents its pending verifications to the sign-up route: 409 each, a read each.
    for (const id of attacker) expect((await guarded('203.0.113.9', id)).status).toBe(409);

    // The visitor calls (verified at the API) and goes on to sign up, from its own address.
    await suite.sb.call(visitor.requestId, visitor.phone);
    const signup = await guarded('198.51.100.20', visitor.id);
    expect({ status: signup.status, phone: signup.body.phone }).toEqual({
      status: 201,
      phone: visitor.phone,
    });
  });
});
