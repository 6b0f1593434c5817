/**
 * Attack (lane attack-s, the fallback moment's report after 6192f1fe: src/verification/fallback-timing.ts,
 * src/core/moment-damping.ts recentRange / recentMoments). The recent range is the moments adopted in the
 * last hour (and the last one), and it is "not known" (figures adopted whole, nothing reported) while
 * the first moment kept was adopted less than SETTLED_AFTER_MS ago. After a quiet hour (no read of the
 * cell on this instance: a rare calling code, a device hint at night, one of several instances), the
 * first read keeps only itself: the next 10 minutes are a young host's again.
 *
 * A farm waits for such an hour, starts one session of its own (the read: the figures as they were),
 * verifies 600 of its own numbers within 10 s, and starts another 35 s later. That read matures the
 * farm's verifications against the read before the quiet hour (the newest at least a ceiling ago) and
 * finds the floor; the range is not known, so the floor is adopted at once, damped false, and neither
 * the warning nor `verification.fallback_moment` is given. Ten minutes later the range is [10 s, 37.5 s]
 * and the figures (the farm's stay for 7 days) lie in it: every user of the cell is offered the paid
 * fallback at the floor, and operations never hear of it.
 *
 * Expected: a moment adopted beyond the last moment known is damped and reported, however long ago that
 * moment was adopted (a range once known stays known: the last moment is kept, so is its age). Medium
 * (the cell's fallback, paid, steered unseen; needs a quiet hour on an instance and the farm's own
 * verifications, as attack-q's quiet-jump part assumes). The same steps after a quiet 59 minutes are
 * damped and reported (checked by hand). Fails here (attack-s on 98d4bbc3 + 0c2a2d37). Smallest fix: recentRange tests the settled age
 * on the first moment ever adopted for the key (kept beside the list), not on the first kept.
 */
import { describe, expect, it } from '@jest/globals';
import { FALLBACK_FIGURES_TTL_MS } from '../../src/verification/fallback-timing.js';
import { MOMENT_SETTINGS, settledFallbackHost, verifiedIn } from '../support/fallback-timing.fixture.js';

/** 20 verified reverse calls within (30 s, 45 s]: a median of 37.5 s. */
const SLOW = [0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0];
/** The same, and 600 more within 10 s (the farm's): the moment falls to the floor. */
const FAST_FARM = [0, 600, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0];

/** A host whose moment (37.5 s) has been read every 30 s for SETTLED_AFTER_MS: a settled range. */
const settled = () => settledFallbackHost(verifiedIn(SLOW), 37_500);

describe('a settled fallback moment after a quiet hour', () => {
  it('a read, a farm burst, a read 35 s later: the floor is damped and reported', async () => {
    const t = await settled();
    // A quiet hour and a minute: nobody starts this method for +7 on mobile on this instance.
    t.now += 61 * 60_000;
    // The farm's first start reads the figures as they were.
    expect(await t.moment()).toBe(37_500);
    // 600 of its own numbers started and verified within 10 s, then one more start 35 s after the read.
    t.counts = { started: 620, ended: 620, left: 0, buckets: FAST_FARM };
    t.now += 35_000;
    const read = await t.moment();
    expect({ read, events: t.events.length, warnings: t.warnings.length }).toEqual({
      read: expect.any(Number),
      events: 1,
      warnings: 1,
    });
    // Damped: one step of the pace from 37.5 s, not the floor at once.
    expect(read).toBeGreaterThan(30_000);
  });

  it('the moment that farm reaches: the floor, ten minutes on, with no report at all', async () => {
    const t = await settled();
    t.now += 61 * 60_000;
    await t.moment();
    t.counts = { started: 620, ended: 620, left: 0, buckets: FAST_FARM };
    let moment = 0;
    for (let read = 0; read < 20; read++) {
      t.now += read === 0 ? 35_000 : FALLBACK_FIGURES_TTL_MS;
      moment = await t.moment();
    }
    // Where the moment stands after ten minutes of real users' reads, and what operations were told.
    expect({ moment, events: t.events.length }).not.toEqual({ moment: MOMENT_SETTINGS.floorMs, events: 0 });
  });
});
