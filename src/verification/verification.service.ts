import { Injectable } from '@nestjs/common';
import { CheckFlow } from './check.flow.js';
import { StartFlow } from './start.flow.js';
import type { UpstreamRead } from '../protection/status-read-meter.js';
import { StatusFlow } from './status.flow.js';
import { SwitchFlow } from './switch.flow.js';
import type {
  CancelInput,
  CancelView,
  CheckInput,
  CheckView,
  MethodView,
  StartInput,
  StartView,
  StatusView,
  SwitchInput,
  VerifiedFacts,
} from './verification.views.js';

/**
 * The operations behind the client routes, for hosts that mount their own routes too; each is run
 * by its flow (StartFlow, SwitchFlow, CheckFlow, StatusFlow). Every error a caller
 * receives is a VerificationError (an HttpException): a refusal is a VerificationClientError, and
 * anything else that went wrong inside (store down, upstream garbage, a bug) becomes a 503
 * `service_unavailable` one, its cause logged for the operator.
 */
@Injectable()
export class VerificationService {
  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    private readonly starts: StartFlow,
    private readonly switches: SwitchFlow,
    private readonly checks: CheckFlow,
    private readonly reads: StatusFlow,
  ) {}

  /**
   * Starts a verification (or hands back the caller's identical pending one). `method` may be `auto`
   * (or left out): the orchestration policy picks the first method it offers for the device hint.
   */
  start(input: StartInput): Promise<StartView> {
    return this.starts.start(input);
  }

  /**
   * Moves a journey to another method for the same number: the named one, or the policy's next.
   * The new session is paid for under the same protection as a start (limits, spend cap, pumping
   * defence; the resend cooldown is its own method's), one switch per journey at a time across
   * every instance (a step claim in the store). The previous session is no longer followed for the
   * frontend; the reconciler follows it to its outcome, whose events still fire.
   */
  switchMethod(input: SwitchInput): Promise<StartView> {
    return this.switches.switchMethod(input);
  }

  /**
   * Ends a journey for the frontend (`canceled`, idempotent), after one more fresh look at its pending
   * steps (an outcome of the last second is emitted and refuses the cancel). Its status polls stop
   * asking the API. A late outcome still reaches listeners: by webhook, or without webhooks through
   * the reconciler, which follows the pending sessions to their end at the lazy pace. A verified
   * journey is not canceled (409 `not_pending`).
   */
  cancel(input: CancelInput): Promise<CancelView> {
    return this.switches.cancel(input);
  }

  /** Submits a code. `verified: false` with `status: 'sent'` means operator_id accepted it and the result follows. */
  check(input: CheckInput): Promise<CheckView> {
    return this.checks.check(input);
  }

  /**
   * The verification (its journey) as a frontend may see it: the current method's session, fresh
   * within one poll interval, with the methods tried, those it may switch to and when. `from` (the
   * caller's request and IP) names whose metered upstream reads a fresh read takes (without an owner).
   */
  status(
    verificationId: string,
    owner?: string,
    journeyToken?: string,
    from?: { request?: unknown; ip?: string },
  ): Promise<StatusView> {
    return this.reads.status(verificationId, owner, journeyToken, from);
  }

  /**
   * The methods this deployment offers to frontends (see PriceBook.offered); with a `purpose`, only
   * those its policy allows (`purposes`), a purpose not accepted here refused as on a start.
   */
  methods(purpose?: string): Promise<MethodView[]> {
    return this.reads.methods(purpose);
  }

  /**
   * The E.164 number the start asked for, once the API says its session verified, or null (a session seen
   * verified is final and answered from its record; a pending one is read at most once per poll interval),
   * so the host never has to trust a frontend's claim. Any method of the journey may have verified it
   * (the newest is asked first); a canceled journey answers null.
   */
  getVerifiedPhone(verificationId: string, owner?: string, journeyToken?: string): Promise<string | null> {
    return this.reads.verifiedPhone(verificationId, owner, journeyToken);
  }

  /** @internal VerifiedPhoneGuard's read (`StatusFlow.verifiedFacts`); `mayAsk` meters upstream reads. */
  verifiedFacts(
    verificationId: string,
    owner: string | undefined,
    mayAsk: (read: UpstreamRead) => Promise<boolean>,
  ): Promise<VerifiedFacts> {
    return this.reads.verifiedFacts(verificationId, owner, mayAsk);
  }
}
