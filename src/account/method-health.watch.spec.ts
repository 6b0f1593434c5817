import { describe, expect, it } from '@jest/globals';
import { VerificationOpsEventName } from '../core/verification-events.js';
import type { Sums } from './method-figures.js';
import { sums } from '../../test/support/method-stats.fixture.js';
import { DEMOTE_AFTER_MS, HEALTH_MIN_SESSIONS, HEALTH_WINDOW_MS } from './method-health.js';
import { HEALTH_READ_MS } from './method-health.service.js';
import {
  DROP,
  instance,
  MSK,
  NOON,
  shared,
  SPB,
  windowOf,
} from '../../test/support/method-health-watch.fixture.js';

/*
 * MethodHealthWatch over figures the spec sets (the operator prefix's and its country's counters), on
 * the module's clock: which level judges, the event's payload and its one emission across instances,
 * the states kept per method and prefix, a failed read and a failing listener.
 */

describe('MethodHealthWatch: what it shows before and as it judges', () => {
  it('a method never read is healthy; its first read shows the country level and no rates yet, quietly', async () => {
    const s = shared();
    const { watch, lines } = instance(s);
    expect(watch.state('flash_call', MSK)).toBe('healthy');
    expect(await watch.refresh('flash_call', MSK)).toBe('healthy');
    const empty = { started: 0, ended: 0, completion: null, delivery: null };
    expect(watch.report()).toStrictEqual([
      {
        method: 'flash_call',
        prefix: '+7985',
        state: 'healthy',
        since: new Date(NOON),
        level: 'country',
        recent: empty,
        week: empty,
      },
    ]);
    expect(lines).toStrictEqual([]);
  });

  it(`judges the operator's own window from ${HEALTH_MIN_SESSIONS} outcomes, its country's below`, async () => {
    const s = shared();
    const { watch, events, lines } = instance(s);
    await watch.refresh('flash_call', MSK);
    // 19 of its own (9 verified), the country's steady: the country judges, nothing changes.
    windowOf(s, { started: 19, verified: 9, rescued: 10 }, { started: 40, verified: 40 });
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('healthy');
    expect(watch.report()[0]).toMatchObject({ level: 'country', recent: { ended: 40, completion: 1 } });
    expect(events).toStrictEqual([]);

    const t = shared();
    const other = instance(t);
    await other.watch.refresh('flash_call', MSK);
    windowOf(t, DROP, { started: 40, verified: 40 });
    t.now += HEALTH_WINDOW_MS;
    expect(await other.watch.refresh('flash_call', MSK)).toBe('degraded');
    const week = { completion: 910 / 1020, delivery: 970 / 1020 };
    // Strictly: an unnamed registration's event has no `registration` key at all.
    expect(other.events).toStrictEqual([
      {
        event: VerificationOpsEventName.methodHealth,
        method: 'flash_call',
        prefix: '+7985',
        state: 'degraded',
        previous: 'healthy',
        level: 'operator',
        recent: { completion: 0.5, delivery: 1 },
        week,
        at: new Date(t.now),
      },
    ]);
    expect(other.lines.filter((l) => l.startsWith('warn method health changed'))).toHaveLength(1);
    expect(other.lines.join('\n')).toMatch(
      /method health changed.*flash_call.*\+7985.*degraded.*healthy.*operator/,
    );
    expect(lines).toStrictEqual([]);
  });

  /** A weak operator (half its outcomes verified over the week) in a strong country (nine in ten). */
  const weak = sums({ started: 1000, delivered: 950, verified: 500, rescued: 500 });
  it.each([
    {
      // Too few of its own: the country judges, 22 of 40 (0.55) against its week's 0.89: a drop.
      own: { started: 10, verified: 5, rescued: 5 },
      state: 'degraded',
      report: {
        level: 'country',
        recent: { ended: 40, completion: 0.55 },
        week: { ended: 1040, completion: 922 / 1040 },
      },
    },
    {
      // Enough of its own: the operator judges, 11 of 20 (0.55) against its own week's 0.5: steady.
      own: { started: 20, verified: 11, rescued: 9 },
      state: 'healthy',
      report: {
        level: 'operator',
        recent: { ended: 20, completion: 0.55 },
        week: { ended: 1020, completion: 511 / 1020 },
      },
    },
  ])(
    "the country's window is judged against the country's week, the operator's against its own (twin levels): $report.level",
    async ({ own, state, report }) => {
      const s = shared();
      (s.figures as Record<string, Sums>)['7~985'] = weak;
      const { watch } = instance(s);
      await watch.refresh('flash_call', MSK);
      windowOf(s, own, { started: 40, verified: 22, rescued: 18 });
      s.now += HEALTH_WINDOW_MS;
      expect(await watch.refresh('flash_call', MSK)).toBe(state);
      expect(watch.report()[0]).toMatchObject(report);
    },
  );

  it('the read of a window ago stays the one compared with while reads come every HEALTH_READ_MS', async () => {
    const s = shared();
    const { watch } = instance(s);
    await watch.refresh('flash_call', MSK);
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('healthy');
    windowOf(s, DROP);
    s.now += HEALTH_READ_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
  });

  it('a state its own window set is not judged by its country’s while its own is thin: neither lifted nor deepened; a country-set one is', async () => {
    const s = shared();
    const { watch } = instance(s);
    await watch.refresh('flash_call', MSK);
    windowOf(s, DROP, { started: 60, delivered: 60, verified: 50, rescued: 10 });
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    // Its own users gone (sent elsewhere), the country's recovered: still degraded, past DEMOTE_AFTER_MS too.
    for (let i = 0; i < (DEMOTE_AFTER_MS + HEALTH_WINDOW_MS) / HEALTH_READ_MS; i++) {
      windowOf(s, {}, { started: 10, delivered: 10, verified: 10 });
      s.now += HEALTH_READ_MS;
      expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    }
    // A drop its country's window set is lifted by the country's recovery.
    const t = shared();
    const other = instance(t);
    await other.watch.refresh('flash_call', MSK);
    windowOf(t, { started: 5, verified: 5 }, DROP);
    t.now += HEALTH_WINDOW_MS;
    expect(await other.watch.refresh('flash_call', MSK)).toBe('degraded');
    windowOf(t, {}, { started: 40, delivered: 40, verified: 40 });
    t.now += HEALTH_WINDOW_MS;
    expect(await other.watch.refresh('flash_call', MSK)).toBe('healthy');
  });

  it('a healthy state its own window set is judged by its country’s while its own is thin', async () => {
    const s = shared();
    const { watch } = instance(s);
    await watch.refresh('flash_call', MSK);
    windowOf(s, DROP, { started: 60, delivered: 60, verified: 50, rescued: 10 });
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    windowOf(s, { started: 40, delivered: 40, verified: 40 });
    s.now += HEALTH_READ_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('healthy');
    // Its own users gone quiet; the country's window drops.
    windowOf(s, {}, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
  });

  it('a verdict of its own window that changes nothing leaves the state its country’s set: the country lifts it', async () => {
    const s = shared();
    const { watch } = instance(s);
    await watch.refresh('flash_call', MSK);
    windowOf(s, { started: 5, delivered: 5, verified: 5 }, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    // 20 of its own, 14 verified: steady against its week (0.7 of 0.9), degraded still.
    windowOf(s, { started: 20, delivered: 20, verified: 14, rescued: 6 });
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    expect(watch.report()[0]!.level).toBe('operator');
    windowOf(s, {}, { started: 40, delivered: 40, verified: 40 });
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('healthy');
  });

  it('reads each country’s own cell: a drop in one country’s window judges none of another’s prefixes', async () => {
    const s = shared();
    const { watch } = instance(s);
    const BY = '+375291234567';
    await watch.refresh('flash_call', MSK);
    await watch.refresh('flash_call', BY);
    // +7's country window drops (its prefixes' own windows thin: judged by it); Belarus's does not.
    windowOf(s, {}, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    expect(await watch.refresh('flash_call', BY)).toBe('healthy');
  });

  it('keeps a state per method and operator prefix', async () => {
    const s = shared();
    const { watch } = instance(s);
    await Promise.all([watch.refresh('flash_call', MSK), watch.refresh('flash_call', SPB)]);
    // +7 985's drop, in a country whose other prefixes (+7 921's thin window judged by it) verified 40 of 40.
    windowOf(s, DROP, { started: 60, delivered: 60, verified: 50, rescued: 10 });
    s.now += HEALTH_WINDOW_MS;
    await Promise.all([watch.refresh('flash_call', MSK), watch.refresh('flash_call', SPB)]);
    expect([
      watch.state('flash_call', MSK),
      watch.state('flash_call', SPB),
      watch.state('sms', MSK),
    ]).toStrictEqual(['degraded', 'healthy', 'healthy']);
  });
});

describe('MethodHealthWatch: the event', () => {
  it('is emitted once across instances sharing a store, and names the registration', async () => {
    const s = shared();
    const a = instance(s, 'shop');
    const b = instance(s, 'shop');
    await a.watch.refresh('flash_call', MSK);
    await b.watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
    s.now += 1_000;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
    expect([...a.events, ...b.events].map((e) => [e.state, e.registration])).toStrictEqual([
      ['degraded', 'shop'],
    ]);
    expect(Object.keys(a.events[0]!)).toContain('registration');
  });

  it('each change is announced once across instances, and a change again after another is announced however soon', async () => {
    const s = shared();
    const a = instance(s);
    const b = instance(s);
    await a.watch.refresh('flash_call', MSK);
    await b.watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
    // Half a minute on, the window full of verified outcomes: recovered; half a minute more, dropped again.
    windowOf(s, { started: 200, delivered: 200, verified: 200 });
    s.now += HEALTH_READ_MS;
    expect(await a.watch.refresh('flash_call', MSK)).toBe('healthy');
    windowOf(s, { started: 200, delivered: 200, rescued: 200 });
    s.now += HEALTH_READ_MS;
    expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
    // The other instance reads the same change a second later (across a 20-minute slot's turn or not).
    s.now += 1_000;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
    // And recovered again a minute on: each change's claim ended by the one after it.
    windowOf(s, { started: 400, delivered: 400, verified: 400 });
    s.now += HEALTH_READ_MS;
    expect(await a.watch.refresh('flash_call', MSK)).toBe('healthy');
    s.now += 1_000;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    expect([...a.events, ...b.events].map((e) => `${e.previous}>${e.state}`)).toStrictEqual([
      'healthy>degraded',
      'degraded>healthy',
      'healthy>degraded',
      'degraded>healthy',
    ]);
  });

  it('a failing listener is logged by the error’s name; the health changes all the same', async () => {
    const s = shared();
    const { watch, lines } = instance(s, undefined, () => {
      throw new RangeError('listener broke');
    });
    await watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    const failed = lines.filter((l) => l.includes('a listener of a method health event failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/^warn /);
    expect(failed[0]).toContain('RangeError');
  });
});

describe('MethodHealthWatch: a listener throwing what is not an Error', () => {
  it('is logged as unknown', async () => {
    const s = shared();
    const { watch, lines } = instance(s, undefined, () => {
      throw 'a string';
    });
    await watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    await watch.refresh('flash_call', MSK);
    expect(lines.filter((l) => l.includes('listener of a method health event failed'))).toStrictEqual([
      expect.stringMatching(/ error=unknown( |$)/),
    ]);
    expect(lines.join('\n')).not.toContain('a string');
  });
});

describe('MethodHealthWatch: a failed read', () => {
  it('is logged with the method, and the health stands', async () => {
    const s = shared();
    const { watch, lines } = instance(s);
    await watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    s.figures = new Error('store down');
    s.now += HEALTH_READ_MS;
    expect(await watch.refresh('flash_call', MSK)).toBe('degraded');
    const failed = lines.filter((l) =>
      l.includes('method health: the figures could not be read; the health stands'),
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/^warn .*flash_call.*store down/);
  });
});
