import { OnEvent, type OnEventOptions } from '@nestjs/event-emitter';
import type { VerificationEventShortName } from '../core/verification-events.js';

/**
 * `@OnVerificationEvent('verified')` listens to `verification.verified`. Unlike a bare `@OnEvent`,
 * errors are not suppressed by default: a listener that throws makes the module release its claim
 * on the event, which is then delivered again (webhook retry or reconciler): at-least-once.
 */
export const OnVerificationEvent = (
  event: VerificationEventShortName | 'balance_low' | 'balance_insufficient' | 'spend_cap_reached',
  options?: OnEventOptions,
): MethodDecorator => OnEvent(`verification.${event}`, { suppressErrors: false, ...options });
