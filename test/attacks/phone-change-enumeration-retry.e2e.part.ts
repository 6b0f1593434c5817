/**
 * A finding of lane attack-48c: failed on the code it was written against; passes since its fix.
 *
 * What: "No enumeration" (docs/verified-phone-guard.md) holds for one try, not for the next. After a
 * change whose `rebind` answered 'taken' (the number is another account's), the account still holds its
 * old number, so the same change tried again once the cooldown is over is answered as a change again
 * (200); after a change to nobody's number the same try is 400 validation_error "already the
 * account's". The module's own answer to the second try tells whether the number belongs to another
 * account (one probe per account and cooldown).
 *
 * Expected: the second try gets the same answer whether the first was 'taken' or made.
 *
 * Severity: Low (one probe per cooldown per account; a host that shows the account's number, or the
 * absence of the old number's notice, leaks the same to the user anyway).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import {
  bootPhoneChangeHost,
  driver,
  phoneNumber,
  type PhoneChangeHost,
} from '../phone-change/phone-change-host.js';

const COOLDOWN_MS = 120_000;

describe('enumeration by trying a change again after the cooldown (express, memory store)', () => {
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

  it("another account's number and nobody's get the same answer on the second try", async () => {
    host = await bootPhoneChangeHost('express', suite.sb, 'memory', {
      phoneChange: { cooldownMs: COOLDOWN_MS },
    });
    const { users } = host;
    const [bobs, nobodys] = [phoneNumber(), phoneNumber()];
    users.phones.set('bob', bobs);
    users.phones.set('mallory', phoneNumber());
    users.phones.set('carol', phoneNumber());
    const attempt = async (user: string, target: string) => {
      const answer = await d.change(user, {
        verification_id: await d.verified(user, target, 'change_phone'),
      });
      return { status: answer.status, error_code: answer.body.error_code };
    };

    expect(await attempt('mallory', bobs)).toEqual(await attempt('carol', nobodys));
    await suite.sb.advance(COOLDOWN_MS);
    const probed = await attempt('mallory', bobs);
    const control = await attempt('carol', nobodys);
    expect(probed).toEqual(control);
    expect(users.phones.get('bob')).toBe(bobs);
  });
});
