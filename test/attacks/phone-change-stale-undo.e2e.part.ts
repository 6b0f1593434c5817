/**
 * A finding of lane attack-48c: failed on the code it was written against; passes since its fix.
 *
 * What: a rebind that hangs past `phoneChange.cooldownMs` and then throws (a database lock wait, a
 * compare-and-set that lost) runs its undo after a later change of the same owner was made: the undo
 * deletes the revocation of the old number (it restores what it read before its own revoke: nothing)
 * and deletes the cooldown key, which is now the later change's. So the old number's claims and
 * verifications of the owner open the guard again (better-auth 5597: "verified" carried over an edit)
 * and the owner may change the number again at once (the cooldown is bypassed).
 *
 * Expected: once a later change was made, the first change's failure leaves the later change's
 * revocation and cooldown alone: the old number's claim stays refused (403) and a change right away is
 * 429 phone_change_cooldown.
 *
 * Severity: Medium (needs a rebind slower than the cooldown; the cooldown is the host's option and may
 * be minutes; the result is the old number's proofs counting again for the account).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { PhoneChangeFacts } from '../../src/guard/phone-change.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import type { Platform } from '../support/verification-app.js';
import type { StoreKind } from '../verified-phone/guard-host.js';
import {
  bootPhoneChangeHost,
  driver,
  phoneNumber,
  type PhoneChangeHost,
} from '../phone-change/phone-change-host.js';

const COOLDOWN_MS = 120_000;
const CASES: [Platform, StoreKind][] = [
  ['express', 'memory'],
  ['fastify', 'redis'],
];

describe.each(CASES)(
  'a hung rebind that throws after a later change (%s, %s store)',
  (platform, storeKind) => {
    const suite = sandboxSuite();
    let host: PhoneChangeHost | undefined;
    afterEach(async () => {
      await host?.close();
      host = undefined;
    });
    const d = driver(
      () => suite.sb,
      () => host!,
    );

    it("leaves the later change's revocation of the old number and its cooldown in place", async () => {
      host = await bootPhoneChangeHost(platform, suite.sb, storeKind, {
        phoneChange: { cooldownMs: COOLDOWN_MS },
      });
      const { users } = host;
      const [a, b, c] = [phoneNumber(), phoneNumber(), phoneNumber()];
      users.phones.set('alice', a);
      const oldClaim = String(
        (await d.whoami('alice', { id: await d.verified('alice', a, 'login') })).body.claim,
      );
      expect(oldClaim).toMatch(/^vpc1\./);

      // The first change's rebind hangs (the host's database waits on a lock), then fails.
      const original = users.rebind.bind(users);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inRebind = new Promise<void>((resolve) => (entered = resolve));
      users.rebind = async (change: PhoneChangeFacts) => {
        users.rebind = original;
        users.rebinds.push(change);
        entered();
        await gate;
        throw new Error('lock wait timeout');
      };
      const first = d.change('alice', { verification_id: await d.verified('alice', b, 'change_phone') });
      await inRebind;

      // The cooldown passes while it hangs; alice changes to C, which the host binds.
      await suite.sb.advance(COOLDOWN_MS);
      const toC = await d.verified('alice', c, 'change_phone');
      expect((await d.change('alice', { verification_id: toC })).status).toBe(200);
      expect(users.phones.get('alice')).toBe(c);
      expect((await d.whoami('alice', { claim: oldClaim })).status).toBe(403);

      // The first change fails at last: the host gets its error.
      release();
      expect((await first).status).toBe(500);
      expect(users.phones.get('alice')).toBe(c);

      // A still left alice's account (by the second change): its claim must stay refused, and the
      // second change's cooldown still holds.
      const claim = await d.whoami('alice', { claim: oldClaim });
      const again = await d.change('alice', {
        verification_id: await d.verified('alice', phoneNumber(), 'change_phone'),
      });
      expect({ claim: claim.status, again: again.status, reason: again.body.reason }).toEqual({
        claim: 403,
        again: 429,
        reason: 'phone_change_cooldown',
      });
    });
  },
);
