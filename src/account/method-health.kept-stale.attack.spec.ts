import { describe, expect, it } from '@jest/globals';
import { DEMOTE_AFTER_MS, HEALTH_WINDOW_MS } from './method-health.js';
import { HEALTH_READ_MS } from './method-health.service.js';
import { DROP, instance, MSK, shared, windowOf } from '../../test/support/method-health-watch.fixture.js';

/*
 * Attack on the kept health change (attack-p, open): the record says when the state began, not when a window
 * last judged it. A demotion nobody judged for hours (the prefix's users gone, its judge not asked) is taken
 * by a new instance as if the outage went on: its users get the method last for a window, where the judge
 * itself, asked at that moment, tries it again at once (demoted 30 minutes unjudged: degraded).
 */

describe('MethodHealthWatch: a kept demotion nobody judged for hours', () => {
  it('a new instance answers as the judge would: not demoted, 3 hours after the last verdict', async () => {
    const s = shared();
    const a = instance(s);
    await a.watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    await a.watch.refresh('flash_call', MSK);
    for (let t = 0; t < DEMOTE_AFTER_MS; t += HEALTH_READ_MS) {
      windowOf(s, DROP);
      s.now += HEALTH_READ_MS;
      await a.watch.refresh('flash_call', MSK);
    }
    expect(a.watch.state('flash_call', MSK)).toBe('demoted');
    // Three quiet hours: no +7 985 user anywhere. Then one comes to a new instance B, another to A.
    s.now += 3 * 60 * 60_000;
    const b = instance(s);
    const onB = await b.watch.refresh('flash_call', MSK);
    const onA = await a.watch.refresh('flash_call', MSK);
    expect(onA).toBe('degraded');
    expect(onB).toBe(onA);
  });
});
