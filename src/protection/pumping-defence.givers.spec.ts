/**
 * Issue 43: the defence weighs a start by its givers' shares (giver-shares.ts). A start past a share
 * is judged by the country twin that counts it, and its verification counts where its start did;
 * strangers within their shares are judged by the country alone.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { fineOf, volumeOf } from './range-stats-keys.js';
import { RangeStats } from './range-stats.js';
import type { SubjectCounts } from './pumping-counts.js';

const quiet = { warn: () => undefined, error: () => undefined };
/** The store's counts of the last defence made (RangeStats on its store). */
let counts: (ids: string[]) => Promise<Map<string, SubjectCounts>>;
const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

function defence(): PumpingDefence {
  const store = new MemoryStore({ clock: () => Date.UTC(2026, 0, 6, 12) });
  stores.push(store);
  counts = (ids) =>
    new RangeStats(store, VERIFICATION_DEFAULTS.limits.pumping, SPEC_DATA_KEYS).read(
      ids.map((id) => ({ id, withBaseline: true })),
    );
  const report = {
    logger: quiet,
    emit: () => undefined,
    fraudSuspected: () => undefined,
    refusal: () => undefined,
  };
  return new PumpingDefence(store, { ...VERIFICATION_DEFAULTS.limits.pumping }, 64, report, SPEC_DATA_KEYS);
}

let serial = 0;
/** A number of its own range and prefix-wide block (+7 916). */
function phone(): string {
  serial += 1;
  return `+7916${String(serial % 1000).padStart(3, '0')}${String(serial).padStart(4, '0')}`;
}

const from = (ip: string, phoneNumber = phone()): PumpingAttempt => ({
  phoneNumber,
  owner: undefined,
  clientKey: ip,
  ip,
  method: 'sms',
});

async function start(pumping: PumpingDefence, attempt: PumpingAttempt, requestId = `r${++serial}`) {
  const assessment = await pumping.assess(attempt);
  try {
    await pumping.admit(assessment, false);
  } catch (error) {
    if (!(error instanceof VerificationClientError)) throw error;
    return undefined;
  }
  await pumping.started(assessment, requestId, Date.UTC(2026, 0, 6, 12, 10));
  return requestId;
}

function verified(pumping: PumpingDefence, requestId: string, phoneNumber: string) {
  return pumping.verified({
    event: 'verification.verified',
    verificationId: `vid-${requestId}`,
    requestId,
    phoneNumber,
    method: 'sms',
    status: 'verified',
    verifiedAt: new Date(),
    expiresAt: null,
    owner: undefined,
    source: 'check',
    methodsTried: ['sms'],
    journeyCost: null,
  });
}

describe('pumping defence: the givers’ shares', () => {
  it('a verification counts where its start was counted: past the address’s share, not in the country or prefix', async () => {
    const pumping = defence();
    const ip = '192.0.2.7';
    const attempts = Array.from({ length: 7 }, () => from(ip));
    const ids: string[] = [];
    for (const a of attempts) ids.push((await start(pumping, a))!);
    // The 2nd was within the address's share (5), the 7th past it.
    await verified(pumping, ids[1]!, attempts[1]!.phoneNumber);
    await verified(pumping, ids[6]!, attempts[6]!.phoneNumber);
    const read = await counts(['country:RU', 'prefix:+7916', fineOf('country:RU'), volumeOf('country:RU')]);
    expect(read.get('country:RU')).toMatchObject({ starts: 5, verified: 1 });
    expect(read.get('prefix:+7916')).toMatchObject({ starts: 5, verified: 1 });
    expect(read.get(fineOf('country:RU'))).toMatchObject({ starts: 5, verified: 1 });
    expect(read.get(volumeOf('country:RU'))).toMatchObject({ starts: 7, verified: 2 });
  });

  it('one address past its share, its volume short of the prior: it is judged under attack, its neighbours and strangers are not', async () => {
    const pumping = defence();
    for (let i = 0; i < 25; i++) await start(pumping, from('192.0.2.7'));
    const self = (await pumping.assess(from('192.0.2.7')))!;
    expect([self.underAttack, self.selfUnderAttack]).toEqual([false, true]);
    // A neighbour in its /24 (the address gave its network only its own share) and a stranger elsewhere.
    for (const ip of ['192.0.2.8', '203.0.113.9']) {
      const other = (await pumping.assess(from(ip)))!;
      expect([other.underAttack, other.selfUnderAttack, other.steer]).toEqual([false, false, false]);
    }
  });

  it('a network past its share, its addresses within theirs: judged by the callers-bounded twin, which sees them all', async () => {
    const pumping = defence();
    // 12 addresses of one /24, two unconverted starts each: the network's share (9) is passed.
    for (let a = 0; a < 12; a++) for (let i = 0; i < 2; i++) await start(pumping, from(`192.0.2.${a + 10}`));
    const next = (await pumping.assess(from('192.0.2.99')))!;
    expect(next.counts.get('country:RU')!.starts).toBe(9);
    expect(next.counts.get(fineOf('country:RU'))!.starts).toBe(24);
    expect([next.underAttack, next.selfUnderAttack]).toEqual([false, true]);
    // Beside it, another network: within its share up to its 9th start, past it at its 10th.
    for (let a = 0; a < 8; a++) await start(pumping, from(`198.51.100.${a + 10}`));
    expect((await pumping.assess(from('198.51.100.99')))!.selfUnderAttack).toBe(false);
    await start(pumping, from('198.51.100.98'));
    const tenth = (await pumping.assess(from('198.51.100.99')))!;
    expect(tenth.counts.get('country:RU')!.starts).toBe(18);
    expect([tenth.underAttack, tenth.selfUnderAttack]).toEqual([false, true]);
  });
});
