import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import {
  VerificationOpsEventName,
  type FraudSuspectedEvent,
  type VerificationEvent,
} from '../core/verification-events.js';
import { maskPhoneNumber } from '../core/phone-mask.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { clientAddressKey } from './client-address.js';
import type { ProtectionHold } from './protection-hold.js';
import type { ProtectionLog } from '../observability/protection-log.js';
import { coarseWaitMs, protectionRefusal, ProtectionRefusalReason } from './protection-refusals.js';
import type { ResolvedPumping } from '../options/verification.options.js';
import {
  coolOffMs,
  countryUnderAttack,
  holdStands,
  numberRange,
  operatorPrefix,
  reserveRefuses,
  ruleOf,
  subjectToHold,
  type PumpingRule,
  type PumpingSubjectKind,
  type SubjectCounts,
} from './pumping-rules.js';
import { RangeStats, type HoldState, type StatsSubject } from './range-stats.js';

/** One start as the defence sees it. */
export interface PumpingAttempt {
  phoneNumber: string;
  owner: string | undefined;
  clientKey: string | undefined;
  ip: string | undefined;
  /**
   * A journey's switch (the method it leaves): judged as part of its journey, not as a new start of
   * its caller. It costs money, so it counts for its number's range, prefix and country; its callers
   * were counted when the journey started.
   */
  switchedFrom?: string;
}

/**
 * A graded answer's terms (`limits.pumping.grading`): whether the start's method is charged on proof,
 * and the methods charged on proof the account offers it. With one offered, a suspected start of a
 * method charged on proof goes ahead (nobody can make the host pay for a number they do not hold),
 * and one of another method is answered 409 `method_held` naming them.
 */
export interface GradedAnswer {
  proofCharged: boolean;
  offered: readonly string[];
}

/** What `beforeStart` is told of a start the defence would refuse (see `StartContext.suspected`). */
export interface PumpingSignal {
  reason: FraudSuspectedEvent['reason'];
  range: string;
  country: string;
}

/** Where the defence reports: the module's metrics and the ops event. */
export interface PumpingReporting {
  logger: ProtectionLog;
  emit(event: FraudSuspectedEvent): void;
  fraudSuspected(reason: string, mode: string): void;
  refusal(reason: string, mode: string): void;
  /** Share of the spend cap's window used, when a cap is configured. */
  spentShare?: () => Promise<number>;
}

interface Subject extends StatsSubject {
  kind: PumpingSubjectKind | 'country';
}

interface Held {
  kind: PumpingSubjectKind;
  id: string;
  counts: SubjectCounts;
  rule: PumpingRule;
  /** The hold read from the store, when one exists (running or ended). */
  hold: HoldState | undefined;
  running: boolean;
}

/** The defence's reading of one start, taken before `beforeStart` and applied after the limits. */
export interface PumpingAssessment {
  attempt: PumpingAttempt;
  range: string;
  prefix: string;
  country: string;
  subjects: Subject[];
  /** Whom its verification is credited to: its subjects, and a switch's callers too (their journey converts). */
  credited: string[];
  counts: Map<string, SubjectCounts>;
  /** The holds read for the holdable subjects (running or ended), by subject id. */
  holds: Map<string, HoldState | undefined>;
  underAttack: boolean;
  held: Held | undefined;
  reserve: boolean;
}

const REASON_OF: Record<PumpingSubjectKind, FraudSuspectedEvent['reason']> = {
  range: ProtectionRefusalReason.rangeHeld,
  prefix: ProtectionRefusalReason.rangeHeld,
  owner: ProtectionRefusalReason.ownerHeld,
  client: ProtectionRefusalReason.clientHeld,
  network: ProtectionRefusalReason.clientHeld,
};
const NOTHING_HELD: ProtectionHold = { release: async () => undefined };

/**
 * Defence against SMS pumping (traffic pumped to numbers whose operator pays the attacker): every
 * start that can be charged, and every attempt a hold refused, is counted per number range, operator
 * prefix, country and caller (owner, client key, IPv6 network) in the store, against the distinct
 * numbers verified there; a range, prefix or caller whose starts do not convert is held for a
 * cool-off that doubles while the pattern goes on. A range or prefix nobody verified in takes only
 * a few unconverted starts (a burst is an attack's signature), and while a country's traffic as a
 * whole does not convert, subjects without conversions or a record are held sooner and, near the
 * spend cap, wait for those with one. Concurrent starts are judged one after the other: each is
 * counted first and judged with the starts counted before it. The rules are in pumping-rules.ts;
 * README states the costs.
 */
