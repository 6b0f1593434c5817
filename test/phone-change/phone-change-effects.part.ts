/**
 * What a change leaves behind (phone-change-service-host.ts): the cooldown's Retry-After from its first
 * instant to its bound, a change that lost the race for it, a failing rebind of an account without a
 * number, the event and the warning a failing listener leaves, and how long the old number's claims stay
 * refused (the guard's read of a claim); and a store dump after a change names its owner nowhere.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { dumpMemoryStore, leaks } from '../support/store-dump.js';
import { COOLDOWN_MS, host, OLD, T0, TWO_DAYS_MS } from './phone-change-service-host.js';

describe('PhoneChange: the cooldown', () => {
  it('429 with Retry-After from its first instant (120) to one tick before its bound (1); changed at it', async () => {
    const h = host();
    await h.change();
    const cooldown = {
      status: 429,
      error_code: 'rate_limit_exceeded',
      reason: 'phone_change_cooldown',
      detail: 'The phone number was changed recently: try again later',
    };
    expect(await h.refusal()).toMatchObject({ ...cooldown, retry_after: 120 });
    // Refused before the new number is read: an unknown verification is 429 too, not 404.
    expect(await h.refusal({ verificationId: 'unknown' })).toMatchObject({ ...cooldown, retry_after: 120 });
    for (const [at, seconds] of [
      [1, 120],
      [COOLDOWN_MS - 1_001, 2],
      [COOLDOWN_MS - 1_000, 1],
      [COOLDOWN_MS - 1, 1],
    ]) {
      h.clock.now = T0 + at;
      expect(await h.refusal()).toMatchObject({ ...cooldown, retry_after: seconds });
    }
    h.clock.now = T0 + COOLDOWN_MS;
    expect((await h.change()).changedAt).toEqual(new Date(T0 + COOLDOWN_MS));
    expect(h.rebinds).toHaveLength(2);
  });

  it('a change that lost the race for the cooldown is 429, even when the winner has given it back since', async () => {
    const h = host();
    // Another change took the cooldown after this one looked, and its rebind failed before this one reads it.
    h.store.setIfAbsent = async () => false;
    expect(await h.refusal()).toMatchObject({
      status: 429,
      reason: 'phone_change_cooldown',
      retry_after: 120,
    });
    expect(h.rebinds).toEqual([]);
  });

  it("a failing rebind of an account without a number: the host's error as it is, no cooldown kept", async () => {
    const h = host();
    const failure = new Error('the users database is down');
    const failed = await h
      .change({
        currentPhoneNumber: null,
        rebind: async () => {
          throw failure;
        },
      })
      .catch((error: unknown) => error);
    expect(failed).toBe(failure);
    expect((await h.change({ currentPhoneNumber: null })).changedAt).toEqual(new Date(T0));
  });
});

describe('PhoneChange: what the host is told', () => {
  const event = {
    event: 'verification.phone_changed',
    owner: 'alice',
    oldPhoneNumberMasked: '+7******4567',
    newPhoneNumberMasked: '+7******4321',
    changedAt: new Date(T0),
  };
  it('verification.phone_changed, with the registration only when it is named', async () => {
    const unnamed = host();
    await unnamed.change();
    expect(unnamed.emitted).toStrictEqual([event]);
    const named = host({ name: 'second' });
    await named.change();
    expect(named.emitted).toStrictEqual([{ ...event, registration: 'second' }]);
  });

  it.each<[string, () => unknown, string]>([
    [
      'throws an Error',
      () => {
        throw new RangeError(`no such user ${OLD}`);
      },
      'RangeError',
    ],
    [
      'throws a string',
      () => {
        throw `no such user ${OLD}`;
      },
      'unknown',
    ],
    // As a host's listener that texts the old number does: its failure comes later, once awaited.
    ['rejects, awaited', async () => Promise.reject(new TypeError(`no such user ${OLD}`)), 'TypeError'],
  ])(
    'a listener that %s: the change stands; a warning names it, never its text',
    async (_c, listener, name) => {
      const h = host();
      h.listen(listener);
      expect((await h.change()).changedAt).toEqual(new Date(T0));
      expect(h.rebinds).toHaveLength(1);
      const warned = h.lines.filter((line) => line.includes('phone_changed'));
      expect(warned).toEqual([`a listener of verification.phone_changed failed error=${name}`]);
    },
  );

  it('no event emitter in the app: the change is made and nothing is logged about listeners', async () => {
    const h = host({}, false);
    expect((await h.change()).changedAt).toEqual(new Date(T0));
    expect(h.lines.filter((line) => line.includes('phone_changed'))).toEqual([]);
  });

  it("the old number's claim of the longest-lived purpose stays refused until it expires", async () => {
    const h = host();
    const claim = await h.claims.issue({
      phoneNumber: OLD,
      owner: 'alice',
      verifiedAt: new Date(T0),
      purpose: 'archive',
    });
    expect(await h.claims.read(claim, 'alice')).toMatchObject({ phoneNumber: OLD });
    await h.change();
    for (const at of [0, 87_000_000, TWO_DAYS_MS - 60_000, TWO_DAYS_MS - 1]) {
      h.clock.now = T0 + at;
      expect(await h.claims.read(claim, 'alice')).toBeNull();
    }
  });
});

describe('PhoneChange: what the store keeps of a change', () => {
  it('its cooldown holds for the owner, and no key or value names the owner in clear or as a plain digest', async () => {
    const h = host();
    const owner = `owner-${randomUUID()}`;
    await h.change({ user: owner });
    expect(await h.refusal({ user: owner })).toMatchObject({ status: 429, reason: 'phone_change_cooldown' });
    const lines = dumpMemoryStore(h.store);
    expect(lines.some((line) => line.startsWith('phone-change:'))).toBe(true);
    expect(leaks(lines, { numbers: [], owners: [owner], addresses: [], methods: [] })).toEqual([]);
  });
});
