import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod } from '../api/api.types.js';
import { PriceBook, type PriceList } from '../account/price-book.js';
import { MethodStats } from '../account/method-stats.service.js';
import { FallbackTiming } from './fallback-timing.js';
import { FirstMethodChooser } from './first-method.chooser.js';
import { MethodHealthWatch } from '../account/method-health.service.js';
import { DEGRADED_FALLBACK_SHARE } from '../account/method-health.js';
import type { DeviceHint, JourneyStep } from '../core/journey.js';
import {
  rankByCostPerSuccess,
  rankByPrice,
  splitDemoted,
  type MethodSamplesByMethod,
} from '../core/method-ranking.js';
import { toMinorUnits } from '../core/money.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedOrchestration, ResolvedVerificationOptions } from '../options/verification.options.js';
import { errorText } from '../core/error-text.js';

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
 * method may be left for another, and a journey's ceilings. Prices come from the price book
 * (PriceBook); while no list has been read, the offered order stands and an unknown price counts as
 * the spend cap's worst case.
 */
@Injectable()
export class OrchestrationPolicy {
  private readonly settings: ResolvedOrchestration;
  private readonly fallback: FallbackTiming;
  private readonly chooser: FirstMethodChooser;
  private cachedSamples?: { samples: MethodSamplesByMethod; until: number };
  /**
   * The plan as last worked out, and what from: every status poll asks for one, and it changes only
   * when the offered methods or the price list do (its measured gain: bench/README.md, "price book").
   */
  private lastPlan?: {
    offered: readonly KnownVerificationMethod[];
    prices: PriceList | undefined;
    samples: MethodSamplesByMethod | undefined;
    plan: MethodPlan;
  };

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly prices: PriceBook,
    private readonly telemetry: VerificationTelemetry,
    private readonly stats: MethodStats,
    private readonly health: MethodHealthWatch,
  ) {
    this.settings = options.orchestration;
    this.fallback = new FallbackTiming(options, stats, telemetry.logger, (event) =>
      telemetry.announce(event),
    );
    this.chooser = new FirstMethodChooser(
      options.clock,
      stats,
      health,
      this.fallback,
      telemetry.logger,
      this.settings,
    );
  }

  /** The offered methods in the policy's order: the host's fixed list (only those), else ranked by `mode`. */
  async order(offered: readonly KnownVerificationMethod[]): Promise<KnownVerificationMethod[]> {
    return (await this.plan(offered)).order;
  }

  /**
   * The order an `auto` start of `phoneNumber` with `device` tries `offered` in: the policy's, and with
   * `mode: 'cost_and_time'` (no fixed `methods`) the first method chosen for the number's operator
   * prefix and the device, the methods demoted there last (FirstMethodChooser).
   */
  async startOrder(
    offered: readonly KnownVerificationMethod[],
    phoneNumber: string,
    device: DeviceHint | undefined,
  ): Promise<KnownVerificationMethod[]> {
    const order = await this.order(offered);
    if (!this.#choosesPerNumber) return order;
    return this.chooser.reorder(order, this.prices.current(), phoneNumber, device);
  }

  /**
   * The methods a journey has left (`order`, in the policy's order) as its switches offer them: with
   * `mode: 'cost_and_time'` (no fixed `methods`) the methods demoted on the number's operator prefix last,
   * as a start orders them (`startOrder`), by the health as this instance last read it: a switch or a
   * status poll waits on a read only where this instance never read the prefix (the journey started on
   * another instance: its health is the deployment's kept change, not 'healthy').
   */
  async switchOrder<M extends KnownVerificationMethod>(
    order: readonly M[],
    phoneNumber: string,
  ): Promise<M[]> {
    if (!this.#choosesPerNumber) return [...order];
    const states = await Promise.all(order.map((method) => this.health.known(method, phoneNumber)));
    return splitDemoted(order, (i) => states[i] === 'demoted').flat();
  }

  /** `mode: 'cost_and_time'` with no fixed `methods`: the order is the number's, by its operator's figures. */
  get #choosesPerNumber(): boolean {
    return !this.settings.methods && this.settings.mode === 'cost_and_time';
  }

  /**
   * The policy's order of `offered` and each method's expected price, from one read of the prices
   * (and of the method figures for `cost_per_success`).
   */
  async plan(offered: readonly KnownVerificationMethod[]): Promise<MethodPlan> {
    const prices = await this.prices.latest();
    const samples = this.settings.mode === 'cost_per_success' ? await this.samples() : undefined;
    return this.planOf(offered, prices, samples);
  }

  /**
   * The plan of `offered` from the prices and figures held now, without waiting; undefined when
   * `plan` must read either (no current price list, or the figures are due).
   */
  currentPlan(offered: readonly KnownVerificationMethod[]): MethodPlan | undefined {
    const prices = this.prices.current();
    if (!prices) return undefined;
    if (this.settings.mode !== 'cost_per_success') return this.planOf(offered, prices, undefined);
    const cached = this.cachedSamples;
    return cached && this.options.clock() < cached.until
      ? this.planOf(offered, prices, cached.samples)
      : undefined;
  }

  private planOf(
    offered: readonly KnownVerificationMethod[],
    prices: PriceList | undefined,
    samples: MethodSamplesByMethod | undefined,
  ): MethodPlan {
    const last = this.lastPlan;
    if (last && last.prices === prices && last.samples === samples && sameMethods(last.offered, offered))
      return last.plan;
    const plan = this.workOut(offered, prices, samples);
    this.lastPlan = { offered, prices, samples, plan };
    return plan;
  }

  private workOut(
    offered: readonly KnownVerificationMethod[],
    prices: PriceList | undefined,
    samples: MethodSamplesByMethod | undefined,
  ): MethodPlan {
    const fixed = this.settings.methods;
    const known = prices?.minorByMethod;
    const worstCase = this.options.limits.worstCaseMinor;
    return {
      order: fixed
        ? fixed.filter((method) => offered.includes(method))
        : this.rank([...offered], prices, samples),
      // Expected price per method: the account's current price, else the worst case the spend cap
      // reserves for an unknown price (the ceiling must not let an unpriced method through).
      priceOf: (method) => known?.get(method) ?? worstCase,
    };
  }

  /**
   * The one ranking call, by `orchestration.mode`. `price`: cheapest first. `cost_per_success`: by
   * observed price ÷ success rate once a method has `minSamples` starts (core/method-ranking.ts),
   * from the method figures the store keeps, read at most once per `pricesTtlMs`.
   */
  private rank(
    methods: KnownVerificationMethod[],
    prices: PriceList | undefined,
    samples: MethodSamplesByMethod | undefined,
  ): KnownVerificationMethod[] {
    const list = prices?.prices.prices ?? [];
    return samples
      ? rankByCostPerSuccess(methods, list, samples, this.settings.minSamples, this.settings.minCallers)
      : rankByPrice(methods, list);
  }

  /**
   * Observed starts and verifications per method, of real users only (MethodStats.learningSamples);
   * a figure read fails soft (price order stands).
   */
  private async samples(): Promise<MethodSamplesByMethod> {
    const now = this.options.clock();
    if (this.cachedSamples && now < this.cachedSamples.until) return this.cachedSamples.samples;
    let samples: MethodSamplesByMethod = {};
    try {
      samples = await this.stats.learningSamples();
    } catch (error) {
      this.telemetry.logger.warn('orchestration: method figures could not be read; price order stands', {
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

  /**
   * When a step may fall back to the next method, ms after its start: learned from the method
   * figures (FallbackTiming), the host's `timeoutSeconds` until they suffice.
   */
  fallbackAfterMs(
    step: Pick<JourneyStep, 'method' | 'requestId'>,
    phoneNumber: string,
    device: DeviceHint | undefined,
  ): Promise<number> {
    const moment = this.fallback.afterMs(step, phoneNumber, device);
    // A method whose completion dropped on the number's operator (degraded or demoted) falls back sooner.
    if (this.settings.mode !== 'cost_and_time' || this.health.state(step.method, phoneNumber) === 'healthy')
      return moment;
    const settings = this.settings.fallback;
    const floor = settings === false ? 0 : settings.floorMs;
    return moment.then((afterMs) =>
      Math.min(afterMs, Math.max(Math.round(afterMs * DEGRADED_FALLBACK_SHARE), floor)),
    );
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
}

function sameMethods(a: readonly KnownVerificationMethod[], b: readonly KnownVerificationMethod[]): boolean {
  return a === b || (a.length === b.length && a.every((method, i) => method === b[i]));
}
