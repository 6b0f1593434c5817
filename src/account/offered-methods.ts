import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod, Prices } from '../api/api.types.js';
import { VerificationClock } from '../core/clock.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationAccountService } from './verification-account.service.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { errorText } from '../core/error-text.js';

/** Pause after a failed price read before the next one (an outage must not slow every request). */
const READ_RETRY_MS = 30_000;

/**
 * The methods offered to frontends (`GET /{prefix}/methods` and the start route's check).
 *
 * `methods` given by the host: exactly those. Not given: the default methods the account can use,
 * which are the ones `GET /v1/prices` lists (the API prices only what the account has enabled), so
 * frontends are not offered a method the API would refuse. The list follows the module's price
 * cache (`pricesTtlMs`). While no price list has ever been read (the API is down at boot), every
 * default method is offered, and the list is asked again at most every 30 s: a start of a method the
 * account lacks is then refused by the API, with nothing sent. A list that names none of the
 * default methods is not believed either (an unexpected price format): every default is offered.
 */
@Injectable()
export class OfferedMethods {
  private retryAfter = 0;
  private emptyListReported = false;
  private lastList: KnownVerificationMethod[] | undefined;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationClock) private readonly clock: VerificationClock,
    private readonly account: VerificationAccountService,
    private readonly logger: VerificationLogger,
  ) {}

  /** The list as last worked out, without asking the API (before the first read: every candidate). */
  current(): KnownVerificationMethod[] {
    return this.lastList ?? this.options.methods;
  }

  async list(): Promise<KnownVerificationMethod[]> {
    // Every status poll asks: while the price list it was worked out from is still the cached one, it stands.
    const derived = this.derived;
    if (derived && derived.prices === this.account.cachedPrices()) return (this.lastList = derived.list);
    this.lastList = await this.workOut();
    return this.lastList;
  }

  private derived?: { prices: Prices; list: KnownVerificationMethod[] };

  private async workOut(): Promise<KnownVerificationMethod[]> {
    const candidates = this.options.methods;
    if (!this.options.methodsFromAccount || this.clock.now() < this.retryAfter) return candidates;
    let prices: Prices;
    try {
      prices = await this.account.getPrices();
    } catch (error) {
      this.retryAfter = this.clock.now() + Math.min(READ_RETRY_MS, this.options.pricesTtlMs);
      this.logger.warn('methods: prices could not be read; offering every default method until they can', {
        error: errorText(error),
      });
      return candidates;
    }
    // Worked out once per price list read (every status poll asks for it).
    if (this.derived?.prices === prices) return this.derived.list;
    const priced = new Set(prices.prices.map((p) => p.method));
    const usable = candidates.filter((method) => priced.has(method));
    if (usable.length > 0) {
      this.derived = { prices, list: usable };
      return usable;
    }
    if (!this.emptyListReported) {
      this.emptyListReported = true;
      this.logger.warn('methods: the price list names none of the default methods; offering all of them');
    }
    return candidates;
  }
}
