/**
 * A change of phone tried as an attacker would, over real HTTP against the sandbox (Express on
 * MemoryStore, Fastify on Redis): another owner's verification of the new number, a verification or
 * claim another registration issued (one handleKey for both), two changes racing, and enumeration of
 * who owns a number (the answer, and what follows it, are the same whether the number is another
 * account's or nobody's).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
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
const HANDLE_KEY = 'one-handle-key-for-two-registrations-0123456789';
const CASES: [Platform, StoreKind][] = [
  ['express', 'memory'],
  ['fastify', 'redis'],
];

describe.each(CASES)('attacks on the change of phone (%s, %s store)', (platform, storeKind) => {
  const suite = sandboxSuite();
  const hosts: PhoneChangeHost[] = [];
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((h) => h.close()));
  });
  const boot = async (extra: Parameters<typeof bootPhoneChangeHost>[3] = {}) => {
    const host = await bootPhoneChangeHost(platform, suite.sb, storeKind, {
      phoneChange: { cooldownMs: COOLDOWN_MS },
      handleKey: HANDLE_KEY,
      ...extra,
    });
    hosts.push(host);
    return host;
  };
  const d = driver(
    () => suite.sb,
    () => hosts[0]!,
  );

  it("another owner's verification of the new number is 404, and takes nothing from the caller", async () => {
    const { users, events } = await boot();
    const [a, b] = [phoneNumber(), phoneNumber()];
    users.phones.set('alice', a);
    const bobs = await d.verified('bob', b, 'change_phone');
    const stolen = await d.change('alice', { verification_id: bobs });
    expect(stolen.status).toBe(404);
    expect(stolen.body).toMatchObject({ status: 404, error_code: 'not_found' });
    expect(stolen.text).not.toContain(b.slice(2));
    // Without an owner (not signed in) it is nobody's either.
    const anonymous = await d.change('', { verification_id: bobs });
    expect(anonymous.body).toMatchObject({ status: 404, error_code: 'not_found' });
    expect(users.rebinds).toEqual([]);
    expect(events).toEqual([]);
    // Nothing was held for alice: her own verification changes her number now.
    expect(
      (await d.change('alice', { verification_id: await d.verified('alice', b, 'change_phone') })).status,
    ).toBe(200);
  });

  it("another registration's verification is 404 and its claim confirms nothing, with one handleKey for both", async () => {
    const mine = await boot({ phoneChange: { cooldownMs: COOLDOWN_MS, confirmOld: true } });
    const account = await suite.sb.createAccount({ balance: 100 });
    const other = await boot({
      api: { baseUrl: suite.sb.url, apiKey: account.apiKey, apiSecret: account.apiSecret, maxRetries: 0 },
      webhooks: { secret: account.webhookSecret },
    });
    const theirs = driver(
      () => suite.sb,
      () => other,
    );
    const [a, b] = [phoneNumber(), phoneNumber()];
    mine.users.phones.set('alice', a);
    // The other registration verified alice's new number, and her current one for the change.
    const foreignNew = await theirs.verified('alice', b, 'change_phone');
    const foreignOld = await theirs.verified('alice', a, 'change_phone');
    const foreignClaim = String((await theirs.whoami('alice', { id: foreignOld })).body.claim);
    expect(foreignClaim).toMatch(/^vpc1\./);

    expect((await d.change('alice', { verification_id: foreignNew })).body).toMatchObject({
      status: 404,
      error_code: 'not_found',
    });
    const toB = await d.verified('alice', b, 'change_phone');
    for (const old_confirmation of [foreignClaim, foreignOld])
      expect((await d.change('alice', { verification_id: toB, old_confirmation })).body).toMatchObject({
        status: 403,
        reason: 'old_number',
      });
    expect(mine.users.rebinds).toEqual([]);
  });

  it('two changes racing for one owner: one is made, the other is 429; one rebind, one event', async () => {
    const { users, events } = await boot();
    const [a, b, c] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('alice', a);
    const [toB, toC] = [
      await d.verified('alice', b, 'change_phone'),
      await d.verified('alice', c, 'change_phone'),
    ];
    const answers = await Promise.all([
      d.change('alice', { verification_id: toB }),
      d.change('alice', { verification_id: toC }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 429]);
    const lost = answers.find((r) => r.status === 429)!;
    expect(lost.body).toMatchObject({ error_code: 'rate_limit_exceeded', reason: 'phone_change_cooldown' });
    expect(Number(lost.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(users.rebinds).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(users.phones.get('alice')).toBe(users.rebinds[0]!.newPhoneNumber);
  });

  it("enumeration: another account's number and nobody's get the same answer, and the same afterwards", async () => {
    const { users, events } = await boot();
    const [bobs, nobodys] = [phoneNumber(), phoneNumber()];
    users.phones.set('bob', bobs);
    const outcome = async (user: string, target: string) => {
      const current = phoneNumber();
      users.phones.set(user, current);
      const oldClaim = String(
        (await d.whoami(user, { id: await d.verified(user, current, 'login') })).body.claim,
      );
      const toTarget = await d.verified(user, target, 'change_phone');
      const answer = await d.change(user, { verification_id: toTarget });
      const next = await d.verified(user, phoneNumber(), 'change_phone');
      const again = await d.change(user, { verification_id: next });
      return {
        status: answer.status,
        type: answer.headers.get('content-type'),
        body: answer.body,
        oldClaim: (await d.whoami(user, { claim: oldClaim })).status,
        again: {
          status: again.status,
          retryAfter: again.headers.get('retry-after'),
          reason: again.body.reason,
        },
      };
    };
    const probed = await outcome('mallory', bobs);
    const control = await outcome('carol', nobodys);
    expect(probed).toEqual(control);
    expect(probed.status).toBe(200);
    // Only the host knows: bob keeps his number, mallory hers; carol's moved, and only hers is announced.
    expect(users.phones.get('bob')).toBe(bobs);
    expect(users.phones.get('mallory')).not.toBe(bobs);
    expect(users.phones.get('carol')).toBe(nobodys);
    expect(events.map((e) => e.owner)).toEqual(['carol']);
  });
});
