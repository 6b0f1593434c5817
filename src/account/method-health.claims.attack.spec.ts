import { describe, expect, it } from '@jest/globals';
import { HEALTH_WINDOW_MS } from './method-health.js';
import { DROP, instance, MSK, shared, windowOf } from '../../test/support/method-health-watch.fixture.js';

/*
 * Attacks on the one announcement of a health change across instances (the change's claim in the store):
 * what a host's listener of `verification.method_health` receives when the claim cannot be written, and
 * when an instance with few starts on a prefix judges a window its reads made older than the others'.
 */

const changes = (...lists: { previous: string; state: string }[][]) =>
  lists.flat().map((e) => `${e.previous}>${e.state}`);

describe('method health announcements, attacked', () => {
  it.each(['setIfAbsent', 'delete'] as const)(
    'a change whose claim the store fails to answer (%s; its node of a Redis Cluster down) is still announced',
    async (operation) => {
      const s = shared();
      const a = instance(s);
      await a.watch.refresh('flash_call', MSK);
      // The claim's keys fail once (the stats cells, elsewhere, read fine).
      const real = s.store[operation].bind(s.store) as (key: string, ...rest: unknown[]) => Promise<never>;
      let failures = 1;
      Object.assign(s.store, {
        [operation]: (key: string, ...rest: unknown[]) =>
          key.startsWith('stats-health:') && failures-- > 0
            ? Promise.reject(new Error('CLUSTERDOWN'))
            : real(key, ...rest),
      });
      windowOf(s, DROP);
      s.now += HEALTH_WINDOW_MS;
      await a.watch.refresh('flash_call', MSK);
      // Read on: the drop lasts, the method stays degraded.
      for (let i = 0; i < 5; i++) {
        s.now += 30_000;
        await a.watch.refresh('flash_call', MSK);
      }
      expect(a.watch.state('flash_call', MSK)).toBe('degraded');
      expect(changes(a.events)).toStrictEqual(['healthy>degraded']);
      expect(a.lines.filter((l) => l.includes('could not be claimed'))).toStrictEqual([
        expect.stringMatching(/^warn .*flash_call.*CLUSTERDOWN/),
      ]);
    },
  );

  it('an instance with few starts on the prefix does not announce a drop after its recovery was announced', async () => {
    const s = shared();
    const busy = instance(s);
    const quiet = instance(s);
    await Promise.all([busy.watch.refresh('flash_call', MSK), quiet.watch.refresh('flash_call', MSK)]);
    // A burst of failures in the first minute, the busy instance's next read two minutes in.
    windowOf(s, { started: 40, delivered: 40, rescued: 40 });
    s.now += 2 * 60_000;
    await busy.watch.refresh('flash_call', MSK);
    // 20 minutes after the first reads: dropped, announced.
    s.now += HEALTH_WINDOW_MS - 2 * 60_000;
    expect(await busy.watch.refresh('flash_call', MSK)).toBe('degraded');
    // Two minutes of 40 verified: the last 20 minutes (the busy instance's window from its read at 2 min) recovered.
    windowOf(s, { started: 40, delivered: 40, verified: 40 });
    s.now += 2 * 60_000;
    expect(await busy.watch.refresh('flash_call', MSK)).toBe('healthy');
    // The quiet instance's first start on +7 985 since the burst: its window reaches back 22.5 minutes,
    // to the burst the last 20 minutes no longer hold.
    s.now += 30_000;
    await quiet.watch.refresh('flash_call', MSK);
    // The host was told degraded, healthy: the method is healthy; no "degraded" again from old figures.
    expect(changes(busy.events, quiet.events)).toStrictEqual(['healthy>degraded', 'degraded>healthy']);
  });

  it('another instance that judges the same drop minutes later, on its own window, does not announce it again', async () => {
    const s = shared();
    const busy = instance(s);
    const quiet = instance(s);
    await Promise.all([busy.watch.refresh('flash_call', MSK), quiet.watch.refresh('flash_call', MSK)]);
    // A window as the week: both judge it healthy (a verdict of their own: neither takes the other's change).
    windowOf(s, { started: 20, delivered: 20, verified: 18, rescued: 2 });
    s.now += HEALTH_WINDOW_MS;
    await Promise.all([busy.watch.refresh('flash_call', MSK), quiet.watch.refresh('flash_call', MSK)]);
    windowOf(s, { started: 60, delivered: 60, rescued: 60 });
    s.now += 30_000;
    expect(await busy.watch.refresh('flash_call', MSK)).toBe('degraded');
    // The quiet instance's next user comes 10 minutes on (its last verdict under a window old): it judges the
    // same drop itself.
    s.now += 10 * 60_000;
    expect(await quiet.watch.refresh('flash_call', MSK)).toBe('degraded');
    expect(changes(busy.events, quiet.events)).toStrictEqual(['healthy>degraded']);
  });
});
