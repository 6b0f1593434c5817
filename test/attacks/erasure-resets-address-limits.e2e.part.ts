/**
 * Attack (lane attack-44c): a deletion request of an owner (`VerificationErasure.forget({ owner })`, the
 * host's "delete my account") also erases "the callers of its sessions": the client key's (the address's)
 * rate limits, pumping counters and cooldowns. An SMS pumper signs up, spends its address's paid starts
 * for the hour (10 SMS, then `409 method_held`; a second account from the address is held just the
 * same), deletes the account, signs up again from the same address and has 10 more paid SMS, as often
 * as the host lets accounts be made: the per-address bound on what one address makes the host pay is
 * gone for anyone with a sign-up form and a "delete my account" button, and with it the bound on every
 * other caller behind that address.
 *
 * Expected: an owner's erasure drops the owner's own counters; the address's limits (shared with
 * everyone who used the address, and protection rather than the person's data) still hold for the
 * hour, or at least the starts already counted stay counted.
 * Medium (costs the host money: per-address SMS limits bypassed). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

describe.each(PLATFORMS)('an owner erased, its address (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  it.each([
    ['a new account', false],
    ["the first account's erasure and a new account", true],
  ])("the address's paid starts of the hour stay counted after %s", async (_label, erase) => {
    const account = await suite.sb.createAccount({ balance: 10_000 });
    suite.host = await createTestApp({
      platform,
      trustProxy: true,
      module: moduleOptions(suite.sb, { limits: {} }, account),
    });
    const ip = platform === 'express' ? '198.51.100.71' : '198.51.100.72';
    let serial = 0;
    const start = (user: string) => {
      serial += 1;
      // Numbers of distinct operator prefixes: the range figures are not what this is about.
      const phone = `+79${String(10 + serial).padStart(2, '0')}${platform === 'express' ? 1 : 2}44${String(serial).padStart(4, '0')}`;
      return call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-user': user, 'x-forwarded-for': ip },
      );
    };

    const first: number[] = [];
    for (let i = 0; i < 12; i++) first.push((await start('pumper-1')).status);
    // The address's paid starts of the hour: 10 admitted, then held (409 method_held).
    expect(first.filter((s) => s === 201)).toHaveLength(10);
    expect(first.slice(10)).toEqual([409, 409]);

    // "Delete my account", and a new one from the same address a minute later.
    if (erase) await suite.host.app.get(VerificationErasure).forget({ owner: 'pumper-1' });
    await suite.sb.advance(60_000);
    const second: number[] = [];
    for (let i = 0; i < 12; i++) second.push((await start('pumper-2')).status);
    expect(second.filter((s) => s === 201)).toHaveLength(0);
  });
});
