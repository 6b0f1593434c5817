import type { FraudSuspectedEvent, VerificationEvent } from '../core/verification-events.js';
import { methodTraits, type VerificationMethod } from '../core/verification-method.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { protectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';
import type { ResolvedPumping } from '../options/verification.options.js';
import { coolOffMs, countryUnderAttack, pastShareUnderAttack, reserveRefuses } from './pumping-rules.js';
import type { PumpingSubjectKind } from './pumping-rules.js';
import { reportHold, type PumpingReporting } from './pumping-report.js';
import {
  callerOf,
  countryId,
  holdableOf,
  isCaller,
  ownIds,
  placeOf,
  subjectsOf,
  twinsOf,
  type PumpingAttempt,
} from './pumping-subjects.js';
import { dueHold, heldBy, waitMs, withConcurrent } from './pumping-verdict.js';
import type { RangeStats, BurstMarks } from './range-stats.js';
import { giveBackOf, giversOf, networkPast, standingOf, withNextStart } from './giver-shares.js';
import { creditedOf, rememberedOf, traitsOf } from './range-stats-keys.js';

export type { PumpingAttempt } from './pumping-subjects.js';
import type { GradedAnswer, PumpingAssessment, PumpingSignal } from './pumping-assessment.js';
export type { GradedAnswer, PumpingAssessment, PumpingSignal } from './pumping-assessment.js';

const REASON_OF: Record<PumpingSubjectKind, FraudSuspectedEvent['reason']> = {
  range: ProtectionRefusalReason.rangeHeld,
  prefix: ProtectionRefusalReason.rangeHeld,
  owner: ProtectionRefusalReason.ownerHeld,
  client: ProtectionRefusalReason.clientHeld,
  network: ProtectionRefusalReason.clientHeld,
};
/** What a start took of the defence, given back when it does not go ahead (protection's ProtectionHold). */
type DefenceHold = { release(): Promise<void> };
const NOTHING_HELD: DefenceHold = { release: async () => undefined };
const NOTHING_COUNTED = {
  before: new Map(),
  callersBefore: new Map(),
  standing: 'within' as const,
  release: async () => undefined,
  refused: async () => undefined,
};

/** A method charged on proof costs nothing unless the number's owner proves it. */
function free(method: VerificationMethod | undefined): boolean {
  return method !== undefined && methodTraits(method).chargedOnProof;
}

/**
 * Defence against SMS pumping: every start that can be charged, and every attempt a hold refused, is
 * counted per number range, operator prefix, country and caller in the store, against the distinct
 * numbers verified there; a subject whose starts do not convert is held for a cool-off that doubles
 * while the pattern goes on (a fresh range or prefix after a few: a burst; a prefix or country over
 * the day too: a slow drip); while a country does not convert, subjects without conversions or a
 * record are held sooner and, near the spend cap, wait. Concurrent starts are judged one after the other.
 * Rules: pumping-rules.ts, pumping-verdict.ts, giver-shares.ts; the costs: docs/protection.md.
 */
export class PumpingDefence {
  private readonly safeNumbers: Set<string>;
  private readonly safeRanges: Set<string>;
  private readonly safeOwners: Set<string>;

  constructor(
    private readonly store: VerificationStore,
    private readonly settings: ResolvedPumping,
    private readonly ipv6PrefixLength: number,
    private readonly report: PumpingReporting,
    /** The counts and holds in the store (on the defence's settings). */
    private readonly stats: RangeStats,
    /** The spend cap, when one is configured: near it, a stranger waits while its country does not convert. */
    private readonly spend?: { spentShare(): Promise<number> },
  ) {
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
    const place = placeOf(attempt.phoneNumber, this.settings.rangeDigits);
    if (
      this.safeNumbers.has(attempt.phoneNumber) ||
      this.safeRanges.has(place.range) ||
      (attempt.owner !== undefined && this.safeOwners.has(attempt.owner))
    )
      return undefined;
    const all = subjectsOf(attempt, place, this.ipv6PrefixLength);
    const subjects = attempt.switchedFrom === undefined ? all : all.filter((s) => !isCaller(s));
    const holdable = holdableOf(subjects);
    const twins = twinsOf(subjects);
    // A switch's callers were counted when its journey started: it is charged to no giver.
    const givers = attempt.switchedFrom === undefined ? giversOf(attempt, this.ipv6PrefixLength) : [];
    const shareKeys = this.stats.shareKeys(givers);
    // Past a share, the start is judged by the twin that counts it: read at once if a balance was seen full.
    const [counts, holds, balances, early] = await Promise.all([
      this.stats.read(subjects, attempt.phoneNumber),
      this.stats.readHolds(holdable),
      this.stats.readShares(givers, shareKeys),
      this.stats.likelyPast(shareKeys) ? this.stats.read(twins) : undefined,
    ]);
    const prior = this.settings.expectedConversion;
    // Where the next start puts its givers (its standing), and the network whose share it passes (a vote).
    const next = withNextStart(givers, balances);
    const standing = standingOf(givers, next);
    if (standing !== 'within')
      for (const [id, c] of early ?? (await this.stats.read(twins))) counts.set(id, c);
    for (const [id, c] of counts)
      if (traitsOf(id).baseline) c.expected = prior[place.country] ?? prior.default;
    const underAttack = countryUnderAttack(counts.get(countryId(subjects))!, this.settings);
    const judgedBy = standing === 'past' ? twins[1]! : twins[0]!;
    const selfUnderAttack =
      !underAttack && standing !== 'within' && pastShareUnderAttack(counts.get(judgedBy.id)!, this.settings);
    const held = heldBy(
      { holdable, counts, holds, underAttack, callersUnderAttack: underAttack || selfUnderAttack },
      this.store.now(),
      this.settings,
    );
    // Whether a subject has a record is asked only of a start no hold answers, in an attack (reserve, steer).
    const attacked = held === undefined && (underAttack || selfUnderAttack);
    const known = attacked && holdable.some((s) => counts.get(s.id)!.known);
    const reserve =
      attacked &&
      underAttack &&
      !known &&
      this.spend !== undefined &&
      reserveRefuses({
        spentShare: await this.spend.spentShare(),
        reserveShare: this.settings.reserveShare,
        underAttack,
        known,
      });
    const steer = attacked && !known && !free(attempt.method);
    const verdict = { underAttack, selfUnderAttack, held, reserve, steer };
    const shares = { givers, shareKeys, standing, pastNetwork: networkPast(givers, next)?.id };
    return { attempt, ...place, subjects, holdable, twins, counts, holds, ...shares, ...verdict };
  }

