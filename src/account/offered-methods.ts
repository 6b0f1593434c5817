import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod } from '../api/api.types.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { PriceBook, type PriceList } from './price-book.js';

/**
 * The methods offered to frontends (`GET /{prefix}/methods` and the start route's check).
 *
 * `methods` given by the host: exactly those. Not given: the default methods the account can use,
 * which are the ones `GET /v1/prices` lists (the API prices only what the account has enabled), so
 * frontends are not offered a method the API would refuse. The list follows the price book
 * (PriceBook: `pricesTtlMs`, and a 30 s pause after a failed read). While no price list has ever
 * been read (the API is down at boot), every default method is offered: a start of a method the
 * account lacks is then refused by the API, with nothing sent. A list that names none of the
 * default methods is not believed either (an unexpected price format): every default is offered.
 */
@Injectable()
export class OfferedMethods {
  private emptyListReported = false;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly prices: PriceBook,
    private readonly logger: VerificationLogger,
  ) {}

  /** The list from the last prices read, without asking the API (before the first read: every candidate). */
  current(): KnownVerificationMethod[] {
    return this.from(this.prices.last());
  }

  async list(): Promise<KnownVerificationMethod[]> {
    return this.options.methodsFromAccount ? this.from(await this.prices.latest()) : this.options.methods;
  }

  private from(list: PriceList | undefined): KnownVerificationMethod[] {
    const candidates = this.options.methods;
    if (!list || !this.options.methodsFromAccount) return candidates;
    const usable = candidates.filter((method) => list.prices.prices.some((p) => p.method === method));
    if (usable.length > 0) return usable;
    if (!this.emptyListReported) {
      this.emptyListReported = true;
      this.logger.warn('methods: the price list names none of the default methods; offering all of them');
    }
    return candidates;
  }
}
