import { Inject, Injectable } from '@nestjs/common';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { answeringSession } from '../core/journey.js';
import { isTestSession } from '../core/test-session.js';
import { CODE_RULE, isVerificationCode } from '../core/verification-code.js';
import { methodTraits } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationProtection } from '../protection/verification-protection.service.js';
import { VerificationTracker } from '../sessions/verification.tracker.js';
import { checkRefusal } from './check-refusal.js';
import { fieldError, notPending } from './client-refusals.js';
import { FlowOutcomes, forgottenMeanwhile, type FlowFacts } from './flow-outcomes.js';
import { JourneyHandles } from './journey-handles.js';
import { JourneyState } from './journey-state.js';
import { apiSaidWrongCode, upstreamClientError } from './upstream-error.mapper.js';
import type { CheckInput, CheckView } from './verification.views.js';

/** A test number's check holds nothing of protection's wrong-code budgets. */
const NOTHING_HELD = { settle: async (_wrongCode: boolean): Promise<void> => undefined };

/**
 * `POST /check`, top to bottom: open the journey, count the call against the caller's check limit,
 * find the session the code is for (the journey's current one) and refuse what cannot be checked,
 * hold a point of the wrong-code budgets, ask the API, settle the hold, observe the outcome, answer.
 * `verified: false` with `status: 'sent'` means operator_id accepted the code and the result follows.
 */
@Injectable()
export class CheckFlow {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly protection: VerificationProtection,
    private readonly handles: JourneyHandles,
    private readonly api: VerificationApiClient,
    private readonly journeys: JourneyState,
    private readonly tracker: VerificationTracker,
    private readonly balance: VerificationBalanceWatch,
    private readonly outcomes: FlowOutcomes,
  ) {}

  async check(input: CheckInput): Promise<CheckView> {
    const facts: FlowFacts = { began: Date.now(), ip: input.ip };
    return this.outcomes.span('check', async (span) => {
      try {
        // Open the journey; a test number's checks are held by its own budgets (TestNumberSessions).
        const journeyId = this.handles.open(input.verificationId, input.owner);
        facts.requestId = journeyId;
        if (!isVerificationCode(input.code)) throw fieldError('code', `code must be ${CODE_RULE}`);
        const test = isTestSession(journeyId);
        // The caller's check limit holds for every number, a test number's included. The journey is
        // read with it (one round trip), unless a token may rebuild it: a refused check adopts nothing.
        const limit = this.protection.assertCheckAllowed(this.protection.clientKey(input.request, input.ip));
        if (input.journeyToken !== undefined) {
          await limit;
          await this.handles.adopt(journeyId, input.owner, input.journeyToken);
        }
        // The code is the current method's: a journey checks it against its current session.
        const [allowed, read] = await Promise.allSettled([limit, this.handles.load(journeyId, input.owner)]);
        // The limit's refusal comes first, as when the journey was read after it.
        if (allowed.status === 'rejected') throw allowed.reason;
        if (read.status === 'rejected') throw read.reason;
        const loaded = read.value;
        const record = loaded.current;
        facts.method = record.method;
        facts.phoneNumber = record.phoneNumber;
        // Over for the frontend: canceled, or verified by a method it switched away from.
        const journeyStatus = answeringSession(loaded.journey, loaded.records, record).status;
        if (journeyStatus === 'canceled' || (journeyStatus === 'verified' && record.status !== 'verified'))
          throw notPending(journeyStatus);
        // As a method not offered: the methods the frontend may switch to instead.
        if (methodTraits(record.method).codeEntry === 'never')
          throw new VerificationClientError(
            'method_not_available',
            'This verification is confirmed by the call; there is no code to check',
            { available_methods: (await this.journeys.options(loaded)).switchable },
          );
        if (isTerminal(record.status)) throw notPending(record.status);
        if (record.expiresAt <= this.options.clock()) throw notPending('expired');

        // Hold a point of the wrong-code budgets, ask the API, settle the hold.
        const wrongCodes = test
          ? NOTHING_HELD
          : await this.protection.holdWrongCode(record.phoneNumber, input.owner);
        let result;
        try {
          result = await this.api.check({ requestId: record.requestId, code: input.code });
        } catch (error) {
          const [failure, erased] = await Promise.all([
            checkRefusal(error, record, {
              now: this.options.clock(),
              refresh: (stale) => this.journeys.readNowQuietly(stale),
              upstreamFailure: (cause) => upstreamClientError(cause, this.balance),
            }),
            this.tracker.wasErased(record.requestId),
          ]);
          await wrongCodes.settle(!erased && apiSaidWrongCode(error, failure));
          if (erased) throw forgottenMeanwhile();
          throw failure;
        }
        const [, erased] = await Promise.all([
          wrongCodes.settle(false),
          this.tracker.wasErased(record.requestId),
        ]);
        if (erased) throw forgottenMeanwhile();

        // Record and observe the outcome, answer.
        await this.outcomes.codeChecked(record, result.status, input.owner);
        const observed = await this.tracker.observeQuietly(
          {
            ...result,
            method: record.method,
            verifiedAt: result.status === 'verified' ? new Date(this.options.clock()) : null,
          },
          'check',
          record,
        );
        this.outcomes.telemetry.checked(observed, Date.now() - facts.began);
        span.set({ method: facts.method, outcome: observed.status, test });
        return {
          verificationId: input.verificationId,
          status: observed.status,
          verified: observed.status === 'verified',
        };
      } catch (error) {
        const test = facts.requestId !== undefined && isTestSession(facts.requestId);
        span.set({ method: facts.method, test });
        throw await this.outcomes.refused('check', error, facts, input.owner);
      }
    });
  }
}
