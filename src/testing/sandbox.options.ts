/** Options of `VerificationSandbox.start` and of sandbox accounts, with the defaults of every "not shown" choice. */
import type { SandboxPopulation } from './sandbox-population.js';
import { ArgumentRangeError } from '../core/phone-verification.error.js';

/** Canonical method names the sandbox stores (the guides' names; the schema's `msgr1` is accepted on input). */
export const SANDBOX_METHODS = [
  'reverse_flash_call',
  'flash_call',
  'msgr1_otp',
  'msgr2_bot',
  'sms',
  'operator_id',
] as const;
export type SandboxMethod = (typeof SANDBOX_METHODS)[number];

/** Accepts the guides' names and the schema's `msgr1`; undefined for anything else. */
export function canonicalMethod(name: unknown): SandboxMethod | undefined {
  if (name === 'msgr1') return 'msgr1_otp';
  return typeof name === 'string' && (SANDBOX_METHODS as readonly string[]).includes(name)
    ? (name as SandboxMethod)
    : undefined;
}

/** Outcomes of the operator's SIM push, driven by the control API. */
export type OperatorOutcome = 'approve' | 'fallback' | 'timeout' | 'fail';

/** Account settings; amounts are RUB decimals with at most 2 places (kept in kopecks inside). */
export interface SandboxAccountInput {
  apiKey?: string;
  /** Random unless given. */
  apiSecret?: string;
  /** `whsec_<base64>`; random unless given. */
  webhookSecret?: string;
  /** Where signed events are POSTed; null or absent = no webhooks. */
  webhookUrl?: string | null;
  /** Prepaid balance in RUB. Default 1000. */
  balance?: number;
  /** Methods the account may use (`msgr1` accepted for `msgr1_otp`). Default: all six available methods. */
  enabledMethods?: string[];
  /** Per-method prices in RUB overriding the defaults (for example the per-account `msgr2_bot` rate). */
  prices?: Partial<Record<string, number>>;
  /** Deliver sms/flash_call/msgr1_otp codes by themselves shortly after initiation. */
  autoDeliver?: boolean;
  /** Wrong codes accepted per session before it fails. Default 3. */
  codeAttempts?: number;
  /** API requests per second before 429; null/absent = no limit. */
  rateLimitPerSecond?: number | null;
  /** A disabled account gets 403 (no body) on every API call: the sandbox's condition for 403. */
  disabled?: boolean;
  /**
   * Simulated end users per method (docs/sandbox-population.md); null = none. Default: the sandbox's
   * `population` option. Applies to sessions started after it is set.
   */
  population?: SandboxPopulation | null;
}

export interface SandboxAccountCredentials {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
}

export interface SandboxOptions {
  /** 0 = a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Serve the `/_sandbox` control API. Default true; false answers it with 404. */
  control?: boolean;
  /**
   * Freeze the clock: it starts at real time and then moves only by `advance` (default false: it also
   * follows real time, which a standalone sandbox needs). Useful to assert exact millisecond boundaries.
   */
  freezeClock?: boolean;
  /** The demo account's settings. In-process its secrets are random unless given. */
  demoAccount?: SandboxAccountInput;
  /** Answer to a code check on an expired session: 409 `not_pending` (default) or 400 `invalid_code`. */
  expiredCheckStatus?: 409 | 400;
  /** Answer to a method the account has not enabled: 403 without body (default) or 400 `method_not_enabled`. */
  methodNotEnabled?: 403 | 400;
  /** Lowest accepted `expiry_seconds`. Default 30. (Highest is the spec's 600.) */
  minExpirySeconds?: number;
  /** Days covered by `GET /v1/usage` without parameters, ending today (sandbox clock, UTC). Default 30. */
  usageDefaultDays?: number;
  /** Shape of `GET /v1/prices` and `GET /dashboard/prices`: a list (default) or a map keyed by method. */
  pricesShape?: 'list' | 'map';
  /** Sandbox-clock delay of auto-delivery after initiation. Default 1000 ms. */
  autoDeliverDelayMs?: number;
  /** Sandbox-clock delay between an operator accepting a code and the session's result. Default 500 ms. */
  operatorResultDelayMs?: number;
  /** Digits of issued codes per method. Defaults: flash_call 4, reverse_flash_call 4, others 6. */
  codeLengths?: Partial<Record<SandboxMethod, number>>;
  /** Real-time limit of one webhook delivery attempt. Default 5000 ms. */
  webhookTimeoutMs?: number;
  /** Delivery attempts per webhook message, the first included. Default 6. */
  webhookMaxAttempts?: number;
  /** Sandbox-clock delay before the first retry; each later retry waits `webhookRetryFactor` times longer. Default 1000 ms. */
  webhookRetryBaseMs?: number;
  /** Default 4 (1 s, 4 s, 16 s, 64 s, 256 s). */
  webhookRetryFactor?: number;
  /** Real-time period of the background processing of due work. Default 100 ms. */
  tickMs?: number;
  /** Largest accepted request body. Default 65536 bytes; larger gets 413. */
  maxBodyBytes?: number;
  /** Where the sandbox writes one line per notable event (webhook drops, failures). Default: nowhere. */
  log?: (line: string) => void;
  /**
   * Simulated end users for every account created without its own `population`, the demo account
   * included (e.g. `SANDBOX_POPULATION_REALISTIC`). Default none: sessions wait for the control API.
   */
  population?: SandboxPopulation;
}