export class PumpingDefence {
  private readonly stats: RangeStats;
  private readonly safeNumbers: Set<string>;
  private readonly safeRanges: Set<string>;
  private readonly safeOwners: Set<string>;

  constructor(
    private readonly store: VerificationStore,
    private readonly settings: ResolvedPumping,
    private readonly ipv6PrefixLength: number,
    private readonly report: PumpingReporting,
  ) {
    this.stats = new RangeStats(store, settings);
    this.safeNumbers = new Set(settings.safeList.numbers);
    this.safeRanges = new Set(settings.safeList.ranges);
    this.safeOwners = new Set(settings.safeList.owners);
  }

  get enabled(): boolean {
    return this.settings.mode !== 'off';
  }

  /** Reads the counts of a start's subjects; undefined when the defence is off or the start is on the safe list. */
  async assess(attempt: PumpingAttempt): Promise<PumpingAssessment | undefined> {
    if (this.settings.mode === 'off') return undefined;
    const range = numberRange(attempt.phoneNumber, this.settings.rangeDigits);
    if (
      this.safeNumbers.has(attempt.phoneNumber) ||
      this.safeRanges.has(range) ||
      (attempt.owner !== undefined && this.safeOwners.has(attempt.owner))
    )
      return undefined;
    const { prefix, country } = placeOf(attempt.phoneNumber);
    const all = this.subjectsOf(attempt, range, prefix, country);
    const subjects = attempt.switchedFrom === undefined ? all : all.filter((s) => !isCaller(s));
    const holdable = holdableOf(subjects);
    const [counts, holdList] = await Promise.all([
      this.stats.read(subjects, attempt.phoneNumber),
      Promise.all(holdable.map((s) => this.stats.readHold(s.id))),
    ]);
    const holds = new Map(holdable.map((s, i) => [s.id, holdList[i]]));
    const underAttack = countryUnderAttack(counts.get(countryId(subjects))!, this.settings);
    const now = this.store.now();
    let held: Held | undefined;
    const running = holdable.find((s) => {
      const hold = holds.get(s.id);
      return hold !== undefined && hold.until > now && holdStands(counts.get(s.id)!, this.settings);
    });
    if (running) {
      const c = counts.get(running.id)!;
      held = {
        kind: running.kind,
        id: running.id,
        counts: c,
        rule: ruleOf(running.kind, c, underAttack, this.settings) ?? 'unconverted',
        hold: holds.get(running.id),
        running: true,
      };
    } else held = this.verdict(holdable, counts, holds, underAttack);
    const known = holdable.some((s) => counts.get(s.id)!.known);
    const reserve =
      held === undefined &&
      underAttack &&
      !known &&
      this.report.spentShare !== undefined &&
      reserveRefuses({
        spentShare: await this.report.spentShare(),
        reserveShare: this.settings.reserveShare,
        underAttack,
        known,
      });
    const credited = all.map((s) => s.id);
    return { attempt, range, prefix, country, subjects, credited, counts, holds, underAttack, held, reserve };
  }

  /** The subject a new hold is due for, judged on `counts`, or undefined. */
  private verdict(
    holdable: (Subject & { kind: PumpingSubjectKind })[],
    counts: Map<string, SubjectCounts>,
    holds: Map<string, HoldState | undefined>,
    underAttack: boolean,
  ): Held | undefined {
    const found = subjectToHold(
      holdable.map((s) => ({ kind: s.kind, id: s.id, counts: counts.get(s.id)! })),
      underAttack,
      this.settings,
    );
    return found
      ? {
          kind: found.kind,
          id: found.id,
          counts: found.counts,
          rule: ruleOf(found.kind, found.counts, underAttack, this.settings)!,
          hold: holds.get(found.id),
          running: false,
        }
      : undefined;
  }

  /**
   * Whether a start the defence let go is suspect all the same: it would have refused it (monitor
   * mode, a passed challenge), or its country is under attack. Its session is left out of the method
   * figures.
   */
  suspects(assessment: PumpingAssessment | undefined): boolean {
    return assessment !== undefined && (reasonOf(assessment) !== undefined || assessment.underAttack);
  }

  /** Whether one of the start's callers has a record of completed verifications (served from the cap's last share). */
  knownCaller(assessment: PumpingAssessment | undefined): boolean {
    if (assessment === undefined) return false;
    return assessment.subjects.some(
      (s) =>
        s.kind !== 'range' &&
        s.kind !== 'prefix' &&
        s.kind !== 'country' &&
        assessment.counts.get(s.id)?.known,
    );
  }

