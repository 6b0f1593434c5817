import { describe, expect, it } from '@jest/globals';
import type { JourneyStep } from '../core/journey.js';
import type { SessionRecord } from '../core/session-record.js';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { dumpMemoryStore } from '../../test/support/store-dump.js';
import { CELL_SHARE_PER_NETWORK, FIGURES_SHARE_PER_DAY } from './figure-evidence.js';
import { figureCells } from './method-figures.js';

/*
 * FigureEvidence's admission over time: a number's day claim and the givers' day shares last the
 * whole day, a network's cell share to its week's end, a session's decision past its end; a session
 * left out stays out without a word in the logs; two instances deciding at once agree.
 */

const fx = methodStatsSuite();
const { session } = fx;
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false } as const;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

describe('MethodStats: admission over a day, a week and past a session’s end', () => {
  it('a number counts once a day and a caller its share, however the day’s starts are spread over it', async () => {
    fx.now -= 6 * HOUR;
    const morning = session();
    await fx.stats.tally(morning, 'client:a');
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.caller + 2; i++) {
      fx.now += HOUR;
      await fx.stats.tally(session(), 'owner:farm');
    }
    fx.now += HOUR;
    await fx.stats.tally(session({ phoneNumber: morning.phoneNumber }), 'client:b');
    expect((await fx.stats.figures()).sms).toMatchObject({
      started: 1 + FIGURES_SHARE_PER_DAY.caller,
      callers: 2,
    });
  });

  it('a start from a network in the last minute of a week is counted', async () => {
    fx.now = (Math.floor(fx.now / WEEK) + 1) * WEEK - 30_000;
    await fx.stats.tally(session(rfc), 'client:a', 'mobile', { network: '203.0.113.0/24' });
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({ started: 1 });
  });

  it('a network’s cell share is of its week and the previous one: the week’s turn gives none afresh, and the previous week counts in full to the new one’s end', async () => {
    const network = { network: '203.0.113.0/24' };
    const operatorCell = figureCells(session(rfc).phoneNumber, 'mobile')[0]!;
    const inCell = async () =>
      (await fx.stats.cellSums('reverse_flash_call', [operatorCell], 28))[0]!.started;
    const weekEnds = (Math.floor(fx.now / WEEK) + 1) * WEEK;
    fx.now = weekEnds - 60_000;
    for (let i = 0; i < CELL_SHARE_PER_NETWORK; i++)
      await fx.stats.tally(session(rfc), `client:${i}`, 'mobile', { ...network, address: `203.0.113.${i}` });
    expect(await inCell()).toBe(CELL_SHARE_PER_NETWORK);
    // Two minutes later, a new epoch week: its share is still spent.
    fx.now = weekEnds + 60_000;
    await fx.stats.tally(session(rfc), 'client:9', 'mobile', { ...network, address: '203.0.113.9' });
    expect(await inCell()).toBe(CELL_SHARE_PER_NETWORK);
    // In the new week's last 30 s, the previous week's two still count: none more.
    fx.now = weekEnds + WEEK - 30_000;
    await fx.stats.tally(session(rfc), 'client:8', 'mobile', { ...network, address: '203.0.113.8' });
    expect(await inCell()).toBe(CELL_SHARE_PER_NETWORK);
    // Two weeks on, a network quiet since: its first two weeks are gone, one more is counted.
    fx.now = weekEnds + 3 * WEEK + 60_000;
    await fx.stats.tally(session(rfc), 'client:7', 'mobile', { ...network, address: '203.0.113.7' });
    expect(await inCell()).toBe(CELL_SHARE_PER_NETWORK + 1);
  });

  it('an earlier step its network’s cell share left out is ended in its country’s figures, not in the cell', async () => {
    const network = { network: '203.0.113.0/24' };
    const first: SessionRecord[] = [];
    for (let i = 0; i <= CELL_SHARE_PER_NETWORK; i++) {
      const start = session(rfc);
      await fx.stats.tally(start, `client:${i}`, 'mobile', { ...network, address: `203.0.113.${i}` });
      const step: JourneyStep = {
        requestId: start.requestId,
        method: start.method,
        startedAt: start.createdAt,
      };
      const next = session({ phoneNumber: start.phoneNumber, journeyId: start.requestId });
      await fx.stats.tally(next, `client:${i}`, 'mobile', {}, [step]);
      await fx.stats.tally({ ...next, status: 'verified', delivered: true, verifiedAt: fx.now + 30_000 });
      first.push(start);
    }
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({
      started: CELL_SHARE_PER_NETWORK + 1,
      expired: CELL_SHARE_PER_NETWORK + 1,
    });
    const [operatorCell] = await fx.stats.cellSums(
      'reverse_flash_call',
      figureCells(first[0]!.phoneNumber, 'mobile'),
      7,
    );
    expect(operatorCell).toMatchObject({
      started: CELL_SHARE_PER_NETWORK,
      expired: CELL_SHARE_PER_NETWORK,
      rescued: CELL_SHARE_PER_NETWORK,
    });
    // Out of its calling code × device cell, out of that fallback moment too: its start and its end.
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      started: CELL_SHARE_PER_NETWORK,
      ended: CELL_SHARE_PER_NETWORK,
    });
  });

  it('a network past its cell share teaches the fallback moment no more: its verified and its unverified ends alike', async () => {
    const network = { network: '198.51.100.0/24' };
    const sessions: SessionRecord[] = [];
    for (let i = 0; i < CELL_SHARE_PER_NETWORK + 3; i++) {
      const record = session(rfc);
      await fx.stats.tally(record, `owner:farm-${i}`, 'mobile', { ...network, address: `198.51.100.${i}` });
      sessions.push(record);
    }
    for (const [i, record] of sessions.entries())
      await fx.stats.tally(
        i % 2 === 0
          ? { ...record, status: 'verified', delivered: true, verifiedAt: record.createdAt + 85_000 }
          : { ...record, status: 'expired' },
      );
    // Each counted in the country's figures; in the cell and the moment, its network's share alone.
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({
      started: CELL_SHARE_PER_NETWORK + 3,
    });
    // Of the first two: one verified (ended), one expired unproven (left: no record, no page).
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      started: CELL_SHARE_PER_NETWORK,
      ended: 1,
      left: 1,
    });
    // Past its share of every country's cell (`all`) but not of another country's: counted in that one's moment.
    for (let i = 0; i < CELL_SHARE_PER_NETWORK + 1; i++)
      await fx.stats.tally(
        session({ ...rfc, phoneNumber: `+4477009000${10 + i}` }),
        `client:uk-${i}`,
        'mobile',
        {
          network: '198.51.99.0/24',
          address: `198.51.99.${i}`,
        },
      );
    await fx.stats.tally(session(rfc), 'client:ru', 'mobile', {
      network: '198.51.99.0/24',
      address: '198.51.99.9',
    });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      started: CELL_SHARE_PER_NETWORK + 1,
    });
    // Another network's session is counted there as before.
    const other = session(rfc);
    await fx.stats.tally(other, 'client:z', 'mobile', { network: '192.0.2.0/24', address: '192.0.2.1' });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      started: CELL_SHARE_PER_NETWORK + 2,
    });
  });

  it('a start while its method was unhealthy teaches its health cells only: not the choice’s nor the moment, with a network or not, nor its ends', async () => {
    const [operator, country, all, opHealth, countryHealth] = figureCells(session(rfc).phoneNumber, 'mobile');
    const sums = async () => {
      const cells = await fx.stats.cellSums(
        'reverse_flash_call',
        [operator!, country!, all!, opHealth!, countryHealth!],
        7,
      );
      return cells.map(({ started, verified, rescued }) => [started, verified, rescued]);
    };
    const moment = () => fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7);
    const healthy = session(rfc);
    await fx.stats.tally(healthy, 'client:a', 'mobile', { network: '192.0.2.0/24', address: '192.0.2.1' });
    const sick = [session(rfc), session(rfc)];
    await fx.stats.tally(sick[0]!, 'client:b', 'mobile', { network: '198.51.100.0/24', unhealthy: true });
    await fx.stats.tally(sick[1]!, undefined, 'mobile', { unhealthy: true });
    for (const record of [healthy, ...sick])
      await fx.stats.tally({
        ...record,
        status: 'verified',
        delivered: true,
        verifiedAt: record.createdAt + 20_000,
      });
    expect(await sums()).toStrictEqual([
      [1, 1, 0],
      [1, 1, 0],
      [1, 1, 0],
      [3, 3, 0],
      [3, 3, 0],
    ]);
    expect(await moment()).toMatchObject({ started: 1, ended: 1 });
    // A switch away from an unhealthy start: its end (rescued, when the next step verifies) follows its start.
    const failing = session(rfc);
    await fx.stats.tally(failing, 'client:c', 'mobile', { unhealthy: true });
    const step: JourneyStep = {
      requestId: failing.requestId,
      method: failing.method,
      startedAt: failing.createdAt,
    };
    const next = session({ phoneNumber: failing.phoneNumber, journeyId: failing.requestId });
    await fx.stats.tally(next, 'client:c', 'mobile', {}, [step]);
    await fx.stats.tally({ ...next, status: 'verified', delivered: true, verifiedAt: fx.now + 30_000 });
    expect(await sums()).toStrictEqual([
      [1, 1, 0],
      [1, 1, 0],
      [1, 1, 0],
      [4, 3, 1],
      [4, 3, 1],
    ]);
    expect(await moment()).toMatchObject({ started: 1, ended: 1 });
  });

  it('the evidence leaves the store: a day’s claims and shares a minute after the day, a session’s a day after its end, a network’s cell counts a minute after the next week', async () => {
    const record = session(rfc);
    await fx.stats.tally(record, 'client:a', 'mobile', { address: '203.0.113.1', network: '203.0.113.0/24' });
    await fx.stats.followed({ ...record, createdAt: fx.now - 10_000 });
    await fx.stats.tally({ ...record, status: 'expired' });
    /** The kinds of entry (a key's name up to its first `:`) the store holds live. */
    const kinds = async () => {
      const keys = dumpMemoryStore(fx.store).map((line) => line.split(' ')[0]!);
      const live = await Promise.all(
        keys.map(async (key) => ((await fx.store.get(key)) === null ? [] : [key])),
      );
      return [...new Set(live.flat().map((key) => key.split(':')[0]!))];
    };
    const perDay = ['stats-caller', 'stats-giver', 'stats-number'];
    const perSession = ['stats-admitted', 'stats-counted', 'stats-followed'];
    const dayEnds = (Math.floor(fx.now / DAY) + 1) * DAY;
    const nextWeekEnds = (Math.floor(fx.now / WEEK) + 2) * WEEK;
    fx.now = dayEnds + MINUTE - 1;
    expect(await kinds()).toEqual(expect.arrayContaining([...perDay, ...perSession, 'stats-cell-net']));
    fx.now = dayEnds + MINUTE + 1;
    expect((await kinds()).filter((kind) => perDay.includes(kind))).toStrictEqual([]);
    fx.now = record.expiresAt + DAY - 1;
    expect(await kinds()).toEqual(expect.arrayContaining(perSession));
    fx.now = record.expiresAt + DAY + 1;
    expect((await kinds()).filter((kind) => perSession.includes(kind))).toStrictEqual([]);
    fx.now = nextWeekEnds + MINUTE - 1;
    expect(await kinds()).toContain('stats-cell-net');
    fx.now = nextWeekEnds + MINUTE + 1;
    expect(await kinds()).not.toContain('stats-cell-net');
  });

  it('an end known a day after its start, while the session’s claims last, counts its start once', async () => {
    const record = session({ expiresAt: fx.now + 10 * MINUTE });
    await fx.stats.tally(record, 'client:a');
    fx.now += DAY + 5 * MINUTE;
    await fx.stats.tally({ ...record, status: 'expired' });
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 1, expired: 1 });
  });
});

