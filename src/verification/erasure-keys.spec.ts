import { describe, expect, it } from '@jest/globals';
import { DataKeys } from '../core/data-keys.js';
import type { SessionRecord } from '../core/session-record.js';
import { ProtectionKeys } from '../protection/protection-keys.js';
import { pumpKey, PUMP, WEEK_MS } from '../pumping/range-stats-keys.js';
import { erasureCounterKeys } from './erasure-keys.js';
import { InDoubtStarts } from './in-doubt-starts.js';

const keys = new DataKeys(undefined, 'secret-secret-secret');
/** One session of alice's: the owner's keys with its number are named too. */
const record = { phoneNumber: '+79161234567', owner: 'alice', method: 'sms', createdAt: 0 } as SessionRecord;
const names = (now: number, callers: string[]) =>
  erasureCounterKeys(keys, {
    subject: { owner: 'alice' },
    records: [record],
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
    expect(names(now, [])).toStrictEqual(
      expect.arrayContaining([pumpKey(PUMP.share, tag, week), pumpKey(PUMP.share, tag, week - 1)]),
    );
  });

  it("names the owner's refusal budget, never a client key's or its address's (not the owner's to erase)", () => {
    const listed = names(week * WEEK_MS, ['client:203.0.113.7', 'browser:b1']);
    expect(listed).toContain(`history:refusals:${keys.digest('owner:alice')}`);
    for (const giver of ['client:203.0.113.7', 'address:203.0.113.7', '203.0.113.7', 'browser:b1'])
      expect(listed.filter((key) => key.includes(keys.digest(giver)))).toStrictEqual([]);
  });
});

describe("erasureCounterKeys of a number: never the number's own limits", () => {
  it('names its coalescing claims, not its start, wrong-code or per-caller limits nor its cooldowns', () => {
    const n = '+79161234567';
    const listed = erasureCounterKeys(keys, {
      subject: { phoneNumber: n },
      records: [],
      callers: ['client:203.0.113.7'],
      now: 1_000 * WEEK_MS,
      pumping: { windowMs: 3_600_000, rangeDigits: 3 },
    });
    expect(listed).toContain(ProtectionKeys.coalesce(keys, 'client:203.0.113.7', n, 'sms'));
    expect(listed).not.toContain(ProtectionKeys.cooldown(keys, 'client:203.0.113.7', n, 'sms'));
    expect(listed.filter((key) => key.includes(keys.digest(n)))).toStrictEqual([
      InDoubtStarts.inDoubtKey(keys, n),
    ]);
    expect(listed.filter((key) => key.startsWith('protect:') && !key.includes(':coalesce'))).toStrictEqual(
      [],
    );
  });
});

describe('erasureCounterKeys: the figures a session left, in the form this version writes and the older one', () => {
  it("names its number's day claim and its owner's day share by the day's number and by its date", () => {
    const n = '+79161234567';
    const of = (subject: { phoneNumber: string } | { owner: string }) =>
      erasureCounterKeys(keys, {
        subject,
        records: [record],
        callers: [],
        now: 0,
        pumping: { windowMs: 3_600_000, rangeDigits: 3 },
      });
    expect(of({ phoneNumber: n })).toStrictEqual(
      expect.arrayContaining([
        `stats-number:{0:sms:${keys.digest(n)}}`,
        `stats-number:{1970-01-01:sms:${keys.digest(n)}}`,
      ]),
    );
    const owner = keys.digest('owner:alice');
    expect(of({ owner: 'alice' })).toStrictEqual(
      expect.arrayContaining([
        `stats-giver:{0:sms:c:${owner}}`,
        `stats-giver:{1970-01-01:sms:caller:${owner}}`,
      ]),
    );
  });
});

describe("erasureCounterKeys of an owner: what its starts marked under its numbers' range and prefix", () => {
  const windowMs = 3_600_000;
  const now = 500 * windowMs + 1;
  const listed = () =>
    erasureCounterKeys(keys, {
      subject: { owner: 'alice' },
      records: [record],
      callers: ['browser:b1'],
      now,
      pumping: { windowMs, rangeDigits: 3 },
    });

  it("names its caller marks of the range and of the operator prefix, this window's and the last's", () => {
    const caller = 'owner:alice';
    for (const id of ['range:+79161234', 'prefix:+7916'])
      for (const w of [500, 499])
        expect(listed()).toContain(pumpKey(PUMP.caller, keys.digest(`${id}\n${caller}`), w));
  });

  it('names the coalescing claims of its numbers under the browsers that started its sessions too (they are gone: no claim may hand one back)', () => {
    expect(listed()).toContain(ProtectionKeys.coalesce(keys, 'browser:b1', record.phoneNumber, 'sms'));
    expect(listed()).toContain(ProtectionKeys.coalesce(keys, 'owner:alice', record.phoneNumber, 'sms'));
  });
});

describe('erasureCounterKeys: the claims and counters a start left, every shape of its key', () => {
  const n = '+79161234567';
  const own = { ...record, purpose: 'payout' } as SessionRecord;
  const erase = (subject: { owner: string } | { phoneNumber: string }) =>
    erasureCounterKeys(keys, {
      subject,
      records: [own],
      callers: [],
      now: 1_000 * WEEK_MS,
      pumping: { windowMs: 3_600_000, rangeDigits: 3 },
    });

  it("a number's: its day claims as both key shapes read them, and its coalescing claims of every purpose", () => {
    const listed = erase({ phoneNumber: n });
    const digest = keys.digest(n);
    expect(listed).toEqual(
      expect.arrayContaining([
        `stats-number:{0:sms:${digest}}`,
        `stats-number:{1970-01-01:sms:${digest}}`,
        ...['signup', 'login', 'step_up', 'change_phone', 'payout'].map((purpose) =>
          ProtectionKeys.coalesce(keys, 'owner:alice', n, 'sms', purpose),
        ),
      ]),
    );
  });

  it("an owner's: its free starts, its status reads and their refresh, its starts of each of its numbers", () => {
    const caller = 'owner:alice';
    const listed = erase({ owner: 'alice' });
    expect(listed).toEqual(
      expect.arrayContaining([
        `${ProtectionKeys.freeStartPerCaller}:${keys.digest(caller)}`,
        ProtectionKeys.statusReads(keys, caller),
        `${ProtectionKeys.statusReads(keys, caller)}:refresh`,
        `${ProtectionKeys.startPerPhoneAndCaller}:${keys.digest(`${caller}\n${n}`)}`,
        ProtectionKeys.coalesce(keys, caller, n, 'sms', 'payout'),
      ]),
    );
  });
});
