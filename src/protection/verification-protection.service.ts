import { Inject, Injectable, Optional } from '@nestjs/common';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { runStartHooks, type HooksAnswer } from './start-hooks.js';
import { clientKeyOf, freeCallersOf, limitsCallerOf, starterOf } from './start-callers.js';
import { defined, releaseAll, takenInOrder, type ProtectionHold } from './protection-hold.js';
import { PumpingDefence } from '../pumping/pumping-defence.js';
import type { BurstMarks } from '../pumping/range-bursts.js';
import { RequestRateLimits, type FreeStartHold } from './request-rate-limits.js';
import { ResendCooldown } from './resend-cooldown.js';
import { SpendCap, type SpendReservation } from './spend-cap.js';
import type { CoalescingClaim } from './start-coalescer.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { StartPermit } from './start-permit.js';
import { WrongCodeBudget, type WrongCodeHold } from './wrong-code-budget.js';
import { methodTraits } from '../core/verification-method.js';
import { ProtectionRefusal, protectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';
import { admitTestStart as admitTest, type TestAdmission } from './test-start-admission.js';
import type { GradedAnswer, PumpingAssessment } from '../pumping/pumping-defence.js';
import type { HandBack, StartCandidate } from './verification-protection.types.js';

export type { HandBack, StartCandidate, StartedSession } from './verification-protection.types.js';
export type { StartPermit, StartRollback } from './start-permit.js';

/** A start's answer when the host set neither `assessStart` nor `beforeStart`. */
const NO_HOOKS: Promise<HooksAnswer> = Promise.resolve({ assessment: undefined, challengePassed: false });

/** Says `coalesced` admits a test number's start (`admitTestStart`), not a real one on its reading. */
const TEST_START = 'test';

/** What a start's verdict read before `beforeStart`, in one round trip (`read`). */
interface StartReading {
  pumping: PumpingAssessment | undefined;
  /** Rejects with the wrong-code budget's refusal, if any (awaited after the hooks). */
  wrongCodes: Promise<void>;
}

/**
 * Protection of the host's money and users on the client routes: start and check limits, resend
 * cooldown, coalescing, spend cap, the API's 429 back-off and `beforeStart` (the allowlists run
 * before, in PhoneNumberNormalizer). All state is in the VerificationStore, shared by instances.
 * A journey's switch is a start like any other (`admitSwitch`: no coalescing). The order of a start's
 * checks, and why: docs/protection.md. Its parts are the registration's providers (protection.providers.ts);
 * what the tracker's events teach them is ProtectionEvents'.
 */
@Injectable()
export class VerificationProtection {
  private readonly logger: VerificationTelemetry['logger'];
  private addresslessReported = false;
  /** The host set `assessStart` or `beforeStart` (resolved once): without either, a start asks no hook. */
  private readonly hooked: boolean;
  /** What a permit does with the API's 429 (shares its back-off): one for every start. */
  private readonly backOff: (ms: number) => Promise<void>;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    telemetry: VerificationTelemetry,
    private readonly limits: RequestRateLimits,
    private readonly cooldown: ResendCooldown,
    private readonly wrongCodes: WrongCodeBudget,
    private readonly pumping: PumpingDefence,
    /** Off (`limits.spendCap: false`): undefined. */
    @Optional() @Inject(SpendCap) private readonly spendCap?: SpendCap,
    /** The store probe before paying (PaidStart awaits it), issued with the admission's last writes. */
    @Optional() @Inject(SessionRecordRepository) private readonly records?: SessionRecordRepository,
  ) {
    this.logger = telemetry.logger;
    this.hooked = Boolean(options.limits.assessStart || options.limits.beforeStart);
    this.backOff = (ms) => limits.holdUpstream(ms);
  }

  /** The caller's rate-limit key: the host's `limits.key(req)`, else the client IP (IPv6 by its network prefix). */
  clientKey(request: unknown, ip: string | undefined): string | undefined {
    const key = clientKeyOf(this.options.limits, request, ip);
    if (key === undefined && request !== undefined) this.reportAddressless();
    return key;
  }

  /**
   * A client request with neither the host's key nor an address (an app on a Unix socket behind a proxy
   * it does not trust) escapes every per-address limit, silently else: said once per registration.
   */
  private reportAddressless(): void {
    const { startPerIp, checkPerIp } = this.options.limits;
    if (this.addresslessReported || (startPerIp === false && checkPerIp === false)) return;
    this.addresslessReported = true;
    this.logger.warn(
      'protection: a client request has no client address (a Unix socket behind a proxy the app does not ' +
        "trust?): the per-address limits do not apply to it. Set Express's `trust proxy` or Fastify's " +
        '`trustProxy`, or `limits.key`',
    );
  }

  /**
   * Admits one start, or throws its refusal after giving back whatever it took. A pending session of
   * the same owner (or, without one, the same browser key) + phone + method is handed back instead
   * (coalescing; `stale`: a handed-back session the caller found ended): identical concurrent starts
   * share one outcome, in one process as across instances. Otherwise the start takes its share of
   * every limit (in docs/protection.md's order) and gets the permit it settles after the upstream call (see
   * StartPermit). Protection is asked once and never calls back.
   */
  async admitStart(candidate: StartCandidate, stale?: string): Promise<HandBack | StartPermit> {
    // The claim and the reading go together (one round trip); a duplicate's reading is not used.
    const reading = this.read(candidate);
    reading.catch(() => undefined);
    return this.coalesced(candidate, stale, reading);
  }

  /** A test number's start (see `admitTestStart`), coalesced as a real one's: its identical start is handed back. */
  admitTestStart(candidate: StartCandidate, stale?: string): Promise<HandBack | TestAdmission> {
    return this.coalesced(candidate, stale, TEST_START);
  }

  /** A test number's switch: as a real switch, never coalesced. */
  admitTestSwitch = (c: StartCandidate): Promise<TestAdmission> => admitTest(this.cooldown, this.limits, c);

  /**
   * The starter's identical pending session to hand back, else the start admitted under the claim (none:
   * not coalesced): a real one on its `reading` (a claim won after another start's ended reads again,
   * after it), a test number's as such (TEST_START). A refused start fails its claim.
   */
  private async coalesced(
    c: StartCandidate,
    stale: string | undefined,
    reading: Promise<StartReading>,
  ): Promise<HandBack | StartPermit>;
  private async coalesced(
    c: StartCandidate,
    stale: string | undefined,
    reading: typeof TEST_START,
  ): Promise<HandBack | TestAdmission>;
  private async coalesced(
    candidate: StartCandidate,
    stale: string | undefined,
    reading: Promise<StartReading> | typeof TEST_START,
  ): Promise<HandBack | StartPermit | TestAdmission> {
    const claimed = await this.cooldown.coalesce(candidate, stale);
    if (claimed !== undefined && 'handBack' in claimed) return claimed;
    try {
      return reading === TEST_START
        ? await admitTest(this.cooldown, this.limits, candidate, claimed)
        : await this.admit(candidate, claimed, claimed?.contested ? undefined : reading);
    } catch (error) {
      await claimed?.failed(error);
      throw error;
    }
  }

  /** Admits a journey's switch: a start like any other, but never coalesced (the journey's step claim keeps it single). */
  admitSwitch(candidate: StartCandidate): Promise<StartPermit> {
    return this.admit(candidate, undefined);
  }

  /**
   * Reads what a start's verdict needs, at once: the pumping defence's counts, the API's 429 back-off
   * (its refusal now) and the wrong-code budget (its refusal answers after the hook).
   */
  private async read(candidate: StartCandidate): Promise<StartReading> {
    const budget = this.wrongCodes.assertStartAllowed(candidate.phoneNumber, candidate.owner);
    // Its refusal answers after the hook (admit awaits it then): never an unhandled rejection meanwhile.
    budget.catch(() => undefined);
    const [pumping] = await Promise.all([this.pumping.assess(candidate), this.limits.assertUpstreamOpen()]);
    return { pumping, wrongCodes: budget };
  }

  private async admit(
    candidate: StartCandidate,
    coalescing: CoalescingClaim | undefined,
    reading: Promise<StartReading> = this.read(candidate),
  ): Promise<StartPermit> {
    const { pumping, wrongCodes } = await reading;
    // The defence's signal is what a hook is told: without one, nothing is asked or told.
    const hooks = this.hooked
      ? runStartHooks(this.options.limits, candidate, this.pumping.signal(pumping), this.logger)
      : NO_HOOKS;
    const { assessment, challengePassed } = await hooks;
    await wrongCodes;
    const caller = limitsCallerOf(candidate);
    const grade = this.gradeOf(candidate);
    const holds: ProtectionHold[] = [];
    let reservation: SpendReservation | undefined;
    let resendAvailableAt: Date | null = null;
    let reachable: ReturnType<SessionRecordRepository['reserveIndex']> | undefined;
    let freeStart: FreeStartHold | undefined;
    try {
      // The cooldown and the limits together (one round trip) with the defence's burst marks read (they
      // hold nothing), before the defence counts: a start they refuse is never counted there. A start the
      // reading condemns is counted as it is refused.
      const condemned = this.pumping.mayRefuseOnReading(pumping, challengePassed);
      const taken = await takenInOrder([
        this.cooldown
          .claim(candidate.phoneNumber, candidate.method, { caller, starter: starterOf(candidate) })
          .then((claim) => {
            resendAvailableAt = claim.availableAt;
            return claim.hold;
          }),
        methodTraits(candidate.method).chargedOnProof
          ? this.limits.countFreeStart(freeCallersOf(candidate, this.options.limits))
          : undefined,
        // Under grading a start of a method charged on proof spends its free budget instead of the
        // per-address limit, and any other start past it is graded (409 `method_held`).
        this.limits
          .countStart(grade?.proofCharged ? undefined : candidate.clientKey, candidate.phoneNumber, caller)
          .catch((error: unknown) => {
            throw graded(error, grade, ProtectionRefusalReason.startIpLimit);
          }),
        this.limits.countPurposeStart(candidate.purpose, candidate.phoneNumber),
        condemned || !pumping ? undefined : this.pumping.mark(pumping),
      ]);
      freeStart = taken[1] as FreeStartHold | undefined;
      const marked = taken.pop() as BurstMarks | undefined;
      holds.push(...defined(taken));
      // The store probe before paying (PaidStart awaits it; the index slots), with the last writes.
      (reachable = this.records?.reserveIndex(candidate))?.catch(() => undefined);
      if (condemned) {
        // A start the reading condemns is counted, and refused, before anything is reserved for it.
        holds.push(await this.pumping.admit(pumping, challengePassed, grade, marked));
        reservation = await this.reserve(candidate, pumping, grade);
      } else {
        // Else together (one round trip): a verdict concurrent starts change gives the reservation back.
        const [hold, reserved] = await takenInOrder([
          this.pumping.admit(pumping, challengePassed, grade, marked),
          this.reserve(candidate, pumping, grade),
        ]);
        holds.push(hold!);
        reservation = reserved as SpendReservation | undefined;
      }
    } catch (error) {
      // A refused start frees its holds and its erasure index slots (reserved with its last writes). It
      // holds no reservation: that is taken last, and takenInOrder gives it back when the verdict refuses.
      const slots = reachable?.then((reserved) => this.records?.releaseIndex(reserved));
      await Promise.all([releaseAll(holds), slots?.catch(() => undefined)]);
      throw error;
    }
    return new StartPermit(
      {
        resendAvailableAt,
        claim: coalescing,
        holds,
        reservation,
        reachable,
        suspected: this.pumping.suspects(pumping),
        ...(assessment ? { assessment: assessment.facts } : {}),
        attribute: async (session) => {
          await Promise.all([
            this.pumping.started(pumping, session.requestId, session.expiresAt),
            freeStart && this.limits.rememberFreeStart(session.requestId, freeStart),
          ]);
        },
        backOff: this.backOff,
      },
      this.logger,
    );
  }

  /** The graded answer's terms for this start, when grading is on (see GradedAnswer). */
  private gradeOf(candidate: StartCandidate): GradedAnswer | undefined {
    if (!this.options.limits.pumping.grading || this.options.limits.pumping.mode !== 'enforce')
      return undefined;
    return {
      proofCharged: methodTraits(candidate.method).chargedOnProof,
      offered: (candidate.offered ?? []).filter((m) => methodTraits(m).chargedOnProof),
    };
  }

  /**
   * The spend reservation. The cap's last share (`limits.pumping.reserveShare`) is kept for methods
   * charged on proof (each caller's share of it, see proof-reserve.ts) and callers with a record; a
   * start the cap cannot afford is graded (409 `method_held`) while a method charged on proof is offered.
   */
  private async reserve(
    candidate: StartCandidate,
    pumping: Awaited<ReturnType<PumpingDefence['assess']>>,
    grade: GradedAnswer | undefined,
  ): Promise<SpendReservation | undefined> {
    if (!this.spendCap) return undefined;
    const onProof = methodTraits(candidate.method).chargedOnProof;
    // Monitor mode reports and never acts: the whole cap is open to everyone (no caller's record is read).
    const enforced = this.options.limits.pumping.mode === 'enforce';
    const known = enforced && this.pumping.knownCaller(pumping);
    const { reserveShare } = this.options.limits.pumping;
    const keep = enforced && !onProof && !known ? reserveShare : 0;
    const callers = (): string[] =>
      freeCallersOf(candidate, this.options.limits).map((c) => this.options.dataKeys.digest(c));
    const proof = enforced && onProof ? { callers: callers(), known, reserveShare } : undefined;
    return this.spendCap.reserve(candidate.method, keep, proof).catch((error: unknown) => {
      throw graded(error, grade, ProtectionRefusalReason.spendCap);
    });
  }

  /** Refuses a check past the caller's check limit (429 `check_limit`). */
  async assertCheckAllowed(clientKey: string | undefined): Promise<void> {
    await this.limits.countCheck(clientKey);
  }

  /**
   * Takes a point of the number's (and the owner's) wrong-code budget for a check about to ask the
   * API, or throws 429 `too_many_wrong_codes`. Settle it with whether the API said the code was wrong.
   */
  async holdWrongCode(phoneNumber: string, owner: string | undefined): Promise<WrongCodeHold> {
    return this.wrongCodes.holdCheck(phoneNumber, owner);
  }
}

/**
 * A refusal by `held` of a start not charged on proof becomes 409 `method_held` while a method charged on
 * proof is offered (GradedAnswer); any other error is thrown as it is.
 */
function graded(error: unknown, grade: GradedAnswer | undefined, held: ProtectionRefusalReason): unknown {
  if (!(error instanceof ProtectionRefusal) || error.reason !== held) return error;
  if (!grade || grade.proofCharged || grade.offered.length === 0) return error;
  return protectionRefusal(ProtectionRefusalReason.methodHeld, (error.retryAfterSeconds ?? 1) * 1000, {
    offered_methods: [...grade.offered],
    held,
  });
}