  /** What `beforeStart` is told: the refusal the defence would give this start, if any. */
  signal(assessment: PumpingAssessment | undefined): PumpingSignal | undefined {
    const reason = reasonOf(assessment);
    return reason === undefined
      ? undefined
      : { reason, range: assessment!.range, country: assessment!.country };
  }

  /**
   * Counts the start, or refuses it (429 `range_held`, `owner_held`, `client_held`; 503
   * `spend_cap_reserve`). Every attempt is counted for every subject, a refused one too: a held
   * range or caller whose attempts go on stays unconverted when its window rolls over (no start
   * leaks at each boundary), and the next hold is twice as long; it is let go once its starts
   * convert. A start the reading let through is judged again with the starts counted concurrently
   * before it (the count is atomic), so a burst of simultaneous starts is judged one by one.
   * `challengePassed`: the host's `beforeStart` checked this caller (a captcha) and lifts the hold
   * for this one start. In monitor mode nothing is refused.
   */
  async admit(
    assessment: PumpingAssessment | undefined,
    challengePassed: boolean,
    grade?: GradedAnswer,
  ): Promise<ProtectionHold> {
    if (assessment === undefined) return NOTHING_HELD;
    const { attempt } = assessment;
    const counted = await this.stats.countStart(
      assessment.subjects,
      attempt.phoneNumber,
      callerOf(attempt, this.ipv6PrefixLength),
    );
    if (reasonOf(assessment) === undefined) {
      const concurrent = new Map(
        [...assessment.counts].map(([id, c]) => {
          const extra = Math.max(0, (counted.before.get(id) ?? 0) - (c.current ?? 0));
          const callers = Math.max(0, (counted.callersBefore.get(id) ?? 0) - (c.currentCallers ?? 0));
          return [
            id,
            {
              ...c,
              starts: c.starts + extra,
              callers: c.callers === undefined ? undefined : c.callers + callers,
            },
          ] as const;
        }),
      );
      const held = this.verdict(
        holdableOf(assessment.subjects),
        concurrent,
        assessment.holds,
        assessment.underAttack,
      );
      if (held) assessment = { ...assessment, held, counts: concurrent };
    }
    const reason = reasonOf(assessment);
    const enforce = this.settings.mode === 'enforce' && !challengePassed;
    if (reason !== undefined) {
      const until = await this.startHoldOnce(assessment, reason);
      this.report.refusal(reason, this.settings.mode);
      if (enforce) {
        const held = assessment.held;
        const waitMs = held
          ? held.kind === 'range' || held.kind === 'prefix'
            ? coarseWaitMs(Math.max(until - this.store.now(), 1), this.settings.holdMs)
            : Math.max(until - this.store.now(), 1)
          : this.settings.holdMs;
        if (grade && grade.offered.length > 0) {
          if (grade.proofCharged) return { release: counted.release };
          throw protectionRefusal(ProtectionRefusalReason.methodHeld, waitMs, {
            offered_methods: [...grade.offered],
            held: reason,
          });
        }
        throw protectionRefusal(reason, waitMs);
      }
    }
    return { release: counted.release };
  }

  /** Remembers which subjects a started session belongs to, so that its verification is counted there. */
  async started(
    assessment: PumpingAssessment | undefined,
    requestId: string,
    expiresAt: number,
  ): Promise<void> {
    if (assessment === undefined) return;
    const ttl = Math.max(expiresAt - this.store.now(), 0) + this.settings.windowMs;
    await this.stats.rememberSession(requestId, assessment.credited, ttl);
  }

  /** A verification completed: counted for the subjects of its start (else its range, country and owner). */
  async verified(event: VerificationEvent): Promise<void> {
    if (this.settings.mode === 'off') return;
    const { prefix, country } = placeOf(event.phoneNumber);
    const ids =
      (await this.stats.takeSession(event.requestId)) ??
      this.subjectsOf(
        { phoneNumber: event.phoneNumber, owner: event.owner, clientKey: undefined, ip: undefined },
        numberRange(event.phoneNumber, this.settings.rangeDigits),
        prefix,
        country,
      ).map((s) => s.id);
    await this.stats.countVerified(ids, event.phoneNumber);
  }

