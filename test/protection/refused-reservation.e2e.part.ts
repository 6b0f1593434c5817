/**
 * A start the pumping defence refuses keeps no spend reservation (78c7c4b7: the admission's catch no
 * longer releases one): whether the reading condemns it (refused before anything is reserved) or the
 * starts counted concurrently turn the verdict (the reservation, taken in the same round trip, is given
 * back by takenInOrder). Judged on the cap itself: after many refused starts, the window holds exactly the
 * served starts' money, and a fresh range is served up to the cap.
 */
import { describe, expect, it } from '@jest/globals';
import { SpendCap } from '../../src/protection/spend-cap.js';
import { ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshIp,
  protectedHost,
  protectionFixture,
  pumpingOnly,
  refusal,
  startFrom,
} from './protection-host.js';

/** The sandbox's SMS price, RUB. */
const SMS = 3;
const CAP = 30;

/** The defence with ranges held at 5 unconverted starts, no reserve kept, and a cap of CAP. */
const limits = pumpingOnly({ reserveShare: 0 }, { spendCap: { amount: CAP, windowMs: 86_400_000 } });

let rangeSerial = 0;
function freshRange(): (i: number) => string {
  rangeSerial += 1;
  const range = `+7927${String((process.pid * 11 + rangeSerial * 17) % 1000).padStart(3, '0')}`;
  return (i) => `${range}${String(i).padStart(4, '0')}`;
}

describe.each(ONE_PLATFORM)(
  'a start the pumping defence refuses reserves nothing of the cap (%s)',
  (platform) => {
    const fx = protectionFixture();

    it('refused on the reading or by the starts counted with it: the cap holds only the served starts', async () => {
      // beforeStart runs after the reading, before anything is counted: the burst's starts wait there for
      // each other, so each has read the range before any of them is counted.
      let barrier: { left: number; open: () => void; opened: Promise<void> } | undefined;
      const beforeStart = async (): Promise<void> => {
        if (!barrier) return;
        barrier.left -= 1;
        if (barrier.left === 0) barrier.open();
        await barrier.opened;
      };
      fx.host = await protectedHost(fx.sb, platform, { ...limits, beforeStart });
      const cap = fx.host.app.get(SpendCap, { strict: false });
      const attacked = freshRange();
      for (let i = 0; i < 4; i++) expect((await startFrom(fx.host, freshIp(), attacked(i))).status).toBe(201);
      // Eight at once: each reads 4 starts (under the minimum), so each is judged again with the others
      // counted, its reservation taken in the same round trip.
      let open = (): void => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      barrier = { left: 8, open, opened };
      const burst = await Promise.all(
        Array.from({ length: 8 }, (_, i) => startFrom(fx.host!, freshIp(), attacked(10 + i))),
      );
      barrier = undefined;
      const served = burst.filter((r) => r.status === 201).length;
      const held = burst.filter((r) => refusal(r).reason === 'range_held').length;
      expect(served + held).toBe(8);
      expect(held).toBeGreaterThan(0);
      // Then refused on the reading alone.
      for (let i = 0; i < 5; i++)
        expect(refusal(await startFrom(fx.host, freshIp(), attacked(30 + i))).reason).toBe('range_held');
      const spent = (4 + served) * SMS;
      expect(Math.round((await cap.spentShare()) * CAP * 100)).toBe(spent * 100);
      // What is left of the cap serves other ranges to the last kopeck.
      const left = Math.floor((CAP - spent) / SMS);
      for (let i = 0; i < left; i++)
        expect((await startFrom(fx.host, freshIp(), freshRange()(1))).status).toBe(201);
      expect(refusal(await startFrom(fx.host, freshIp(), freshRange()(1))).reason).toBe('spend_cap');
    });
  },
);
