import { describe, expect, it, jest } from '@jest/globals';
import { DAY_MS } from '../core/clock.js';
import { HEALTH_WINDOW_MS, RETRY_AFTER_MS } from './method-health.js';
import { HEALTH_READ_MS } from './method-health.service.js';
import { DROP, instance, MSK, shared, windowOf } from '../../test/support/method-health-watch.fixture.js';

/*
 * Attack on the kept health change (attack-p): records an instance cannot take as they are (not an
 * object, dated ahead of its clock) and a store that fails the record's read while the figures read.
 */

const KEY = 'stats-health:{flash_call:+7985}:state';
/** The fixture's noon less the week a record is kept. */
const NOON_WEEK_AGO = Date.parse('2026-11-23T12:00:00Z');

describe('MethodHealthWatch: a kept change it cannot take leaves its own judging intact', () => {
  it.each(['null', '"demoted"', '[]', '7'])(
    'a kept record %s (valid JSON, no object): the drop is still judged, degraded and announced',
    async (kept) => {
      const s = shared();
      await s.store.set(KEY, kept, DAY_MS);
      const b = instance(s);
      expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
      windowOf(s, DROP);
      s.now += HEALTH_WINDOW_MS;
      expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
      expect(b.events.map((e) => `${e.previous}>${e.state}`)).toStrictEqual(['healthy>degraded']);
      expect(b.lines.filter((l) => l.includes('could not be read'))).toStrictEqual([]);
    },
  );

  it('the record’s read failing (its node down, the figures’ up): the drop is still judged and announced', async () => {
    const s = shared();
    const get = s.store.get.bind(s.store);
    jest
      .spyOn(s.store, 'get')
      .mockImplementation((key) =>
        key.endsWith(':state') ? Promise.reject(new Error('node down')) : get(key),
      );
    const b = instance(s);
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
    expect(b.events.map((e) => `${e.previous}>${e.state}`)).toStrictEqual(['healthy>degraded']);
    // Said, without the number: the store's failure and the prefix only.
    expect(b.lines.filter((l) => l.includes('kept change could not be read'))[0]).toMatch(/node down/);
    expect(b.lines.join('\n')).not.toMatch(/1234567/);
  });

  it('a record dated a day ahead of its clock (a skewed or damaged writer) does not hold a quiet prefix demoted past its retry', async () => {
    const s = shared();
    await s.store.set(
      KEY,
      JSON.stringify({ state: 'demoted', since: s.now + DAY_MS, by: 'operator' }),
      DAY_MS,
    );
    const b = instance(s);
    const bootedAt = s.now;
    await b.watch.refresh('flash_call', MSK);
    // No sessions since: nothing to judge. A demoted state is tried again RETRY_AFTER_MS on at the latest.
    while (s.now < bootedAt + RETRY_AFTER_MS + HEALTH_WINDOW_MS) {
      s.now += HEALTH_READ_MS;
      await b.watch.refresh('flash_call', MSK);
    }
    expect(b.watch.state('flash_call', MSK)).not.toBe('demoted');
    expect(b.watch.report()[0]!.since.getTime()).toBeLessThanOrEqual(s.now);
  });

  it('a record dated ahead of its clock does not shut out the deployment’s later change', async () => {
    const s = shared();
    await s.store.set(KEY, JSON.stringify({ state: 'healthy', since: s.now + DAY_MS }), DAY_MS);
    const b = instance(s);
    await b.watch.refresh('flash_call', MSK);
    // An hour on, another instance's demotion is kept; B, none of whose users had +7 985 since, takes it.
    s.now += 60 * 60_000;
    await s.store.set(KEY, JSON.stringify({ state: 'demoted', since: s.now, by: 'operator' }), DAY_MS);
    s.now += HEALTH_READ_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('demoted');
  });

  it('an instance whose first read came just before another’s change was kept (since equal to its own) takes it once unjudged', async () => {
    const s = shared();
    const a = instance(s);
    await a.watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    // B's first read lands before A's change of the same moment is kept.
    const b = instance(s);
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
    // No +7 985 user since: B has nothing to judge, and a window on takes the deployment's change.
    s.now += HEALTH_WINDOW_MS + HEALTH_READ_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
    expect(b.events).toStrictEqual([]);
  });

  it.each([0, -1, NOON_WEEK_AGO])(
    'a record dated %s, a week or more before its clock (damaged: kept records are a week old at most), is left aside',
    async (since) => {
      const s = shared();
      await s.store.set(KEY, JSON.stringify({ state: 'demoted', since, by: 'operator' }), DAY_MS);
      expect(await instance(s).watch.refresh('flash_call', MSK)).toBe('healthy');
    },
  );
});
