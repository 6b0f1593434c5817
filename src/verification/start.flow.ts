import { Inject, Injectable } from '@nestjs/common';
import { isTestSession } from '../core/test-session.js';
import { PriceBook } from '../account/price-book.js';
import type { KnownVerificationMethod } from '../api/api.types.js';
import type { DeviceHint } from '../core/journey.js';
import { ProtectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';
import type { SessionRecord } from '../core/session-record.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import {
  VerificationProtection,
  type StartCandidate,
  type StartPermit,
} from '../protection/verification-protection.service.js';
import type { TestAdmission } from '../protection/test-start-admission.js';
import { methodsForPurpose } from '../options/purposes.options.js';
import {
  deviceHint,
  fieldError,
  noMethodForPurpose,
  offeredMethod,
  startPurpose,
} from './client-refusals.js';
import { callerOf, FlowOutcomes, type FlowFacts } from './flow-outcomes.js';
import { JourneyHandles } from './journey-handles.js';
import { JourneyState } from './journey-state.js';
import { OrchestrationPolicy } from './orchestration.policy.js';
import { erasureCallersOf, PaidStart } from './paid-start.js';
import { PhoneNumberNormalizer } from './phone-number.policy.js';
import { toStartView } from './start-view.js';
import type { StartInput, StartView } from './verification.views.js';
import { figureGivers } from './figure-givers.js';
import { AssessmentRefusal } from '../protection/assess-start-hook.js';

/** `method` of a start or switch that leaves the choice to the orchestration policy. */
export const AUTO = 'auto';

/**
 * What protection answered a start: the caller's pending session to resume, or a permit to pay under (a
 * test number's admission, to play under).
 */
/** Which of protection's admissions `admitAs` asks: a real number's start, or a test number's. */
const REAL_NUMBER = 'real';
const TEST_NUMBER = 'test';

type Admitted<P = StartPermit> =
  | { candidate: StartCandidate; resumed: SessionRecord; resendAvailableAt: Date | null }
  | { candidate: StartCandidate; permit: P };

/**
 * `POST /start`, top to bottom: normalise the input, pick the method, ask protection once (it hands
 * back the caller's identical pending session, or a permit, or refuses), pay, record, answer. The
 * outcome is recorded in one place (FlowOutcomes).
 */
