/**
 * Attack (lane attack-r, the fallback moment's damping after a82a1a17/6afde740: src/core/moment-damping.ts,
 * src/verification/fallback-timing.ts). FallbackTiming reports a learned moment beyond its recent range
 * (`verification.fallback_moment` and a warning) only when dampedMoment *damped* it: when the figures'
 * target lies further than one step of the pace (3 % of the moment a minute since the last read, 1.5 % at
 * a read every 30 s). Two ways to steer a settled cell's moment with no report that says where it goes:
 *
 * 1. Paced: a farm that verifies its own numbers fast, one a minute, moves the figures' median by less
 *    than a step each read. Every read's target lies beyond the last hour's range (each is the lowest
 *    yet) and is adopted whole: `damped` false, nothing reported. The cell's moment walks from 33 s to
 *    the floor (10 s) in 3 hours (362 reads; 200 real users' figures, 181 of the farm's): every user
 *    of the cell (+7, reverse call, mobile) is offered a paid fallback at 10 s, and operations hear
 *    nothing. ARCHITECTURE.md: "A jump beyond the last hour's
 *    range moves 3 % a minute ... each jump, either way, is a `verification.fallback_moment`."
 * 2. Two-stage: a small push first (reported once, its target 32.3 s, 2 % below the moment), then the
 *    figures pushed to the floor while the first jump is still followed: same direction, so no second
 *    report; the only event operations got names a target 2 % below where the moment stood, and the
 *    moment goes to the floor.
 *
 * Expected: a moment that leaves its recent range is reported whether or not one step reaches it, and
 * the report names a target no nearer than the one followed (a further target is a new jump). Medium
 * (the cell's fallback, paid, steered unseen; needs a farm's own verifications at a pace, the evidence
 * rules admitting them, as attack-q's quiet-jump part assumes). Fails on main (43fb9bf2).
 */
import { describe, expect, it } from '@jest/globals';
import type { MomentCounts } from '../../src/core/fallback-moment.js';
import { FALLBACK_FIGURES_TTL_MS } from '../../src/verification/fallback-timing.js';
import { MOMENT_SETTINGS, settledFallbackHost, verifiedIn } from '../support/fallback-timing.fixture.js';

/** 200 real users' verified reverse calls, spread (5 s … 90 s): a median of 33 s. */
const USERS = [0, 10, 30, 50, 50, 30, 20, 10, 0, 0, 0, 0];

/** The users' figures and `fast` more verified within (5 s, 10 s] (the farm's). */
const withFarm = (fast: number): MomentCounts => verifiedIn(USERS.map((n, i) => (i === 1 ? n + fast : n)));

/** A host whose moment (33 s) has been read every 30 s for SETTLED_AFTER_MS: a settled range. */
const settled = () => settledFallbackHost(withFarm(0), 33_000);

describe('a settled fallback moment steered without a report that says where it goes', () => {
  it('paced: one fast verification of the farm a minute walks the moment to the floor, reported', async () => {
    const t = await settled();
    let moment = 33_000;
    let reads = 0;
    // A read every 30 s (the cell's real users), the farm's verifications one a minute.
    while (reads < 6 * 120 && moment > MOMENT_SETTINGS.floorMs) {
      reads++;
      t.counts = withFarm(Math.ceil(reads / 2));
      t.now += FALLBACK_FIGURES_TTL_MS;
      moment = await t.moment();
    }
    // The farm took the cell's moment to the floor in about three hours (181 verifications)…
    expect(moment).toBe(MOMENT_SETTINGS.floorMs);
    expect(reads).toBeLessThanOrEqual(362);
    // …and operations were told the moment left its range.
    expect(t.events.length).toBeGreaterThan(0);
    expect(t.warnings.length).toBeGreaterThan(0);
  });

  it('two-stage: a small push reported, then the floor followed under that one report', async () => {
    const t = await settled();
    t.counts = withFarm(40);
    t.now += FALLBACK_FIGURES_TTL_MS;
    const first = await t.moment();
    // Reported: a target of 32.3 s, 2 % below the moment.
    expect(t.events).toEqual([
      expect.objectContaining({ adoptedMs: 33_000, targetMs: 32_333, afterMs: first }),
    ]);
    t.counts = withFarm(600);
    let moment = first;
    for (let read = 0; read < 240 && moment > MOMENT_SETTINGS.floorMs; read++) {
      t.now += FALLBACK_FIGURES_TTL_MS;
      moment = await t.moment();
    }
    expect(moment).toBe(MOMENT_SETTINGS.floorMs);
    // Whatever was reported names the floor the moment went to (a further target is another jump).
    expect(Math.min(...t.events.map((e) => e.targetMs))).toBe(MOMENT_SETTINGS.floorMs);
  });
});
