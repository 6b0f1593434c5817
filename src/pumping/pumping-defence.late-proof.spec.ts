/**
 * A proof the defence learns of late (a webhook delayed, the reconciler's read, a status read after
 * the session's expiry) counts where its start did for a window past the session's expiry: its callers
 * become known, and a start of a method charged on proof by a known caller credits its range. Past
 * that, the start is forgotten and its proof counts only where its number and owner name.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { RangeStats } from './range-stats.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import type { VerificationMethod } from '../core/verification-method.js';
import { MemoryStore } from '../store/memory.store.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';

const settings = { ...VERIFICATION_DEFAULTS.limits.pumping };
const { windowMs } = settings;
/** The session's life from its start (the API's default TTL): shorter than the window, so that `left + window` and `max(left, window)` differ. */
const LEFT_MS = 300_000;
const quiet = { warn: () => undefined, error: () => undefined };
const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

function defence() {
  const clock = { now: Date.UTC(2026, 0, 6, 9) };
  const store = new MemoryStore({ clock: () => clock.now });
  stores.push(store);
  const report = {
    logger: quiet,
    announce: () => undefined,
    metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
  };
  const pumping = new PumpingDefence(
    store,
    settings,
    64,
    report,
    new RangeStats(store, settings, SPEC_DATA_KEYS),
  );
  /** Starts `attempt` (let through), its session expiring LEFT_MS later; its request id. */
  const start = async (attempt: PumpingAttempt, requestId: string) => {
    const assessment = await pumping.assess(attempt);
    await pumping.admit(assessment, false);
    await pumping.started(assessment, requestId, clock.now + LEFT_MS);
    return requestId;
  };
  const verified = (requestId: string, { phoneNumber, owner, method }: PumpingAttempt) =>
    pumping.verified({
      event: 'verification.verified',
      verificationId: `vid-${requestId}`,
      requestId,
      phoneNumber,
      method: method!,
      status: 'verified',
      verifiedAt: new Date(clock.now),
      expiresAt: null,
      owner,
      source: 'check',
      methodsTried: [method!],
      journeyCost: null,
    });
  return { pumping, clock, start, verified };
}

const from = (ip: string, phoneNumber: string, method: VerificationMethod = 'sms'): PumpingAttempt => ({
  phoneNumber,
  owner: undefined,
  clientKey: ip,
  ip,
  method,
});

describe('pumping defence: a proof observed after its session expired', () => {
  it('within a window past the expiry, its caller becomes known; at the bound, it is forgotten', async () => {
    const { pumping, clock, start, verified } = defence();
    const t0 = clock.now;
    const late = from('203.0.113.7', '+79161230001');
    const later = from('198.51.100.9', '+79162340001');
    await start(late, 'req-late');
    await start(later, 'req-later');
    // One tick before the expiry + a window (well past max(left, window) from the start): credited.
    clock.now = t0 + LEFT_MS + windowMs - 1;
    await verified('req-late', late);
    const next = await pumping.assess(from('203.0.113.7', '+79161230002'));
    expect(next!.counts.get('client:203.0.113.7')).toMatchObject({ verified: 1, known: true });
    expect(pumping.knownCaller(next)).toBe(true);
    // At the bound the start is forgotten: its proof counts where its number names only, not its caller.
    clock.now = t0 + LEFT_MS + windowMs;
    await verified('req-later', later);
    const stranger = await pumping.assess(from('198.51.100.9', '+79162340002'));
    expect(stranger!.counts.get('client:198.51.100.9')).toMatchObject({ verified: 0, known: false });
    expect(pumping.knownCaller(stranger)).toBe(false);
    expect(stranger!.counts.get('range:+7916234')!.verified).toBe(1);
  });

  it("a known caller's start charged on proof, proved late, still credits its range", async () => {
    const { pumping, clock, start, verified } = defence();
    // The caller's record: a paid start, proved at once.
    const paid = from('203.0.113.7', '+79161230001');
    await verified(await start(paid, 'req-paid'), paid);
    clock.now += 60_000;
    const t1 = clock.now;
    const free = from('203.0.113.7', '+79163450001', 'reverse_flash_call');
    await start(free, 'req-free');
    clock.now = t1 + LEFT_MS + windowMs - 1;
    await verified('req-free', free);
    const neighbour = await pumping.assess(from('192.0.2.1', '+79163450002'));
    expect(neighbour!.counts.get('range:+7916345')!.verified).toBe(1);
  });
});
