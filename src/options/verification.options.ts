import type { LoggerService, LogLevel } from '@nestjs/common';
import type { VerificationApiClientOptions } from '../api/api-client.options.js';
import type { KnownVerificationMethod } from '../core/verification-method.js';
import type { TestNumberOutcome } from '../core/test-session.js';

/**
 * What `owner(req)` and `limits.key(req)` receive: the raw Express or Fastify request. Both are
 * declared as methods, so a host annotates the request type its platform gives, without a cast:
 * `owner: (req: Request) => req.user?.id` (Express) or `(req: FastifyRequest) => …` (Fastify).
 */
export type HostRequest = unknown;

/**
 * Every option a host gives the module, and the options after resolution. The defaults:
 * VERIFICATION_DEFAULTS (verification-options.defaults.ts); the rules: the table in
 * verification-options.rules.ts; both applied once at boot by resolveVerificationOptions.
 */

/** The API and its credentials: the client's options without its observation hook (the module wires it). */
export type ApiOptions = Omit<VerificationApiClientOptions, 'onRequest'>;

/** Verifies a webhook request's signature over its raw bytes. Throws or returns false when it does not hold. */
export interface WebhookVerifier {
  verify(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): boolean | Promise<boolean>;
}

export interface WebhookOptions {
  /** `whsec_…` secret(s) for the default Standard Webhooks verifier; several at once during rotation. */
  secret?: string | string[];
  /** A host's own verifier, for another scheme. */
  verifier?: WebhookVerifier;
  /** `'none'` runs without signature checks (logs a warning at boot). Default `'standard-webhooks'`. */
  signature?: 'standard-webhooks' | 'none';
  /** Timestamp tolerance. Default 300 s. */
  toleranceSeconds?: number;
  /** Path under the routes' prefix (default `webhooks`), or absolute when it starts with `/`. */
  path?: string;
  /** Serve the webhook route. Default true when a secret, verifier or `signature: 'none'` is set. */
  enabled?: boolean;
  /** Confirm each webhook with `GET /v1/verify/{id}` before emitting. Default true. */
  confirmWithApi?: boolean;
  /**
   * The host's class decorators applied to the webhook controller when it is declared (at import),
   * such as `SkipThrottle()` of `@nestjs/throttler`. Under forRootAsync, give them in its static
   * `webhooks`. Default none.
   */
  decorators?: ClassDecorator[];
}

/** Static webhook route settings of `forRootAsync` (the secret comes from the factory). */
export interface WebhookRouteOptions {
  /** Declare the webhook route. Default false: an async factory's secrets are unknown at import. */
  enabled?: boolean;
  /** Path under the routes' prefix (default `webhooks`), or absolute when it starts with `/`. */
  path?: WebhookOptions['path'];
  /** Class decorators for the webhook controller (see WebhookOptions.decorators). */
  decorators?: ClassDecorator[];
}

export interface RoutesOptions {
  /** Prefix of the client routes. Default `verification`. */
  prefix?: string;
  /** Serve the client routes (start, check, status, methods). Default true. */
  enabled?: boolean;
  /**
   * Origins (`https://shop.example`) whose pages may call the body routes cross-site: a request
   * whose `Sec-Fetch-Site` is `cross-site` is refused (403 `cross_site_request`) unless its `Origin`
   * is listed. Default none.
   */
  allowedOrigins?: string[];
  /** Largest request body the body routes accept, in bytes (413 `payload_too_large` above). Default 4096. */
  bodyLimit?: number;
}

export interface PhoneOptions {
  /** Country assumed for numbers written without `+`. Default `RU`. */
  defaultCountry?: string;
  /** ISO 3166 countries whose numbers may be verified. Default `['RU']`. */
  allowedCountries?: string[];
  /** Number types accepted. Default `['MOBILE', 'FIXED_LINE_OR_MOBILE']`. */
  allowedTypes?: string[];
}

export interface RateLimit {
  /** Requests allowed per window. */
  points: number;
  /** Window length in ms. */
  windowMs: number;
}

