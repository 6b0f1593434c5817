import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ProtectionRefusal } from '../../src/core/refusal-reason.js';
import { attempt, expectLiftsAt, inRange, MINUTE, pumpingHarness, T0 } from './pumping-harness.js';

/**
 * The pumping defence's window as a budget, at any time offset (fast-check): a range nobody
 * verified in takes `rangeMinStarts` starts of other numbers and holds the next; the sliding
 * window weighs the previous hour by what is left of it, so after an hour's wait the budget is
 * what the earlier starts no longer weigh; and the `Retry-After` a hold gives is the real wait
 * (held one coarse step before it, not at it).
 */

const HOUR = 60 * MINUTE;

describe('PumpingDefence: the window as a budget', () => {
  const defence = pumpingHarness();

  it('n starts in a window fit, the (n+1)th is held, at any minute of the hour; its Retry-After is when it lifts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 0, max: 59 }), async (n, minute) => {
        const { start, clock, pumping } = defence({ rangeMinStarts: n });
        clock.now = T0 + minute * MINUTE;
        for (let i = 0; i < n; i++) expect(await start(attempt(inRange(i)))).toBe('ok');
        const held = await start(attempt(inRange(n)));
        expect(held).toBeInstanceOf(ProtectionRefusal);
        const seconds = (held as ProtectionRefusal).retryAfterSeconds!;
        await expectLiftsAt(pumping, clock, attempt(inRange(99)), seconds, 300);
      }),
      { numRuns: 25 },
    );
  });

  it('starts of the previous hour weigh by what is left of it: the budget after the wait is n less that weight', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 1, max: 59 }),
        async (n, earlier, firstMinute, laterMinute) => {
          const a = Math.min(earlier, n);
          const weight = (a * (60 - laterMinute)) / 60;
          // Away from a whole number: the budget is then one count either side of a rounding.
          fc.pre(Math.abs(weight - Math.round(weight)) > 1e-6 || weight === 0);
          const { start, clock } = defence({ rangeMinStarts: n });
          clock.now = T0 + firstMinute * MINUTE;
          for (let i = 0; i < a; i++) expect(await start(attempt(inRange(i)))).toBe('ok');
          clock.now = T0 + HOUR + laterMinute * MINUTE;
          const budget = Math.max(0, Math.ceil(n - weight));
          for (let i = 0; i < budget; i++) expect(await start(attempt(inRange(10 + i)))).toBe('ok');
          expect(await start(attempt(inRange(50)))).toBeInstanceOf(ProtectionRefusal);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('two hours after its last start a range is whole again, whatever it took', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 0, max: 59 }), async (n, minute) => {
        const { start, clock } = defence({ rangeMinStarts: n, holdMs: MINUTE, maxHoldMs: MINUTE });
        clock.now = T0 + minute * MINUTE;
        for (let i = 0; i < n; i++) await start(attempt(inRange(i)));
        clock.now = T0 + 2 * HOUR;
        for (let i = 0; i < n; i++) expect(await start(attempt(inRange(20 + i)))).toBe('ok');
      }),
      { numRuns: 15 },
    );
  });

  it("a number's own retries (a first start, a resend, a switch) are not its range's: its fourth start fits beside n − 1 others, its fifth is held", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 0, max: 59 }), async (n, minute) => {
        const { start, clock } = defence({ rangeMinStarts: n });
        clock.now = T0 + minute * MINUTE;
        for (let i = 0; i < n - 1; i++) expect(await start(attempt(inRange(i)))).toBe('ok');
        const own = attempt(inRange(77));
        for (let i = 0; i < 4; i++) expect(await start(own)).toBe('ok');
        expect(await start(own)).toBeInstanceOf(ProtectionRefusal);
      }),
      { numRuns: 10 },
    );
  });
});
