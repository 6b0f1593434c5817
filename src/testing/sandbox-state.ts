import { randomBytes, randomUUID } from 'node:crypto';
import type { SandboxAccounts, SandboxAccount } from './sandbox-accounts.js';
import { populationOption, type ResolvedPopulation } from './sandbox-population.js';
import { canAfford, charge, CHARGE_MOMENT } from './sandbox-billing.js';
import type { SandboxClock } from './sandbox-clock.js';
import { normalizeE164, poolNumberToCall, randomCode } from './sandbox-phone.js';
import type { SandboxScheduler } from './sandbox-scheduler.js';
import { TERMINAL, type SandboxSession } from './sandbox-session.js';
import { rubToKopecks } from './sandbox-money.js';
import { SandboxUsers } from './sandbox-users.js';
import {
  type SandboxAccountInput,
  type OperatorOutcome,
  type ResolvedSandboxOptions,
  type SandboxMethod,
} from './sandbox.options.js';
import { forbidden, notFound, notPending, SandboxProblem, validationError } from './problem.js';
import { checkRequest, initiateRequest, isGuid } from './sandbox-requests.js';
import type { SandboxTransitions } from './sandbox-transitions.js';
import { actOutUser } from './sandbox-user-script.js';
import type { ControlActionResult } from './sandbox-control.types.js';

/** Methods whose code goes out by itself when the account has auto-delivery on. */
const AUTO_DELIVERED: ReadonlySet<SandboxMethod> = new Set(['sms', 'flash_call', 'msgr1_otp']);
const OPERATOR_OUTCOMES: readonly OperatorOutcome[] = ['approve', 'fallback', 'timeout', 'fail'];

export type { ControlActionResult } from './sandbox-control.types.js';

export interface CheckOutcome {
  request_id: string;
  status: string;
  phone_number: string;
}

/**
 * Accounts, sessions and the requests that move them (the API's and the control routes'): every
 * transition of the spec's state table is asked of here, and made by SandboxTransitions, so billing
 * and events follow each transition exactly once.
 */
export class SandboxState {
  readonly users = new SandboxUsers();
  /** `SandboxOptions.population`: the population of every account created without its own. */
  private readonly defaultPopulation: ResolvedPopulation | null;
  private readonly sessions = new Map<string, SandboxSession>();
  private readonly byPhone = new Map<string, SandboxSession[]>();

  constructor(
    private readonly options: ResolvedSandboxOptions,
    private readonly clock: SandboxClock,
    private readonly scheduler: SandboxScheduler,
    readonly accounts: SandboxAccounts,
    private readonly move: SandboxTransitions,
  ) {
    this.defaultPopulation = populationOption(options.population);
  }

  /** A new account: no auto-delivery unless asked; the sandbox's default population unless it brings its own. */
  createAccount(input: SandboxAccountInput): SandboxAccount {
    return this.accounts.create(input, { autoDeliver: false, population: this.defaultPopulation });
  }

  get(requestId: string): SandboxSession | undefined {
    return this.sessions.get(requestId);
  }

  /** Sessions of a phone number across accounts, newest first. */
  forPhone(phoneNumber: string): SandboxSession[] {
    const normalized = normalizeE164(phoneNumber) ?? phoneNumber;
    return [...(this.byPhone.get(normalized) ?? [])].reverse();
  }

  /** Every session of an account, oldest first. */
  ofAccount(apiKey: string): SandboxSession[] {
    return [...this.sessions.values()].filter((s) => s.apiKey === apiKey);
  }

  /** A session of `account`; another account's session is as unknown as a missing one. */
  find(account: SandboxAccount, requestId: string): SandboxSession {
    const session = isGuid(requestId) ? this.sessions.get(requestId.toLowerCase()) : undefined;
    if (!session || session.apiKey !== account.apiKey) throw notFound();
    return session;
  }

