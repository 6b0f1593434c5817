/**
 * Attack (lane attack-q, the burst signature's marks, src/pumping/range-bursts.ts: one number mark per
 * window). A start counts a distinct caller of its range (and prefix) only where its number and its
 * caller are both new to the window; but its caller's mark is set (set-if-absent) whether or not the
 * number was new. A caller whose first start of the window is of a number already started there is
 * marked without being counted, and none of its later starts of new numbers counts it either.
 *
 * A farm chains its callers: caller 1 starts number 1 (counted), caller 2 starts number 1 again (one
 * paid start to the farm's own number: revenue to it) and then numbers 2…10 of the range, caller 3
 * starts number 2 again and then its own, and so on. Each number is started at most twice (within the
 * per-number limits), every start is paid, and the range's distinct callers read 1 however many
 * callers the farm has: the burst signature (many numbers from many callers) never sees it.
 *
 * Second shape (a race, two instances on one store): a start refused after its marks were taken gives
 * them back "as if never made", but a concurrent start of the same number from a new caller lost the
 * number mark to it meanwhile: counted nowhere, and its caller's mark burned.
 *
 * Both were so before the one-number mark (per subject, the same rule). Expected: a caller is marked
 * seen in a range only when it is counted there. Medium (the pumping defence's burst count evaded:
 * paid starts to a farm's numbers). Failed on main (5cd123dc); fixed by lane-45h (RangeBursts: a start whose
 * number another start had marked gives its caller marks back and tries the number's mark again).
 */
import { describe, expect, it } from '@jest/globals';
import { RangeStats } from '../../src/pumping/range-stats.js';
import { burstStats, prefix, range } from '../support/range-bursts.fixture.js';

const number = (i: number) => `+7916123${String(4000 + i).padStart(4, '0')}`;

describe("the burst signature's distinct callers", () => {
  const stats = burstStats();

  /** A paid start as the defence counts it: marks taken with the limits, then counted. */
  async function start(rs: RangeStats, phone: string, caller: string) {
    const marks = await rs.markBursts([range, prefix], phone, caller);
    return rs.countStart([range, prefix], phone, caller, [], marks);
  }

  it('callers chained on each other’s numbers are each counted once in the range', async () => {
    const rs = stats();
    const callers = 8;
    let last = 0;
    await start(rs, number(last), 'network:198.51.100.0');
    for (let c = 1; c < callers; c++) {
      const caller = `network:198.51.${100 + c}.0`;
      // Its first start: the previous caller's last number (that number's second start).
      await start(rs, number(last), caller);
      // Then three numbers of its own, new to the range.
      for (let k = 0; k < 3; k++) await start(rs, number(++last), caller);
    }
    const counts = (await rs.read([range, prefix])).get(range.id)!;
    expect(counts.starts).toBe(1 + (callers - 1) * 4);
    expect(counts.currentCallers).toBe(callers);
  });

  it('a start refused after marking, raced by a new caller’s start of the same number: that one is counted', async () => {
    const rs = stats();
    const phone = number(1);
    // Two instances, the same moment: both take their marks before either is answered.
    const [refused, taken] = await Promise.all([
      rs.markBursts([range, prefix], phone, 'client:refused'),
      rs.markBursts([range, prefix], phone, 'client:new'),
    ]);
    // The one that got the number's mark is refused (a limit of its own, in the same round trip): it
    // gives its marks back, as if never made. The other is started and counted.
    const [refusedMarks, startedMarks, startedCaller] =
      refused.ids.size > 0 ? [refused, taken, 'client:new'] : [taken, refused, 'client:refused'];
    expect(startedMarks.ids.size).toBe(0);
    await refusedMarks.release();
    await rs.countStart([range, prefix], phone, startedCaller, [], startedMarks);
    expect((await rs.read([range])).get(range.id)!.currentCallers).toBe(1);
  });
});
