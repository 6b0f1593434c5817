import { describe, expect, it, jest } from '@jest/globals';
import { DAY_MS } from '../core/clock.js';
import { DEMOTE_AFTER_MS, HEALTH_WINDOW_MS, RETRY_AFTER_MS } from './method-health.js';
import { HEALTH_READ_MS, HEALTH_WEEK_DAYS } from './method-health.service.js';
import {
  DROP,
  instance,
  MSK,
  shared,
  SPB,
  windowOf,
  type Shared,
} from '../../test/support/method-health-watch.fixture.js';

/*
 * The health a deployment's instances judged, kept in the store: an instance booted (or first asked)
 * during an outage starts where the others are, not healthy for the window and the demotion it would
 * take to judge the outage itself.
 */

/** Instance A on a shared store: reads +7 985 from now, degrades the flash call at its first window, demotes it. */
async function demotedByA(s: Shared) {
  const a = instance(s);
  await a.watch.refresh('flash_call', MSK);
  windowOf(s, DROP);
  s.now += HEALTH_WINDOW_MS;
  expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
  const degradedAt = s.now;
  while (a.watch.state('flash_call', MSK) !== 'demoted') {
    windowOf(s, DROP);
    s.now += HEALTH_READ_MS;
    await a.watch.refresh('flash_call', MSK);
  }
  expect(s.now - degradedAt).toBe(DEMOTE_AFTER_MS);
  return { a, degradedAt, demotedAt: s.now };
}

