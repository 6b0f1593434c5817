import { callerEvidenceKeys } from '../account/figure-evidence.keys.js';
import { statsNumberKey } from '../account/method-figures.js';
import type { DataKeys } from '../core/data-keys.js';
import type { SessionRecord } from '../core/session-record.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import { ProtectionKeys } from '../protection/protection-keys.js';
import { placeOf } from '../pumping/pumping-subjects.js';
import { pumpKey, PUMP, WEEK_MS } from '../pumping/range-stats-keys.js';
import type { ErasureSubject } from '../core/erasure-marks.js';
import { refusalBudgetKey } from '../history/refusal-admission.js';
import { InDoubtStarts } from './in-doubt-starts.js';
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
  /** `browser:…` of the subject's sessions (the erasure index keeps them sealed; one written before, `client:…` too). */
  callers: readonly string[];
  now: number;
  pumping: { windowMs: number; rangeDigits: number };
}

/**
 * The store keys an erasure removes, named by the subject alone. An owner's: its wrong-code budget, its
 * change-of-phone cooldown and, as the caller `owner:…`, its pumping counters, rate limits, status-read
 * meter, cooldowns and coalescing claims, alone
 * and with each of its numbers (a new account starts without them anyway, so removing them lifts no
 * bound). A number's: its start in doubt, its daily figures' marks and the coalescing claims naming
 * it. Never the limits of other givers (a client key's address, a browser key, a range, a prefix) nor
 * a number's own limits (starts, wrong codes, purposes, cooldowns): they protect the host's money,
 * hold only keyed digests and counts, and expire with their window; erasing them would let whoever
 * can ask for an erasure buy a fresh budget. Pure.
 */
export function erasureCounterKeys(keys: DataKeys, scope: ErasureScope): string[] {
  const { subject, records, now } = scope;
  const names: string[] = [];
  if (subject.phoneNumber !== undefined) {
    const n = subject.phoneNumber;
    // Its start in doubt holds the number and owner, sealed, for adoption: the subject's, not a limit.
    const day = (r: SessionRecord) => [
      statsNumberKey(r, keys.digest(n)),
      statsNumberKey(r, keys.digest(n), 'older'),
    ];
    names.push(InDoubtStarts.inDoubtKey(keys, n), ...records.flatMap(day));
    const callers = [
      ...new Set(records.flatMap((r) => (r.owner === undefined ? [] : [`owner:${r.owner}`]))),
      ...scope.callers,
    ];
    for (const caller of callers) names.push(...coalesceKeys(keys, caller, n, records));
    return [...new Set(names)];
  }
  const caller = `owner:${subject.owner}`;
  const tag = keys.digest(caller);
  const { windowMs, rangeDigits } = scope.pumping;
  const windows = [Math.floor(now / windowMs), Math.floor(now / windowMs) - 1];
  const week = Math.floor(now / WEEK_MS);
  names.push(
    `${ProtectionKeys.wrongCodesPerOwner}:${keys.digest(subject.owner)}`,
    pumpKey(PUMP.known, tag),
    pumpKey(PUMP.hold, tag),
    refusalBudgetKey(keys, caller),
    pumpKey(PUMP.share, tag, week),
    pumpKey(PUMP.share, tag, week - 1),
    `${ProtectionKeys.freeStartPerCaller}:${tag}`,
    ProtectionKeys.statusReads(keys, caller),
    `${ProtectionKeys.statusReads(keys, caller)}:refresh`,
    ProtectionKeys.phoneChangeCooldown(keys, subject.owner),
  );
  for (const w of windows) names.push(pumpKey(PUMP.starts, tag, w), pumpKey(PUMP.verified, tag, w));
  for (const record of records) names.push(...callerEvidenceKeys(record, tag));
  for (const n of new Set(records.map((r) => r.phoneNumber))) {
    const place = placeOf(n, rangeDigits);
    names.push(`${ProtectionKeys.startPerPhoneAndCaller}:${keys.digest(`${caller}\n${n}`)}`);
    for (const method of VERIFICATION_METHODS) names.push(ProtectionKeys.cooldown(keys, caller, n, method));
    for (const id of [`range:${place.range}`, `prefix:${place.prefix}`])
      for (const w of windows) names.push(pumpKey(PUMP.caller, keys.digest(`${id}\n${caller}`), w));
    // Its sessions are gone: no caller's claim may hand one back.
    for (const other of [caller, ...scope.callers]) names.push(...coalesceKeys(keys, other, n, records));
  }
  return [...new Set(names)];
}

/** The coalescing claims of a caller for a number, every method and purpose. */
function coalesceKeys(
  keys: DataKeys,
  caller: string,
  n: string,
  records: readonly SessionRecord[],
): string[] {
  return VERIFICATION_METHODS.flatMap((method) => [
    ProtectionKeys.coalesce(keys, caller, n, method),
    ...purposesOf(records).map((p) => ProtectionKeys.coalesce(keys, caller, n, method, p)),
  ]);
}