export interface StartContext {
  phoneNumber: string;
  method: KnownVerificationMethod;
  ip: string | undefined;
  owner: string | undefined;
  request: HostRequest;
  /**
   * Set when the pumping defence would refuse this start (its range or caller does not convert, or
   * the spend cap's reserve is for known callers). Answer `{ allow: true, challengePassed: true }`
   * once the caller solved a challenge (a captcha) to let this one start through; a plain allow
   * leaves the refusal to the defence.
   */
  suspected?: { reason: string; range: string; country: string };
  /**
   * Set when this start is a switch of a journey already under way (`POST /{prefix}/switch`): the
   * method it leaves. A hook that asks for a challenge on a start may let a switch through (its
   * body carries only the journey's `verification_id` and the method).
   */
  switchedFrom?: KnownVerificationMethod;
}
/** Allow: nothing, `true` or `{ allow: true }`. Refuse: `{ allow: false, reason }` (the reason reaches the frontend) or `false`. */
export type BeforeStartResult =
  void | undefined | boolean | { allow: true; challengePassed?: boolean } | { allow: false; reason: string };

export interface LimitsOptions {
  /**
   * `false` switches every protection off (not recommended): limits, cooldown, spend cap and, unless
   * `coalesceStarts: true` is given, coalescing. A `beforeStart` hook still runs. Default true.
   */
  enabled?: boolean;
  /** Default 10 per hour per client key. `false` switches it off. */
  startPerIp?: RateLimit | false;
  /**
   * Default 15 per hour per phone number from all callers together: the ceiling above
   * `startPerPhoneAndCaller`, so that other callers cannot use up one caller's budget.
   */
  startPerPhone?: RateLimit | false;
  /** Default 5 per hour per phone number and caller (the owner when `owner()` answers, else the client key). */
  startPerPhoneAndCaller?: RateLimit | false;
  /** Default 60 s between one caller's starts to the same phone (other callers are not held back). */
  resendCooldownMs?: number | false;
  /** Default 30 per 10 minutes per client key. */
  checkPerIp?: RateLimit | false;
  /**
   * Default 10 per hour per phone number: wrong codes (as the API answered them) across all its
   * sessions; past it, checks and starts for the number answer 429 `too_many_wrong_codes`.
   */
  wrongCodesPerPhone?: RateLimit | false;
  /** Default 10 per hour per owner (when `owner()` answers), across numbers; same refusal. */
  wrongCodesPerOwner?: RateLimit | false;
  /**
   * Coalesce duplicate starts of the same caller (owner, else client key) + phone + method: within the
   * resend cooldown (or, with the cooldown off, while the session is pending) the first start's session
   * is handed back instead of a new paid one. Default true (false when `enabled: false`).
   */
  coalesceStarts?: boolean;
  /**
   * Spend cap: at most `amount` (major units, e.g. RUB) per `windowMs`, counted from each
   * initiation's `cost` (an estimate from the price list is reserved first; while no price is known,
   * `worstCasePrice`, default 3 RUB, the highest price the API documents). Windows are aligned on the
   * epoch shifted by `utcOffsetMinutes` (default 0: a 24 h window is a UTC day; 180: a day from
   * midnight in Moscow). Past it, starts answer 503 and `verification.spend_cap_reached` is emitted
   * once per window. Default `{ amount: 1000, windowMs: 86_400_000 }` (1,000 RUB a UTC day); raise it
   * to your traffic, or `false` to switch it off.
   */
  spendCap?: SpendCapOptions | false;
  /**
   * Pumping defence: starts and verifications per number range, country and caller; a range or caller
   * whose starts do not complete is held (429 `range_held`, `owner_held`, `client_held`), and near the
   * spend cap unknown starts wait (503 `spend_cap_reserve`). Default on (`mode: 'enforce'`); `false`
   * or `{ mode: 'off' }` switches it off, `{ mode: 'monitor' }` only reports. See README.
   */
  pumping?: PumpingOptions | false;
  /** How the per-client key is derived. Default: the client IP (trust-proxy aware), IPv6 by network prefix. */
  key?(req: HostRequest): string | undefined;
  /**
   * Length of the IPv6 prefix that is one client for the default key (one subscriber holds a whole
   * /64). IPv4-mapped IPv6 counts as the IPv4 address. Default 64; from 32 to 128.
   */
  ipv6PrefixLength?: number;
  /**
   * Host rule or captcha, run after validation, the allowlists and coalescing, before anything is counted
   * or spent. `{ allow: false, reason }` → 403 `start_refused` with that reason; a throw → 503.
   */
  beforeStart?: (context: StartContext) => BeforeStartResult | Promise<BeforeStartResult>;
}