describe('MethodHealthWatch: an instance that has not judged yet takes the deployment’s health', () => {
  it('booted after another demoted the flash call on +7 985, its first read answers demoted since then, quietly; other prefixes and methods stay healthy', async () => {
    const s = shared();
    const { a, demotedAt } = await demotedByA(s);
    s.now += 5 * 60_000;
    const b = instance(s);
    expect(await b.watch.refresh('flash_call', MSK)).toBe('demoted');
    expect(await b.watch.refresh('flash_call', SPB)).toBe('healthy');
    expect(await b.watch.refresh('sms', MSK)).toBe('healthy');
    expect(b.watch.report().find((r) => r.prefix === '+7985' && r.method === 'flash_call')).toMatchObject({
      state: 'demoted',
      since: new Date(demotedAt),
    });
    expect(b.events).toStrictEqual([]);
    // Still dropped when its own first window judges: demoted, as on A.
    for (let i = 0; i < HEALTH_WINDOW_MS / HEALTH_READ_MS; i++) {
      windowOf(s, DROP);
      s.now += HEALTH_READ_MS;
      expect(await b.watch.refresh('flash_call', MSK)).toBe('demoted');
      await a.watch.refresh('flash_call', MSK);
    }
    // Recovered: promoted on both, announced once.
    windowOf(s, { started: 200, delivered: 200, verified: 200 });
    s.now += HEALTH_READ_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    expect(await a.watch.refresh('flash_call', MSK)).toBe('healthy');
    expect([...a.events, ...b.events].map((e) => `${e.previous}>${e.state}`)).toStrictEqual([
      'healthy>degraded',
      'degraded>demoted',
      'demoted>healthy',
    ]);
    // A third instance, booted now, starts healthy since the promotion: the last change kept.
    const promotedAt = s.now;
    s.now += 60_000;
    const c = instance(s);
    expect(await c.watch.refresh('flash_call', MSK)).toBe('healthy');
    expect(c.watch.report()[0]).toMatchObject({ state: 'healthy', since: new Date(promotedAt) });
  });

  it('an instance none of whose users had the operator for a window takes a newer change, and judges a fresh window from it', async () => {
    const s = shared();
    const b = instance(s);
    await b.watch.refresh('flash_call', MSK);
    // A good hour's users, then A's outage: B was asked before the hour only.
    windowOf(s, { started: 1000, delivered: 1000, verified: 1000 });
    const { a, demotedAt } = await demotedByA(s);
    expect(await b.watch.refresh('flash_call', MSK)).toBe('demoted');
    expect(b.watch.report()[0]).toMatchObject({ state: 'demoted', since: new Date(demotedAt) });
    // Its first verdict is a window on, over that window alone (the hours before held the healthy week).
    for (let i = 0; i < HEALTH_WINDOW_MS / HEALTH_READ_MS; i++) {
      windowOf(s, DROP);
      s.now += HEALTH_READ_MS;
      expect(await b.watch.refresh('flash_call', MSK)).toBe('demoted');
    }
    expect(b.events).toStrictEqual([]);
    expect(a.watch.state('flash_call', MSK)).toBe('demoted');
  });

  it('an instance whose own window gave a verdict within the window judges alone: another’s newer change waits', async () => {
    const s = shared();
    const b = instance(s);
    await b.watch.refresh('flash_call', MSK);
    windowOf(s, { started: 40, delivered: 40, verified: 40 });
    s.now += HEALTH_WINDOW_MS;
    const t1 = s.now;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    // Another instance's change, newer than B's verdict.
    const kept = JSON.stringify({ state: 'demoted', since: t1 + 1_000 });
    await s.store.set('stats-health:{flash_call:+7985}:state', kept, DAY_MS);
    // Half a minute on, its window (from the first read) judges again: recovered, healthy.
    s.now = t1 + HEALTH_READ_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    // A window on from t1, nothing to judge (no outcomes since), its last verdict less than a window old.
    s.now = t1 + HEALTH_WINDOW_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    // A window past its last verdict: it takes the change.
    s.now = t1 + HEALTH_READ_MS + HEALTH_WINDOW_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('demoted');
  });

  it('a degraded state taken over counts its quiet spell from its taking: healthy RETRY_AFTER_MS later, not at once', async () => {
    const s = shared();
    const a = instance(s);
    await a.watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
    // A stops; an hour on, B boots. No sessions since: nothing to judge.
    s.now += 60 * 60_000;
    const b = instance(s);
    const takenAt = s.now;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
    while (s.now + HEALTH_READ_MS < takenAt + RETRY_AFTER_MS) {
      s.now += HEALTH_READ_MS;
      expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
    }
    // The last read before was HEALTH_READ_MS short of it.
    s.now = takenAt + RETRY_AFTER_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    expect(b.events.map((e) => `${e.previous}>${e.state}`)).toStrictEqual(['degraded>healthy']);
  });

  it.each([
    { bootedAfter: HEALTH_WEEK_DAYS * DAY_MS - 1, state: 'demoted' },
    { bootedAfter: HEALTH_WEEK_DAYS * DAY_MS, state: 'healthy' },
  ])(
    'the change is kept as long as the week of figures it was judged on: booted $bootedAfter ms after it, $state',
    async ({ bootedAfter, state }) => {
      const s = shared();
      const { demotedAt } = await demotedByA(s);
      s.now = demotedAt + bootedAfter;
      expect(await instance(s).watch.refresh('flash_call', MSK)).toBe(state);
    },
  );

  it('a kept record it cannot read (another version’s, damaged) is left aside: healthy, judged as before', async () => {
    const s = shared();
    await s.store.set('stats-health:{flash_call:+7985}:state', '{"state":"demoted"', DAY_MS);
    const sunk = JSON.stringify({ state: 'sunk', since: s.now - 60_000 });
    await s.store.set('stats-health:{flash_call:+7921}:state', sunk, DAY_MS);
    const b = instance(s);
    expect(await b.watch.refresh('flash_call', MSK)).toBe('healthy');
    expect(await b.watch.refresh('flash_call', SPB)).toBe('healthy');
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await b.watch.refresh('flash_call', MSK)).toBe('degraded');
    expect(b.lines).toStrictEqual([expect.stringMatching(/^warn method health changed/)]);
  });

  it('a failed write of the change neither hides its event nor undoes it', async () => {
    const s = shared();
    const a = instance(s);
    await a.watch.refresh('flash_call', MSK);
    const set = s.store.set.bind(s.store);
    jest
      .spyOn(s.store, 'set')
      .mockImplementation((key, ...rest) =>
        key.endsWith(':state') ? Promise.reject(new Error('store down')) : set(key, ...rest),
      );
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
    expect(a.events.map((e) => `${e.previous}>${e.state}`)).toStrictEqual(['healthy>degraded']);
    expect(a.watch.state('flash_call', MSK)).toBe('degraded');
    expect(a.lines.filter((l) => l.includes('could not be kept'))).toStrictEqual([
      expect.stringMatching(/^warn .*flash_call.*store down/),
    ]);
    // Counted by its own judgement past its read's HEALTH_READ_MS: no kept change, then only an older one.
    const degradedAt = s.now;
    s.now += HEALTH_READ_MS;
    expect(await a.watch.counted('flash_call', MSK)).toBe('degraded');
    const older = JSON.stringify({ state: 'healthy', since: degradedAt - 1 });
    await set('stats-health:{flash_call:+7985}:state', older, DAY_MS);
    s.now += HEALTH_READ_MS;
    expect(await a.watch.counted('flash_call', MSK)).toBe('degraded');
  });
});

