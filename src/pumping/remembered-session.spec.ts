import { describe, expect, it } from '@jest/globals';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { ownIds, placeOf, subjectsOf, twinsOf } from './pumping-subjects.js';
import { RangeStats } from './range-stats.js';
import {
  creditedAt,
  creditedOf,
  pumpKey,
  PUMP,
  RangeStatsKeys,
  rememberedOf,
  tagOf,
  WEEK_MS,
} from './range-stats-keys.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import type { VerificationEvent } from '../core/verification-events.js';

/*
 * What a started session keeps for its verification (PumpingDefence.started): its standing and its
 * callers' ids; its verification names the rest from its number and owner, and is counted exactly
 * where the full list kept before counted it. A full list written before reads as it was.
 */

const settings = { ...VERIFICATION_DEFAULTS.limits.pumping };
const attempt: PumpingAttempt = {
  phoneNumber: '+79161234567',
  owner: 'alice',
  clientKey: 'key-1',
  ip: '2001:db8:1:2::7',
};

describe('rememberedOf / creditedOf', () => {
  const subjects = subjectsOf(attempt, placeOf(attempt.phoneNumber, settings.rangeDigits), 64);
  const credited = [...subjects, ...twinsOf(subjects)].map((s) => s.id);
  const own = ownIds(attempt.phoneNumber, attempt.owner, settings.rangeDigits, 64);

  it.each(['within', 'network', 'past', undefined] as const)(
    'standing %s: read back as the ids it credited, keeping only the callers’ and the standing',
    (standing) => {
      const kept = rememberedOf(
        credited.map((id) => ({ id })),
        standing,
      );
      expect(kept).toStrictEqual([`+${standing ?? 'all'}`, 'client:key-1', 'network:2001:db8:1:2::/64']);
      const expected = standing === undefined ? credited : creditedAt(credited, standing);
      expect(creditedOf(kept, own).sort()).toStrictEqual([...expected].sort());
    },
  );

  it('a list kept whole (before) is read as it is', () => {
    expect(creditedOf(['range:+7916123', 'client:key-1'], own)).toStrictEqual([
      'range:+7916123',
      'client:key-1',
    ]);
  });
});

/** The verified counters a session's proof left, after its start was remembered by `remember`. */
async function provedCounts(
  remember?: (store: MemoryStore, requestId: string, credited: string[]) => Promise<void>,
): Promise<Record<string, string | null>> {
  const now = Date.UTC(2026, 0, 1);
  const store = new MemoryStore({ clock: () => now });
  try {
    const stats = new RangeStats(store, settings, SPEC_DATA_KEYS);
    const report = {
      logger: { warn: () => undefined, error: () => undefined },
      announce: () => undefined,
      metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
    };
    const pumping = new PumpingDefence(store, settings, 64, report, stats);
    const assessment = (await pumping.assess(attempt))!;
    await pumping.admit(assessment, false);
    await pumping.started(assessment, 'req-1', now + 300_000);
    const standing = assessment.counted!.standing;
    // Whom its start credited: its subjects and its country's twins.
    const credited = [...assessment.subjects, ...assessment.twins].map((s) => s.id);
    await remember?.(store, 'req-1', creditedAt(credited, standing));
    await pumping.verified({
      event: 'verification.verified',
      requestId: 'req-1',
      phoneNumber: attempt.phoneNumber,
      owner: attempt.owner,
      method: 'sms',
    } as VerificationEvent);
    const w = Math.floor(now / settings.windowMs);
    const ids = [...credited, 'country:RU#fine', 'country:RU#all'];
    const counts: Record<string, string | null> = {};
    for (const id of ids) counts[id] = await store.get(pumpKey(PUMP.verified, SPEC_DATA_KEYS.digest(id), w));
    return counts;
  } finally {
    await store.close();
  }
}