/** Numbers, ranges and owners the pumping defence never holds (nor counts). */
export interface PumpingSafeList {
  /** E.164 numbers (`+79161234567`). */
  numbers?: string[];
  /** Ranges as the defence writes them: the E.164 number without its last `rangeDigits` digits (`+7916123`). */
  ranges?: string[];
  /** Values of `owner(req)`. */
  owners?: string[];
}

/**
 * The pumping defence (`limits.pumping`): starts and verifications counted per number range, per
 * country and per caller (owner, client key, IPv6 network), in the store; a subject whose starts do
 * not convert into verifications is held. See README "Pumping defence" for what each costs.
 */
export interface PumpingOptions {
  /** `'enforce'` refuses held starts; `'monitor'` only logs, counts and emits; `'off'`. Default `'enforce'`. */
  mode?: 'enforce' | 'monitor' | 'off';
  /**
   * Graded answers: a suspected start (held range, prefix or caller; the reserve; the spend cap's
   * last share) is offered only the methods charged on proof (reverse_flash_call, msgr2_bot) that
   * the account offers: `auto` picks among them, an explicit other method gets 409 `method_held`
   * with `offered_methods` and `Retry-After`. Refused as before when none is offered. Default true.
   */
  grading?: boolean;
  /** Digits dropped from the end of an E.164 number to name its range. Default 4 (10,000 numbers); 1 to 8. */
  rangeDigits?: number;
  /** Length of the sliding window counts are kept over, ms. Default 3,600,000 (an hour). */
  windowMs?: number;
  /** Unconverted starts a range with a history (numbers verified in it) takes in the window before it is held. Default 20. */
  rangeMinStarts?: number;
  /**
   * Unconverted starts an operator prefix (calling code and national destination code, `+7985`)
   * with a history takes in the window before it is held. Default 20.
   */
  prefixMinStarts?: number;
  /**
   * Unconverted starts a range without a history (no number verified in it yesterday or in the
   * window) takes before it is held: a burst into numbers nobody verified is an attack's signature. Default 3.
   */
  freshRangeMinStarts?: number;
  /** The same for an operator prefix without a history. Default 10. */
  freshPrefixMinStarts?: number;
  /** Unconverted starts an owner, a client key or an IPv6 network takes in the window before it is held. Default 20. */
  callerMinStarts?: number;
  /** Unconverted starts in one country's window that mean it is under attack. Default 20. */
  countryMinStarts?: number;
  /**
   * While its country is under attack, the unconverted starts a range or caller without a record of
   * completed verifications takes before it is held. Default 1.
   */
  underAttackMinStarts?: number;
  /** Share of starts that must complete (verified / starts) for a subject not to be held. Default 0.2. */
  minConversion?: number;
  /**
   * A range or country is held only when its starts in the window pass this many times its average
   * window of the previous day (its normal rate). Default 3.
   */
  surgeFactor?: number;
  /** First cool-off of a hold, ms; doubled for each hold that follows while the pattern continues. Default 900,000. */
  holdMs?: number;
  /** Longest cool-off, ms. Default 86,400,000. */
  maxHoldMs?: number;
  /**
   * Share of the spend cap kept for callers and ranges with a record of completed verifications
   * while their country is under attack. Default 0.2 (past 80 % of the cap, unknown starts wait). 0 turns it off.
   */
  reserveShare?: number;
  /**
   * How long a completed verification makes its range and callers known, ms (one store entry each).
   * Default 86,400,000: a day, the default spend cap's window.
   */
  recordTtlMs?: number;
  safeList?: PumpingSafeList;
}

export interface ResolvedPumping {
  mode: 'enforce' | 'monitor' | 'off';
  grading: boolean;
  rangeDigits: number;
  windowMs: number;
  rangeMinStarts: number;
  prefixMinStarts: number;
  freshRangeMinStarts: number;
  freshPrefixMinStarts: number;
  callerMinStarts: number;
  countryMinStarts: number;
  underAttackMinStarts: number;
  minConversion: number;
  surgeFactor: number;
  holdMs: number;
  maxHoldMs: number;
  reserveShare: number;
  recordTtlMs: number;
  safeList: { numbers: string[]; ranges: string[]; owners: string[] };
}

