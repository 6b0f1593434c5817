import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod } from '../api/api.types.js';
import { normalizeMethod } from '../api/method-names.js';
import { answeringSession, withStep, type JourneyRecord } from '../core/journey.js';
import { isTestSession } from '../core/test-session.js';
import { isTerminal } from '../core/verification-status.js';
import type { SessionRecord } from '../core/session-record.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationProtection } from '../protection/verification-protection.service.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { fieldError, notPending, switchInProgress, switchRefusal } from './client-refusals.js';
import { callerOf, FlowOutcomes, type FlowFacts } from './flow-outcomes.js';
import { JourneyHandles } from './journey-handles.js';
import { JourneyState } from './journey-state.js';
import { erasureCallersOf, PaidStart } from './paid-start.js';
import { AUTO } from './start.flow.js';
import { StatusFlow } from './status.flow.js';
import { toStartView } from './start-view.js';
import type { CancelInput, CancelView, StartView, SwitchInput } from './verification.views.js';
import { figureGivers } from './figure-givers.js';

/**
 * A journey's moves after its start: a switch to another method, or a cancel. Each claims the
 * journey's next step (one move per journey at a time across every instance).
 *
 * `POST /switch`, top to bottom: open the journey, decide the move (the named method or the policy's
 * next), claim the step, ask protection once, pay, record the step, answer. The new session is paid
 * for under the same protection as a start (limits, spend cap, pumping defence; the resend cooldown
 * is its own method's). The previous session is no longer followed for the frontend; the reconciler
 * follows it to its outcome, whose events still fire.
 *
 * `POST /cancel`, top to bottom: open the journey, count the call against the caller's check limit,
 * look once more at its pending steps (an outcome of the last second is emitted and refuses the
 * cancel), claim the step, mark it canceled, let go of its sessions, answer. Idempotent; a verified
 * journey is not canceled (409 `not_pending`). A late outcome still reaches listeners: by webhook, or
 * without webhooks through the reconciler, which follows the pending sessions to their end at the
 * lazy pace.
 */