  private subjectsOf(attempt: PumpingAttempt, range: string, prefix: string, country: string): Subject[] {
    const subjects: Subject[] = [
      { kind: 'range', id: `range:${range}`, withBaseline: true },
      { kind: 'prefix', id: `prefix:${prefix}`, withBaseline: true },
      { kind: 'country', id: `country:${country}`, withBaseline: true },
    ];
    if (attempt.owner !== undefined)
      subjects.push({ kind: 'owner', id: `owner:${attempt.owner}`, withBaseline: false });
    if (attempt.clientKey !== undefined)
      subjects.push({ kind: 'client', id: `client:${attempt.clientKey}`, withBaseline: false });
    const network =
      attempt.ip === undefined ? undefined : clientAddressKey(attempt.ip, this.ipv6PrefixLength);
    if (network !== undefined && network !== attempt.clientKey)
      subjects.push({ kind: 'network', id: `network:${network}`, withBaseline: false });
    return subjects;
  }

  /**
   * Starts the hold a new verdict calls for (or the reserve's, once per cool-off) and reports it once
   * across instances: log, metric, event. Returns when the hold ends.
   */
  private async startHoldOnce(
    assessment: PumpingAssessment,
    reason: FraudSuspectedEvent['reason'],
  ): Promise<number> {
    const held = assessment.held;
    if (held?.running) return held.hold!.until;
    const level = held?.hold === undefined ? 0 : held.hold.level + 1;
    const holdMs = held
      ? coolOffMs(level, this.settings.holdMs, this.settings.maxHoldMs)
      : this.settings.holdMs;
    const id = held ? held.id : `reserve:${assessment.country}`;
    const first = await this.stats.startHold(id, held?.hold, level, holdMs);
    const until = this.store.now() + holdMs;
    if (!first) return until;
    const counts = held?.counts ?? assessment.counts.get(countryId(assessment.subjects))!;
    const { attempt } = assessment;
    const event: FraudSuspectedEvent = {
      event: VerificationOpsEventName.fraudSuspected,
      reason,
      mode: this.settings.mode === 'monitor' ? 'monitor' : 'enforce',
      range: assessment.range,
      prefix: assessment.prefix,
      country: assessment.country,
      subject: held ? held.kind : 'country',
      rule: held ? held.rule : 'spend_cap_reserve',
      ...(attempt.owner === undefined ? {} : { owner: attempt.owner }),
      phoneNumberMasked: maskPhoneNumber(attempt.phoneNumber),
      countryUnderAttack: assessment.underAttack,
      counts: { starts: Math.round(counts.starts), verified: Math.round(counts.verified) },
      holdMs,
      heldUntil: new Date(until),
    };
    this.report.logger.warn('pumping defence: starts that do not complete; hold started', {
      reason,
      mode: event.mode,
      subject: event.subject,
      rule: event.rule,
      range: event.range,
      prefix: event.prefix,
      country: event.country,
      starts: event.counts.starts,
      verified: event.counts.verified,
      hold_ms: holdMs,
    });
    this.report.fraudSuspected(reason, event.mode);
    this.report.emit(event);
    return until;
  }
}

function reasonOf(assessment: PumpingAssessment | undefined): FraudSuspectedEvent['reason'] | undefined {
  if (assessment?.held) return REASON_OF[assessment.held.kind];
  return assessment?.reserve ? ProtectionRefusalReason.spendCapReserve : undefined;
}

/**
 * A number's operator prefix and ISO country (else its calling code: a number the allowlists passed
 * always has one).
 */
function placeOf(e164: string): { prefix: string; country: string } {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return { prefix: e164.slice(0, 2), country: `+${e164.slice(1, 2)}` };
  return { prefix: operatorPrefix(parsed), country: parsed.country ?? `+${parsed.countryCallingCode}` };
}

/** Who a start came from, for the burst signature: the client key, else the address's network, else the owner. */
function callerOf(attempt: PumpingAttempt, ipv6PrefixLength: number): string | undefined {
  if (attempt.clientKey !== undefined) return `client:${attempt.clientKey}`;
  const network = attempt.ip === undefined ? undefined : clientAddressKey(attempt.ip, ipv6PrefixLength);
  if (network !== undefined) return `network:${network}`;
  return attempt.owner === undefined ? undefined : `owner:${attempt.owner}`;
}

function isCaller(subject: Subject): boolean {
  return subject.kind === 'owner' || subject.kind === 'client' || subject.kind === 'network';
}

function holdableOf(subjects: Subject[]): (Subject & { kind: PumpingSubjectKind })[] {
  return subjects.filter((s): s is Subject & { kind: PumpingSubjectKind } => s.kind !== 'country');
}

function countryId(subjects: Subject[]): string {
  return subjects.find((s) => s.kind === 'country')!.id;
}
