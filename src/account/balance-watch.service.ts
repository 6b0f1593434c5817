import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { VerificationOpsEventName, type BalanceEvent } from '../core/verification-events.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationAccountService } from './verification-account.service.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { errorText } from '../core/error-text.js';
import { VerificationLedger } from '../ledger/verification-ledger.service.js';

/** Set while the balance is below the threshold: `verification.balance_low` is emitted by whoever sets it. */
export const BALANCE_LOW_KEY = 'ops:balance-low';
/** A balance that stays low is announced again after this long (store clock). */
const BALANCE_LOW_REMINDER_MS = 7 * 24 * 3_600_000;
/** On a 402 the amount is read for the event, but the frontend's answer does not wait longer than this. */
const INSUFFICIENT_READ_TIMEOUT_MS = 2000;
/** A reading this recent (real time) is reused for a 402's event instead of another read. */
const RECENT_READING_MS = 5000;

export interface BalanceReading {
  amount: number;
  currency: string;
  /** `balanceWatch.threshold`, when configured. */
  threshold: number | undefined;
  /** Below the threshold (or at or below zero). */
  low: boolean;
}

/**
 * Watches the prepaid balance so the host hears that verifications are about to stop before its
 * users do. With `balanceWatch: { intervalMs, threshold }` it reads the balance on that interval
 * (timers start with the application and are cleared by `app.close()`) and emits
 * `verification.balance_low` once per crossing below the threshold: not again on later low
 * readings, re-armed when a reading is back at or above it. The crossing is marked in the store,
 * so several instances emit it once between them. Each reading goes to the ledger (`ledger`), which
 * compares it with the charges it counted and reconciles yesterday's usage on the same tick. Every 402 on a start emits
 * `verification.balance_insufficient` (one per 402), with the amount when it can be read quickly.
 */
@Injectable()
export class VerificationBalanceWatch implements OnApplicationBootstrap, OnModuleDestroy {
  #timer: ReturnType<typeof setInterval> | undefined;
  #tick: Promise<unknown> | undefined;
  /** Readings are applied in the order they were started; a slower, older one is dropped. */
  #started = 0;
  #applied = 0;
  #applying: Promise<void> = Promise.resolve();
  #last: { reading: BalanceReading; at: number } | undefined;

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly account: VerificationAccountService,
    private readonly telemetry: VerificationTelemetry,
    @Optional() private readonly ledger?: VerificationLedger,
  ) {}

  onApplicationBootstrap(): void {
    const watch = this.options.balanceWatch;
    if (!watch) return;
    this.#timer = setInterval(() => this.#runTick(), watch.intervalMs);
    // A host that forgets app.close() is not kept alive by the watch.
    this.#timer.unref();
    this.#runTick();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#tick;
  }

  /**
   * Reads the balance now and applies the threshold rules (may emit `verification.balance_low`).
   * Rejects with the API client's error when the balance cannot be read.
   */
  async checkNow(): Promise<BalanceReading> {
    const order = ++this.#started;
    const money = await this.account.getBalance();
    const threshold = this.options.balanceWatch?.threshold;
    const reading: BalanceReading = {
      amount: money.amount,
      currency: money.currency,
      threshold,
      low: money.amount <= 0 || (threshold !== undefined && money.amount < threshold),
    };
    this.telemetry.metrics.balance(money);
    await this.ledger?.balanceRead(money);
    const apply = this.#applying.then(() => this.#apply(order, reading));
    this.#applying = apply.catch(() => undefined);
    await apply;
    return reading;
  }

  /**
   * An initiation answered 402: emits `verification.balance_insufficient` once for it, with the
   * balance amount when it could be read within 2 s (or was read in the last 5 s), else null.
   */
  /** An upstream failure reached a route: a 402 raises `verification.balance_insufficient` (one per 402). */
  async noteUpstreamFailure(error: unknown): Promise<void> {
    if (error instanceof VerificationApiError && error.status === 402) await this.reportInsufficient();
  }

  async reportInsufficient(): Promise<void> {
    let reading =
      this.#last && Date.now() - this.#last.at < RECENT_READING_MS ? this.#last.reading : undefined;
    if (!reading) reading = await this.#readWithin(INSUFFICIENT_READ_TIMEOUT_MS);
    const payload: BalanceEvent = {
      event: VerificationOpsEventName.balanceInsufficient,
      amount: reading?.amount ?? null,
      currency: reading?.currency ?? 'RUB',
      threshold: this.options.balanceWatch?.threshold,
    };
    this.telemetry.logger.error('balance insufficient: the API refused a start with 402', {
      amount: payload.amount,
      currency: payload.currency,
    });
    await this.#emit(payload);
  }

  async #apply(order: number, reading: BalanceReading): Promise<void> {
    if (order < this.#applied) return;
    this.#applied = order;
    this.#last = { reading, at: Date.now() };
    const threshold = reading.threshold;
    if (threshold === undefined) return;
    let crossed: boolean;
    try {
      if (reading.amount >= threshold) {
        await this.store.delete(BALANCE_LOW_KEY);
        return;
      }
      crossed = await this.store.setIfAbsent(
        BALANCE_LOW_KEY,
        String(reading.amount),
        BALANCE_LOW_REMINDER_MS,
      );
    } catch (error) {
      // The reading stands; the crossing is decided on the next one, when the store is back.
      this.telemetry.logger.warn('balance watch could not reach the store', {
        error: errorText(error),
      });
      return;
    }
    if (!crossed) return;
    this.telemetry.logger.warn('balance below threshold', {
      amount: reading.amount,
      currency: reading.currency,
      threshold,
    });
    await this.#emit({
      event: VerificationOpsEventName.balanceLow,
      amount: reading.amount,
      currency: reading.currency,
      threshold,
    });
  }

  async #readWithin(ms: number): Promise<BalanceReading | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    try {
      return await Promise.race([this.checkNow().catch(() => undefined), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  #runTick(): void {
    // One read at a time: a slow API does not pile reads up.
    if (this.#tick) return;
    this.#tick = this.checkNow()
      // The ledger's closed day is reconciled on the watch's timer (the module polls nothing else).
      .then(() => this.ledger?.reconcileClosedDay())
      .catch((error: unknown) =>
        this.telemetry.logger.warn('balance watch could not read the balance', {
          error: error instanceof Error ? error.message : 'unknown error',
        }),
      )
      .finally(() => (this.#tick = undefined));
  }

  #emit(payload: BalanceEvent): Promise<void> {
    return this.telemetry.announce(payload);
  }
}
