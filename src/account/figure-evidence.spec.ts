import { describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { FIGURES_SHARE_PER_DAY, FOLLOWED_AFTER_MS } from './figure-evidence.js';

/*
 * What the method figures learn from (FigureEvidence): each giver's bounded share of a day, and an
 * unverified end counted only with evidence of a real user.
 */

const fx = methodStatsSuite();
const { session } = fx;
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false };

describe('MethodStats: figures learned from evidence of real users', () => {
  /** A start from its own caller and address, abandoned: it expires. */
  async function abandoned(caller: string, givers = {}, follow = false): Promise<SessionRecord> {
    const record = session(rfc);
    await fx.stats.tally(record, caller, 'mobile', givers);
    if (follow) await fx.stats.followed({ ...record, createdAt: fx.now - FOLLOWED_AFTER_MS });
    await fx.stats.tally({ ...record, status: 'expired' });
    return record;
  }

  async function verified(caller: string, givers = {}): Promise<void> {
    const record = session(rfc);
    await fx.stats.tally(record, caller, 'mobile', givers);
    await fx.stats.tally({ ...record, status: 'verified', verifiedAt: fx.now + 20_000 });
  }

  it('an abandoned start nobody followed counts neither in the moment figures nor in the ranking', async () => {
    await verified('owner:a');
    for (let i = 0; i < 5; i++) await abandoned(`client:${i}`);
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      started: 6,
      ended: 1,
      left: 5,
    });
    expect((await fx.stats.learningSamples()).reverse_flash_call).toStrictEqual({
      started: 1,
      verified: 1,
      callers: 6,
    });
    // The operator's report still shows every expiry.
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({ started: 6, expired: 5 });
  });

  it('an unverified end counts when a page followed it, when its caller has a record, or when its journey verified', async () => {
    const followed = session({ method: 'flash_call', cost: rub(0.8), awaitingCode: true });
    await fx.stats.tally(followed, 'client:followed', 'mobile');
    await fx.stats.followed({ ...followed, createdAt: fx.now - FOLLOWED_AFTER_MS });
    await fx.stats.tally({ ...followed, status: 'expired' });
    expect((await fx.stats.learningSamples()).flash_call).toMatchObject({ started: 1, verified: 0 });
    // Of the reverse call, a followed page counts in neither the moment nor the ranking (see the next test).
    await abandoned('client:followed-rfc', {}, true);
    await verified('owner:known');
    fx.now += 60_000;
    await abandoned('owner:known');
    // Before FOLLOWED_AFTER_MS a status read proves nothing: the page may have been a script's first poll.
    const early = session(rfc);
    await fx.stats.tally(early, 'client:early', 'mobile');
    await fx.stats.followed({ ...early, createdAt: fx.now - FOLLOWED_AFTER_MS + 1 });
    await fx.stats.tally({ ...early, status: 'expired' });
    const moment = await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7);
    expect(moment).toMatchObject({ started: 4, ended: 2, left: 2 });
    expect((await fx.stats.learningSamples()).reverse_flash_call).toMatchObject({ started: 2, verified: 1 });
  });

  it('a followed page is no evidence of a method charged on proof, for the ranking or the moment: its start and poll cost their giver nothing', async () => {
    await verified('owner:a');
    for (let i = 0; i < 5; i++) await abandoned(`client:${i}`, { address: `203.0.${i}.1` }, true);
    expect((await fx.stats.learningSamples()).reverse_flash_call).toMatchObject({ started: 1, verified: 1 });
    // Many networks' free starts, each read once, never tell when real users give up.
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
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
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({
      started: shares,
      verified: shares,
    });
    // A new day, a new share.
    fx.now += 86_400_000;
    await verified('owner:farm');
    expect((await fx.stats.figures({ days: 1 })).reverse_flash_call).toMatchObject({ started: 1 });
  });

  it('a start past its share keeps no entry of its own, and stays uncounted to its end, past its day', async () => {
    const network = { network: '203.0.113.0/24' };
    for (let i = 0; i < FIGURES_SHARE_PER_DAY.network; i++)
      await verified(`client:${i}`, { address: `203.0.113.${i}`, ...network });
    const before = (await fx.stats.figures()).reverse_flash_call;
    expect(before).toMatchObject({ started: FIGURES_SHARE_PER_DAY.network });
    const past = session(rfc);
    const entries = fx.store.entryCount;
    await fx.stats.tally(past, 'client:past', 'mobile', { address: '203.0.113.200', ...network });
    await fx.stats.tally(past, 'client:past', 'mobile', { address: '203.0.113.200', ...network });
    // Its number's claim and its caller's and address's new day shares (its network's are there): no decision entry.
    expect(await fx.store.get(`stats-admitted:{${past.requestId}}`)).toBeNull();
    expect(fx.store.entryCount - entries).toBe(3);
    // Its end a day later (its shares' day is over): still not counted, nor its givers' shares taken again.
    fx.now += 86_400_000 - 60_000;
    await fx.stats.tally({ ...past, status: 'verified', verifiedAt: fx.now });
    expect((await fx.stats.figures()).reverse_flash_call).toStrictEqual(before);
    expect(await fx.store.get(`stats-admitted:{${past.requestId}}`)).toBeNull();
  });
});