describe('MethodStats: sessions left out, and instances deciding at once', () => {
  it('a session left out (past its caller’s share, its number’s second of the day) ends uncounted, without a warning', async () => {
    const warnings: string[] = [];
    const log = fx.logger();
    log.warn = (message) => void warnings.push(message);
    const stats = fx.statsOn(fx.store, { logger: log });
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.caller; i++) await stats.tally(session(), 'owner:farm');
    // Past the share, seen first when it had ended, then seen again.
    const past = { ...session(), status: 'verified', delivered: true, verifiedAt: fx.now + 10_000 };
    await stats.tally(past, 'owner:farm');
    await stats.tally(past, 'owner:farm');
    // Its number's second session of the day, started then ended.
    const second = session({ phoneNumber: past.phoneNumber });
    await stats.tally(second, 'client:b');
    await stats.tally({ ...second, status: 'verified', delivered: true, verifiedAt: fx.now + 10_000 });
    expect((await stats.figures()).sms).toMatchObject({
      started: FIGURES_SHARE_PER_DAY.caller,
      verified: 0,
      callers: 1,
    });
    expect(warnings).toStrictEqual([]);
  });

  it('a start and its end tallied at once by two instances: both counted, once', async () => {
    const other = fx.statsOn(fx.store);
    const record = session({ method: 'msgr1_otp', cost: rub(0.9) });
    const verified = { ...record, status: 'verified', delivered: true, verifiedAt: fx.now + 5_000 };
    await Promise.all([fx.stats.tally(record, 'client:a'), other.tally(verified)]);
    const late = session({ method: 'msgr1_otp', cost: rub(0.9) });
    const done = { ...late, status: 'failed' };
    await Promise.all([other.tally(late, 'client:b'), fx.stats.tally(done)]);
    await Promise.all([fx.stats.flush(), other.flush()]);
    expect((await fx.stats.figures()).msgr1_otp).toMatchObject({
      started: 2,
      verified: 1,
      failed: 1,
      charged: rub(1.8),
    });
  });
});
