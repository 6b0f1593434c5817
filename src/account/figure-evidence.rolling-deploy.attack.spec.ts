/**
 * Attack / rolling deploy (d5230829: "the moment's exclusion is its own mark in the decision"). A session's
 * admission (`stats-admitted:{id}`, `1|device|caller|vouched|cells left out`) is written once, at its first count,
 * and read by whichever instance counts its end (up to the session's life later; the key lasts a day past it).
 * Before d5230829 a decision left the session out of the fallback moment by naming its calling code × device cell
 * (`7~.mobile`) or its country's cell over every device (`7~*`); since, only its moment group (`7~mobile`) does
 * (leaveOutOfShares). A decision an older instance wrote for a farm network past its week's share
 * (`…|7~912.mobile,7~.mobile,all~.mobile,7~912,7~*`) is read by a new instance as "out of the cells, in the
 * moment": every such session that ends on a new instance during the rollout teaches the moment (a farm's quick
 * verifies sink it, its abandoned ends raise it), as its network's share meant it not to. The reverse holds too: a
 * new decision naming only `7~mobile` (its `7~*` week share spent, its health window's claim free, another device
 * hint) ends on an old instance in the moment.
 *
 * Checked: passes on d5230829^ (the older reading), and here with the decision this release writes; fails here
 * with the older decision (the verified end counts in the moment: ended 0 → 1).
 *
 * Expected: a decision naming `7~.<device>` or `7~*` with no moment group (the older release's) still leaves the
 * session out of the moment, as `admission()` reads an older `1`/`1:desktop`. Low (a rollout's in-flight sessions,
 * minutes of them; the moment's damping bounds a read's move; the attacker times its farm to a deploy it cannot see).
 */
import { describe, expect, it } from '@jest/globals';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { CELL_SHARE_PER_NETWORK } from './figure-evidence.js';
import { admittedKey } from './figure-evidence.keys.js';
import { figureCells } from './method-figures.js';

describe('FigureEvidence: a decision an older release wrote, ended by this one', () => {
  const fx = methodStatsSuite();
  const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false } as const;

  it('a farm session an older instance left out of the moment (`7~.mobile`, `7~*`) stays out of it when it ends here', async () => {
    const moment = () => fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7);
    const record = fx.session(rfc);
    // The older instance's decision at its start (its network past its week's share of every cell): the start
    // counted in the country's figures, not in the moment. (Counted here, then its decision as the older wrote it.)
    const network = { network: '203.0.113.0/24', address: '203.0.113.7' };
    for (let i = 0; i < CELL_SHARE_PER_NETWORK; i++)
      await fx.stats.tally(fx.session(rfc), `client:${i}`, 'mobile', network);
    await fx.stats.tally(record, 'client:farm', 'mobile', network);
    const cells = figureCells(record.phoneNumber, 'mobile');
    expect(cells).toEqual(['7~912.mobile', '7~.mobile', 'all~.mobile', '7~912', '7~*']);
    await fx.store.set(admittedKey(record.requestId), `1|mobile||0|${cells.join(',')}`, 86_400_000);
    const before = await moment();
    expect(before).toMatchObject({ started: CELL_SHARE_PER_NETWORK, ended: 0 });
    fx.now += 5_000;
    await fx.stats.tally(
      { ...record, status: 'verified', delivered: true, verifiedAt: fx.now },
      undefined,
      'mobile',
      network,
    );
    expect(await moment()).toEqual(before);
  });
});
