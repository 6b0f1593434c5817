/**
 * Issue 43: the defence weighs a start by its givers' shares (giver-shares.ts). A start past a share
 * is judged by the country twin that counts it, and its verification counts where its start did;
 * strangers within their shares are judged by the country alone.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { FINE, VOLUME } from './range-stats-keys.js';
import { PAST_NETWORKS_FLAG } from './giver-shares.js';
import { RangeStats } from './range-stats.js';
import type { SubjectCounts } from './pumping-counts.js';

const quiet = { warn: () => undefined, error: () => undefined };
/** The store's counts of the last defence made (RangeStats on its store). */
let counts: (ids: string[]) => Promise<Map<string, SubjectCounts>>;
const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** The store clock of the last defence made. */
let now = Date.UTC(2026, 0, 6, 12);

function defence(): PumpingDefence {
  now = Date.UTC(2026, 0, 6, 12);
  const store = new MemoryStore({ clock: () => now });
  stores.push(store);
  counts = (ids) =>
    new RangeStats(store, VERIFICATION_DEFAULTS.limits.pumping, SPEC_DATA_KEYS).read(
      ids.map((id) => ({ id })),
    );
  const report = {
    logger: quiet,
    announce: () => undefined,
    metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
  };
  const settings = { ...VERIFICATION_DEFAULTS.limits.pumping };
  return new PumpingDefence(store, settings, 64, report, new RangeStats(store, settings, SPEC_DATA_KEYS));
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
    await convertingUsers(pumping, 40); // elsewhere: the address's excess past its share stays covered
    const ip = '192.0.2.7';
    const attempts = Array.from({ length: 7 }, () => from(ip));
    const ids: string[] = [];
    for (const a of attempts) ids.push((await start(pumping, a))!);
    // The 2nd was within the address's share (5), the 7th past it.
    await verified(pumping, ids[1]!, attempts[1]!.phoneNumber);
    await verified(pumping, ids[6]!, attempts[6]!.phoneNumber);
    const read = await counts(['country:RU', 'prefix:+7916', `country:RU${FINE}`, `country:RU${VOLUME}`]);
    expect(read.get('country:RU')).toMatchObject({ starts: 45, verified: 41 });
    expect(read.get('prefix:+7916')).toMatchObject({ starts: 45, verified: 41 });
    expect(read.get(`country:RU${FINE}`)).toMatchObject({ starts: 45, verified: 41 });
    expect(read.get(`country:RU${VOLUME}`)).toMatchObject({ starts: 47, verified: 42 });
  });

  it('one address past its share, its volume short of the prior: it is judged under attack, its neighbours and strangers are not', async () => {
    const pumping = defence();
    for (let i = 0; i < 25; i++) await start(pumping, from('192.0.2.7'));
    const self = (await pumping.assess(from('192.0.2.7')))!;
    expect([self.underAttack, self.selfUnderAttack]).toStrictEqual([false, true]);
    // A neighbour in its /24 (the address gave its network only its own share) and a stranger elsewhere.
    for (const ip of ['192.0.2.8', '203.0.113.9']) {
      const other = (await pumping.assess(from(ip)))!;
      expect([other.underAttack, other.selfUnderAttack, other.steer]).toStrictEqual([false, false, false]);
    }
  });

  it('past its share, an address goes on while others’ conversions cover its excess over the prior, not one start further', async () => {
    const pumping = defence();
    await convertingUsers(pumping, 20); // 4 conversions above the prior (0.8)
    for (let i = 0; i < 6; i++) await start(pumping, from('192.0.2.7'));
    // Its 6th (past its share, 5) left its volume at the prior; its 7th is past it once those starts age.
    expect((await pumping.assess(from('192.0.2.7')))!.selfUnderAttack).toBe(false);
    now += 11 * 60_000;
    const seventh = (await pumping.assess(from('192.0.2.7')))!;
    expect(seventh.counts.get(`country:RU${VOLUME}`)).toMatchObject({ starts: 26, verified: 20 });
    expect(seventh.selfUnderAttack).toBe(true);
  });

  it('a network past its share, its addresses within theirs: judged by the callers-bounded twin, which sees them all', async () => {
    const pumping = defence();
    // 12 addresses of one /24, two unconverted starts each: the network's share (9) is passed.
    for (let a = 0; a < 12; a++) for (let i = 0; i < 2; i++) await start(pumping, from(`192.0.2.${a + 10}`));
    const next = (await pumping.assess(from('192.0.2.99')))!;
    expect(next.counts.get('country:RU')!.starts).toBe(9);
    expect(next.counts.get(`country:RU${FINE}`)!.starts).toBe(24);
    expect([next.underAttack, next.selfUnderAttack]).toStrictEqual([false, true]);
    // Beside it, another network: within its share up to its 9th start, past it at its 10th.
    for (let a = 0; a < 8; a++) await start(pumping, from(`198.51.100.${a + 10}`));
    expect((await pumping.assess(from('198.51.100.99')))!.selfUnderAttack).toBe(false);
    await start(pumping, from('198.51.100.98'));
    const tenth = (await pumping.assess(from('198.51.100.99')))!;
    expect(tenth.counts.get('country:RU')!.starts).toBe(9); // its own 9 refused: counted by the twin
    expect([tenth.underAttack, tenth.selfUnderAttack]).toStrictEqual([false, true]);
  });

  /** Users in networks of their own who all complete: the country converts above its prior. */
  async function convertingUsers(pumping: PumpingDefence, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const attempt = from(`10.${i >> 8}.${i & 255}.1`);
      await verified(pumping, (await start(pumping, attempt))!, attempt.phoneNumber);
    }
  }

  /** One start from each of `n` addresses of the /24 `net` (nothing verified). */
  async function sweep(pumping: PumpingDefence, net: string, n: number): Promise<void> {
    for (let a = 0; a < n; a++) await start(pumping, from(`${net}.${a + 10}`));
  }

  it('networks past their share vote, one each: at N-1 the country is not under attack for strangers, at N it is', async () => {
    expect(PAST_NETWORKS_FLAG).toBe(3);
    const pumping = defence();
    await convertingUsers(pumping, 150);
    const stranger = async () => (await pumping.assess(from('203.0.113.9')))!;
    // Two networks each one start past their share (9): two votes, the country as it was.
    for (const net of ['192.0.2', '198.51.100']) await sweep(pumping, net, 10);
    let other = await stranger();
    expect(other.counts.get('country:RU')!.networksPast).toBe(2);
    expect([other.underAttack, other.steer]).toStrictEqual([false, false]);
    // A third network at its 9th start (its share, not past it): still two.
    await sweep(pumping, '100.64.0', 9);
    other = await stranger();
    expect([other.counts.get('country:RU')!.networksPast, other.underAttack]).toStrictEqual([2, false]);
    // Its 10th: three networks past their share, the country under attack for everyone.
    await start(pumping, from('100.64.0.99'));
    other = await stranger();
    expect(other.counts.get('country:RU')!.networksPast).toBe(3);
    expect([other.underAttack, other.steer]).toStrictEqual([true, true]);
    // The country's own counts did not flag it: within the shares, 27 unconverted among 150 verified.
    expect(other.counts.get('country:RU')).toMatchObject({ starts: 177, verified: 150 });
  });

  it('a network keeps one vote however many of its starts pass its share', async () => {
    const pumping = defence();
    await convertingUsers(pumping, 150);
    for (const net of ['192.0.2', '198.51.100']) await sweep(pumping, net, 30);
    const other = (await pumping.assess(from('203.0.113.9')))!;
    expect([other.counts.get('country:RU')!.networksPast, other.underAttack]).toStrictEqual([2, false]);
  });

  it('votes are a UTC day’s: read through the next day, gone at the first tick of the day after', async () => {
    const pumping = defence();
    for (const net of ['192.0.2', '198.51.100', '100.64.0']) await sweep(pumping, net, 10);
    const votes = async () =>
      (await pumping.assess(from('203.0.113.9')))!.counts.get('country:RU')!.networksPast;
    expect(await votes()).toBe(3);
    now = Date.UTC(2026, 0, 7, 23, 59, 59, 999);
    expect(await votes()).toBe(3);
    now += 1;
    expect(await votes()).toBe(0);
  });

  it('a network past its share on two days running is still one vote', async () => {
    const pumping = defence();
    await sweep(pumping, '192.0.2', 10);
    now = Date.UTC(2026, 0, 7, 12);
    await start(pumping, from('192.0.2.50'));
    const read = await counts(['country:RU']);
    expect(read.get('country:RU')!.networksPast).toBe(1);
  });

  it('a paid start steered to a method charged on proof (counted nowhere) still votes when it would pass its network’s share; within it, not', async () => {
    const pumping = defence();
    const grade = { proofCharged: false, offered: ['reverse_flash_call'] };
    const steered = async (ip: string) => {
      const assessment = (await pumping.assess(from(ip)))!;
      await expect(pumping.admit({ ...assessment, steer: true }, false, grade)).rejects.toThrow(
        VerificationClientError,
      );
    };
    const votes = async () =>
      (await pumping.assess(from('203.0.113.9')))!.counts.get('country:RU')!.networksPast;
    for (const net of ['192.0.2', '198.51.100', '100.64.0']) {
      await sweep(pumping, net, 9);
      await steered(`${net}.200`);
    }
    expect(await votes()).toBe(3);
    // A network within its share, steered: no vote.
    await steered('100.65.0.1');
    expect(await votes()).toBe(3);
  });

  /** One paid start graded as the service would (a reverse call offered): 'steered', else 'started'. */
  async function graded(
    pumping: PumpingDefence,
    ip: string,
    phoneNumber = phone(),
  ): Promise<'steered' | 'started'> {
    const assessment = (await pumping.assess(from(ip, phoneNumber)))!;
    try {
      await pumping.admit(assessment, false, { proofCharged: false, offered: ['reverse_flash_call'] });
    } catch (error) {
      if (!(error instanceof VerificationClientError)) throw error;
      return 'steered';
    }
    return 'started';
  }

  it('a network steered by its twin stays steered while users elsewhere complete: its steered attempts count there', async () => {
    const pumping = defence();
    await convertingUsers(pumping, 40);
    await sweep(pumping, '192.0.2', 9);
    // Past its share its starts go on until its twin falls short of the prior, then are steered.
    let a = 100;
    while ((await graded(pumping, `192.0.2.${a}`)) === 'started') a += 1;
    expect(a).toBeLessThan(140);
    // Each of its further attempts beside a user who completes: none passes.
    const answers: string[] = [];
    for (let i = 0; i < 30; i++) {
      const user = from(`10.200.${i}.1`);
      await verified(pumping, (await start(pumping, user))!, user.phoneNumber);
      answers.push(await graded(pumping, `192.0.2.${(a + 1 + i) % 250}`));
    }
    expect(answers.filter((x) => x === 'started')).toStrictEqual([]);
    // The country saw only the network's share.
    expect((await counts(['country:RU'])).get('country:RU')).toMatchObject({ starts: 79, verified: 70 });
  });

  /** A proof of `phoneNumber` by `method` (the offered reverse call, unless said), as the event says. */
  function proved(
    pumping: PumpingDefence,
    phoneNumber: string,
    method: 'reverse_flash_call' | 'sms' = 'reverse_flash_call',
  ) {
    const requestId = `p${++serial}`;
    return pumping.verified({
      event: 'verification.verified',
      verificationId: `vid-${requestId}`,
      requestId,
      phoneNumber,
      method,
      status: 'verified',
      verifiedAt: new Date(),
      expiresAt: null,
      owner: undefined,
      source: 'poll',
      methodsTried: [method],
      journeyCost: null,
    });
  }

  it('a network whose steered users prove the offered method is let go as users elsewhere complete: each proof takes its number’s steered attempt back, once', async () => {
    const pumping = defence();
    await convertingUsers(pumping, 40);
    await sweep(pumping, '192.0.2', 9);
    let a = 100;
    while ((await graded(pumping, `192.0.2.${a}`)) === 'started') a += 1;
    const volume = async () => (await counts([`country:RU${VOLUME}`])).get(`country:RU${VOLUME}`)!.starts;
    // A steered attempt counts; its number's proof by the reverse call takes it back; a second proof,
    // or a proof by SMS, takes nothing more.
    const counted = await volume();
    const number = phone();
    expect(await graded(pumping, '192.0.2.200', number)).toBe('steered');
    expect(await volume()).toBe(counted + 1);
    await proved(pumping, number, 'sms');
    expect(await volume()).toBe(counted + 1);
    // Proofs handled together (as on several instances) take it back once.
    await Promise.all([proved(pumping, number), proved(pumping, number), proved(pumping, number)]);
    expect(await volume()).toBe(counted);
    await proved(pumping, number);
    expect(await volume()).toBe(counted);
    // Beside users who complete elsewhere, the same network's users who follow the graded answer pass again.
    const answers: string[] = [];
    for (let i = 0; i < 30; i++) {
      const user = from(`10.200.${i}.1`);
      await verified(pumping, (await start(pumping, user))!, user.phoneNumber);
      const own = phone();
      const answer = await graded(pumping, `192.0.2.${(a + 1 + i) % 250}`, own);
      answers.push(answer);
      if (answer === 'steered') await proved(pumping, own);
    }
    expect(answers).toContain('started');
  });

  it('any split of one network’s starts among its addresses and keys never flags its country (a property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ address: fc.nat(40), key: fc.nat(6), keyed: fc.boolean() }), {
          minLength: 1,
          maxLength: 80,
        }),
        fc.boolean(),
        async (list, v6) => {
          const pumping = defence();
          for (const { address, key, keyed } of list) {
            const ip = v6 ? `2001:db8:7:${address.toString(16)}::1` : `192.0.2.${address + 10}`;
            await start(pumping, { ...from(ip), clientKey: keyed ? `key-${key}` : ip });
          }
          const other = (await pumping.assess(from('203.0.113.9')))!;
          expect(other.counts.get('country:RU')!.networksPast ?? 0).toBeLessThanOrEqual(1);
          expect(other.underAttack).toBe(false);
          await Promise.all(stores.splice(0).map((s) => s.close()));
        },
      ),
      { numRuns: 25 },
    );
  });
});
