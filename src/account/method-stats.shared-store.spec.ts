import { describe, expect, it } from '@jest/globals';
import type { JourneyStep } from '../core/journey.js';
import { methodStatsSuite, rub, SPEC_KEYS } from '../../test/support/method-stats.fixture.js';
import { FOLLOWED_AFTER_MS } from './figure-evidence.js';
import { callerEvidenceKeys, sessionEvidenceKeys } from './figure-evidence.keys.js';
import { figureCells, statsNumberKey } from './method-figures.js';

/*
 * The store is shared by every instance, and by the previous version's during a deploy: what one left
 * there under the names they share (the counters `stats:<day>:<method>:<group>:<field>`, the givers'
 * day shares, a session's admission, a number's day claim) is read by the others; and an erasure,
 * given the names of a session's or a caller's evidence, leaves nothing of it behind.
 */

const fx = methodStatsSuite();
const { session } = fx;
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false } as const;
/** The suite's day (NOON), by its date and by its number. */
const DATE = '2026-03-15';
const DAY_NUMBER = 20_527;
const DAY_MS = 86_400_000;
const digest = (value: string) => SPEC_KEYS.dataKeys.digest(value);
const put = (key: string, value: string | number) => fx.store.set(key, String(value), 30 * DAY_MS);

describe('MethodStats: what other instances left in the store', () => {
  it('reads the counters another instance added: money in its currency, callers, unproven, moment and cell figures', async () => {
    const counters: [group: string, method: string, fields: Record<string, number>][] = [
      ['7', 'sms', { started: 4, verified: 2, charged: 600, callers: 3 }],
      ['all', 'sms', { started: 4, verified: 2, expired: 2, unproven: 1, callers: 3 }],
      ['7~unhinted', 'reverse_flash_call', { started: 2, verified: 1, left: 1 }],
      ['7~912.unhinted', 'reverse_flash_call', { started: 1, expired: 1, rescued: 1 }],
    ];
    for (const [group, method, fields] of counters)
      for (const [field, value] of Object.entries(fields))
        await put(`stats:${DATE}:${method}:${group}:${field}`, value);
    await put('stats:currency', 'USD');

    expect((await fx.stats.figures({ country: '7' })).sms).toMatchObject({
      started: 4,
      verified: 2,
      callers: 3,
      charged: { amount: 6, currency: 'USD' },
      costPerVerified: { amount: 3, currency: 'USD' },
    });
    expect((await fx.stats.learningSamples()).sms).toStrictEqual({ started: 3, verified: 2, callers: 3 });
    // Starts without a device hint: their moment group and cells are `unhinted`.
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', undefined, 7)).toMatchObject({
      started: 2,
      ended: 1,
      left: 1,
    });
    const cells = figureCells('+79123000001', undefined);
    expect(cells).toStrictEqual(['7~912.unhinted', '7~.unhinted', 'all~.unhinted', '7~912', '7~*']);
    expect((await fx.stats.cellSums('reverse_flash_call', cells, 7))[0]).toMatchObject({
      expired: 1,
      rescued: 1,
    });
  });

  it('a giver’s day share another instance filled is full here too: caller, address and network each', async () => {
    const share = (letter: string, of: string, used: number) =>
      put(`stats-giver:{${DAY_NUMBER}:sms:${letter}:${digest(of)}}`, used);
    await share('c', 'owner:x', 3);
    await share('a', '198.51.100.7', 5);
    await share('n', '198.51.100.0/24', 10);
    await fx.stats.tally(session(), 'owner:x');
    await fx.stats.tally(session(), 'client:1', 'mobile', { address: '198.51.100.7' });
    await fx.stats.tally(session(), 'client:2', 'mobile', { network: '198.51.100.0/24' });
    await fx.stats.tally(session(), 'client:3', 'mobile', {
      address: '203.0.113.9',
      network: '203.0.113.0/24',
    });
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 1, callers: 1 });
  });

  it('a session an older version admitted (`1`, `1:desktop`) ends on its device, without a caller’s record', async () => {
    // A start of the day on this version, still pending.
    await fx.stats.tally(session(rfc), 'client:0', 'desktop');
    const onDesktop = session(rfc);
    await put(`stats-admitted:{${onDesktop.requestId}}`, '1:desktop');
    await fx.stats.tally({ ...onDesktop, status: 'verified', verifiedAt: fx.now + 15_000 });
    const unhinted = session(rfc);
    await put(`stats-admitted:{${unhinted.requestId}}`, '1');
    await fx.stats.tally({ ...unhinted, status: 'expired' });

    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'desktop', 7)).toMatchObject({
      started: 1,
      ended: 1,
    });
    // The older admission names no caller: its abandoned end is unproven.
    expect((await fx.stats.learningSamples()).reverse_flash_call).toStrictEqual({
      started: 1,
      verified: 1,
      callers: 1,
    });
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({
      started: 1,
      verified: 1,
      expired: 1,
    });
  });

  it('a number’s day claim: another session’s keeps this one out; the session’s own, as an older version wrote it, counts it', async () => {
    const taken = session();
    await put(`stats-number:{${DAY_NUMBER}:sms:${digest(taken.phoneNumber)}}`, 'another-session');
    await fx.stats.tally(taken, 'client:a');
    const own = session();
    await put(`stats-number:{${DAY_NUMBER}:sms:${digest(own.phoneNumber)}}`, own.requestId);
    await fx.stats.tally(own, 'client:b');
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 1, callers: 1 });
  });
});

