import { describe, expect, it } from '@jest/globals';
import { DataKeys } from '../core/data-keys.js';
import { rangeStatsKey, WEEK_MS } from '../protection/range-stats-keys.js';
import { erasureCounterKeys } from './erasure-keys.js';

const keys = new DataKeys(undefined, 'secret-secret-secret');
const names = (now: number, callers: string[]) =>
  erasureCounterKeys(keys, {
    subject: { owner: 'alice' },
    records: [],
    callers,
    now,
    pumping: { windowMs: 3_600_000, rangeDigits: 3 },
  });

describe('erasureCounterKeys: what one start left under its callers, whatever week the erasure comes in', () => {
  const week = 2_900;
  it.each([
    ['one tick after a fixed week began', week * WEEK_MS + 1],
    ['one tick before it ends', (week + 1) * WEEK_MS - 1],
  ])("%s: the caller's share of this week and of the last (kept two weeks) are named", (_, now) => {
    const tag = keys.digest('owner:alice');
    expect(names(now, [])).toEqual(
      expect.arrayContaining([rangeStatsKey.share(tag, week), rangeStatsKey.share(tag, week - 1)]),
    );
  });

  it("names a client key's refusal budget in the history under the address it stands for", () => {
    const listed = names(week * WEEK_MS, ['client:203.0.113.7']);
    expect(listed).toContain(`history:refusals:${keys.digest('client:203.0.113.7')}`);
    expect(listed).toContain(`history:refusals:${keys.digest('address:203.0.113.7')}`);
    expect(listed).toContain(`history:refusals:${keys.digest('owner:alice')}`);
  });
});
