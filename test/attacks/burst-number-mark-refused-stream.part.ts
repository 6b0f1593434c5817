/**
 * Attack (lane attack-s, lane-45h's burst marks, src/pumping/range-bursts.ts: a number's mark is its
 * count `protect:pump:n`, and a start that lost the number's mark to another start retakes it once).
 *
 * 1. The retake is one try. Concurrent starts of one number are refused by its cooldown (free: nothing
 *    is sent), and each refused one takes the number's mark with the limits and gives it back a round
 *    trip later. A farm sends, with each paid start of its number, a few more of the same number: the
 *    one that goes ahead finds the mark held, retakes it while the next refused start holds it, and is
 *    counted in no range's distinct callers (the burst signature) though it was paid and sent.
 *    Medium: the pumping defence's burst count evaded for every number of a farm, at no cost to it.
 *
 * 2. A refused start's `release` deletes the number's mark, which is now its count: the count of a start
 *    of the same number counted meanwhile (by another instance) is deleted with it. The number's own
 *    starts are then no longer taken out of its range's (the owner who retries holds their own range
 *    sooner), and a counted start given back later (nothing was sent) leaves the counter at -1 (a mark
 *    no start holds).
 *    Low (state owned by countStart deleted by another start's refusal).
 *
 * 3. The same with the caller's marks: a refused start of a number already started in the window (the
 *    cooldown refuses it) holds its caller's marks until it gives them back, and a paid start of a new
 *    number by the same caller meanwhile finds its caller marked: no retake (its number was new), so it
 *    is counted in no range's callers. A farm that sends each caller's paid start a few ms after a
 *    refused one is never a distinct caller of the range. Medium (same evasion, deterministic).
 *
 * Smallest fix: decide "the number is new" where the start is counted (its count's increment answers 1),
 * and take the caller marks there too, not with marks taken before the verdict: a refused start then
 * holds nothing of the number or the caller to give back.
 */
import { describe, expect, it } from '@jest/globals';
import { burstStats, prefix, range } from '../support/range-bursts.fixture.js';

const phone = '+79161234001';

describe("the burst signature's number mark under refused starts of the same number", () => {
  const stats = burstStats();

  it('a paid start raced by a stream of refused starts of its number is counted as a distinct caller', async () => {
    const rs = stats();
    // The farm's refused start (the cooldown refuses it: nothing sent) and its paid one, together.
    const refused1 = await rs.markBursts([range, prefix], phone, 'network:198.51.100.0');
    const paid = await rs.markBursts([range, prefix], phone, 'network:203.0.113.0');
    expect(paid.ids.size).toBe(0);
    // The first refused start gives its marks back as the next one (a round trip later) takes them.
    await refused1.release();
    const refused2 = await rs.markBursts([range, prefix], phone, 'network:198.51.100.0');
    // The paid start is counted: its retake meets the second refused start's mark.
    await rs.countStart([range, prefix], phone, 'network:203.0.113.0', [], paid);
    await refused2.release();
    const counts = (await rs.read([range, prefix])).get(range.id)!;
    expect(counts.current).toBe(1);
    // Expected: the one start that was sent, of a number new to the range, from a caller new to it.
    expect(counts.currentCallers).toBe(1);
  });

  it("a refused start's release leaves the count of a start of the same number counted meanwhile", async () => {
    const rs = stats();
    const refused = await rs.markBursts([range, prefix], phone, 'network:198.51.100.0');
    const owner = await rs.markBursts([range, prefix], phone, 'owner:alice');
    await rs.countStart([range, prefix], phone, 'owner:alice', [], owner);
    const before = (await rs.read([range], phone)).get(range.id)!;
    // The owner's own start is taken out of the range's (OWNER_RETRIES).
    expect({ starts: before.starts, deducted: before.raw?.deducted }).toEqual({ starts: 0, deducted: 1 });
    await refused.release();
    const after = (await rs.read([range], phone)).get(range.id)!;
    expect({ starts: after.starts, deducted: after.raw?.deducted }).toEqual({ starts: 0, deducted: 1 });
  });

  it("a paid start of a new number, its caller's marks held by its own refused start: counted as a caller", async () => {
    const rs = stats();
    const old = '+79161234002';
    // Another caller started `old` earlier in the window (counted: one distinct caller).
    await rs.countStart(
      [range, prefix],
      old,
      'network:192.0.2.0',
      [],
      await rs.markBursts([range, prefix], old, 'network:192.0.2.0'),
    );
    // The farm's caller: a start of `old` (refused by its cooldown, free), and a few ms later a paid one of a new number.
    const refused = await rs.markBursts([range, prefix], old, 'network:203.0.113.0');
    const paid = await rs.markBursts([range, prefix], phone, 'network:203.0.113.0');
    await refused.release();
    await rs.countStart([range, prefix], phone, 'network:203.0.113.0', [], paid);
    const counts = (await rs.read([range, prefix])).get(range.id)!;
    expect({ current: counts.current, callers: counts.currentCallers }).toEqual({ current: 2, callers: 2 });
  });
});
