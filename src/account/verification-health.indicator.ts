import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { VerificationApiError, VerificationApiUnavailableError } from '../api/verification-api.error.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationBalanceWatch, type BalanceReading } from './balance-watch.service.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

export type VerificationHealthStatus = 'up' | 'down' | 'degraded';

/** Terminus' result shape: `{ [key]: { status, ...details } }`. */
export type VerificationHealthResult<Key extends string = string> = Record<
  Key,
  { status: VerificationHealthStatus; [detail: string]: unknown }
>;

/** Why the indicator is not up. */
export type VerificationHealthReason =
  | 'api_unreachable'
  | 'api_timeout'
  | 'api_rejected'
  | 'api_error'
  | 'balance_exhausted'
  | 'balance_below_threshold';

export interface VerificationHealthOptions {
  /** Lowest healthy balance. Default `balanceWatch.threshold`, else any balance above zero. */
  threshold?: number;
  /** Longest wait for the balance read. Default 3000 ms. */
  timeoutMs?: number;
  /**
   * Status for a balance above zero but below the threshold: `down` (default) or terminus 12's
   * `degraded` (still serving; the check stays 200). A zero balance is always `down`.
   */
  lowBalance?: 'down' | 'degraded';
}

/** What the indicator needs of terminus' `HealthIndicatorService` (terminus 11 and 12). */
interface IndicatorSessionLike {
  up(data?: Record<string, unknown>): Record<string, unknown>;
  down(data?: Record<string, unknown>): Record<string, unknown>;
  degraded?(data?: Record<string, unknown>): Record<string, unknown>;
}
interface HealthIndicatorServiceLike {
  check(key: string): IndicatorSessionLike;
}

const DEFAULT_TIMEOUT_MS = 3000;

class HealthReadTimeout extends PhoneVerificationError {}

/**
 * Health of phone verification for `@nestjs/terminus`: up when the API answers with the account's
 * balance and the balance is above the threshold; down otherwise, with a `reason` and a `message`.
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.verification.isHealthy('verification')]); }
 * ```
 *
 * Terminus is an optional peer dependency: it is never imported statically. When it is installed,
 * results are built by its `HealthIndicatorService` (the host's instance when TerminusModule is
 * imported); without it the indicator returns the same shape by itself. Each call reads the balance
 * (concurrent calls share one request) and feeds the balance watch's threshold rules.
 */
@Injectable()
export class VerificationHealthIndicator {
  #terminus: Promise<HealthIndicatorServiceLike | null> | undefined;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly watch: VerificationBalanceWatch,
    private readonly moduleRef: ModuleRef,
  ) {}

  async isHealthy<const Key extends string = 'verification'>(
    key: Key = 'verification' as Key,
    options: VerificationHealthOptions = {},
  ): Promise<VerificationHealthResult<Key>> {
    const threshold = options.threshold ?? this.options.balanceWatch?.threshold ?? 0;
    let reading: BalanceReading;
    try {
      reading = await this.#read(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    } catch (error) {
      return this.#result(key, 'down', failureDetails(error));
    }
    const balance = { balance: reading.amount, currency: reading.currency, threshold };
    if (reading.amount <= 0)
      return this.#result(key, 'down', {
        reason: 'balance_exhausted',
        message: 'The prepaid balance is exhausted: every start is refused (402)',
        ...balance,
      });
    if (reading.amount < threshold)
      return this.#result(key, options.lowBalance ?? 'down', {
        reason: 'balance_below_threshold',
        message: `The prepaid balance is below ${threshold} ${reading.currency}`,
        ...balance,
      });
    return this.#result(key, 'up', balance);
  }

  async #read(timeoutMs: number): Promise<BalanceReading> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HealthReadTimeout('balance read timed out')), timeoutMs);
    });
    try {
      return await Promise.race([this.watch.checkNow(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #result<Key extends string>(
    key: Key,
    status: VerificationHealthStatus,
    details: Record<string, unknown>,
  ): Promise<VerificationHealthResult<Key>> {
    const terminus = await this.#loadTerminus();
    if (terminus) {
      const session = terminus.check(key);
      if (status === 'up') return session.up(details) as VerificationHealthResult<Key>;
      // Terminus 11 has no `degraded`: the low balance is reported as down there.
      if (status === 'degraded' && session.degraded)
        return session.degraded(details) as VerificationHealthResult<Key>;
      return session.down(details) as VerificationHealthResult<Key>;
    }
    return { [key]: { status, ...details } } as VerificationHealthResult<Key>;
  }

  #loadTerminus(): Promise<HealthIndicatorServiceLike | null> {
    this.#terminus ??= import('@nestjs/terminus').then(
      ({ HealthIndicatorService }) => {
        try {
          return this.moduleRef.get(HealthIndicatorService, { strict: false }) as HealthIndicatorServiceLike;
        } catch {
          return new HealthIndicatorService() as HealthIndicatorServiceLike;
        }
      },
      () => null,
    );
    return this.#terminus;
  }
}

function failureDetails(error: unknown): { reason: VerificationHealthReason; [detail: string]: unknown } {
  if (error instanceof HealthReadTimeout)
    return { reason: 'api_timeout', message: 'The verification API did not answer in time' };
  if (error instanceof VerificationApiError) {
    const rejected = error.status === 401 || error.status === 403;
    return {
      reason: rejected ? 'api_rejected' : 'api_error',
      message: rejected
        ? `The verification API refused the credentials (HTTP ${error.status})`
        : `The verification API answered HTTP ${error.status}`,
      upstream_status: error.status,
    };
  }
  if (error instanceof VerificationApiUnavailableError) {
    if (error.reason === 'forbidden')
      return {
        reason: 'api_rejected',
        message: 'The verification API refused the account (HTTP 403)',
        upstream_status: 403,
      };
    const reasons: Record<string, VerificationHealthReason> = {
      timeout: 'api_timeout',
      network: 'api_unreachable',
    };
    return {
      reason: reasons[error.reason] ?? 'api_error',
      message: `The verification API gave no usable answer (${error.reason})`,
      ...(error.status !== undefined ? { upstream_status: error.status } : {}),
    };
  }
  return { reason: 'api_error', message: 'The balance could not be read' };
}
