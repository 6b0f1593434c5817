import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationClientError } from '../core/verification.errors.js';
import { MemoryStore } from '../store/memory.store.js';
import { ProtectionKeys } from './protection-keys.js';
import { ResendCooldown } from './resend-cooldown.js';
import { CoalescingClaim, StartCoalescer } from './start-coalescer.js';
import type { StartCandidate } from './verification-protection.types.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';

const COOLDOWN_MS = 60_000;
const PHONE = '+79161234567';
const ALICE = { caller: 'user-alice', starter: 'user-alice' };

/** The refusal a claim throws (or undefined when it was let through). */
async function refusalOf(claim: Promise<unknown>): Promise<VerificationClientError | undefined> {
  try {
    await claim;
    return undefined;
  } catch (error) {
    if (error instanceof VerificationClientError) return error;
    throw error;
  }
}

describe('ResendCooldown', () => {
  const clock = { now: 1_700_000_000_000 };
  const stores: MemoryStore[] = [];
  const newStore = (): MemoryStore => {
    const store = new MemoryStore({ clock: () => clock.now });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('the same caller may start the number by the same method again only once the cooldown has passed', async () => {
    const cooldown = new ResendCooldown(newStore(), COOLDOWN_MS, SPEC_DATA_KEYS);
    const start = clock.now;
    const claim = await cooldown.claim(PHONE, 'sms', ALICE);
    expect(claim.availableAt).toStrictEqual(new Date(start + COOLDOWN_MS));
    expect(await cooldown.availableAt(PHONE, 'sms', ALICE.caller)).toStrictEqual(
      new Date(start + COOLDOWN_MS),
    );

    clock.now = start + 20_500;
    const refused = await refusalOf(cooldown.claim(PHONE, 'sms', ALICE));
    expect(refused?.errorCode).toBe('rate_limit_exceeded');
    // The caller that started it is told exactly when (to the second, rounded up).
    expect(refused?.extra).toStrictEqual({
      reason: 'resend_cooldown',
      resend_available_at: new Date(start + COOLDOWN_MS).toISOString(),
    });
    expect(refused?.retryAfterSeconds).toBe(40);

    clock.now = start + COOLDOWN_MS;
    const again = await cooldown.claim(PHONE, 'sms', ALICE);
    expect(again.availableAt).toStrictEqual(new Date(clock.now + COOLDOWN_MS));
  });

  it('another caller, another number or another method is not held back by the cooldown', async () => {
    const cooldown = new ResendCooldown(newStore(), COOLDOWN_MS, SPEC_DATA_KEYS);
    await cooldown.claim(PHONE, 'sms', ALICE);
    await expect(
      cooldown.claim(PHONE, 'sms', { caller: 'user-bob', starter: 'user-bob' }),
    ).resolves.toBeDefined();
    await expect(cooldown.claim('+79161234568', 'sms', ALICE)).resolves.toBeDefined();
    // Another method is not a resend: a journey switching from SMS to a call does not wait.
    await expect(cooldown.claim(PHONE, 'flash_call', ALICE)).resolves.toBeDefined();
    expect(await cooldown.availableAt(PHONE, 'voice', ALICE.caller)).toBeNull();
    expect(await cooldown.availableAt(PHONE, 'sms', 'user-carol')).toBeNull();
  });

  it('a caller that cannot show it started the cooldown gets no exact time, only a coarse wait', async () => {
    const cooldown = new ResendCooldown(newStore(), COOLDOWN_MS, SPEC_DATA_KEYS);
    // Two browsers behind one address: the caller is the client key, the starter the browser key.
    await cooldown.claim(PHONE, 'sms', { caller: 'ip:203.0.113.7', starter: 'browser-1' });
    clock.now += 1000;
    for (const starter of ['browser-2', undefined]) {
      const refused = await refusalOf(cooldown.claim(PHONE, 'sms', { caller: 'ip:203.0.113.7', starter }));
      expect(refused?.extra).toStrictEqual({ reason: 'resend_cooldown' });
      // 59 s left, rounded up to the whole window (shorter than five minutes).
      expect(refused?.retryAfterSeconds).toBe(60);
    }
    // A start whose starter is unknown never matches another unknown starter either.
    const anonymous = new ResendCooldown(newStore(), COOLDOWN_MS, SPEC_DATA_KEYS);
    await anonymous.claim(PHONE, 'sms', { caller: 'ip:198.51.100.1', starter: undefined });
    const refused = await refusalOf(
      anonymous.claim(PHONE, 'sms', { caller: 'ip:198.51.100.1', starter: undefined }),
    );
    expect(refused?.extra).toStrictEqual({ reason: 'resend_cooldown' });
  });

  it('releasing a claim lifts the cooldown, but never a later claim that replaced it', async () => {
    const own = newStore();
    const cooldown = new ResendCooldown(own, COOLDOWN_MS, SPEC_DATA_KEYS);
    const first = await cooldown.claim(PHONE, 'sms', ALICE);
    await first.hold.release();
    expect(await cooldown.availableAt(PHONE, 'sms', ALICE.caller)).toBeNull();
    const second = await cooldown.claim(PHONE, 'sms', ALICE);
    // The first start's late release must not lift the second start's cooldown.
    await first.hold.release();
    expect(await cooldown.availableAt(PHONE, 'sms', ALICE.caller)).toStrictEqual(second.availableAt);
    expect(await refusalOf(cooldown.claim(PHONE, 'sms', ALICE))).toBeInstanceOf(VerificationClientError);
  });

  it('a stored cooldown whose time has come is over, whatever its entry TTL says', async () => {
    const own = newStore();
    const cooldown = new ResendCooldown(own, COOLDOWN_MS, SPEC_DATA_KEYS);
    await own.set(
      ProtectionKeys.cooldown(SPEC_DATA_KEYS, ALICE.caller, PHONE, 'sms'),
      `${clock.now}:token:`,
      10 * COOLDOWN_MS,
    );
    const claim = await cooldown.claim(PHONE, 'sms', ALICE);
    expect(claim.availableAt).toStrictEqual(new Date(clock.now + COOLDOWN_MS));
  });

  it('an entry it cannot read refuses the start for a whole cooldown (it errs on the safe side)', async () => {
    const own = newStore();
    const cooldown = new ResendCooldown(own, COOLDOWN_MS, SPEC_DATA_KEYS);
    await own.set(
      ProtectionKeys.cooldown(SPEC_DATA_KEYS, ALICE.caller, PHONE, 'sms'),
      'not-a-time',
      COOLDOWN_MS,
    );
    const refused = await refusalOf(cooldown.claim(PHONE, 'sms', ALICE));
    expect(refused?.extra).toStrictEqual({ reason: 'resend_cooldown' });
    expect(refused?.retryAfterSeconds).toBe(60);
    expect(await cooldown.availableAt(PHONE, 'sms', ALICE.caller)).toBeNull();
  });

  it('off (false): nothing is written, every start passes and there is no time to show', async () => {
    const own = newStore();
    const cooldown = new ResendCooldown(own, false, SPEC_DATA_KEYS);
    const claim = await cooldown.claim(PHONE, 'sms', ALICE);
    expect(claim.availableAt).toBeNull();
    await claim.hold.release();
    await cooldown.claim(PHONE, 'sms', ALICE);
    expect(await own.get(ProtectionKeys.cooldown(SPEC_DATA_KEYS, ALICE.caller, PHONE, 'sms'))).toBeNull();
    expect(await cooldown.availableAt(PHONE, 'sms', ALICE.caller)).toBeNull();
    // A cooldown a deployment with it on left in the store shows no time either, once it is off.
    await new ResendCooldown(own, COOLDOWN_MS, SPEC_DATA_KEYS).claim(PHONE, 'sms', ALICE);
    expect(await cooldown.availableAt(PHONE, 'sms', ALICE.caller)).toBeNull();
  });

  describe('coalescing identical starts', () => {
    const candidate = (fields: Partial<StartCandidate> = {}): StartCandidate => ({
      phoneNumber: PHONE,
      method: 'sms',
      owner: 'alice',
      clientKey: '203.0.113.7',
      ip: '203.0.113.7',
      request: {},
      ...fields,
    });

    it('an identical start gets the pending session back with the end of its cooldown', async () => {
      const store = newStore();
      const cooldown = new ResendCooldown(
        store,
        COOLDOWN_MS,
        SPEC_DATA_KEYS,
        new StartCoalescer(store, { claimTtlMs: 10_000 }),
      );
      const first = await cooldown.coalesce(candidate());
      expect(first).toBeInstanceOf(CoalescingClaim);
      const { availableAt } = await cooldown.claim(PHONE, 'sms', {
        caller: 'owner:alice',
        starter: 'owner:alice',
      });
      await (first as CoalescingClaim).started(
        { requestId: 'req-1', expiresAt: clock.now + 300_000 },
        availableAt,
      );
      expect(await cooldown.coalesce(candidate())).toStrictEqual({
        handBack: 'req-1',
        resendAvailableAt: availableAt,
      });
      // Another owner, or the same one by another method, starts on its own.
      expect(await cooldown.coalesce(candidate({ owner: 'bob' }))).toBeInstanceOf(CoalescingClaim);
      expect(await cooldown.coalesce(candidate({ method: 'flash_call' }))).toBeInstanceOf(CoalescingClaim);
    });

    it('nothing is coalesced with coalescing off, nor for a starter it cannot tell apart', async () => {
      const store = newStore();
      expect(
        await new ResendCooldown(store, COOLDOWN_MS, SPEC_DATA_KEYS).coalesce(candidate()),
      ).toBeUndefined();
      const on = new ResendCooldown(
        store,
        COOLDOWN_MS,
        SPEC_DATA_KEYS,
        new StartCoalescer(store, { claimTtlMs: 10_000 }),
      );
      expect(await on.coalesce(candidate({ owner: undefined }))).toBeUndefined();
      expect(await on.coalesce(candidate({ owner: undefined, browserKey: 'b-1' }))).toBeInstanceOf(
        CoalescingClaim,
      );
    });
  });
});
