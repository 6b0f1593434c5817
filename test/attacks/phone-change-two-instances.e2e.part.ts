/**
 * Holds (a guarantee the lane's tests did not cover; passes): two instances of a host on one Redis
 * store (one keyPrefix, one user table), Express and Fastify, racing two changes of one owner to two
 * numbers: one is made, the other is 429 phone_change_cooldown with Retry-After; one rebind, one event;
 * the old number's claim is refused on both instances, and a replay of the winning change on either
 * instance is 429 (the cooldown is shared).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { PhoneChangedEvent } from '../../src/core/verification-events.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import {
  bootPhoneChangeHost,
  driver,
  phoneNumber,
  type PhoneChangeHost,
} from '../phone-change/phone-change-host.js';

const COOLDOWN_MS = 120_000;

describe('two instances on one Redis store racing a change of phone (express + fastify)', () => {
  const suite = sandboxSuite();
  const hosts: PhoneChangeHost[] = [];
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((h) => h.close()));
  });

  it('one change is made, the other is 429; the old claim is refused on both; a replay is 429 on both', async () => {
    const store = { url: sharedRedisUrl(), keyPrefix: uniqueKeyPrefix('phone-change-two-instances') };
    for (const platform of ['express', 'fastify'] as const)
      hosts.push(
        await bootPhoneChangeHost(platform, suite.sb, 'redis', {
          store,
          phoneChange: { cooldownMs: COOLDOWN_MS },
        }),
      );
    const [one, two] = hosts as [PhoneChangeHost, PhoneChangeHost];
    // One user table for both instances, as in a deployment.
    (two.users as { phones: Map<string, string | null> }).phones = one.users.phones;
    two.users.rebind = (change) => one.users.rebind(change);
    const [d1, d2] = [one, two].map((h) =>
      driver(
        () => suite.sb,
        () => h,
      ),
    ) as [ReturnType<typeof driver>, ReturnType<typeof driver>];
    const users = one.users;
    const [a, b, c] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('alice', a);
    const oldClaim = String(
      (await d1.whoami('alice', { id: await d1.verified('alice', a, 'login') })).body.claim,
    );
    const toB = await d1.verified('alice', b, 'change_phone');
    const toC = await d2.verified('alice', c, 'change_phone');

    const answers = await Promise.all([
      d1.change('alice', { verification_id: toB }),
      d2.change('alice', { verification_id: toC }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 429]);
    const lost = answers.find((r) => r.status === 429)!;
    expect(lost.body).toMatchObject({
      status: 429,
      error_code: 'rate_limit_exceeded',
      reason: 'phone_change_cooldown',
    });
    expect(Number(lost.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(users.rebinds).toHaveLength(1);
    const events: PhoneChangedEvent[] = [...one.events, ...two.events];
    expect(events).toHaveLength(1);
    expect(users.phones.get('alice')).toBe(users.rebinds[0]!.newPhoneNumber);
    for (const d of [d1, d2]) expect((await d.whoami('alice', { claim: oldClaim })).status).toBe(403);
    // The replay of either change, on either instance, is held by the shared cooldown.
    for (const d of [d1, d2])
      for (const verification_id of [toB, toC])
        expect((await d.change('alice', { verification_id })).status).toBe(429);
    expect(users.rebinds).toHaveLength(1);
  });
});