describe('a verification counted where its start was', () => {
  it('from what the session kept now, as from the full list an earlier version kept', async () => {
    const now = await provedCounts();
    expect(Object.values(now).filter((v) => v === '1').length).toBeGreaterThanOrEqual(6);
    const before = await provedCounts(async (store, requestId, credited) => {
      const value = SPEC_DATA_KEYS.seal(JSON.stringify({ ids: credited, givers: [], back: 0 }));
      await store.set(RangeStatsKeys.sessionKey(requestId), value, 600_000);
    });
    expect(before).toStrictEqual(now);
  });
});

describe('what a session keeps for its givers', () => {
  const now = Date.UTC(2026, 0, 1);
  const ids = ['+within', 'client:key-1'];
  const givers = ['client:key-1', 'network:2001:db8:1::/48'];

  /** The ids its verification takes, and the givers' week balances after it. */
  async function taken(keep: (stats: RangeStats, store: MemoryStore) => Promise<void>) {
    const store = new MemoryStore({ clock: () => now });
    try {
      const stats = new RangeStats(store, settings, SPEC_DATA_KEYS);
      await keep(stats, store);
      const week = Math.floor(now / WEEK_MS);
      // Each id as the tag its counters are named by: a caller is kept as its tag now, as it is before.
      return {
        ids: (await stats.takeSession('req-1', attempt.phoneNumber))?.map((id) =>
          id.startsWith('+') ? id : tagOf(SPEC_DATA_KEYS, id),
        ),
        shares: await Promise.all(
          givers.map((g) => store.get(pumpKey(PUMP.share, SPEC_DATA_KEYS.digest(g), week))),
        ),
      };
    } finally {
      await store.close();
    }
  }

  it('kept by position now, read as the same ids and given back as one kept by name (an older version)', async () => {
    const positional = await taken((stats) =>
      stats.rememberSession('req-1', ids, 600_000, { givers, amount: 30 }),
    );
    const tags = ['+within', SPEC_DATA_KEYS.digest('client:key-1')];
    expect(positional).toStrictEqual({ ids: tags, shares: ['-30', '-30'] });
    const named = SPEC_DATA_KEYS.seal(JSON.stringify({ ids, givers, back: 30 }));
    expect(
      await taken((_, store) => store.set(RangeStatsKeys.sessionKey('req-1'), named, 600_000)),
    ).toStrictEqual(positional);
  });

  it('nothing to give back: the ids alone (a caller as its keyed tag, in clear), giving nothing back', async () => {
    const kept: (string | null)[] = [];
    const none = await taken(async (stats, store) => {
      await stats.rememberSession('req-1', ids, 600_000, { givers, amount: 0 });
      kept.push(await store.get(RangeStatsKeys.sessionKey('req-1')));
    });
    const tag = SPEC_DATA_KEYS.digest('client:key-1');
    expect({ none, kept }).toStrictEqual({
      none: { ids: ['+within', tag], shares: [null, null] },
      kept: [JSON.stringify(['+within', `~${tag}`])],
    });
  });

  it('a giver credited too is kept as its place; a place (a range) keeps the whole list sealed', async () => {
    const kept: (string | null)[] = [];
    const range = await taken(async (stats, store) => {
      await stats.rememberSession('req-1', ['+within', 'range:+7916123', ...ids.slice(1)], 600_000, {
        givers,
        amount: 30,
      });
      kept.push(await store.get(RangeStatsKeys.sessionKey('req-1')));
    });
    expect(range).toStrictEqual({
      ids: ['+within', SPEC_DATA_KEYS.digest('range:+7916123'), SPEC_DATA_KEYS.digest('client:key-1')],
      shares: ['-30', '-30'],
    });
    expect(kept[0]).not.toContain('7916123');
    expect(JSON.parse(SPEC_DATA_KEYS.open(kept[0]!)!)).toStrictEqual([
      ['+within', 'range:+7916123', `~${SPEC_DATA_KEYS.digest('client:key-1')}`],
      [2, `~${SPEC_DATA_KEYS.digest(givers[1]!)}`],
      30,
    ]);
  });
});
