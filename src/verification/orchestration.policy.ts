import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod, Prices } from '../api/api.types.js';
import { VerificationAccountService } from '../account/verification-account.service.js';
import { VerificationClock } from '../core/clock.js';
import type { DeviceHint } from '../core/journey.js';
import { rankByCostPerSuccess, rankByPrice, type MethodSamplesByMethod } from '../core/method-ranking.js';
import { toMinorUnits } from '../core/money.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { DEFAULT_SPEND_CAP } from '../options/verification-options.defaults.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedOrchestration, ResolvedVerificationOptions } from '../options/verification.options.js';
import { errorText } from '../core/error-text.js';

/** Pause after a failed price read before the policy asks again (an outage must not slow every start). */
const READ_RETRY_MS = 30_000;

/** What a start of a method is expected to cost, minor units (kopecks). */
export type PriceOf = (method: KnownVerificationMethod) => number;

/** What the policy makes of the offered methods now: their order, and what each is expected to cost. */
export interface MethodPlan {
  order: KnownVerificationMethod[];
  priceOf: PriceOf;
}

/**
 * The host's orchestration policy (`orchestration`): the order in which methods are tried (a fixed
 * list, or by price, or by cost per verified user), which methods a device hint excludes, when a
 * method may be left for another, and a journey's ceilings. Prices come from the account's price
 * list (`GET /v1/prices`, cached for `pricesTtlMs`); while it cannot be read, the offered order
 * stands and an unknown price counts as the spend cap's worst case.
 */
@Injectable()
export class OrchestrationPolicy {
  private readonly settings: ResolvedOrchestration;
  private retryAfter = 0;
  private cachedSamples?: { samples: MethodSamplesByMethod; until: number };
  /** The plan as last worked out, and what it was worked out from (see `plan`). */
  private lastPlan?: {
    offered: readonly KnownVerificationMethod[];
    prices: Prices | undefined;
    samples: MethodSamplesByMethod | undefined;
    plan: MethodPlan;
  };

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationClock) private readonly clock: VerificationClock,
    private readonly account: VerificationAccountService,
    private readonly logger: VerificationLogger,
  ) {
    this.settings = options.orchestration;
  }

  /** The offered methods in the policy's order: the host's fixed list (only those), else ranked by `mode`. */
  async order(offered: readonly KnownVerificationMethod[]): Promise<KnownVerificationMethod[]> {
    return (await this.plan(offered)).order;
  }

  /**
   * The policy's order of `offered` and each method's expected price, from one read of the prices
   * (and of the method figures for `cost_per_success`). Every status poll asks: the plan is worked
   * out again only when what it is made of changed (another price list or figures read).
   */
  async plan(offered: readonly KnownVerificationMethod[]): Promise<MethodPlan> {
    const current = this.currentPlan(offered);
    if (current) return current;
    const last = this.lastPlan;
    const prices = await this.prices();
    const samples = this.settings.mode === 'cost_per_success' ? await this.samples() : undefined;
    if (last && last.offered === offered && last.prices === prices && last.samples === samples)
      return last.plan;
    const fixed = this.settings.methods;
    const plan: MethodPlan = {
      order: fixed
        ? fixed.filter((method) => offered.includes(method))
        : this.rank([...offered], prices, samples),
      priceOf: this.priceOf(prices),
    };
    this.lastPlan = { offered, prices, samples, plan };
    return plan;
  }

  /**
   * The plan of `offered` as last worked out, while nothing it is made of changed (the price list and the
   * figures still the cached ones); undefined when `plan` must work it out again. Read without waiting.
   */
  currentPlan(offered: readonly KnownVerificationMethod[]): MethodPlan | undefined {
    const last = this.lastPlan;
    return last && last.offered === offered && this.stillCurrent(last) ? last.plan : undefined;
  }

  /** Whether a plan was worked out from the price list still cached (and the figures still cached), without reading either. */
  private stillCurrent(last: {
    prices: Prices | undefined;
    samples: MethodSamplesByMethod | undefined;
  }): boolean {
    if (last.prices === undefined || last.prices !== this.account.cachedPrices()) return false;
    if (this.settings.mode !== 'cost_per_success') return true;
    const cached = this.cachedSamples;
    return cached !== undefined && cached.samples === last.samples && this.clock.now() < cached.until;
  }

  /**
   * The one ranking call, by `orchestration.mode`. `price`: cheapest first. `cost_per_success`: by
   * observed price ÷ success rate once a method has `minSamples` starts (core/method-ranking.ts),
   * from the method figures the store keeps, read at most once per `pricesTtlMs`.
   */
  private rank(
    methods: KnownVerificationMethod[],
    prices: Prices | undefined,
    samples: MethodSamplesByMethod | undefined,
  ): KnownVerificationMethod[] {
    const list = prices?.prices ?? [];
    return samples
      ? rankByCostPerSuccess(methods, list, samples, this.settings.minSamples, this.settings.minCallers)
      : rankByPrice(methods, list);
  }

  /** Observed starts and verifications per method; a figure read fails soft (price order stands). */
  private async samples(): Promise<MethodSamplesByMethod> {
    const now = this.clock.now();
    if (this.cachedSamples && now < this.cachedSamples.until) return this.cachedSamples.samples;
    let samples: MethodSamplesByMethod = {};
    try {
      samples = await this.account.methodStats();
    } catch (error) {
      this.logger.warn('orchestration: method figures could not be read; price order stands', {
        error: errorText(error),
      });
    }
    this.cachedSamples = { samples, until: now + this.options.pricesTtlMs };
    return samples;
  }

  /** The methods a device hint rules out. */
  get exclude(): Readonly<Record<DeviceHint, readonly KnownVerificationMethod[]>> {
    return this.settings.exclude;
  }

  /** When a fallback from `method` becomes available, counted from its start. */
  timeoutMs(method: string): number {
    const seconds = this.settings.timeoutSeconds[method as KnownVerificationMethod];
    return (seconds ?? this.settings.timeoutSeconds.sms) * 1000;
  }

  /** Whether the frontend may leave `method` for another before its timeout. */
  skippable(method: string): boolean {
    const skippable = this.settings.skippable;
    return skippable === 'all' || (skippable as readonly string[]).includes(method);
  }

  get maxSteps(): number {
    return this.settings.maxSteps;
  }

  get maxCostMinor(): number {
    return toMinorUnits(this.settings.maxCost) ?? 0;
  }

  /**
   * Expected price per method, minor units: the account's current price, else the worst case the
   * spend cap reserves for an unknown price (the ceiling must not let an unpriced method through).
   */
  private priceOf(prices: Prices | undefined): PriceOf {
    const known = new Map<string, number>();
    for (const { method, price } of prices?.prices ?? []) {
      const minor = toMinorUnits(price.amount);
      if (minor !== undefined) known.set(method, minor);
    }
    const spendCap = this.options.limits.spendCap;
    const worstCase =
      toMinorUnits(spendCap ? spendCap.worstCasePrice : DEFAULT_SPEND_CAP.worstCasePrice) ?? 0;
    return (method) => known.get(method) ?? worstCase;
  }

  private async prices(): Promise<Prices | undefined> {
    if (this.clock.now() < this.retryAfter) return undefined;
    try {
      return await this.account.getPrices();
    } catch (error) {
      this.retryAfter = this.clock.now() + Math.min(READ_RETRY_MS, this.options.pricesTtlMs);
      this.logger.warn('orchestration: prices could not be read; the offered order stands until they can', {
        error: errorText(error),
      });
      return undefined;
    }
  }
}
