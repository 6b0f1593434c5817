import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationClientError } from '../core/verification.errors.js';
import { MemoryStore } from '../store/memory.store.js';
import { WrongCodeBudget } from './wrong-code-budget.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';

const HOUR = 3_600_000;
const PHONE = '+79161234567';

async function refusalOf(promise: Promise<unknown>): Promise<VerificationClientError | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (error instanceof VerificationClientError) return error;
    throw error;
  }
}

describe('WrongCodeBudget', () => {
  const clock = { now: 1_700_000_000_000 };
  const stores: MemoryStore[] = [];
  const budget = (perPhone: number | false, perOwner: number | false): WrongCodeBudget => {
    const store = new MemoryStore({ clock: () => clock.now });
    stores.push(store);
    return new WrongCodeBudget(
      store,
      {
        wrongCodesPerPhone: perPhone === false ? false : { points: perPhone, windowMs: HOUR },
        wrongCodesPerOwner: perOwner === false ? false : { points: perOwner, windowMs: HOUR },
      },
      SPEC_DATA_KEYS,
    );
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it("a number's wrong codes are counted across callers; past the budget its checks and starts are refused with a coarse wait", async () => {
    const codes = budget(3, false);
    for (const owner of ['a', 'b', undefined]) await (await codes.holdCheck(PHONE, owner)).settle(true);
    await codes.assertStartAllowed('+79161234568', 'a');

    clock.now += 61_000;
    const refused = await refusalOf(codes.holdCheck(PHONE, 'c'));
    expect(refused?.errorCode).toBe('too_many_wrong_codes');
    expect(refused?.getStatus()).toBe(429);
    expect(refused?.extra).toStrictEqual({ reason: 'wrong_codes_phone' });
    // Caused by other callers: 59 minutes left are given as the whole hour (5-minute steps).
    expect(refused?.retryAfterSeconds).toBe(3600);
    const start = await refusalOf(codes.assertStartAllowed(PHONE, undefined));
    expect(start?.extra).toStrictEqual({ reason: 'wrong_codes_phone' });
    expect(start?.retryAfterSeconds).toBe(3600);

    clock.now += HOUR;
    await codes.assertStartAllowed(PHONE, undefined);
    await codes.holdCheck(PHONE, 'c');
  });

  it('a right code (or an unanswered check) gives its point back; asking whether a start is allowed takes none', async () => {
    const codes = budget(2, false);
    for (let i = 0; i < 5; i++) {
      await codes.assertStartAllowed(PHONE, undefined);
      await (await codes.holdCheck(PHONE, undefined)).settle(false);
    }
    await (await codes.holdCheck(PHONE, undefined)).settle(true);
    await (await codes.holdCheck(PHONE, undefined)).settle(true);
    expect(await refusalOf(codes.holdCheck(PHONE, undefined))).toBeDefined();
  });

  it("an owner's wrong codes are counted across numbers and refused with the exact wait", async () => {
    const codes = budget(false, 2);
    await (await codes.holdCheck('+79160000001', 'owner-1')).settle(true);
    await (await codes.holdCheck('+79160000002', 'owner-1')).settle(true);
    clock.now += 1000;
    const refused = await refusalOf(codes.holdCheck('+79160000003', 'owner-1'));
    expect(refused?.extra).toStrictEqual({ reason: 'wrong_codes_owner' });
    expect(refused?.retryAfterSeconds).toBe(3599);
    expect((await refusalOf(codes.assertStartAllowed('+79160000003', 'owner-1')))?.extra).toStrictEqual({
      reason: 'wrong_codes_owner',
    });
    // Another owner, or a caller without one, is not held back by it.
    await codes.holdCheck('+79160000003', 'owner-2');
    await codes.holdCheck('+79160000003', undefined);
    await codes.assertStartAllowed('+79160000003', undefined);
  });

  it("a check refused by the owner's budget gives back the point it took from the number's", async () => {
    const codes = budget(2, 1);
    await (await codes.holdCheck(PHONE, 'owner-1')).settle(true);
    expect((await refusalOf(codes.holdCheck(PHONE, 'owner-1')))?.extra).toStrictEqual({
      reason: 'wrong_codes_owner',
    });
    // The number has one wrong code, not two: another owner still gets a check.
    await (await codes.holdCheck(PHONE, 'owner-2')).settle(true);
    expect((await refusalOf(codes.holdCheck(PHONE, 'owner-3')))?.extra).toStrictEqual({
      reason: 'wrong_codes_phone',
    });
  });

  it('a start is refused once the last wrong code of a budget is spent, not one code later', async () => {
    const codes = budget(2, 3);
    await (await codes.holdCheck(PHONE, 'owner-1')).settle(true);
    // One wrong code left of the number's budget: a start is still worth sending.
    await codes.assertStartAllowed(PHONE, 'owner-1');
    await (await codes.holdCheck(PHONE, 'owner-1')).settle(true);
    // None left: a new code could never be checked.
    expect((await refusalOf(codes.assertStartAllowed(PHONE, undefined)))?.extra).toStrictEqual({
      reason: 'wrong_codes_phone',
    });
    await (await codes.holdCheck('+79160000009', 'owner-1')).settle(true);
    expect((await refusalOf(codes.assertStartAllowed('+79160000003', 'owner-1')))?.extra).toStrictEqual({
      reason: 'wrong_codes_owner',
    });
  });

  it('both budgets off: nothing is counted and nothing refused', async () => {
    const codes = budget(false, false);
    for (let i = 0; i < 20; i++) await (await codes.holdCheck(PHONE, 'owner-1')).settle(true);
    await codes.assertStartAllowed(PHONE, 'owner-1');
  });
});
