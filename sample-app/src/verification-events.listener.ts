import { Injectable } from '@nestjs/common';
import { OnVerificationEvent, type VerificationEvent } from 'nestjs-phone-verification';
import { DemoUserAccount } from './demo-user-account.service.js';
import { HostEventLog } from './host-event-log.service.js';
import { VerificationTarget } from './verification-target.js';

/**
 * The host's side of the events: what a real app does when a number is verified (mark it on the
 * user's account), plus a log of every event for the page. The module emits each outcome once.
 */
@Injectable()
export class VerificationEventsListener {
  constructor(
    private readonly account: DemoUserAccount,
    private readonly log: HostEventLog,
    private readonly target: VerificationTarget,
  ) {}

  @OnVerificationEvent('verified')
  onVerified(event: VerificationEvent): void {
    this.account.markPhoneVerified(
      event.phoneNumber,
      event.method,
      event.verifiedAt ?? new Date(this.target.now()),
    );
    this.log.record(event, this.target.now(), "marked the number verified on the demo user's account");
  }

  @OnVerificationEvent('failed')
  onFailed(event: VerificationEvent): void {
    this.log.record(event, this.target.now(), 'nothing to do: the number stays unverified');
  }

  @OnVerificationEvent('expired')
  onExpired(event: VerificationEvent): void {
    this.log.record(event, this.target.now(), 'nothing to do: the number stays unverified');
  }

  @OnVerificationEvent('code_required')
  onCodeRequired(event: VerificationEvent): void {
    this.log.record(event, this.target.now(), 'the page shows a code field (it sees awaiting_code)');
  }
}
