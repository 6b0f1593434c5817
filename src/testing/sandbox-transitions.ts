import type { SandboxAccount, SandboxAccounts } from './sandbox-accounts.js';
import { charge, CHARGE_MOMENT } from './sandbox-billing.js';
import type { SandboxClock } from './sandbox-clock.js';
import { flashCallerNumber, randomCode } from './sandbox-phone.js';
import { TERMINAL, type SandboxSession } from './sandbox-session.js';
import type { SandboxWebhooks, WebhookEvent } from './sandbox-webhooks.js';

/**
 * The moves of a session between the spec's states after its start: each sets the session's fields,
 * charges what the move charges and emits its webhook, exactly once. SandboxState (the API, the
 * control routes) and the simulated users decide when a move happens.
 */
export class SandboxTransitions {
  constructor(
    private readonly accounts: SandboxAccounts,
    private readonly clock: SandboxClock,
    private readonly webhooks: SandboxWebhooks,
  ) {}

  /** TTL elapsed (or operator consent timeout): sent/delivered → expired. */
  expire(session: SandboxSession): void {
    if (TERMINAL.has(session.status)) return;
    session.status = 'expired';
    session.awaitingCode = false;
    session.updatedAt = this.clock.now();
    this.emit(session, 'verification.expired');
  }

  /** msgr2_bot: the user shared the verified number; the bot sends the code (charged now). */
  sendBotCode(session: SandboxSession): void {
    const now = this.clock.now();
    session.code = randomCode(session.codeLength);
    session.status = 'delivered';
    session.awaitingCode = true;
    session.updatedAt = now;
    session.deliveredAt = now;
    charge(this.accountOf(session), session, now);
  }

  /** operator_id: the SIM push cannot complete; an SMS code goes out instead. */
  fallBackToSms(session: SandboxSession): void {
    const now = this.clock.now();
    session.operatorState = 'sms_fallback';
    session.code = randomCode(session.codeLength);
    session.awaitingCode = true;
    session.updatedAt = now;
    session.deliveredAt = now;
    this.emit(session, 'verification.code_required');
  }

  deliverCode(session: SandboxSession): void {
    session.status = 'delivered';
    session.updatedAt = this.clock.now();
    session.deliveredAt = this.clock.now();
    if (session.method === 'flash_call') session.incomingNumber = flashCallerNumber(session.code!);
    if (CHARGE_MOMENT[session.method] === 'delivery')
      charge(this.accountOf(session), session, this.clock.now());
  }

  verify(session: SandboxSession): void {
    const now = this.clock.now();
    session.status = 'verified';
    session.verifiedAt = now;
    session.awaitingCode = false;
    session.updatedAt = now;
    // reverse_flash_call is charged now; a delivery-charged session verified straight from `sent` had its
    // code delivered (a correct code proves it), so it is charged now too.
    if (CHARGE_MOMENT[session.method] !== 'initiation') charge(this.accountOf(session), session, now);
    this.emit(session, 'verification.verified');
  }

  fail(session: SandboxSession): void {
    session.status = 'failed';
    session.awaitingCode = false;
    session.updatedAt = this.clock.now();
    this.emit(session, 'verification.failed');
  }

  private emit(session: SandboxSession, event: WebhookEvent): void {
    this.webhooks.emit(this.accountOf(session), event, session);
  }

  private accountOf(session: SandboxSession): SandboxAccount {
    return this.accounts.get(session.apiKey)!;
  }
}
