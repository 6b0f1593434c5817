/**
 * Attack (lane attack-m): an owner changed phone (A → B), so what it verified of A is revoked for as long
 * as the longest purpose's claim lives (PhoneChange.revokedMs). Then the owner asks for erasure:
 * `forget({ owner })` deletes that revocation ("the mark above covers it now"), but the owner's erasure
 * mark is kept only `verifiedPhone.claimTtlMs` + slack or a record's life (~24 h). With a purpose whose
 * claims live a week, a claim of A issued before the change opens the guard for the owner again a day
 * later: the account is back on the number it left (and erased). Also: the owner's phone-change
 * cooldown (`phone-change:{digest(owner)}`) survives the erasure, one of the owner's own cooldowns that
 * `erasureCounterKeys` says an owner erasure removes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import {
  bootPhoneChangeHost,
  driver,
  phoneNumber,
  type PhoneChangeHost,
} from '../phone-change/phone-change-host.js';

const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;

describe('attack: an owner erasure after a change of phone', () => {
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

  it('a week-long login claim of the number the owner left stays refused after forget({ owner }), all its life', async () => {
    host = await bootPhoneChangeHost('express', suite.sb, 'memory', {
      purposes: { login: { claimTtlMs: WEEK } },
    });
    const [a, b] = [phoneNumber(), phoneNumber()];
    host.users.phones.set('olga', a);
    const oldClaim = String(
      (await d.whoami('olga', { id: await d.verified('olga', a, 'login') })).body.claim,
    );
    expect(
      (await d.change('olga', { verification_id: await d.verified('olga', b, 'change_phone') })).status,
    ).toBe(200);
    expect((await d.whoami('olga', { claim: oldClaim })).status).toBe(403);
    await suite.sb.advance(1);

    await host.app.app.get(VerificationErasure).forget({ owner: 'olga' });
    expect((await d.whoami('olga', { claim: oldClaim })).status).toBe(403);
    // Two days on, the claim still has five to live: still refused.
    await suite.sb.advance(48 * HOUR);
    expect((await d.whoami('olga', { claim: oldClaim })).body).toMatchObject({ status: 403 });
  });

  it("the owner's phone-change cooldown and the revocation of the number she left do not survive forget({ owner })", async () => {
    host = await bootPhoneChangeHost('express', suite.sb, 'memory', {
      phoneChange: { cooldownMs: 24 * HOUR },
    });
    const [a, b] = [phoneNumber(), phoneNumber()];
    host.users.phones.set('pia', a);
    await d.verified('pia', a, 'login');
    expect(
      (await d.change('pia', { verification_id: await d.verified('pia', b, 'change_phone') })).status,
    ).toBe(200);
    expect((await host.dump()).filter((line) => line.startsWith('phone-change:'))).toHaveLength(1);
    // The change also marked the number pia left as revoked for her: a line naming her, which goes too.
    expect((await host.dump()).filter((line) => line.includes(':revoked:'))).toHaveLength(1);
    await host.app.app.get(VerificationErasure).forget({ owner: 'pia' });
    expect((await host.dump()).filter((line) => line.startsWith('phone-change:'))).toEqual([]);
    expect((await host.dump()).filter((line) => line.includes(':revoked:'))).toEqual([]);
  });
});
