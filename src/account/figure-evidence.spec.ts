import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import { MemoryStore } from '../store/memory.store.js';
import { methodStatsFixture, NOON, rub } from '../../test/support/method-stats.fixture.js';
import { FIGURES_SHARE_PER_DAY, FOLLOWED_AFTER_MS } from './figure-evidence.js';
import { MethodStats } from './method-stats.service.js';

/*
 * What the method figures learn from (FigureEvidence): each giver's bounded share of a day, and an
 * unverified end counted only with evidence of a real user.
 */

let now = NOON;
const { session, statsOn } = methodStatsFixture(() => now);
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false };

describe('MethodStats: figures learned from evidence of real users', () => {
  let store: MemoryStore;
  let stats: MethodStats;

  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    stats = statsOn(store);
  });
  afterEach(() => store.close());

  /** A start from its own caller and address, abandoned: it expires. */
  async function abandoned(caller: string, givers = {}, follow = false): Promise<SessionRecord> {
    const record = session(rfc);
    await stats.tally(record, caller, 'mobile', givers);
    if (follow) await stats.followed({ ...record, createdAt: now - FOLLOWED_AFTER_MS });
    await stats.tally({ ...record, status: 'expired' });
    return record;
  }

  async function verified(caller: string, givers = {}): Promise<void> {
    const record = session(rfc);
    await stats.tally(record, caller, 'mobile', givers);
    await stats.tally({ ...record, status: 'verified', verifiedAt: now + 20_000 });
  }

  it('an abandoned start nobody followed counts neither in the moment figures nor in the ranking', async () => {
    await verified('owner:a');
    for (let i = 0; i < 5; i++) await abandoned(`client:${i}`);
    expect(await stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      started: 6,
      ended: 1,
      left: 5,
    });
    expect((await stats.learningSamples()).reverse_flash_call).toEqual({
      started: 1,
      verified: 1,
      callers: 6,
    });
    // The operator's report still shows every expiry.
    expect((await stats.figures()).reverse_flash_call).toMatchObject({ started: 6, expired: 5 });
  });

  it('an unverified end counts when a page followed it, when its caller has a record, or when its journey verified', async () => {
    const followed = session({ method: 'flash_call', cost: rub(0.8), awaitingCode: true });
    await stats.tally(followed, 'client:followed', 'mobile');
    await stats.followed({ ...followed, createdAt: now - FOLLOWED_AFTER_MS });
    await stats.tally({ ...followed, status: 'expired' });
    expect((await stats.learningSamples()).flash_call).toMatchObject({ started: 1, verified: 0 });
    // Of the reverse call, a followed page counts in neither the moment nor the ranking (see the next test).
    await abandoned('client:followed-rfc', {}, true);
    await verified('owner:known');
    now += 60_000;
    await abandoned('owner:known');
    // Before FOLLOWED_AFTER_MS a status read proves nothing: the page may have been a script's first poll.
    const early = session(rfc);
    await stats.tally(early, 'client:early', 'mobile');
    await stats.followed({ ...early, createdAt: now - FOLLOWED_AFTER_MS + 1 });
    await stats.tally({ ...early, status: 'expired' });
    const moment = await stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7);
    expect(moment).toMatchObject({ started: 4, ended: 2, left: 2 });
    expect((await stats.learningSamples()).reverse_flash_call).toMatchObject({ started: 2, verified: 1 });
  });

  it('a followed page is no evidence of a method charged on proof, for the ranking or the moment: its start and poll cost their giver nothing', async () => {
    await verified('owner:a');
    for (let i = 0; i < 5; i++) await abandoned(`client:${i}`, { address: `203.0.${i}.1` }, true);
    expect((await stats.learningSamples()).reverse_flash_call).toMatchObject({ started: 1, verified: 1 });
    // Many networks' free starts, each read once, never tell when real users give up.
    expect(await stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      ended: 1,
      left: 5,
    });
  });

  it('each caller, address and network adds at most its share of a day', async () => {
    const network = { network: '203.0.113.0/24' };
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.network + 5; i++)
      await verified(`client:${i}`, { address: `203.0.113.${i}`, ...network });
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.address + 5; i++)
      await verified(`owner:${i}`, { address: '198.51.100.7', network: '198.51.100.0/24' });
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.caller + 5; i++) await verified('owner:farm');
    const shares =
      FIGURES_SHARE_PER_DAY.network + FIGURES_SHARE_PER_DAY.address + FIGURES_SHARE_PER_DAY.caller;
    expect((await stats.figures()).reverse_flash_call).toMatchObject({ started: shares, verified: shares });
    // A new day, a new share.
    now += 86_400_000;
    await verified('owner:farm');
    expect((await stats.figures({ days: 1 })).reverse_flash_call).toMatchObject({ started: 1 });
  });

  it('a start past its share keeps no entry of its own, and stays uncounted to its end, past its day', async () => {
    const network = { network: '203.0.113.0/24' };
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.network; i++)
      await verified(`client:${i}`, { address: `203.0.113.${i}`, ...network });
    const before = (await stats.figures()).reverse_flash_call;
    expect(before).toMatchObject({ started: FIGURES_SHARE_PER_DAY.network });
    const past = session(rfc);
    const entries = store.entryCount;
    await stats.tally(past, 'client:past', 'mobile', { address: '203.0.113.200', ...network });
    await stats.tally(past, 'client:past', 'mobile', { address: '203.0.113.200', ...network });
    // Its number's claim and its caller's and address's new day shares (its network's are there): no decision entry.
    expect(await store.get(`stats-admitted:{${past.requestId}}`)).toBeNull();
    expect(store.entryCount - entries).toBe(3);
    // Its end a day later (its shares' day is over): still not counted, nor its givers' shares taken again.
    now += 86_400_000 - 60_000;
    await stats.tally({ ...past, status: 'verified', verifiedAt: now });
    expect((await stats.figures()).reverse_flash_call).toEqual(before);
    expect(await store.get(`stats-admitted:{${past.requestId}}`)).toBeNull();
  });
});