@Injectable()
export class StartFlow {
  private readonly phones: PhoneNumberNormalizer;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly protection: VerificationProtection,
    private readonly paid: PaidStart,
    private readonly prices: PriceBook,
    private readonly policy: OrchestrationPolicy,
    private readonly journeyState: JourneyState,
    private readonly handles: JourneyHandles,
    private readonly outcomes: FlowOutcomes,
  ) {
    this.phones = new PhoneNumberNormalizer(options.phone);
  }

  /**
   * Starts a verification (or hands back the caller's identical pending one). `method` may be `auto`
   * (or left out): the orchestration policy picks the first method it offers for the device hint.
   */
  async start(input: StartInput): Promise<StartView> {
    const facts: FlowFacts = { began: Date.now(), ip: input.ip };
    return this.outcomes.span('start', async (span) => {
      try {
        // Normalise: bad input is refused before anything asks the API.
        const auto = input.method === undefined || input.method === AUTO;
        const purpose = startPurpose(input.purpose, this.options.purposes);
        facts.purpose = purpose;
        if (purpose !== undefined) span.set({ purpose });
        const { purposes } = this.options;
        const purposeMethods = methodsForPurpose(purposes, purpose, this.options.methods);
        if (purposeMethods.length === 0) throw noMethodForPurpose(purpose);
        if (!auto)
          facts.method = offeredMethod(
            input.method,
            purposeMethods,
            methodsForPurpose(purposes, purpose, this.prices.offeredNow()),
          );
        if (typeof input.phoneNumber !== 'string')
          throw fieldError('phone_number', 'phone_number must be a string');
        const device = deviceHint(input.device);
        const phoneNumber = this.phones.normalize(input.phoneNumber).e164;
        facts.phoneNumber = phoneNumber;

        // Pick the method, among those the purpose allows: `auto` takes the policy's first for the
        // device; an explicit one must be offered.
        const offered = methodsForPurpose(purposes, purpose, await this.prices.offered());
        if (offered.length === 0) throw noMethodForPurpose(purpose);
        const ordered = this.allowedFor(
          auto ? await this.policy.startOrder(offered, phoneNumber, device) : offered,
          device,
        );
        const method = auto ? firstOf(ordered, offered) : offeredMethod(facts.method, offered, offered);
        facts.method = method;
        const clientKey = this.protection.clientKey(input.request, input.ip);
        const candidate: StartCandidate = {
          phoneNumber,
          method,
          offered: ordered,
          owner: input.owner,
          ...(purpose === undefined ? {} : { purpose }),
          ip: input.ip,
          clientKey,
          browserKey: input.browserKey,
          request: input.request,
        };

        // Coalesce and admit (protection, once), pay and record. A test number is played by the
        // module: it takes the caller's own limits, resend cooldown and coalescing, as a real number does.
        let started: SessionRecord;
        let resendAvailableAt: Date | null = null;
        let resumed = false;
        const admitted = this.paid.plays(phoneNumber, input.owner)
          ? await this.admitAs(candidate, TEST_NUMBER)
          : await this.admit(candidate, auto);
        facts.method = admitted.candidate.method;
        const order = {
          phoneNumber,
          method: admitted.candidate.method,
          owner: input.owner,
          purpose,
          callers: erasureCallersOf(input.browserKey),
        };
        if ('resumed' in admitted) {
          ({ resumed: started, resendAvailableAt } = admitted);
          resumed = true;
        } else if ('played' in admitted.permit) {
          const admission = admitted.permit;
          const network = figureGivers(undefined, input.ip).network;
          started = await this.paid.play({ ...order, network }).catch(async (error) => {
            await admission.failed(error);
            throw error;
          });
          await admission.played(started);
          resendAvailableAt = admission.resendAvailableAt;
        } else {
          const { permit } = admitted;
          started = await this.paid.pay(order, permit);
          resendAvailableAt = permit.resendAvailableAt;
        }
        if (device !== undefined && !resumed) await this.rememberDevice(started, device);
        const caller = callerOf(input.owner, clientKey);
        await this.outcomes.started('start', {
          record: started,
          resumed,
          owner: input.owner,
          caller,
          ip: input.ip,
          device,
          began: facts.began,
        });

        // Answer: a resumed session may be a step the journey switched away from; the answer is the
        // journey's current step (status and check go there), under the handle the frontend holds.
        const journeyId = started.journeyId ?? started.requestId;
        const loaded = resumed ? await this.journeyState.read(journeyId) : null;
        const handle = this.handles.seal(journeyId, input.owner);
        const view = toStartView(handle, loaded?.current ?? started, resendAvailableAt, resumed);
        span.set({
          method: view.method,
          outcome: resumed ? 'resumed' : view.status,
          test: isTestSession(started.requestId),
          ...(started.assessment === undefined ? {} : { assessment: started.assessment }),
        });
        return loaded ? { ...view, ...this.handles.token(loaded.journey, input.owner) } : view;
      } catch (error) {
        span.set({
          method: facts.method,
          ...(error instanceof AssessmentRefusal ? { assessment: error.assessment } : {}),
        });
        throw await this.outcomes.refused('start', error, facts, input.owner);
      }
    });
  }

  /**
   * Protection's answer, asked once per method tried: under a graded answer (409 `method_held`),
   * `auto` takes the policy's first method charged on proof, as the host's page would (an explicit
   * method gets the 409 naming them).
   */
  private async admit(candidate: StartCandidate, auto: boolean): Promise<Admitted> {
    try {
      return await this.admitAs(candidate, REAL_NUMBER);
    } catch (error) {
      const graded = auto ? gradedMethod(error) : undefined;
      if (graded === undefined) throw error;
      return this.admitAs({ ...candidate, method: graded }, REAL_NUMBER);
    }
  }

  /** Protection's answer (`admitStart`, or a test number's): a handed-back session found ended is named stale and asked again. */
  private async admitAs(candidate: StartCandidate, real: typeof REAL_NUMBER): Promise<Admitted>;
  private async admitAs(
    candidate: StartCandidate,
    test: typeof TEST_NUMBER,
  ): Promise<Admitted<TestAdmission>>;
  private async admitAs(
    candidate: StartCandidate,
    number: typeof REAL_NUMBER | typeof TEST_NUMBER,
  ): Promise<Admitted<StartPermit | TestAdmission>> {
    let stale: string | undefined;
    for (;;) {
      const admission =
        number === TEST_NUMBER
          ? await this.protection.admitTestStart(candidate, stale)
          : await this.protection.admitStart(candidate, stale);
      if (!('handBack' in admission)) return { candidate, permit: admission };
      const resumed = await this.journeyState.resumable(admission.handBack);
      if (resumed) return { candidate, resumed, resendAvailableAt: admission.resendAvailableAt };
      stale = admission.handBack;
    }
  }

  /** The methods the device hint does not rule out (without a hint, all of them). */
  private allowedFor(
    methods: readonly KnownVerificationMethod[],
    device: DeviceHint | undefined,
  ): KnownVerificationMethod[] {
    if (device === undefined) return [...methods];
    const excluded: readonly string[] = this.policy.exclude[device];
    return methods.filter((method) => !excluded.includes(method));
  }

  /** The device hint is kept on the journey for its switches; a store failure here loses only the hint. */
  private async rememberDevice(record: SessionRecord, device: DeviceHint): Promise<void> {
    try {
      await this.journeyState.rememberDevice(record, device);
    } catch (error) {
      this.outcomes.telemetry.unexpectedFailure('start', error);
    }
  }
}

/** The policy's first method for a new journey, or 400 `method_not_available` naming what the account offers. */
function firstOf(
  ordered: readonly KnownVerificationMethod[],
  offered: KnownVerificationMethod[],
): KnownVerificationMethod {
  if (ordered.length === 0)
    throw new VerificationClientError('method_not_available', 'No method is offered here for this device', {
      available_methods: offered,
    });
  return ordered[0]!;
}

function isKnown(method: string): method is KnownVerificationMethod {
  return (VERIFICATION_METHODS as readonly string[]).includes(method);
}

/** The first method a graded answer (409 `method_held`) offers, or undefined for any other error. */
function gradedMethod(error: unknown): KnownVerificationMethod | undefined {
  if (!(error instanceof ProtectionRefusal) || error.reason !== ProtectionRefusalReason.methodHeld)
    return undefined;
  const offered = error.extra.offered_methods;
  return Array.isArray(offered) && typeof offered[0] === 'string' && isKnown(offered[0])
    ? offered[0]
    : undefined;
}