  /** `POST /v1/verify`: validates everything before changing anything; charges only what initiation charges. */
  initiate(account: SandboxAccount, body: unknown): SandboxSession {
    const { phoneNumber, method, expirySeconds, asked } = initiateRequest(
      body,
      this.options.minExpirySeconds,
    );
    if (!account.enabledMethods.has(method)) {
      if (this.options.methodNotEnabled === 403) throw forbidden();
      throw new SandboxProblem(
        400,
        'method_not_enabled',
        `The method ${String(asked)} is not enabled for this account.`,
      );
    }
    const price = account.pricesKopecks[method];
    if (!canAfford(account, price)) {
      throw new SandboxProblem(
        402,
        'insufficient_balance',
        'The balance does not cover the price of this verification.',
      );
    }

    const now = this.clock.now();
    const codeLength = this.options.codeLengths[method];
    const session: SandboxSession = {
      requestId: randomUUID(),
      apiKey: account.apiKey,
      phoneNumber,
      method,
      status: 'sent',
      // A code exists from the start for the methods that send one at once; msgr2_bot and operator_id
      // make theirs when the share or the SMS fallback happens; reverse_flash_call has none.
      code: AUTO_DELIVERED.has(method) ? randomCode(codeLength) : null,
      codeLength,
      incomingNumber: null,
      numberToCall: method === 'reverse_flash_call' ? poolNumberToCall() : null,
      deepLink:
        method === 'msgr2_bot'
          ? `https://msgr2.example/sandbox_verify_bot?start=${randomBytes(12).toString('hex')}`
          : null,
      attemptsRemaining: account.codeAttempts,
      awaitingCode: AUTO_DELIVERED.has(method),
      charged: false,
      chargedAt: null,
      costKopecks: price,
      createdAt: now,
      expiresAt: now + expirySeconds * 1000,
      verifiedAt: null,
      updatedAt: now,
      operatorState: method === 'operator_id' ? 'push_pending' : null,
      sharedPhoneNumber: null,
      acceptedCode: null,
      deliveredAt: null,
      user: null,
    };
    if (CHARGE_MOMENT[method] === 'initiation') charge(account, session, now);
    this.sessions.set(session.requestId, session);
    const list = this.byPhone.get(phoneNumber) ?? [];
    const attempt = 1 + list.filter((s) => s.apiKey === account.apiKey && s.method === method).length;
    list.push(session);
    this.byPhone.set(phoneNumber, list);

    this.scheduler.at(session.expiresAt, () => this.move.expire(session));
    session.user =
      (account.population && this.users.draw(account.population, phoneNumber, method, attempt)) ?? null;
    if (session.user) {
      // A simulated user replaces auto-delivery for the methods the population covers.
      actOutUser(session, this.scheduler, this.move);
    } else if (account.autoDeliver && AUTO_DELIVERED.has(method)) {
      this.scheduler.at(now + this.options.autoDeliverDelayMs, () => {
        if (session.status === 'sent') this.move.deliverCode(session);
      });
    }
    return session;
  }

  /** `POST /v1/verify/check`. */
  check(account: SandboxAccount, body: unknown): CheckOutcome {
    const { requestId, code } = checkRequest(body);
    const session = this.find(account, requestId);
    const outcome = (): CheckOutcome => ({
      request_id: session.requestId,
      status: session.status,
      phone_number: session.phoneNumber,
    });

    if (session.method === 'reverse_flash_call') {
      throw notPending('A reverse_flash_call session is confirmed by the incoming call, not by a code.');
    }
    if (session.status === 'expired') {
      if (this.options.expiredCheckStatus === 400) {
        throw new SandboxProblem(400, 'invalid_code', 'The session has expired.', { attempts_remaining: 0 });
      }
      throw notPending('The session has expired.');
    }
    if (TERMINAL.has(session.status)) throw notPending(`The session is already ${session.status}.`);
    if (session.method === 'operator_id') {
      if (session.operatorState === 'push_pending') {
        throw notPending(
          'The operator push is still pending; a code can be entered only after the SMS fallback.',
        );
      }
      if (session.operatorState === 'code_accepted') {
        // The 2026-09-21 behaviour: a resubmission is 409 and spends no attempt.
        throw notPending('The operator has already accepted a code for this session; the result follows.');
      }
    }
    if (session.method === 'msgr2_bot' && session.status === 'sent') {
      throw notPending('No code has been sent yet: the user has not shared the number in the bot.');
    }

    if (code !== session.code) {
      session.attemptsRemaining = Math.max(0, session.attemptsRemaining - 1);
      if (session.attemptsRemaining === 0) this.move.fail(session);
      throw new SandboxProblem(400, 'invalid_code', 'The code is wrong.', {
        attempts_remaining: session.attemptsRemaining,
      });
    }
    if (session.method === 'operator_id') {
      session.operatorState = 'code_accepted';
      session.acceptedCode = code;
      session.awaitingCode = false;
      this.scheduler.at(this.clock.now() + this.options.operatorResultDelayMs, () => {
        if (session.operatorState === 'code_accepted' && !TERMINAL.has(session.status))
          this.move.verify(session);
      });
      return outcome(); // status stays `sent`: the operator's result follows asynchronously
    }
    this.move.verify(session);
    return outcome();
  }

  /** Control: the code or call goes out (sent → delivered) for sms, flash_call and msgr1_otp. */
  deliver(requestId: string): ControlActionResult {
    const session = this.controlSession(requestId);
    if (!AUTO_DELIVERED.has(session.method)) {
      const how: Record<string, string> = {
        msgr2_bot: 'msgr2_bot sends its code only after the user shares the number: use /share.',
        reverse_flash_call: 'reverse_flash_call has nothing to deliver; the user calls: use /call.',
        operator_id: 'operator_id is driven by the operator: use /operator.',
      };
      throw new SandboxProblem(409, 'not_applicable', how[session.method]!);
    }
    if (session.status === 'delivered') return { result: 'already_delivered', detail: 'Already delivered.' };
    this.move.deliverCode(session);
    return { result: 'delivered', detail: `The ${session.method} code went out.` };
  }

