import { describe, expect, it } from '@jest/globals';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { CELL_SHARE_PER_NETWORK, HEALTH_CLAIM_MS } from './figure-evidence.js';
import { figureCells } from './method-figures.js';

/*
 * FigureEvidence's health shares: a network counts one session an hour in the health cells (its claim's,
 * HEALTH_CLAIM_MS), every hour, apart from its week's share of the choice cells and of the moment.
 */

const fx = methodStatsSuite();
const { session } = fx;
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false } as const;
const MINUTE = 60_000;

describe('MethodStats: a network’s share of the health cells', () => {
  it('a network counts one session an hour in the health cells, every hour, however many it spent of its week’s choice shares', async () => {
    const network = { network: '203.0.113.0/24' };
    const [operator, , , opHealth, countryHealth] = figureCells(session(rfc).phoneNumber, 'mobile');
    const started = async () =>
      (await fx.stats.cellSums('reverse_flash_call', [operator!, opHealth!, countryHealth!], 7)).map(
        (cell) => cell.started,
      );
    const tally = (i: number) =>
      fx.stats.tally(session(rfc), `client:${i}`, 'mobile', { ...network, address: `203.0.113.${i}` });
    // Five minutes apart for 15 minutes: the first counts in the health cells, the rest within its claim do not.
    const first = fx.now;
    for (let i = 0; i < 4; i++) {
      await tally(i);
      fx.now += 5 * MINUTE;
    }
    expect(await started()).toStrictEqual([CELL_SHARE_PER_NETWORK, 1, 1]);
    // A second before the first's claim ends: none more; a second after it, one more (its week's
    // choice share long spent).
    fx.now = first + HEALTH_CLAIM_MS - 1_000;
    await tally(5);
    expect(await started()).toStrictEqual([CELL_SHARE_PER_NETWORK, 1, 1]);
    fx.now = first + HEALTH_CLAIM_MS + 1_000;
    await tally(6);
    expect(await started()).toStrictEqual([CELL_SHARE_PER_NETWORK, 2, 2]);
  });

  it('a network’s health claim is its own: another network counts in the same hour; the claim is of the network, not the cell’s every session', async () => {
    const [, , , opHealth, countryHealth] = figureCells(session(rfc).phoneNumber, 'mobile');
    const started = async () =>
      (await fx.stats.cellSums('reverse_flash_call', [opHealth!, countryHealth!], 7)).map((c) => c.started);
    await fx.stats.tally(session(rfc), 'client:a', 'mobile', {
      network: '203.0.113.0/24',
      address: '203.0.113.1',
    });
    await fx.stats.tally(session(rfc), 'client:b', 'mobile', {
      network: '198.51.100.0/24',
      address: '198.51.100.1',
    });
    await fx.stats.tally(session(rfc), 'client:c', 'mobile', {
      network: '203.0.113.0/24',
      address: '203.0.113.2',
    });
    // Another method: a claim of its own.
    await fx.stats.tally(session(), 'client:d', 'mobile', {
      network: '203.0.113.0/24',
      address: '203.0.113.3',
    });
    expect(await started()).toStrictEqual([2, 2]);
    const sms = await fx.stats.cellSums('sms', [opHealth!, countryHealth!], 7);
    expect(sms.map((c) => c.started)).toStrictEqual([1, 1]);
  });

  it('a network past its week’s share of `7~*` teaches no device’s moment, though its share of that device’s cell is not spent', async () => {
    const network = { network: '203.0.113.0/24' };
    const desktopMoment = async () =>
      (await fx.stats.timeToVerify('reverse_flash_call', '7', 'desktop', 7)).started;
    for (let i = 0; i < CELL_SHARE_PER_NETWORK; i++)
      await fx.stats.tally(session(rfc), `client:${i}`, 'mobile', { ...network, address: `203.0.113.${i}` });
    expect(await desktopMoment()).toBe(0);
    // Its desktop cells' shares are whole; its share of every device's (`7~*`) is spent.
    const desktop = session(rfc);
    await fx.stats.tally(desktop, 'client:9', 'desktop', { ...network, address: '203.0.113.9' });
    const [byOperator, byCountry] = await fx.stats.cellSums(
      'reverse_flash_call',
      figureCells(desktop.phoneNumber, 'desktop').slice(0, 2),
      7,
    );
    expect([byOperator!.started, byCountry!.started]).toStrictEqual([1, 1]);
    expect(await desktopMoment()).toBe(0);
    // Another network's desktop session teaches it.
    await fx.stats.tally(session(rfc), 'client:z', 'desktop', {
      network: '192.0.2.0/24',
      address: '192.0.2.1',
    });
    expect(await desktopMoment()).toBe(1);
  });
});
