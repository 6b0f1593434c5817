import { coarseWaitMs } from '../core/refusal-reason.js';
import { countsWith, type SubjectCounts } from './pumping-counts.js';
import {
  converting,
  liftsAt,
  ruleOf,
  type PumpingRule,
  type PumpingSubjectKind,
  type PumpingThresholds,
} from './pumping-rules.js';
import type { HoldState } from './range-stats.js';
import type { HoldableSubject } from './pumping-subjects.js';

/**
 * The defence's verdict on one start from its subjects' counts and holds: which subject holds it,
 * by which rule, and how long its caller is told to wait. Pure (PumpingDefence reads the counts and
 * starts the holds).
 */

/** The subject a start is held by. */
export interface Held {
  kind: PumpingSubjectKind;
  id: string;
  counts: SubjectCounts;
  rule: PumpingRule;
  /** The hold read from the store, when one exists (running or ended). */
  hold: HoldState | undefined;
  running: boolean;
}

/** What a verdict reads: the holdable subjects, their counts and holds, and the country's state. */
export interface VerdictInput {
  holdable: HoldableSubject[];
  counts: Map<string, SubjectCounts>;
  holds: Map<string, HoldState | undefined>;
  underAttack: boolean;
  /** What the start's callers are judged by: `underAttack`, or the country's volume past a giver's share. */
  callersUnderAttack?: boolean;
}

/** Whether a subject of `kind` is judged as under attack: places by their country, callers by their own lot. */
export function attackOn(
  kind: PumpingSubjectKind,
  underAttack: boolean,
  callersUnderAttack = underAttack,
): boolean {
  return kind === 'range' || kind === 'prefix' ? underAttack : callersUnderAttack;
}

const NO_EXEMPTIONS: ReadonlySet<PumpingSubjectKind> = new Set();
const PREFIX_EXEMPT: ReadonlySet<PumpingSubjectKind> = new Set(['prefix']);
const NUMBER_EXEMPT: ReadonlySet<PumpingSubjectKind> = new Set(['prefix', 'client', 'network']);

/**
 * Which kinds of a start's subjects cannot hold it by themselves: its prefix, when its own range converts
 * (a range's proofs vouch for that range only, and the prefix's other ranges are not this one), and
 * a shared address (a client key or network: carrier NAT, an office), when its range and prefix
 * convert (the address's other users are not this one).
 */
export function exemptions(
  subjects: readonly { kind: PumpingSubjectKind; counts: SubjectCounts }[],
  rules: Pick<PumpingThresholds, 'minConversion'>,
): ReadonlySet<PumpingSubjectKind> {
  let range: SubjectCounts | undefined;
  let prefix: SubjectCounts | undefined;
  for (const s of subjects)
    if (s.kind === 'range') range ??= s.counts;
    else if (s.kind === 'prefix') prefix ??= s.counts;
  if (range === undefined || !converting(range, rules)) return NO_EXEMPTIONS;
  return prefix !== undefined && converting(prefix, rules) ? NUMBER_EXEMPT : PREFIX_EXEMPT;
}

/**
 * The first subject (in the given order) that is to be held, or undefined (see exemptions): under
 * attack as `attackOn` says (`callersUnderAttack`: how the callers are judged; `exempt`: when known).
 */
export function subjectToHold<T extends { kind: PumpingSubjectKind; counts: SubjectCounts }>(
  subjects: readonly T[],
  underAttack: boolean,
  rules: PumpingThresholds,
  callersUnderAttack = underAttack,
  exempt = exemptions(subjects, rules),
): T | undefined {
  for (const s of subjects)
    if (
      !exempt.has(s.kind) &&
      ruleOf(s.kind, s.counts, attackOn(s.kind, underAttack, callersUnderAttack), rules) !== undefined
    )
      return s;
  return undefined;
}

/** A verdict's holdable subjects with their counts, in their order. */
type Judged = { kind: PumpingSubjectKind; id: string; counts: SubjectCounts };

function judgedOf(input: VerdictInput): Judged[] {
  const judged: Judged[] = [];
  for (const s of input.holdable) judged.push({ kind: s.kind, id: s.id, counts: input.counts.get(s.id)! });
  return judged;
}

/**
 * The hold a start meets: a running one whose subject still does not convert (and may hold this
 * start: see exemptions), else the subject a new hold is due for, else undefined.
 */
export function heldBy(input: VerdictInput, now: number, rules: PumpingThresholds): Held | undefined {
  const judged = judgedOf(input);
  const exempt = exemptions(judged, rules);
  const callers = input.callersUnderAttack ?? input.underAttack;
  for (const s of judged) {
    const hold = input.holds.get(s.id);
    // A running hold ends early once its subject converts again (its first users completed).
    if (hold === undefined || hold.until <= now || converting(s.counts, rules) || exempt.has(s.kind))
      continue;
    return {
      kind: s.kind,
      id: s.id,
      counts: s.counts,
      rule: ruleOf(s.kind, s.counts, attackOn(s.kind, input.underAttack, callers), rules) ?? 'unconverted',
      hold,
      running: true,
    };
  }
  return dueHold(input, rules, judged, exempt);
}

/** The subject a new hold is due for, judged on the counts, or undefined (`judged`, `exempt`: when known). */
export function dueHold(
  input: VerdictInput,
  rules: PumpingThresholds,
  judged = judgedOf(input),
  exempt = exemptions(judged, rules),
): Held | undefined {
  const callers = input.callersUnderAttack ?? input.underAttack;
  const found = subjectToHold(judged, input.underAttack, rules, callers, exempt);
  return found
    ? {
        kind: found.kind,
        id: found.id,
        counts: found.counts,
        rule: ruleOf(found.kind, found.counts, attackOn(found.kind, input.underAttack, callers), rules)!,
        hold: input.holds.get(found.id),
        running: false,
      }
    : undefined;
}

/**
 * The counts as read, with the starts (and new callers) counted concurrently since the read added:
 * what each current window held before this start, as the store counted it atomically.
 */
export function withConcurrent(
  counts: Map<string, SubjectCounts>,
  before: Map<string, number>,
  callersBefore: Map<string, number>,
): Map<string, SubjectCounts> {
  return new Map(
    [...counts].map(([id, c]) => {
      const extra = Math.max(0, (before.get(id) ?? 0) - (c.current ?? 0));
      const callers = Math.max(0, (callersBefore.get(id) ?? 0) - (c.currentCallers ?? 0));
      return [id, countsWith(c, extra, callers)] as const;
    }),
  );
}

/**
 * How long the held caller is told to wait: until the hold really lifts (its end, or later, once
 * the counts have rolled enough that the subject is not held again at once; the held attempt counts
 * too, so retrying pushes it on), coarse for a range or prefix (it says nothing about one caller).
 */
export function waitMs(
  held: Held,
  underAttack: boolean,
  until: number,
  now: number,
  rules: PumpingThresholds & { holdMs: number },
): number {
  const lifts = liftsAt(held.kind, countsWith(held.counts, 1), underAttack, until, rules);
  const ms = Math.max(lifts - now, 1);
  return held.kind === 'range' || held.kind === 'prefix' ? coarseWaitMs(ms, rules.holdMs) : ms;
}
