import { Injectable } from '@nestjs/common';
import { OnVerificationEvent } from '../../src/module/on-verification-event.decorator.js';
import type { VerificationEvent } from '../../src/core/verification-events.js';

/**
 * A host listener written the way the README tells hosts to (`@OnVerificationEvent`). With
 * `failFirst` on, the first delivery of each (request_id, event) throws, as a listener whose
 * database is briefly down would; every delivery is recorded with whether it threw.
 */
@Injectable()
export class FlakyListener {
  failFirst = false;
  readonly deliveries: { event: string; requestId: string; threw: boolean; payload: VerificationEvent }[] =
    [];

  @OnVerificationEvent('verified')
  onVerified(event: VerificationEvent): Promise<void> {
    return this.receive(event);
  }

  @OnVerificationEvent('failed')
  onFailed(event: VerificationEvent): Promise<void> {
    return this.receive(event);
  }

  @OnVerificationEvent('expired')
  onExpired(event: VerificationEvent): Promise<void> {
    return this.receive(event);
  }

  @OnVerificationEvent('code_required')
  onCodeRequired(event: VerificationEvent): Promise<void> {
    return this.receive(event);
  }

  /** Deliveries of one session, as `event` or `event!` (the ones that threw). */
  of(requestId: string): string[] {
    return this.deliveries
      .filter((d) => d.requestId === requestId)
      .map((d) => (d.threw ? `${d.event}!` : d.event));
  }

  private async receive(payload: VerificationEvent): Promise<void> {
    const first = !this.deliveries.some(
      (d) => d.requestId === payload.requestId && d.event === payload.event,
    );
    const threw = this.failFirst && first;
    this.deliveries.push({ event: payload.event, requestId: payload.requestId, threw, payload });
    if (threw) throw new Error('listener storage briefly unavailable');
  }
}