/** Options with every default applied. */
export type ResolvedSandboxOptions = Required<
  Omit<SandboxOptions, 'demoAccount' | 'codeLengths' | 'log' | 'population'>
> & {
  demoAccount: SandboxAccountInput;
  codeLengths: Record<SandboxMethod, number>;
  log: (line: string) => void;
  /** Validated by the sandbox's state when it starts. */
  population: SandboxPopulation | null;
};

export const DEFAULT_EXPIRY_SECONDS = 300;
export const MAX_EXPIRY_SECONDS = 600;
export const DEFAULT_CODE_ATTEMPTS = 3;
export const DEFAULT_BALANCE_RUB = 1000;

const DEFAULT_CODE_LENGTHS: Record<SandboxMethod, number> = {
  reverse_flash_call: 4,
  flash_call: 4,
  msgr1_otp: 6,
  msgr2_bot: 6,
  sms: 6,
  operator_id: 6,
};

export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  const codeLengths = { ...DEFAULT_CODE_LENGTHS, ...options.codeLengths };
  for (const [method, length] of Object.entries(codeLengths)) {
    if (!Number.isInteger(length) || length < 4 || length > 8) {
      throw new ArgumentRangeError(`codeLengths.${method} must be an integer from 4 to 8`);
    }
  }
  const resolved: ResolvedSandboxOptions = {
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    control: options.control ?? true,
    freezeClock: options.freezeClock ?? false,
    demoAccount: options.demoAccount ?? {},
    expiredCheckStatus: options.expiredCheckStatus ?? 409,
    methodNotEnabled: options.methodNotEnabled ?? 403,
    minExpirySeconds: options.minExpirySeconds ?? 30,
    usageDefaultDays: options.usageDefaultDays ?? 30,
    pricesShape: options.pricesShape ?? 'list',
    autoDeliverDelayMs: options.autoDeliverDelayMs ?? 1000,
    operatorResultDelayMs: options.operatorResultDelayMs ?? 500,
    codeLengths,
    webhookTimeoutMs: options.webhookTimeoutMs ?? 5000,
    webhookMaxAttempts: options.webhookMaxAttempts ?? 6,
    webhookRetryBaseMs: options.webhookRetryBaseMs ?? 1000,
    webhookRetryFactor: options.webhookRetryFactor ?? 4,
    tickMs: options.tickMs ?? 100,
    maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
    log: options.log ?? (() => undefined),
    population: options.population ?? null,
  };
  if (![400, 409].includes(resolved.expiredCheckStatus))
    throw new ArgumentRangeError('expiredCheckStatus must be 400 or 409');
  if (![400, 403].includes(resolved.methodNotEnabled))
    throw new ArgumentRangeError('methodNotEnabled must be 400 or 403');
  if (!Number.isInteger(resolved.minExpirySeconds) || resolved.minExpirySeconds < 1) {
    throw new ArgumentRangeError('minExpirySeconds must be a positive integer');
  }
  if (resolved.minExpirySeconds > MAX_EXPIRY_SECONDS)
    throw new ArgumentRangeError('minExpirySeconds must not exceed 600');
  if (!Number.isInteger(resolved.usageDefaultDays) || resolved.usageDefaultDays < 1) {
    throw new ArgumentRangeError('usageDefaultDays must be a positive integer');
  }
  if (!['list', 'map'].includes(resolved.pricesShape))
    throw new ArgumentRangeError("pricesShape must be 'list' or 'map'");
  if (!Number.isInteger(resolved.webhookMaxAttempts) || resolved.webhookMaxAttempts < 1) {
    throw new ArgumentRangeError('webhookMaxAttempts must be a positive integer');
  }
  return resolved;
}