export interface SpendCapOptions {
  /** Most spent per window, major units (RUB). */
  amount: number;
  /** Window length, ms. */
  windowMs: number;
  /** Currency of `amount` and `worstCasePrice`. Default `RUB`. */
  currency?: string;
  /** Offset of the windows' alignment from UTC, minutes. Default 0. */
  utcOffsetMinutes?: number;
  /**
   * Reserved for a start whose method has no known price (the price list could not be read yet, or
   * lacks the method), until the real `cost` replaces it. Default 3 (RUB: the highest price the API
   * documents, `sms`).
   */
  worstCasePrice?: number;
}

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
   * `price` (cheapest first) or `cost_per_success` (price ÷ observed success rate once a method has
   * `minSamples` starts; price order before). Ignored when `methods` is given. Default `price`.
   */
  mode?: 'price' | 'cost_per_success';
  /** `cost_per_success`: starts of a method before its observed figures count. Default 50. */
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
   * device hint are counted (last 7 days, starts the pumping defence did not suspect), the earliest
   * time at which fewer than `stalledShare` of the users still waiting go on to verify, bounded by
   * `floorMs` and `ceilingMs`; before that, `timeoutSeconds`. A method whose code is typed in the
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
   * The share (0 to below 1) of the users still waiting on a step who go on to verify, below which
   * the step has stalled: a method most users complete falls back late, one few complete early
   * (at `floorMs` when no more than this share ever complete it). Default 0.4.
   */
  stalledShare?: number;
  /** Verified sessions (method, calling code, device hint) before the figures decide. Default 30. */
  minSamples?: number;
  /** Earliest learned moment, ms from the step's start. Default 10000. */
  floorMs?: number;
  /** Latest learned moment, ms from the step's start. Default 90000. */
  ceilingMs?: number;
}

export interface ResolvedOrchestrationFallback {
  stalledShare: number;
  minSamples: number;
  floorMs: number;
  ceilingMs: number;
}