describe('MethodStats: an erasure given the names of what the figures keep', () => {
  const erase = (keys: string[]) => Promise.all(keys.map((key) => fx.store.delete(key)));

  it('of a session: its admission, a page following it, its earlier steps, its journey’s followed page', async () => {
    const first = session(rfc);
    await fx.stats.tally(first, 'client:a', 'mobile');
    const step: JourneyStep = {
      requestId: first.requestId,
      method: first.method,
      startedAt: first.createdAt,
    };
    const next = session({ phoneNumber: first.phoneNumber, journeyId: first.requestId });
    await fx.stats.tally(next, 'client:a', 'mobile', {}, [step]);
    await fx.stats.followed({ ...next, createdAt: fx.now - FOLLOWED_AFTER_MS });
    const before = fx.store.entryCount;
    await erase([...sessionEvidenceKeys(first.requestId), ...sessionEvidenceKeys(next.requestId)]);
    // The first step's admission and its journey's followed page; the next's admission, page and steps.
    expect(before - fx.store.entryCount).toBe(5);
  });

  it('of a caller: its day share (either name), its first start of the day, its record', async () => {
    const known = session();
    await fx.stats.tally(known, 'owner:a');
    await fx.stats.tally({ ...known, status: 'verified', delivered: true, verifiedAt: fx.now + 10_000 });
    for (let i = 0; i < 3; i++) await fx.stats.tally(session(), 'owner:a');
    const older = `stats-giver:{${DATE}:sms:caller:${digest('owner:a')}}`;
    await put(older, 3);
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 3, callers: 1 });

    await erase(callerEvidenceKeys(known, digest('owner:a')));
    expect(await fx.store.get(older)).toBeNull();
    // A fresh share, a caller counted anew, and no record: its abandoned start is unproven.
    const after = session();
    await fx.stats.tally(after, 'owner:a');
    await fx.stats.tally({ ...after, status: 'expired' });
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 4, callers: 2, expired: 1 });
    expect((await fx.stats.learningSamples()).sms).toMatchObject({ started: 1, verified: 1 });
  });

  it('of a number: its day claim under either name', async () => {
    const first = session();
    await fx.stats.tally(first, 'client:a');
    const older = `stats-number:{${DATE}:sms:${digest(first.phoneNumber)}}`;
    await put(older, 'an-older-session');
    const of = digest(first.phoneNumber);
    await erase([statsNumberKey(first, of), statsNumberKey(first, of, 'older')]);
    expect(await fx.store.get(older)).toBeNull();
    await fx.stats.tally(session({ phoneNumber: first.phoneNumber }), 'client:b');
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 2 });
  });
});