@Injectable()
export class SwitchFlow {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly protection: VerificationProtection,
    private readonly paid: PaidStart,
    private readonly journeyState: JourneyState,
    private readonly handles: JourneyHandles,
    private readonly records: SessionRecordRepository,
    private readonly status: StatusFlow,
    private readonly outcomes: FlowOutcomes,
  ) {}

  async switchMethod(input: SwitchInput): Promise<StartView> {
    const facts: FlowFacts = { began: Date.now(), ip: input.ip };
    return this.outcomes.span('switch', async (span) => {
      try {
        // Open the journey and decide the move on what its frontend sees now.
        const journeyId = await this.handles.openCarrying(
          input.verificationId,
          input.owner,
          input.journeyToken,
        );
        facts.requestId = journeyId;
        const named = namedMethod(input.method);
        const loaded = await this.status.fresh(journeyId, input.owner);
        const { journey, current } = loaded;
        facts.phoneNumber = journey.phoneNumber;
        const { decision, remaining, retriable } = await this.journeyState.switchFor(loaded, named);
        if ('refusal' in decision) throw switchRefusal(decision.refusal, named, this.options.clock());
        facts.method = decision.method;

        // Claim the step, admit (protection, once) and pay.
        let claim = await this.records.claimStep(journeyId, journey.steps.length);
        if (!claim) throw switchInProgress();
        const clientKey = this.protection.clientKey(input.request, input.ip);
        let latest: JourneyRecord;
        let record: SessionRecord;
        let resendAvailableAt: Date | null = null;
        try {
          // Under the claim: a switch that finished since the read (or a cancel) decides.
          latest = (await this.records.getJourney(journeyId)) ?? journey;
          if (latest.steps.length !== journey.steps.length) throw switchInProgress();
          if (latest.canceledAt !== undefined) throw notPending('canceled');
          const order = {
            phoneNumber: journey.phoneNumber,
            method: decision.method,
            owner: input.owner,
            // A journey keeps the purpose it was started for, on every step.
            ...(current.purpose === undefined ? {} : { purpose: current.purpose }),
            journeyId,
            callers: erasureCallersOf(input.browserKey),
          };
          if (this.paid.plays(order.phoneNumber, order.owner)) {
            const admission = await this.protection.admitTestSwitch({
              ...order,
              ip: input.ip,
              clientKey,
              browserKey: input.browserKey,
              request: input.request,
            });
            const network = figureGivers(undefined, input.ip).network;
            record = await this.paid.play({ ...order, network }).catch(async (error) => {
              await admission.failed(error);
              throw error;
            });
            resendAvailableAt = admission.resendAvailableAt;
          } else {
            const permit = await this.protection.admitSwitch({
              phoneNumber: journey.phoneNumber,
              method: decision.method,
              owner: input.owner,
              purpose: order.purpose,
              ip: input.ip,
              clientKey,
              browserKey: input.browserKey,
              request: input.request,
              ...(isKnown(current.method) ? { switchedFrom: current.method } : {}),
              // A suspected switch (or one the cap's last share holds) is offered the journey's
              // remaining methods charged on proof, else those it tried again: a way on, not a refusal.
              offered: [...remaining, ...retriable],
            });
            // The step claim outlasts the POST from here, whatever the admission took; lost meanwhile, nothing is paid.
            const kept = await this.records.renewStep(claim);
            if (!kept) {
              const failure = switchInProgress();
              await permit.rollback({ nothingSent: true, failure });
              throw failure;
            }
            claim = kept;
            record = await this.paid.pay(order, permit);
            resendAvailableAt = permit.resendAvailableAt;
          }
        } catch (error) {
          await this.records.releaseStep(claim).catch(() => undefined);
          throw error;
        }

        // Record the step (the claim stays: it expires on its own, and this step is taken); status
        // streams of the journey move to the new session.
        const moved = withStep(latest, {
          requestId: record.requestId,
          method: record.method,
          startedAt: record.createdAt,
        });
        await this.records.saveJourney(moved, record.expiresAt);
        await this.records.announce(journeyId);
        const caller = callerOf(input.owner, clientKey);
        await this.outcomes.started('switch', {
          record,
          resumed: false,
          owner: input.owner,
          caller,
          ip: input.ip,
          device: moved.device,
          earlier: latest.steps,
          began: facts.began,
        });

        const view = toStartView(input.verificationId, record, resendAvailableAt, false);
        span.set({ method: view.method, outcome: view.status, test: isTestSession(journeyId) });
        return { ...view, ...this.handles.token(moved, input.owner) };
      } catch (error) {
        span.set({ method: facts.method });
        throw await this.outcomes.refused('switch', error, facts, input.owner);
      }
    });
  }

  async cancel(input: CancelInput): Promise<CancelView> {
    return this.outcomes.span('cancel', async (span) => {
      try {
        const journeyId = await this.handles.openCarrying(
          input.verificationId,
          input.owner,
          input.journeyToken,
        );
        // A cancel writes to the store for its caller: it counts as a check does against the caller's
        // limit (a test number's too: the caller's limits are the same for every number).
        await this.protection.assertCheckAllowed(this.protection.clientKey(input.request, input.ip));
        const canceled: CancelView = { verificationId: input.verificationId, status: 'canceled' };
        const seen = await this.journeyState.load(journeyId, input.owner);
        if (seen.journey.canceledAt !== undefined) {
          span.set({ outcome: 'canceled', test: isTestSession(journeyId) });
          return canceled;
        }
        // Once more, fresh from the API, before letting go: the user may have just finished a step.
        const loaded = await this.status.readPendingNow(seen);
        const { status } = answeringSession(loaded.journey, loaded.records, loaded.current);
        if (status === 'verified') throw notPending('verified');
        const claim = await this.records.claimStep(journeyId, loaded.journey.steps.length);
        if (!claim) throw switchInProgress();
        try {
          const latest = (await this.records.getJourney(journeyId)) ?? loaded.journey;
          await this.records.saveJourney(
            { ...latest, canceledAt: this.options.clock() },
            loaded.current.expiresAt,
          );
        } finally {
          await this.records.releaseStep(claim).catch(() => undefined);
        }
        // With webhooks, nothing more is polled (a late outcome arrives by webhook); without them the
        // reconciler follows the pending sessions to their end (see VerificationReconciler).
        if (this.options.webhooks.enabled)
          for (const record of loaded.records)
            if (record && !isTerminal(record.status)) await this.records.queue.release(record.requestId);
        await this.records.announce(journeyId);
        this.outcomes.telemetry.canceled(loaded.current, loaded.journey.steps.length);
        span.set({ outcome: 'canceled', test: isTestSession(journeyId) });
        return canceled;
      } catch (error) {
        throw this.outcomes.failed('cancel', error);
      }
    });
  }
}

/** The method a switch names (canonical), or undefined for the policy's next (`auto` or none). */
function namedMethod(method: unknown): string | undefined {
  if (method === undefined || method === AUTO) return undefined;
  if (typeof method !== 'string') throw fieldError('method', 'method must be a string');
  return normalizeMethod(method);
}

function isKnown(method: string): method is KnownVerificationMethod {
  return (VERIFICATION_METHODS as readonly string[]).includes(method);
}