export interface ResolvedOrchestration {
  /** The host's fixed order, or undefined for the policy's own (`mode`). */
  methods: KnownVerificationMethod[] | undefined;
  mode: 'price' | 'cost_per_success';
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

export interface ReconcileOptions {
  /** Poll sessions started through the module until terminal. Default true. */
  enabled?: boolean;
  /** Interval when webhooks are configured. Default 15000 ms. */
  lazyIntervalMs?: number;
  /** Grace after `expires_at` before a session is given up. Default 60000 ms. */
  graceMs?: number;
  /** How often this instance looks for due sessions (real time). Default 250 ms. */
  tickMs?: number;
}

export interface StatusCacheOptions {
  /** Coalesce status polls (one upstream GET per session per interval). Default true. */
  enabled?: boolean;
}

export interface StatusStreamOptions {
  /** Serve `GET /{prefix}/status/:verification_id/events` (Server-Sent Events). Default true. */
  enabled?: boolean;
  /** Streams one client (its `limits.key`, or its IP or IPv6 /64) may hold open on one instance. Default 5. */
  maxPerClient?: number;
  /**
   * Streams one verification (its `verification_id`) may have open on one instance, whoever holds
   * them: a handle shared with many addresses cannot hold that many connections. Default 5.
   */
  maxPerVerification?: number;
  /** A `: ping` comment this often keeps proxies from closing an idle stream. Default 15000 ms. */
  heartbeatMs?: number;
  /**
   * Longest life of one stream (real time); the browser reconnects if it still waits. A stream
   * also ends once its session is past `expires_at` + `reconcile.graceMs`. Default 600000 ms.
   */
  maxDurationMs?: number;
}

export interface BalanceWatchOptions {
  /** Read the balance every `intervalMs` and emit `verification.balance_low` below `threshold`. */
  intervalMs: number;
  threshold: number;
}

export interface MetricsOptions {
  /** Counters and histograms with prom-client (an optional peer dependency, loaded only when true). */
  enabled: boolean;
  /** prom-client registry; default the global one. */
  registry?: unknown;
  /** Prefix of every metric name. Default `verification_`. */
  prefix?: string;
}

/** One reviewer or demo number (`testNumbers.numbers`). */
export interface TestNumber {
  /** E.164 (`+79990000001`), matched exactly: never a prefix or a range. */
  phoneNumber: string;
  /** The fixed code (4 to 8 digits). Required unless `outcome` is `verified`, `expired` or `failed`. */
  code?: string;
  /**
   * What the session does on its own at its first read after the start (a status poll, the
   * reconciler): `verified`, `expired`, `failed`, or `code_required` (an operator_id push falling
   * back to a code). None: it waits for its code like a real session.
   */
  outcome?: TestNumberOutcome;
}

/**
 * Reviewer and demo numbers (app-store review, demo accounts): the module plays their sessions
 * itself with a fixed code, never calls the paid API for them, and protection neither counts nor
 * bills them. Off by default. See docs/test-numbers.md.
 */
export interface TestNumbersOptions {
  numbers: TestNumber[];
  /** Values of `owner(req)` allowed to use them; others are refused (400 `phone_not_allowed`). Default: anyone. */
  owners?: string[];
  /** Wrong codes one session takes before it fails (as the API's attempts). Default 3. */
  maxAttempts?: number;
  /** Wrong codes per test number across its sessions; past it every check of the number fails. Default 10 per hour. */
  wrongCodesPerNumber?: RateLimit;
}

export interface ResolvedTestNumbers {
  numbers: { phoneNumber: string; code?: string; outcome?: TestNumberOutcome }[];
  /** undefined: anyone. */
  owners: string[] | undefined;
  maxAttempts: number;
  wrongCodesPerNumber: RateLimit;
}

/**
 * Where VerifiedPhoneGuard finds what a request carries on the host's own routes, and the lifetime of
 * the signed claim it hands out (`verifiedPhone`). See docs/verified-phone-guard.md.
 */
export interface VerifiedPhoneOptions {
  /** Header holding the `verification_id`. Default `x-verification-id`. */
  header?: string;
  /** Field of a JSON body holding the `verification_id`. Default `verification_id`. */
  bodyField?: string;
  /** Header holding a signed claim from an earlier verification (step-up checks). Default `x-verified-phone-claim`. */
  claimHeader?: string;
  /** How long a claim is accepted after it was issued, ms. Default 600,000 (10 minutes). */
  claimTtlMs?: number;
}

/** Per-number and per-owner history for support (`VerificationHistory.list`). See docs/history.md. */
export interface HistoryOptions {
  /** Days an entry is kept. Default 30. */
  retentionDays?: number;
  /** Entries kept per number and per owner (the oldest give way). Default 100. */
  maxEntries?: number;
}

export type { StoreOption } from '../store/create-store.js';
import type { StoreOption } from '../store/create-store.js';

export interface VerificationModuleOptions {
  /**
   * Names this registration, for several accounts in one app (brands, regions): inject its services
   * with `@InjectVerificationService(name)` (and the like), or bind a feature module to it with
   * `VerificationModule.forFeature(name)`; its events carry `registration: name`. Each registration
   * needs its own `routes.prefix` and webhook path. Default: the one unnamed registration.
   */
  name?: string;
  api: ApiOptions;
  webhooks?: WebhookOptions;
  routes?: RoutesOptions;
  /**
   * Methods offered to frontends, as given. Default: those of every known method except `voice` that
   * the account can use (the ones `GET /v1/prices` lists; all of them while it cannot be read).
   */
  methods?: KnownVerificationMethod[];
  phone?: PhoneOptions;
  limits?: LimitsOptions;
  /** Which method `auto` picks, where a switch goes, fallback timeouts and a journey's ceilings. */
  orchestration?: OrchestrationOptions;
  /** Who the caller is (user id); binds handles to it. */
  owner?(req: HostRequest): string | undefined | Promise<string | undefined>;
  /** Default: a MemoryStore. */
  store?: StoreOption;
  reconcile?: ReconcileOptions;
  statusCache?: StatusCacheOptions;
  statusStream?: StatusStreamOptions;
  /** Session TTL requested upstream, seconds. Default: the API's default (300). */
  expirySeconds?: number;
  /** Key for handles (32+ bytes, base64 or hex); default derived from the API secret with HKDF. */
  handleKey?: string;
  balanceWatch?: BalanceWatchOptions;
  /** Prices cache TTL. Default 10 minutes. */
  pricesTtlMs?: number;
  metrics?: MetricsOptions;
  /** Levels to log (default all but verbose/debug), or `false` for none. */
  logLevels?: LogLevel[] | false;
  /** The host's logger. */
  logger?: LoggerService;
  /** Mask phone numbers in logs. Default true. */
  maskPhoneNumbers?: boolean;
  /**
   * The module's clock, ms since the epoch: the store it creates, its services and the webhook
   * tolerance all read it. Tests link it to the sandbox's clock (`clock: () => sandbox.now()`).
   * Default: the clock of the `store` instance given, else `Date.now`. With both a store instance
   * and a clock, the two must agree at boot (give the store the same clock).
   */
  clock?: () => number;
  /** Reviewer and demo numbers with a fixed code, never sent to the paid API. Default none. */
  testNumbers?: TestNumbersOptions;
  /** VerifiedPhoneGuard on the host's own routes: where it reads the verification, the claim's lifetime. */
  verifiedPhone?: VerifiedPhoneOptions;
  /** Keep a history per number and per owner (`{}` for the defaults). Default off. */
  history?: HistoryOptions | false;
}

/* ------------------------------------------------------------------ resolved options */

export interface ResolvedLimits {
  enabled: boolean;
  startPerIp: RateLimit | false;
  startPerPhone: RateLimit | false;
  startPerPhoneAndCaller: RateLimit | false;
  resendCooldownMs: number | false;
  checkPerIp: RateLimit | false;
  wrongCodesPerPhone: RateLimit | false;
  wrongCodesPerOwner: RateLimit | false;
  coalesceStarts: boolean;
  spendCap: Required<SpendCapOptions> | false;
  pumping: ResolvedPumping;
  key?: LimitsOptions['key'];
  ipv6PrefixLength: number;
  beforeStart?: LimitsOptions['beforeStart'];
}

export interface ResolvedRoutes {
  prefix: string;
  enabled: boolean;
  /** Serialised origins (`scheme://host[:port]`). */
  allowedOrigins: string[];
  bodyLimit: number;
}

/** Options after defaults were applied and validation passed. */
export interface ResolvedVerificationOptions {
  /** The registration's name (named registrations), else undefined. */
  name: string | undefined;
  api: Required<ApiOptions>;
  webhooks: {
    secrets: string[];
    verifier?: WebhookVerifier;
    signature: 'standard-webhooks' | 'none';
    toleranceSeconds: number;
    path: string;
    enabled: boolean;
    confirmWithApi: boolean;
  };
  routes: ResolvedRoutes;
  /** The host's `methods`, or the default candidates. */
  methods: KnownVerificationMethod[];
  /** True when `methods` was not given: offer the candidates the account's price list names. */
  methodsFromAccount: boolean;
  phone: { defaultCountry: string; allowedCountries: string[]; allowedTypes: string[] };
  limits: ResolvedLimits;
  orchestration: ResolvedOrchestration;
  owner?: VerificationModuleOptions['owner'];
  store?: StoreOption;
  reconcile: Required<ReconcileOptions>;
  statusCache: Required<StatusCacheOptions>;
  statusStream: Required<StatusStreamOptions>;
  expirySeconds?: number;
  handleKey?: string;
  balanceWatch?: BalanceWatchOptions;
  pricesTtlMs: number;
  metrics?: MetricsOptions;
  logLevels: LogLevel[] | false;
  logger?: LoggerService;
  maskPhoneNumbers: boolean;
  /** The module's one clock (the `VerificationClock` provider reads it). */
  clock: () => number;
  /** No numbers: off. */
  testNumbers: ResolvedTestNumbers;
  /** Header names lower-cased. */
  verifiedPhone: Required<VerifiedPhoneOptions>;
  /** false: no history is kept. */
  history: Required<HistoryOptions> | false;
}

/** Route paths, fixed when the module is imported (controllers are declared then). */
export interface RouteSettings {
  /** The client routes: prefix without leading or trailing slashes (`verification`), and whether they are served. */
  routes: { prefix: string; enabled: boolean };
  /** The webhook route: whether it is declared, and its controller path (`verification/webhooks`). */
  webhooks: { enabled: boolean; path: string; decorators: ClassDecorator[] };
  /** The registration's name, declared at import (its injection tokens are made then). */
  name?: string;
}

// The defaults, the rules and the resolver live beside these types (one role per file).
export {
  DEFAULT_METHODS,
  DEFAULT_SPEND_CAP,
  VERIFICATION_DEFAULTS,
} from './verification-options.defaults.js';
export {
  declaredAsyncRoutes,
  declaredRoutes,
  optionWarnings,
  resolveVerificationOptions,
} from './verification-options.resolver.js';
export { VerificationOptionsError } from '../core/option-rules.js';
