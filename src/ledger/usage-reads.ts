import { Inject, Injectable } from '@nestjs/common';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { DAY_MS } from '../core/clock.js';
import { toMinorUnits } from '../core/money.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { LedgerKeys } from './ledger-keys.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

/** What `GET /v1/usage` said of one UTC date, and when (module clock). */
export interface UsageReading {
  chargedMinor: number;
  currency: string;
  verifications: number;
  verified: number;
  at: number;
}

/** At most one ledger read of a day's usage this often, across instances. */
export const USAGE_READ_EVERY_MS = 30_000;

/**
 * The module's one reader of `GET /v1/usage` by date: the spend cap's reconcile reads through `read`
 * (it spaces its own reads) and the ledger through `recent`, and every reading is kept in the store
 * (with the ledger on), so the two share what the API said instead of polling it twice.
 */
@Injectable()
export class UsageReads {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly api: VerificationApiClient,
    @Inject(VerificationStore) private readonly store: VerificationStore,
  ) {}

  /** Reads the date's usage now and keeps the reading; rejects when it cannot be read or has no total. */
  async read(date: string): Promise<UsageReading> {
    const usage = await this.api.getUsage({ from: date, to: date });
    const chargedMinor = toMinorUnits(usage.totalCost.amount);
    if (chargedMinor === undefined) throw new PhoneVerificationError('usage: no total cost');
    const reading: UsageReading = {
      chargedMinor,
      currency: usage.totalCost.currency,
      verifications: usage.totalVerifications,
      verified: usage.successful,
      at: this.store.now(),
    };
    const ledger = this.options.ledger;
    if (ledger)
      await this.store.set(LedgerKeys.usage(date), JSON.stringify(reading), ledger.retentionDays * DAY_MS);
    return reading;
  }

  /** The reading kept for the date, if any. */
  async kept(date: string): Promise<UsageReading | undefined> {
    const raw = await this.store.get(LedgerKeys.usage(date));
    if (raw === null) return undefined;
    try {
      const reading = JSON.parse(raw) as UsageReading;
      return Number.isSafeInteger(reading.chargedMinor) ? reading : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * A reading at most `maxAgeMs` old: the kept one, else one read now by the instance that claims the
   * date's read (one per USAGE_READ_EVERY_MS across instances), else the kept one however old. A
   * failed read leaves the kept one.
   */
  async recent(date: string, maxAgeMs: number): Promise<UsageReading | undefined> {
    const kept = await this.kept(date);
    if (kept && this.store.now() - kept.at < maxAgeMs) return kept;
    if (!(await this.store.setIfAbsent(LedgerKeys.usageRead(date), '1', USAGE_READ_EVERY_MS))) return kept;
    return this.read(date).catch(() => kept);
  }
}
