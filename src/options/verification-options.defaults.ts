import { API_CLIENT_DEFAULTS } from '../api/api-client.options.js';
import { DAY_MS } from '../core/clock.js';
import { VERIFICATION_METHODS, type KnownVerificationMethod } from '../core/verification-method.js';
import type { LogLevel } from '@nestjs/common';
import type {
  RateLimit,
  ResolvedOrchestration,
  ResolvedPumping,
  SpendCapOptions,
  WebhookOptions,
} from './verification.options.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** A rate limit of `points` per `windowMs`. */
const perWindow = (points: number, windowMs: number): RateLimit => ({ points, windowMs });

/**
 * Every default of the module's options, in one place: the resolver applies them, the rules read
 * them where one field is held against another. Frozen; the resolver copies what it hands out.
 *
 * Three defaults follow from other options and are worked out by the resolver: `webhooks.enabled`
 * (true when a secret, a verifier or `signature: 'none'` is given), `limits.coalesceStarts` (as
 * `limits.enabled`) and `clock` (the given store instance's clock, else `Date.now`).
 */
export const VERIFICATION_DEFAULTS = deepFreeze({
  /** The API client's own defaults (api/api-client.options.ts). */
  api: API_CLIENT_DEFAULTS,
  webhooks: {
    signature: 'standard-webhooks' as NonNullable<WebhookOptions['signature']>,
    toleranceSeconds: 300,
    path: 'webhooks',
    confirmWithApi: true,
  },
  /** forRootAsync's static webhook route: an async factory's secrets are unknown at import. */
  asyncWebhookRoute: { enabled: false },
  routes: { prefix: 'verification', enabled: true, allowedOrigins: [] as string[], bodyLimit: 4096 },
  /** Every known method but `voice` (announced as coming soon). */
  methods: VERIFICATION_METHODS.filter((m) => m !== 'voice') as KnownVerificationMethod[],
  phone: {
    defaultCountry: 'RU',
    allowedCountries: ['RU'],
    allowedTypes: ['MOBILE', 'FIXED_LINE_OR_MOBILE'],
  },
  limits: {
    enabled: true,
    startPerIp: perWindow(10, HOUR),
    freeStartPerCaller: perWindow(120, 10 * MINUTE),
    startPerPhone: perWindow(15, HOUR),
    startPerPhoneAndCaller: perWindow(5, HOUR),
    resendCooldownMs: MINUTE,
    checkPerIp: perWindow(30, 10 * MINUTE),
    wrongCodesPerPhone: perWindow(10, HOUR),
    wrongCodesPerOwner: perWindow(10, HOUR),
    ipv6PrefixLength: 64,
    /** 1,000 RUB a UTC day, reserving 3 RUB (the highest price the API documents) for a start of unknown price. */
    spendCap: {
      amount: 1000,
      windowMs: DAY_MS,
      currency: 'RUB',
      utcOffsetMinutes: 0,
      worstCasePrice: 3,
    } as Required<SpendCapOptions>,
    pumping: {
      mode: 'enforce',
      grading: true,
      rangeDigits: 4,
      windowMs: HOUR,
      rangeMinStarts: 20,
      prefixMinStarts: 20,
      freshRangeMinStarts: 3,
      freshPrefixMinStarts: 10,
      callerMinStarts: 20,
      countryMinStarts: 20,
      underAttackMinStarts: 1,
      minConversion: 0.2,
      surgeFactor: 3,
      holdMs: 15 * MINUTE,
      maxHoldMs: DAY_MS,
      reserveShare: 0.2,
      recordTtlMs: DAY_MS,
      expectedConversion: { default: 0.8 },
      safeList: { numbers: [], ranges: [], owners: [] },
    } as ResolvedPumping,
  },
  orchestration: {
    mode: 'cost_and_time',
    minSamples: 50,
    minCallers: 20,
    skippable: 'all',
    /** When a fallback becomes available, seconds after the method's start (voice: as the code methods). */
    timeoutSeconds: {
      reverse_flash_call: 45,
      flash_call: 30,
      msgr1_otp: 60,
      msgr2_bot: 90,
      sms: 60,
      operator_id: 60,
      voice: 60,
    },
    /** Learned from the figures once there are enough (core/fallback-moment.ts). */
    fallback: { stalledShare: 0.35, waitingShare: 0.4, minSamples: 30, floorMs: 10_000, ceilingMs: 90_000 },
    maxSteps: 3,
    /** RUB: two SMS prices. */
    maxCost: 6,
    exclude: { mobile: [], desktop: [] },
  } as Omit<ResolvedOrchestration, 'methods'>,
  reconcile: { enabled: true, lazyIntervalMs: 15_000, graceMs: MINUTE, tickMs: 250 },
  statusCache: { enabled: true },
  statusStream: {
    enabled: true,
    maxPerClient: 5,
    maxPerVerification: 5,
    heartbeatMs: 15_000,
    maxDurationMs: 10 * MINUTE,
  },
  pricesTtlMs: 10 * MINUTE,
  metrics: { prefix: 'verification_' },
  logLevels: ['log', 'error', 'warn', 'fatal'] as LogLevel[],
  maskPhoneNumbers: true,
  /** The API's own attempts per session (the spec's default, 3), and a budget per number across sessions. */
  testNumbers: { maxAttempts: 3, wrongCodesPerNumber: perWindow(10, HOUR) },
  verifiedPhone: {
    header: 'x-verification-id',
    bodyField: 'verification_id',
    claimHeader: 'x-verified-phone-claim',
    claimTtlMs: 10 * MINUTE,
  },
  /** A day between two changes of one owner's number; the new number's verification alone. */
  phoneChange: { cooldownMs: 24 * HOUR, confirmOld: false },
  /** Once `history` is given. */
  history: { retentionDays: 30, maxEntries: 100 },
  /** Once `ledger` is given. */
  ledger: { tolerance: 1, retentionDays: 35, maxRowsPerDay: 2000 },
});

/** `VERIFICATION_DEFAULTS.methods`. */
export const DEFAULT_METHODS: readonly KnownVerificationMethod[] = VERIFICATION_DEFAULTS.methods;
/** `VERIFICATION_DEFAULTS.limits.spendCap`. */
export const DEFAULT_SPEND_CAP: Readonly<Required<SpendCapOptions>> = VERIFICATION_DEFAULTS.limits.spendCap;

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value))
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  return Object.freeze(value);
}
