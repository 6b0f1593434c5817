import { callerEvidenceKeys } from '../account/figure-evidence.js';
import { statsNumberKey } from '../account/method-figures.js';
import type { DataKeys } from '../core/data-keys.js';
import type { SessionRecord } from '../core/session-record.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import { ProtectionKeys } from '../protection/protection-keys.js';
import { placeOf } from '../protection/pumping-subjects.js';
import { rangeStatsKey, RangeStatsKeys, WEEK_MS } from '../protection/range-stats-keys.js';
import type { ErasureSubject } from '../sessions/subject-index.js';
import { testNumberWrongKey } from '../test-numbers/test-number-wrong-codes.js';
import { refusalBudgetKey } from '../history/refusal-admission.js';
import { InDoubtStarts } from './in-doubt-starts.js';
import { purposeKey } from '../protection/request-rate-limits.js';
import { BUILT_IN_PURPOSES } from '../options/purposes.options.js';

/** The purposes whose counters a subject may hold: the built-in ones and its sessions'. */
function purposesOf(records: readonly SessionRecord[]): string[] {
  return [
    ...new Set([
      ...BUILT_IN_PURPOSES,
      ...records.flatMap((r) => (r.purpose === undefined ? [] : [r.purpose])),
    ]),
  ];
}

/** What names a subject's counters: its sessions, the callers they were started by, and the clock. */
export interface ErasureScope {
  subject: ErasureSubject;
  records: readonly SessionRecord[];
  /** `client:…` and `browser:…` of the subject's sessions (the erasure index keeps them sealed). */
  callers: readonly string[];
  now: number;
  pumping: { windowMs: number; rangeDigits: number };
}

/**
 * The store keys of the counters, cooldowns and claims named by a subject: its number's limits and
 * figures, and for every caller of its sessions (its owner, client key, browser key) their pumping
 * counters, rate limits, cooldowns and coalescing claims, alone and with each of its numbers. Pure.
 */
export function erasureCounterKeys(keys: DataKeys, scope: ErasureScope): string[] {
  const { subject, records, now } = scope;
  const numbers = new Set(records.map((r) => r.phoneNumber));
  const owners = new Set(records.flatMap((r) => (r.owner === undefined ? [] : [r.owner])));
  if (subject.phoneNumber !== undefined) numbers.add(subject.phoneNumber);
  else owners.add(subject.owner);
  const callers = [...[...owners].map((o) => `owner:${o}`), ...scope.callers];
  const { windowMs, rangeDigits } = scope.pumping;
  const windows = [Math.floor(now / windowMs), Math.floor(now / windowMs) - 1];
  const names: string[] = [];
  if (subject.phoneNumber !== undefined) {
    const n = subject.phoneNumber;
    names.push(
      `${ProtectionKeys.startPerPhone}:${keys.digest(n)}`,
      `${ProtectionKeys.wrongCodesPerPhone}:${keys.digest(n)}`,
      InDoubtStarts.inDoubtKey(keys, n),
      testNumberWrongKey(keys, n),
      ...RangeStatsKeys.numberKeys(keys, n, now, windowMs),
      ...records.map((r) => statsNumberKey(r, keys.digest(n))),
      ...purposesOf(records).map((p) => `${ProtectionKeys.startPerPurpose}:${purposeKey(keys, p, n)}`),
    );
  }
  for (const owner of owners) names.push(`${ProtectionKeys.wrongCodesPerOwner}:${keys.digest(owner)}`);
  for (const caller of callers) {
    const tag = keys.digest(caller);
    names.push(rangeStatsKey.known(tag), rangeStatsKey.hold(tag));
    // Its hourly budget of refusal entries in the history, under its own name.
    names.push(refusalBudgetKey(keys, caller));
    // Its share of what it may add to places this week and last (kept two weeks).
    const week = Math.floor(now / WEEK_MS);
    names.push(rangeStatsKey.share(tag, week), rangeStatsKey.share(tag, week - 1));
    for (const w of windows) names.push(rangeStatsKey.starts(tag, w), rangeStatsKey.verified(tag, w));
    names.push(`${ProtectionKeys.freeStartPerCaller}:${tag}`);
    for (const record of records) names.push(...callerEvidenceKeys(record, tag));
    if (caller.startsWith('client:')) {
      const client = caller.slice('client:'.length);
      // The history names a client by its address.
      names.push(refusalBudgetKey(keys, `address:${client}`));
      const clientKey = keys.digest(client);
      names.push(
        `${ProtectionKeys.startPerClient}:${clientKey}`,
        `${ProtectionKeys.checkPerClient}:${clientKey}`,
      );
    }
  }
  for (const n of numbers) {
    const place = placeOf(n, rangeDigits);
    const places = [`range:${place.range}`, `prefix:${place.prefix}`];
    for (const id of places)
      for (const w of windows) names.push(rangeStatsKey.caller(keys.digest(`${id}\nn:${n}`), w));
    for (const caller of callers) {
      names.push(`${ProtectionKeys.startPerPhoneAndCaller}:${keys.digest(`${caller}\n${n}`)}`);
      for (const method of VERIFICATION_METHODS)
        names.push(
          ProtectionKeys.cooldown(keys, caller, n, method),
          ProtectionKeys.coalesce(keys, caller, n, method),
          ...purposesOf(records).map((p) => ProtectionKeys.coalesce(keys, caller, n, method, p)),
        );
      for (const id of places)
        for (const w of windows) names.push(rangeStatsKey.caller(keys.digest(`${id}\n${caller}`), w));
    }
  }
  return [...new Set(names)];
}