describe('MethodHealthWatch: the health a session is counted by (counted)', () => {
  it('on an instance that never read the prefix, the kept change, read without judging; else its own read', async () => {
    const s = shared();
    const c = instance(s);
    expect(await c.watch.refresh('flash_call', MSK)).toBe('healthy');
    await demotedByA(s);
    const b = instance(s);
    expect(await b.watch.counted('flash_call', MSK)).toBe('demoted');
    expect(await b.watch.counted('flash_call', SPB)).toBe('healthy');
    expect(await b.watch.counted('sms', MSK)).toBe('healthy');
    // It judged nothing: B tracks no prefix yet, and its first read is its own (the kept change taken then).
    expect(b.watch.report()).toStrictEqual([]);
    expect(b.watch.state('flash_call', MSK)).toBe('healthy');
    // C read the prefix before the demotion, over HEALTH_READ_MS ago: the newer kept change wins.
    expect(await c.watch.counted('flash_call', MSK)).toBe('demoted');
  });

  it('known: an instance that never read the prefix reads it first (the kept change taken); one whose read is old takes a newer kept change', async () => {
    const s = shared();
    const c = instance(s);
    await c.watch.refresh('flash_call', MSK);
    await demotedByA(s);
    const b = instance(s);
    expect(await b.watch.known('flash_call', MSK)).toBe('demoted');
    expect(b.watch.report()).toMatchObject([{ prefix: '+7985', state: 'demoted' }]);
    expect(await c.watch.known('flash_call', MSK)).toBe('demoted');
  });

  it('known, on an instance that read the prefix before, judges nothing however old its read: a drop waits for its own read', async () => {
    const s = shared();
    const c = instance(s);
    expect(await c.watch.refresh('flash_call', MSK)).toBe('healthy');
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    expect(await c.watch.known('flash_call', MSK)).toBe('healthy');
    expect(c.events).toStrictEqual([]);
    expect(c.watch.state('flash_call', MSK)).toBe('healthy');
    expect(await c.watch.refresh('flash_call', MSK)).toBe('degraded');
  });

  it('reads the kept change once per HEALTH_READ_MS: a change kept since shows at that bound', async () => {
    const s = shared();
    const a = instance(s);
    await a.watch.refresh('flash_call', MSK);
    windowOf(s, DROP);
    s.now += HEALTH_WINDOW_MS;
    const b = instance(s);
    const c = instance(s);
    // C reads the prefix a tick before A judges it; B reads the kept change (none yet) then.
    s.now -= 1;
    expect(await c.watch.refresh('flash_call', MSK)).toBe('healthy');
    s.now += 1;
    expect(await b.watch.counted('flash_call', MSK)).toBe('healthy');
    expect(await a.watch.refresh('flash_call', MSK)).toBe('degraded');
    const judgedAt = s.now;
    // C's own read and B's kept read each stand for HEALTH_READ_MS; then the newer kept change.
    expect(await c.watch.counted('flash_call', MSK)).toBe('healthy');
    s.now = judgedAt - 1 + HEALTH_READ_MS - 1;
    expect(await c.watch.counted('flash_call', MSK)).toBe('healthy');
    s.now += 1;
    expect(await c.watch.counted('flash_call', MSK)).toBe('degraded');
    expect(await b.watch.counted('flash_call', MSK)).toBe('healthy');
    s.now = judgedAt + HEALTH_READ_MS;
    expect(await b.watch.counted('flash_call', MSK)).toBe('degraded');
  });

  it('a kept change a week old, or dated ahead of the clock, is not taken', async () => {
    const s = shared();
    const { demotedAt } = await demotedByA(s);
    // An instance whose clock runs behind the writer's (the store keeps the change on its own clock).
    s.now = demotedAt - 1;
    expect(await instance(s).watch.counted('flash_call', MSK)).toBe('healthy');
    s.now = demotedAt;
    expect(await instance(s).watch.counted('flash_call', MSK)).toBe('demoted');
    s.now = demotedAt + HEALTH_WEEK_DAYS * DAY_MS - 1;
    expect(await instance(s).watch.counted('flash_call', MSK)).toBe('demoted');
    s.now = demotedAt + HEALTH_WEEK_DAYS * DAY_MS;
    expect(await instance(s).watch.counted('flash_call', MSK)).toBe('healthy');
  });
});
