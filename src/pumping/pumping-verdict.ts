import { coarseWaitMs } from '../core/refusal-reason.js';
import { countsWith, type SubjectCounts } from './pumping-counts.js';
import {
  converting,
  exemptions,
  liftsAt,
  ruleOf,
  subjectToHold,
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
function attackOn(input: VerdictInput, kind: PumpingSubjectKind): boolean {
  return kind === 'range' || kind === 'prefix'
    ? input.underAttack
    : (input.callersUnderAttack ?? input.underAttack);
}

/**
 * The hold a start meets: a running one whose subject still does not convert (and may hold this
 * start: see exemptions), else the subject a new hold is due for, else undefined.
 */
export function heldBy(input: VerdictInput, now: number, rules: PumpingThresholds): Held | undefined {
  const exempt = exemptions(
    input.holdable.map((s) => ({ kind: s.kind, counts: input.counts.get(s.id)! })),
    rules,
  );
  const running = input.holdable.find((s) => {
    const hold = input.holds.get(s.id);
    const counts = input.counts.get(s.id)!;
    // A running hold ends early once its subject converts again (its first users completed).
    return (
      hold !== undefined &&
      hold.until > now &&
      !converting(counts, rules) &&
      !exempt({ kind: s.kind, counts })
    );
  });
  if (!running) return dueHold(input, rules);
  const counts = input.counts.get(running.id)!;
  return {
    kind: running.kind,
    id: running.id,
    counts,
    rule: ruleOf(running.kind, counts, attackOn(input, running.kind), rules) ?? 'unconverted',
    hold: input.holds.get(running.id),
    running: true,
  };
}

/** The subject a new hold is due for, judged on the counts, or undefined. */
export function dueHold(input: VerdictInput, rules: PumpingThresholds): Held | undefined {
  const found = subjectToHold(
    input.holdable.map((s) => ({ kind: s.kind, id: s.id, counts: input.counts.get(s.id)! })),
    (kind) => attackOn(input, kind),
    rules,
  );
  return found
    ? {
        kind: found.kind,
        id: found.id,
        counts: found.counts,
        rule: ruleOf(found.kind, found.counts, attackOn(input, found.kind), rules)!,
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
