import { describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import { methodStatsSuite, NOON, sums } from '../../test/support/method-stats.fixture.js';
import { dumpMemoryStore } from '../../test/support/store-dump.js';
import { CELL_SHARE_PER_NETWORK, FOLLOWED_AFTER_MS } from './figure-evidence.js';
import { completedWithin, MIN_CELL_ENDED, pickCell, pooledFigures } from './operator-figures.js';

/*
 * Figures per operator prefix × method × device (issue 47): what the store keeps (day counters per
 * cell, never per session, no number) and how a thin cell is pooled upward.
 */

const fx = methodStatsSuite();
const { session } = fx;
let seq = 0;
/** A number of its own on operator prefix +7 `ndc`. */
const numberOn = (ndc: string): string => `+7${ndc}${String(++seq).padStart(7, '0')}`;

describe('operator figures', () => {
  /** One session on +7 `ndc` ended; its start from `network` (by default one of its own). */
  async function ended(
    ndc: string,
    verified: boolean,
    device?: 'mobile' | 'desktop',
    network = `net-${seq}`,
  ): Promise<void> {
    const record: SessionRecord = session({ phoneNumber: numberOn(ndc) });
    await fx.stats.tally(record, undefined, device, { network });
    const end: Partial<SessionRecord> = verified
      ? { status: 'verified', delivered: true, verifiedAt: fx.now + 15_000 }
      : { status: 'expired', delivered: true };
    // A page followed the status: its unverified end is a real user's.
    fx.now += FOLLOWED_AFTER_MS;
    await fx.stats.followed({ ...record, status: 'sent' });
    await fx.stats.tally({ ...record, ...end }, undefined, device, { network });
  }

  it('keeps day counters per operator prefix, device and level; no key names a number or a session', async () => {
    await ended('985', true, 'desktop');
    await fx.stats.flush();
    const keys = dumpMemoryStore(fx.store)
      .map((line) => line.split(' ')[0]!)
      .filter((key) => key.startsWith('stats:') && key !== 'stats:currency');
    const day = new Date(NOON).toISOString().slice(0, 10);
    expect(keys).toStrictEqual(
      expect.arrayContaining([
        `stats:${day}:sms:7~985.desktop:started`,
        `stats:${day}:sms:7~985.desktop:verified`,
        `stats:${day}:sms:7~.desktop:verified`,
        `stats:${day}:sms:all~.desktop:verified`,
        `stats:${day}:sms:7~985:verified`,
        `stats:${day}:sms:7~*:verified`,
      ]),
    );
    for (const key of keys)
      expect(key).toMatch(/^stats:\d{4}-\d\d-\d\d:[a-z0-9_]+:[a-z0-9]+(~([0-9]*|\*)(\.[a-z]+)?)?:[a-z0-9]+$/);
    // Money and callers stay in the country's figures.
    expect(keys.filter((key) => key.includes('~985') && /:(charged|callers)$/.test(key))).toStrictEqual([]);
  });

  it('pools upward while a cell holds fewer than the minimum: at the bound the operator cell counts', async () => {
    const read = fx.stats.cellSums.bind(fx.stats);
    // The country: all verified on +7 916; the operator +7 985 never completes.
    for (let i = 0; i < MIN_CELL_ENDED; i++) await ended('916', true, 'mobile');
    for (let i = 0; i < MIN_CELL_ENDED - 1; i++) await ended('985', false, 'mobile');
    const thin = await pooledFigures(read, 'sms', numberOn('985'), 'mobile', 1);
    // One ended session short: the country × device cell (30 verified of 59).
    expect(thin).toMatchObject({ level: 'country', ended: 2 * MIN_CELL_ENDED - 1 });
    await ended('985', false, 'mobile');
    const atBound = await pooledFigures(read, 'sms', numberOn('985'), 'mobile', 1);
    expect(atBound).toMatchObject({ level: 'operator', ended: MIN_CELL_ENDED, completion: 0 });
    await ended('985', false, 'mobile');
    expect(await pooledFigures(read, 'sms', numberOn('985'), 'mobile', 1)).toMatchObject({
      level: 'operator',
      ended: MIN_CELL_ENDED + 1,
    });
    // Another device has its own cells: thin everywhere.
    expect(await pooledFigures(read, 'sms', numberOn('985'), 'desktop', 1)).toBeUndefined();
    // A new operator of the country: the country's cell.
    expect(await pooledFigures(read, 'sms', numberOn('903'), 'mobile', 1)).toMatchObject({
      level: 'country',
    });
    // A new country: every number's cell.
    expect(await pooledFigures(read, 'sms', '+380501234567', 'mobile', 1)).toMatchObject({ level: 'all' });
  });

  it('a network adds CELL_SHARE_PER_NETWORK sessions a day to a cell: its next ones count in the country only', async () => {
    const read = fx.stats.cellSums.bind(fx.stats);
    for (let i = 0; i < MIN_CELL_ENDED; i++) await ended('916', true, 'mobile');
    // A farm of 10 networks, 3 sessions each (within the figures' day share of a network, 10).
    const farm = Array.from({ length: 10 }, (_, i) => `farm-${i}`);
    for (const network of [...farm, ...farm, ...farm]) await ended('958', false, 'mobile', network);
    const [operator, country] = await read('sms', ['7~958.mobile', '7~.mobile'], 1);
    expect([operator!.expired, country!.expired]).toStrictEqual([
      10 * CELL_SHARE_PER_NETWORK,
      10 * CELL_SHARE_PER_NETWORK,
    ]);
    // The farm's 20 leave the operator cell thin: the country × device cell decides.
    expect(await pooledFigures(read, 'sms', numberOn('958'), 'mobile', 1)).toMatchObject({
      level: 'country',
    });
    // The country's own figures (methodStats) hold every one of them.
    expect((await fx.stats.figures({ country: '7', days: 1 })).sms).toMatchObject({ expired: 30 });
    // Ten more networks' sessions fill the cell (30 ended sessions) with its own figures.
    for (let i = 0; i < 10; i++) await ended('958', false, 'mobile', `user-${i}`);
    expect(await pooledFigures(read, 'sms', numberOn('958'), 'mobile', 1)).toMatchObject({
      level: 'operator',
      ended: MIN_CELL_ENDED,
    });
  });

  it('a network adds CELL_SHARE_PER_NETWORK sessions to a cell in any 7 days, not a day: a farm proving its own numbers day after day fills no cell', async () => {
    const read = fx.stats.cellSums.bind(fx.stats);
    const WEEK = 7 * 86_400_000;
    fx.now = (Math.floor(NOON / WEEK) + 1) * WEEK + 3_600_000; // an hour into a week
    for (let day = 0; day < 6; day++) {
      for (const network of ['farm-a', 'farm-b', 'farm-a']) await ended('958', true, 'desktop', network);
      fx.now += 86_400_000;
    }
    const [operator] = await read('sms', ['7~958.desktop'], 7);
    expect(operator!.verified).toBe(2 * CELL_SHARE_PER_NETWORK);
    expect((await fx.stats.figures({ country: '7', days: 7 })).sms).toMatchObject({ verified: 18 });
    // An hour into the next week: the share is of the last 7 days, the week's turn gives none.
    fx.now += 86_400_000;
    await ended('958', true, 'desktop', 'farm-a');
    await ended('958', true, 'desktop', 'farm-b');
    const [turn] = await read('sms', ['7~958.desktop'], 1);
    expect(turn!.verified).toBe(0);
    // Quiet for the rest of that week: the week after, one more of each network counts in the cell.
    fx.now += WEEK;
    await ended('958', true, 'desktop', 'farm-a');
    await ended('958', true, 'desktop', 'farm-b');
    const [later] = await read('sms', ['7~958.desktop'], 1);
    expect(later!.verified).toBe(2);
  });

  it('reads completion within a time from the buckets', async () => {
    for (let i = 0; i < MIN_CELL_ENDED; i++) await ended('916', i % 2 === 0, 'mobile');
    const cell = (await pooledFigures(
      fx.stats.cellSums.bind(fx.stats),
      'sms',
      numberOn('916'),
      'mobile',
      1,
    ))!;
    expect(cell.completion).toBe(0.5);
    // Verified 15 s after the start: bucket 10–20 s.
    expect(completedWithin(cell, 10_000)).toBe(0);
    expect(completedWithin(cell, 15_000)).toBeCloseTo(0.25);
    expect(completedWithin(cell, 20_000)).toBe(0.5);
  });

  it('weighs a session started and not ended not at all: free starts nobody completes do not lower a method', async () => {
    // Ten pending sessions (a bot's free starts, or users still on the page) beside 30 verified.
    for (let i = 0; i < MIN_CELL_ENDED; i++) await ended('916', true, 'mobile');
    for (let i = 0; i < 10; i++)
      await fx.stats.tally(session({ phoneNumber: numberOn('916') }), undefined, 'mobile', {
        network: `p-${i}`,
      });
    const read = fx.stats.cellSums.bind(fx.stats);
    const cell = (await pooledFigures(read, 'sms', numberOn('916'), 'mobile', 1))!;
    expect(cell).toMatchObject({ ended: MIN_CELL_ENDED, completion: 1 });
    expect(completedWithin(cell, 20_000)).toBe(1);
    // Thin is still judged by the sessions ended: pending ones do not make a cell count.
    for (let i = 0; i < MIN_CELL_ENDED - 1; i++) await ended('985', true, 'mobile');
    await fx.stats.tally(session({ phoneNumber: numberOn('985') }), undefined, 'mobile', {
      network: 'p-985',
    });
    expect(await pooledFigures(read, 'sms', numberOn('985'), 'mobile', 1)).toMatchObject({
      level: 'country',
    });
  });

  it('tells of a cell’s unverified sessions those a later step verified (rescued), never more than them', () => {
    const cell = sums({ verified: 20, expired: 15, unproven: 5, rescued: 4 });
    expect(pickCell([cell])).toMatchObject({ level: 'operator', ended: 30, verified: 20, rescued: 4 });
    expect(pickCell([{ ...cell, rescued: 40 }])?.rescued).toBe(10);
  });
});