  /** Control: the user shares `phone` in the msgr2 bot; only the verified number gets a code. */
  share(requestId: string, phone: unknown): ControlActionResult {
    const session = this.controlSession(requestId);
    if (session.method !== 'msgr2_bot')
      throw new SandboxProblem(409, 'not_applicable', 'Only msgr2_bot sessions take a share.');
    const shared = normalizeE164(phone);
    if (!shared) throw validationError('phone_number must be an E.164 number.');
    session.sharedPhoneNumber = shared;
    if (shared !== session.phoneNumber) {
      return {
        result: 'ignored',
        detail: `${shared} is not the number being verified; no code was sent, nothing was charged.`,
      };
    }
    if (session.status === 'delivered')
      return { result: 'already_delivered', detail: 'The code was already sent.' };
    this.move.sendBotCode(session);
    return { result: 'delivered', detail: 'The bot sent the code.' };
  }

  /** Control: an incoming call to `number_to_call` from caller ID `from`; only the verified number confirms. */
  call(requestId: string, from: unknown): ControlActionResult {
    const session = this.controlSession(requestId);
    if (session.method !== 'reverse_flash_call') {
      throw new SandboxProblem(409, 'not_applicable', 'Only reverse_flash_call sessions take a call.');
    }
    const caller = normalizeE164(from);
    if (!caller) throw validationError('from must be an E.164 number.');
    if (caller !== session.phoneNumber) {
      return {
        result: 'ignored',
        detail: `A call from ${caller} does not match the number being verified; no change.`,
      };
    }
    this.move.verify(session);
    return { result: 'verified', detail: 'The caller ID matched.' };
  }

  /** Control: the operator's SIM push outcome for an operator_id session. */
  operator(requestId: string, outcome: unknown): ControlActionResult {
    const session = this.controlSession(requestId);
    if (session.method !== 'operator_id') {
      throw new SandboxProblem(409, 'not_applicable', 'Only operator_id sessions take an operator outcome.');
    }
    if (!(OPERATOR_OUTCOMES as readonly unknown[]).includes(outcome)) {
      throw validationError(`outcome must be one of ${OPERATOR_OUTCOMES.join(', ')}.`);
    }
    switch (outcome as OperatorOutcome) {
      case 'approve':
        session.operatorState = 'approved';
        this.move.verify(session);
        return { result: 'verified', detail: 'The subscriber approved the push.' };
      case 'fallback':
        if (session.operatorState !== 'push_pending') {
          throw notPending(`The SMS fallback already happened (operator state ${session.operatorState}).`);
        }
        this.move.fallBackToSms(session);
        return { result: 'code_required', detail: 'The push could not complete; an SMS code was sent.' };
      case 'timeout':
        session.operatorState = 'timed_out';
        this.move.expire(session);
        return { result: 'expired', detail: 'The operator consent timed out.' };
      case 'fail':
        session.operatorState = 'failed';
        this.move.fail(session);
        return { result: 'failed', detail: 'The operator could not verify the number.' };
    }
  }

  /** Control: a terminal error on the service side ("verification cannot complete"): sent/delivered → failed. */
  failSession(requestId: string): ControlActionResult {
    const session = this.controlSession(requestId);
    if (session.method === 'operator_id') session.operatorState = 'failed';
    this.move.fail(session);
    return { result: 'failed', detail: 'The verification cannot complete.' };
  }

  /**
   * Control: the service recalculates a charged session (the spec's technical issues): what it
   * debited becomes `amount` (RUB, 0: all of it credited back) and the balance takes the difference.
   * `cost` and the session's status stay as they were; `GET /v1/usage` counts the new amount.
   */
  recalculate(requestId: string, amount: unknown): ControlActionResult {
    const session = isGuid(requestId) ? this.sessions.get(requestId.toLowerCase()) : undefined;
    if (!session) throw notFound('No such verification session.');
    const kopecks = rubToKopecks(amount);
    if (kopecks === undefined || kopecks < 0)
      throw validationError('amount must be a number of RUB >= 0 with at most 2 decimal places.');
    if (!session.charged)
      throw new SandboxProblem(409, 'not_applicable', 'Nothing was charged for this session.');
    const account = this.accounts.get(session.apiKey)!;
    account.balanceKopecks += (session.recalculatedKopecks ?? session.costKopecks) - kopecks;
    session.recalculatedKopecks = kopecks;
    return { result: 'recalculated', detail: `The session's charge is now ${kopecks / 100} RUB.` };
  }

  /** A session a control action applies to: it must exist and still be pending. */
  private controlSession(requestId: string): SandboxSession {
    const session = isGuid(requestId) ? this.sessions.get(requestId.toLowerCase()) : undefined;
    if (!session) throw notFound('No such verification session.');
    if (TERMINAL.has(session.status)) throw notPending(`The session is already ${session.status}.`);
    return session;
  }
}
