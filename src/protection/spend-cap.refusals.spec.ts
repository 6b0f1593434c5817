import { afterEach, describe, expect, it } from '@jest/globals';
import type { MemoryStore } from '../store/memory.store.js';
import { ProtectionKeys } from './protection-keys.js';
import { refusalOf, rub, spendCap } from '../../test/support/spend-cap.fixture.js';

/**
 * What a start meets at the cap's bounds, for each kind of method: when the day's usage is asked before a
 * refusal (never for a start that fits, once for one that does not), the wait a refusal names, and a
 * reservation counted once however its start ends.
 */
const FOURTEEN_HOURS_S = 14 * 3600;

describe('SpendCap: refusals and what they ask first', () => {
  const stores: MemoryStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  /** A cap whose usage reads are counted: the API says it charged `charged.minor` today. */
  function capWithUsage(amount: number, estimateMinor: number) {
    const charged = { minor: 0 };
    const reads: string[] = [];
    const made = spendCap({ amount }, estimateMinor, async (date) => (reads.push(date), charged.minor));
    stores.push(made.store);
    return { ...made, charged, reads, price: rub(estimateMinor / 100) };
  }

  const session = (n: number, now: number) => ({ requestId: `req-${n}`, expiresAt: now + 300_000 });

  /** `n` SMS settled at their estimate, sent, then ended undelivered: counted until the usage says otherwise. */
  async function undeliveredSms(made: ReturnType<typeof capWithUsage>, n: number, from = 0): Promise<void> {
    for (let i = from; i < from + n; i++) {
      await (await made.cap.reserve('sms')).settle(made.price, session(i, made.clock.now));
      await made.cap.ended(`req-${i}`, { verified: false, delivered: false });
    }
  }

  it('a reverse call that lands exactly on the cap fits without a usage read; one past it reads the usage and fits on what came back', async () => {
    const made = capWithUsage(9, 300);
    await undeliveredSms(made, 2);
    await (await made.cap.reserve('reverse_flash_call')).settle(rub(3), session(10, made.clock.now));
    expect(made.reads).toStrictEqual([]);
    await undeliveredSms(made, 1, 2);
    // A minute later (what the window keeps outlives it): 9 of 9 counted, none of it charged; the usage gives
    // the three SMS back, and the call fits.
    made.clock.now += 60_000;
    expect(await refusalOf(made.cap.reserve('reverse_flash_call'))).toBeUndefined();
    expect(made.reads).toStrictEqual(['2026-01-01']);
    expect(await made.cap.spentShare()).toBe(0);
  });

  it('a reverse call past the share it may take reads the usage too; at exactly that share it fits unread', async () => {
    const made = capWithUsage(10, 100);
    await undeliveredSms(made, 6);
    // 6 + 1 of 10 RUB: exactly the 70 % a start keeping 30 % may reach.
    expect(await refusalOf(made.cap.reserve('reverse_flash_call', 0.3))).toBeUndefined();
    expect(made.reads).toStrictEqual([]);
    // A seventh SMS, its session live: 8 of 10 would pass the share, so the usage is asked; the six
    // ended ones come back, the live one stays.
    await (await made.cap.reserve('sms')).settle(rub(1), session(6, made.clock.now));
    expect(await refusalOf(made.cap.reserve('reverse_flash_call', 0.3))).toBeUndefined();
    expect(made.reads).toHaveLength(1);
    expect(await made.cap.spentShare()).toBeCloseTo(0.1);
    // What stays counted after a usage read stays so for the rest of the window.
    made.clock.now += 3_600_000;
    expect(await made.cap.spentShare()).toBeCloseTo(0.1);
  });

  it('the refusals of a reverse call name the wait to the window’s end, for the cap and for its last share', async () => {
    const made = capWithUsage(10, 100);
    await undeliveredSms(made, 8);
    made.charged.minor = 800;
    const share = await refusalOf(made.cap.reserve('reverse_flash_call', 0.3));
    expect(share?.extra).toMatchObject({ last_share: true });
    expect(share?.retryAfterSeconds).toBe(FOURTEEN_HOURS_S);
    await undeliveredSms(made, 2, 8);
    made.clock.now += 31_000;
    made.charged.minor = 1000;
    const cap = await refusalOf(made.cap.reserve('reverse_flash_call'));
    expect(cap?.reason).toBe('spend_cap');
    expect(cap?.extra ?? {}).not.toHaveProperty('last_share');
    expect(cap?.retryAfterSeconds).toBe(FOURTEEN_HOURS_S - 31);
  });

  it('an SMS past the whole cap is refused by the cap, not by the share it keeps, and the cap’s reach is announced', async () => {
    const made = capWithUsage(6, 300);
    made.charged.minor = 600;
    await undeliveredSms(made, 2);
    const refused = await refusalOf(made.cap.reserve('sms', 0.2));
    expect(refused?.reason).toBe('spend_cap');
    expect(refused?.extra ?? {}).not.toHaveProperty('last_share');
    expect(made.events).toHaveLength(1);
  });

  it('a reservation released when its API call failed is not live at the next usage read', async () => {
    const made = capWithUsage(6, 300);
    await (await made.cap.reserve('sms')).release();
    await undeliveredSms(made, 2);
    // 6 of 6 counted, nothing charged, nothing live: both come back and the start fits.
    expect(await refusalOf(made.cap.reserve('sms'))).toBeUndefined();
    expect(await made.cap.spentShare()).toBeCloseTo(0.5);
  });

  it('a reverse call’s reservation is counted once, however often it is settled, and never after a release', async () => {
    const made = capWithUsage(10, 100);
    const twice = await made.cap.reserve('reverse_flash_call');
    await twice.settle(rub(1));
    await twice.settle(rub(1));
    expect(await made.cap.spentShare()).toBeCloseTo(0.1);
    const released = await made.cap.reserve('reverse_flash_call');
    await released.release();
    await released.settle(rub(1));
    await released.settle(rub(1), session(1, made.clock.now));
    await made.cap.ended('req-1', { verified: true, delivered: true });
    expect(await made.cap.spentShare()).toBeCloseTo(0.1);
  });

  it('a session’s share the store kept unreadable is left alone at its end', async () => {
    const made = capWithUsage(10, 100);
    await made.cap.reserve('sms');
    await made.store.set(ProtectionKeys.spendOpen('req-x'), '{not an open spend', 60_000);
    await expect(made.cap.ended('req-x', { verified: false, delivered: false })).resolves.toBeUndefined();
    expect(await made.cap.spentShare()).toBeCloseTo(0.1);
  });

  it('deployments at two offsets other than UTC keep counters of their own on one store', async () => {
    const moscow = spendCap({ amount: 3, utcOffsetMinutes: 180 }, 300);
    stores.push(moscow.store);
    const samara = spendCap({ amount: 3, utcOffsetMinutes: 240 }, 300, undefined, moscow);
    await moscow.cap.reserve('sms');
    expect(await samara.cap.spentShare()).toBe(0);
    expect(await refusalOf(samara.cap.reserve('sms'))).toBeUndefined();
  });
});
