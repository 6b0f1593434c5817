/**
 * A start coalesced onto a pending session (same browser, number and method) at the session's expiry, on
 * the sandbox's frozen clock: one tick before it, the session is handed back (no new POST /v1/verify); at
 * the expiry tick it is over and the start is a new session, also on a store whose hand-back entry
 * outlives the session by a tick (the clock moved between the entry's TTL being computed and its write).
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import { PLATFORMS } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { cookieFrom, freshIp, freshPhone, moduleOptions, startFrom } from './protection-host.js';

/** A session's hand-back entry (`session:…`) written a millisecond after its TTL was computed. */
const late = (value: string | null, ttlMs: number): number =>
  value?.startsWith('session:') ? ttlMs + 1 : ttlMs;

/** A MemoryStore on which a coalesced session's hand-back entry is written late, by `set` or by the claim's compare-and-set. */
class LateHandBackWrite extends MemoryStore {
  override async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<void> {
    return super.set(key, value, late(value, ttlMs), options);
  }

  override async replaceIfEquals(
    key: string,
    expected: string,
    value: string | null,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<boolean> {
    return super.replaceIfEquals(key, expected, value, late(value, ttlMs), options);
  }
}

describe.each(PLATFORMS)('a coalesced start at its session’s expiry (%s)', (platform) => {
  const suite = sandboxSuite({ demoAccount: { balance: 100_000 } });

  it('is handed the session back one tick before expires_at, and starts a new session at it', async () => {
    const { sb } = suite;
    // The cooldown off: the session is handed back for its whole life, not only for the cooldown.
    const host = await suite.boot({
      platform,
      trustProxy: true,
      module: moduleOptions(sb, { resendCooldownMs: false }),
    });
    const phone = freshPhone();
    const ip = freshIp();
    const first = await startFrom(host, ip, phone);
    expect(first.status).toBe(201);
    const browser = cookieFrom(first);
    const expiresAt = Date.parse(first.body.expires_at as string);

    await sb.advance(expiresAt - 1 - sb.now());
    const before = await startFrom(host, ip, phone, 'sms', browser);
    expect(before.status).toBe(201);
    expect(before.body).toMatchObject({
      resumed: true,
      verification_id: first.body.verification_id,
      expires_at: first.body.expires_at,
    });
    expect(sb.sessionsFor(phone)).toHaveLength(1);

    await sb.advance(1);
    const at = await startFrom(host, ip, phone, 'sms', browser);
    expect(at.status).toBe(201);
    expect(at.body.resumed).toBe(false);
    expect(at.body.verification_id).not.toBe(first.body.verification_id);
    expect(Date.parse(at.body.expires_at as string)).toBeGreaterThan(expiresAt);
    expect(sb.sessionsFor(phone)).toHaveLength(2);
  });

  it('starts a new session at expires_at when the hand-back entry outlives the session by a tick', async () => {
    const { sb } = suite;
    const store = new LateHandBackWrite({ clock: () => sb.now() });
    const host = await suite.boot({
      platform,
      trustProxy: true,
      module: moduleOptions(sb, { resendCooldownMs: false }, { store }),
    });
    const phone = freshPhone();
    const ip = freshIp();
    const first = await startFrom(host, ip, phone);
    expect(first.status).toBe(201);
    const browser = cookieFrom(first);
    const expiresAt = Date.parse(first.body.expires_at as string);

    await sb.advance(expiresAt - 1 - sb.now());
    const before = await startFrom(host, ip, phone, 'sms', browser);
    expect(before.body).toMatchObject({ resumed: true, verification_id: first.body.verification_id });

    await sb.advance(1);
    const at = await startFrom(host, ip, phone, 'sms', browser);
    expect(at.status).toBe(201);
    expect(at.body.resumed).toBe(false);
    expect(at.body.verification_id).not.toBe(first.body.verification_id);
    expect(sb.sessionsFor(phone)).toHaveLength(2);
  });
});
