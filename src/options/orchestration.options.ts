import type { KnownVerificationMethod } from '../core/verification-method.js';

/**
 * Method orchestration (`orchestration`): the method a start with `method: "auto"` (or none) gets,
 * where `POST /{prefix}/switch` goes next, when a frontend may offer another method, and a journey's
 * ceilings. A journey is one verification (one `verification_id`) with one upstream session per
 * method tried.
 */
export interface OrchestrationOptions {
  /** A fixed order of methods (only these are candidates). Default: the offered methods by their current price, cheapest first. */
  methods?: KnownVerificationMethod[];
  /**
   * `cost_and_time` (default): the switch order by price, and first, per operator prefix and device
   * hint, the method with the least expected cost per verified user whose users are no fewer and no
   * slower (median) than SMS's, from the operator figures once a cell (or its country, or every
   * number) holds 30 ended sessions; a method whose completion on the operator dropped falls back
   * sooner and then is tried last until it recovers (`verification.method_health`). `price`
   * (cheapest first) or `cost_per_success` (price ÷ observed success rate once a method has
   * `minSamples` starts; price order before) alone. Ignored when `methods` is given.
   */
  mode?: 'cost_and_time' | 'price' | 'cost_per_success';
  /**
   * `cost_per_success`: sessions of a method ended (verified, or unverified with evidence of a real
   * user: `unproven` ones are left out) before its observed figures count. Default 50.
   */
  minSamples?: number;
  /**
   * `cost_per_success`: distinct callers (owners, else client keys) a method's starts must come from
   * before its observed rate is trusted: a few callers cannot steer `auto` with abandoned starts. Default 20.
   */
  minCallers?: number;
  /**
   * Methods the frontend may leave for another before their timeout (`fallback_available_at`);
   * switching from any other one before then is 409 `fallback_not_available`. Default `'all'`.
   */
  skippable?: KnownVerificationMethod[] | 'all';
  /**
   * Seconds after a method's start when a fallback becomes available. Defaults: reverse_flash_call
   * 45, flash_call 30, msgr1_otp 60, msgr2_bot 90, sms 60, operator_id 60, voice 60.
   */
  timeoutSeconds?: Partial<Record<KnownVerificationMethod, number>>;
  /**
   * When a step may fall back, learned from the method figures (`fallback_available_at`): once
   * `minSamples` verified sessions of the method with the number's calling code and the start's
   * device hint are counted (last 7 days, starts the pumping defence did not suspect; steps started
   * `ceilingMs` or more before, whose outcome up to any moment is known), the time by
   * which all but `stalledShare` of them had verified, or earlier once fewer than `waitingShare` of
   * the users still waiting go on to verify, bounded by `floorMs` and `ceilingMs`; before that,
   * `timeoutSeconds`. A method whose code is typed in the
   * page learns from its probe steps (1 in 10, falling back at `ceilingMs`). `false`: always `timeoutSeconds`.
   */
  fallback?: OrchestrationFallbackOptions | false;
  /** Methods (upstream sessions) per journey. Default 3. */
  maxSteps?: number;
  /** Money per journey (major units, RUB): charged plus what pending steps may still be charged, plus the next price. Default 6. */
  maxCost?: number;
  /** Methods never picked for a device hint (`device` on start). Default none. */
  exclude?: { mobile?: KnownVerificationMethod[]; desktop?: KnownVerificationMethod[] };
}

/** `orchestration.fallback`. */
export interface OrchestrationFallbackOptions {
  /**
   * The share (0 to below 1) of the method's successful users still unfinished below which its step
   * has stalled: 0.5 falls back at their median time to verify, 0.1 at their 90th percentile. Default 0.35.
   */
  stalledShare?: number;
  /**
   * Also stalled, earlier, once fewer than this share (0 to below 1) of the users still waiting on the
   * step go on to verify (counting those who never do): a method few users complete falls back early
   * (at `floorMs` when no more than this share complete it). `false`: `stalledShare` only. Default 0.4.
   */
  waitingShare?: number | false;
  /**
   * Verified sessions (method, calling code, device hint) before the figures decide; until then a
   * reverse call learns from every device hint's figures together, other methods keep
   * `timeoutSeconds`. Default 30.
   */
  minSamples?: number;
  /** Earliest learned moment, ms from the step's start. Default 10000. */
  floorMs?: number;
  /** Latest learned moment, ms from the step's start. Default 90000. */
  ceilingMs?: number;
}

export interface ResolvedOrchestrationFallback {
  stalledShare: number;
  waitingShare: number | false;
  minSamples: number;
  floorMs: number;
  ceilingMs: number;
}

export interface ResolvedOrchestration {
  /** The host's fixed order, or undefined for the policy's own (`mode`). */
  methods: KnownVerificationMethod[] | undefined;
  mode: 'cost_and_time' | 'price' | 'cost_per_success';
  minSamples: number;
  minCallers: number;
  skippable: KnownVerificationMethod[] | 'all';
  timeoutSeconds: Record<KnownVerificationMethod, number>;
  /** `orchestration.fallback` resolved, or false (always `timeoutSeconds`). */
  fallback: ResolvedOrchestrationFallback | false;
  maxSteps: number;
  maxCost: number;
  exclude: { mobile: KnownVerificationMethod[]; desktop: KnownVerificationMethod[] };
}
