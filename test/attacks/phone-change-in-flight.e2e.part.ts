/**
 * Holds (a guarantee the lane's e2e tests did not cover; passes): while one instance's rebind is in
 * flight (the host's database is slow), another instance on the same Redis store (one keyPrefix, one
 * user table; Express and Fastify) already refuses what the owner verified of the old number (its
 * claim 403, its verification_id at the guard 403) and refuses a second change
 * (429 phone_change_cooldown); once the rebind is done, one rebind and one event, the old number's
 * proofs stay refused.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { PhoneChangeFacts } from '../../src/guard/phone-change.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import {
  bootPhoneChangeHost,
  driver,
  phoneNumber,
  type PhoneChangeHost,
} from '../phone-change/phone-change-host.js';

describe('a change in flight on one instance, seen from another (express + fastify, one Redis store)', () => {
  const suite = sandboxSuite();
  const hosts: PhoneChangeHost[] = [];
  // A failing assertion must not leave the held rebind (and its request) hanging at teardown.
  let release = () => {};
  afterEach(async () => {
    release();
    await Promise.all(hosts.splice(0).map((h) => h.close()));
  });

  it("the old number's proofs are refused and a second change is 429 before the rebind returns", async () => {
    const store = { url: sharedRedisUrl(), keyPrefix: uniqueKeyPrefix('phone-change-in-flight') };
    for (const platform of ['express', 'fastify'] as const)
      hosts.push(
        await bootPhoneChangeHost(platform, suite.sb, 'redis', {
          store,
          phoneChange: { cooldownMs: 120_000 },
        }),
      );
    const [one, two] = hosts as [PhoneChangeHost, PhoneChangeHost];
    (two.users as { phones: Map<string, string | null> }).phones = one.users.phones;
    two.users.rebind = (change) => one.users.rebind(change);
    const d1 = driver(
      () => suite.sb,
      () => one,
    );
    const d2 = driver(
      () => suite.sb,
      () => two,
    );
    const users = one.users;
    const [a, b] = [phoneNumber(), phoneNumber()];
    users.phones.set('alice', a);
    const oldId = await d1.verified('alice', a, 'login');
    const oldClaim = String((await d1.whoami('alice', { id: oldId })).body.claim);
    expect((await d2.whoami('alice', { claim: oldClaim })).status).toBe(200);

    const original = users.rebind.bind(users);
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inRebind = new Promise<void>((resolve) => (entered = resolve));
    users.rebind = async (change: PhoneChangeFacts) => {
      users.rebind = original;
      entered();
      await gate;
      return original(change);
    };
    const first = d1.change('alice', { verification_id: await d1.verified('alice', b, 'change_phone') });
    await inRebind;

    expect((await d2.whoami('alice', { claim: oldClaim })).status).toBe(403);
    expect((await d2.whoami('alice', { id: oldId })).status).toBe(403);
    const second = await d2.change('alice', {
      verification_id: await d2.verified('alice', phoneNumber(), 'change_phone'),
    });
    expect(second.body).toMatchObject({ status: 429, reason: 'phone_change_cooldown' });

    release();
    expect((await first).status).toBe(200);
    expect(users.phones.get('alice')).toBe(b);
    expect(users.rebinds).toHaveLength(1);
    expect([...one.events, ...two.events]).toHaveLength(1);
    for (const d of [d1, d2]) expect((await d.whoami('alice', { claim: oldClaim })).status).toBe(403);
  });
});