  /**
   * Whether a start the defence let go is suspect all the same: it would have refused it (monitor
   * mode, a passed challenge), or its country is under attack. Its session is left out of the method
   * figures.
   */
  suspects(assessment: PumpingAssessment | undefined): boolean {
    return assessment !== undefined && (reasonOf(assessment) !== undefined || assessment.underAttack);
  }

  /** The start's burst marks (RangeBursts.markBursts), read with the limits; none for a free method's. */
  mark({ attempt, subjects }: PumpingAssessment): Promise<BurstMarks> | undefined {
    if (free(attempt.method)) return undefined;
    return this.stats.markBursts(subjects, attempt.phoneNumber, callerOf(attempt));
  }

  /** Whether `admit` may refuse on the reading alone; else only if the starts counted concurrently change it. */
  mayRefuseOnReading(assessment: PumpingAssessment | undefined, challengePassed: boolean): boolean {
    if (assessment === undefined || this.settings.mode !== 'enforce' || challengePassed) return false;
    return reasonOf(assessment) !== undefined || assessment.steer;
  }

  /** Whether one of the start's callers has a record of completed verifications (served from the cap's last share). */
  knownCaller(assessment: PumpingAssessment | undefined): boolean {
    if (assessment === undefined) return false;
    return assessment.subjects.some((s) => isCaller(s) && assessment.counts.get(s.id)?.known);
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
   * `spend_cap_reserve`). Every attempt is counted, a refused one too: a held subject whose attempts
   * go on stays unconverted as its window rolls over, and the next hold is twice as long. Not in its
   * country's own counts: the judgement of everyone weighs paid starts that went ahead, and a refusal
   * cost nobody anything (counted, a few held users' retries would keep their country under attack,
   * and an address pool's refused attempts would put it there for free). A start the
   * reading let through is judged again with the starts counted concurrently before it (atomic).
   * `challengePassed` (`beforeStart`'s captcha) lifts the hold for this start. Monitor mode refuses nothing.
   */
  async admit(
    assessment: PumpingAssessment | undefined,
    challengePassed: boolean,
    grade?: GradedAnswer,
    marks?: BurstMarks,
  ): Promise<DefenceHold> {
    if (assessment === undefined) return NOTHING_HELD;
    const { attempt } = assessment;
    // While its country is under attack, a stranger's paid start is served by a method charged on
    // proof (free unless its number's owner proves it): nothing for a pumper, a way through for a user.
    if (
      assessment.steer &&
      grade &&
      grade.offered.length > 0 &&
      this.settings.mode === 'enforce' &&
      !challengePassed
    ) {
      // Steered by its own twin (past a share): its givers' evidence as a held attempt is (counted and
      // voting), until a proof of its number by the offered method takes it back (RangeHolds). Steered
      // by its country, a stranger is counted nowhere (it only votes).
      const past = assessment.pastNetwork;
      if (assessment.selfUnderAttack)
        await this.stats.rememberSteered(attempt.phoneNumber, (await this.count(assessment)).taken);
      else if (past) await this.stats.votePastNetwork(countryId(assessment.subjects), past);
      throw protectionRefusal(ProtectionRefusalReason.methodHeld, this.settings.holdMs, {
        offered_methods: [...grade.offered],
        held: ProtectionRefusalReason.rangeHeld,
      });
    }
    // A start of a method charged on proof is no evidence against anyone: it costs nothing unless
    // proved (its own per-caller budget meters it), and its proof vouches for no paid method.
    const counted = free(attempt.method) ? NOTHING_COUNTED : await this.count(assessment, marks);
    if (counted !== NOTHING_COUNTED) assessment.counted = { standing: counted.standing };
    if (reasonOf(assessment) === undefined) {
      const concurrent = withConcurrent(assessment.counts, counted.before, counted.callersBefore);
      const held = dueHold(
        {
          holdable: assessment.holdable,
          counts: concurrent,
          holds: assessment.holds,
          underAttack: assessment.underAttack,
          callersUnderAttack: assessment.underAttack || assessment.selfUnderAttack,
        },
        this.settings,
      );
      // Only the hold is read from here on (its own counts go into its report).
      if (held) assessment = { ...assessment, held };
    }
    const reason = reasonOf(assessment);
    const enforce = this.settings.mode === 'enforce' && !challengePassed;
    if (reason !== undefined) {
      const until = await this.startHoldOnce(assessment, reason);
      this.report.metrics.pumpingRefusal(reason, this.settings.mode);
      if (enforce) {
        const held = assessment.held;
        const wait = held
          ? waitMs(held, assessment.underAttack, until, this.store.now(), this.settings)
          : this.settings.holdMs;
        if (grade?.proofCharged && grade.offered.length > 0) return { release: counted.release };
        await counted.refused();
        throw grade && grade.offered.length > 0
          ? protectionRefusal(ProtectionRefusalReason.methodHeld, wait, {
              offered_methods: [...grade.offered],
              held: reason,
            })
          : protectionRefusal(reason, wait);
      }
    }
    return { release: counted.release };
  }

  /** Counts a paid start (or attempt) with its country's twins, charged to its givers (marks: countStart). */
  private count(assessment: PumpingAssessment, marks?: BurstMarks): ReturnType<RangeStats['countStart']> {
    const { attempt, subjects, twins, givers } = assessment;
    return this.stats.countStart(
      [...subjects, ...twins],
      attempt.phoneNumber,
      callerOf(attempt),
      givers,
      marks,
      assessment.standing,
      assessment.shareKeys,
    );
  }

  /**
   * Remembers which subjects a started session belongs to, so that its verification is counted
   * there. A session of a method charged on proof is credited to nobody unless one of its callers
   * has a record: its proof costs the prover nothing (the pumper holds the range's numbers), so it
   * does not vouch for paid methods of its range, prefix or country (conversion laundering).
   */
  async started(
    assessment: PumpingAssessment | undefined,
    requestId: string,
    expiresAt: number,
  ): Promise<void> {
    if (assessment === undefined) return;
    if (free(assessment.attempt.method) && !this.knownCaller(assessment)) return;
    const ttl = Math.max(expiresAt - this.store.now(), 0) + this.settings.windowMs;
    // Its proof counts where its start did, and gives back to the givers it was charged to. (Nothing
    // counted, a start of a method charged on proof: its proof is credited as before.)
    const standing = assessment.counted?.standing;
    const expected = assessment.counts.get(countryId(assessment.subjects))?.expected ?? 1;
    const giveBack = standing && giveBackOf(assessment.givers, standing, expected);
    // Kept, sealed: what its verification cannot name by itself (rememberedOf: its callers', a switch's too).
    const { attempt, subjects } = assessment;
    const named = attempt.switchedFrom ? subjectsOf(attempt, assessment, this.ipv6PrefixLength) : subjects;
    await this.stats.rememberSession(requestId, rememberedOf(named, standing), ttl, giveBack);
  }

  /** A verification: counted where its start was (else its range, country and owner; a proof as its start was credited). */
  async verified(event: VerificationEvent): Promise<void> {
    if (this.settings.mode === 'off') return;
    const [remembered] = await Promise.all([
      this.stats.takeSession(event.requestId, event.phoneNumber),
      free(event.method) ? this.stats.takeSteered(event.phoneNumber) : undefined,
    ]);
    if (remembered === undefined && free(event.method)) return;
    const own = ownIds(event.phoneNumber, event.owner, this.settings.rangeDigits, this.ipv6PrefixLength);
    const ids = remembered === undefined ? own : creditedOf(remembered, own);
    await this.stats.countVerified(ids, event.phoneNumber);
  }

  /**
   * Starts the hold a new verdict calls for (or the reserve's, once per cool-off) and reports it once
   * across instances. Returns when the hold ends.
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
    if (first)
      reportHold(this.report, {
        reason,
        mode: this.settings.mode === 'monitor' ? 'monitor' : 'enforce',
        attempt: assessment.attempt,
        place: { range: assessment.range, prefix: assessment.prefix, country: assessment.country },
        underAttack: assessment.underAttack,
        held,
        counts: held?.counts ?? assessment.counts.get(countryId(assessment.subjects))!,
        holdMs,
        until,
      });
    return until;
  }
}

function reasonOf(assessment: PumpingAssessment | undefined): FraudSuspectedEvent['reason'] | undefined {
  if (assessment?.held) return REASON_OF[assessment.held.kind];
  return assessment?.reserve ? ProtectionRefusalReason.spendCapReserve : undefined;
}
