/**
 * What `SandboxControlClient` sends and returns: the `/_sandbox` bodies in camelCase, like the rest of the
 * package's TypeScript API, and the one key conversion between them and the wire's snake_case.
 */
import type { ApiRoute, RouteFaultKind } from './sandbox-faults.js';
import type { WireMoney } from './sandbox-money.js';
import type { SandboxDevice, SandboxPopulation } from './sandbox-population.js';
import type { SandboxCompletedBy } from './sandbox-users.js';
import type { WebhookEvent } from './sandbox-webhooks.js';
import type { SandboxMethod } from './sandbox.options.js';

export type SessionStatus = 'sent' | 'delivered' | 'verified' | 'expired' | 'failed';

/**
 * Where an `operator_id` session stands: the SIM push is pending; it fell back to an SMS code; the operator
 * accepted a code and the result is on its way; or the operator leg ended.
 */
export type OperatorState =
  'push_pending' | 'sms_fallback' | 'code_accepted' | 'approved' | 'timed_out' | 'failed';

/** A session as `GET /_sandbox/sessions/:id` shows it: what the end user's phone knows, and more. */
export interface SandboxControlSession {
  requestId: string;
  apiKey: string;
  phoneNumber: string;
  method: SandboxMethod;
  status: SessionStatus;
  /** The code the user received (null for reverse_flash_call, and for msgr2_bot before the share). */
  code: string | null;
  codeLength: number;
  /** flash_call: the caller ID shown to the user, once the call went out. */
  incomingNumber: string | null;
  /** reverse_flash_call: the number the user must call. */
  numberToCall: string | null;
  /** msgr2_bot: the bot link the user opens. */
  deepLink: string | null;
  attemptsRemaining: number;
  awaitingCode: boolean;
  charged: boolean;
  cost: WireMoney;
  /** ISO times on the sandbox clock. */
  createdAt: string;
  expiresAt: string;
  verifiedAt: string | null;
  operatorState: OperatorState | null;
  /** msgr2_bot: the last number shared in the bot, matching or not. */
  sharedPhoneNumber: string | null;
}

/** Result of a control action on a session: what happened, in words a test can assert on. */
export interface ControlActionResult {
  result:
    | 'delivered'
    | 'already_delivered'
    | 'verified'
    | 'ignored'
    | 'code_required'
    | 'expired'
    | 'failed'
    | 'recalculated';
  detail: string;
}

/** A control action's answer: the session after it, and what happened in words a test can assert on. */
export interface SandboxControlActionResult extends SandboxControlSession {
  result: ControlActionResult['result'];
  detail: string;
}

/** An account as `GET /_sandbox/accounts/:api_key` shows it (a fake account: its secrets are shown on purpose). */
export interface SandboxControlAccount {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  webhookUrl: string | null;
  balance: WireMoney;
  enabledMethods: SandboxMethod[];
  prices: Record<SandboxMethod, WireMoney>;
  autoDeliver: boolean;
  codeAttempts: number;
  rateLimitPerSecond: number | null;
  disabled: boolean;
  /** Simulated end users as set (method names canonical), or null. */
  population: SandboxPopulation | null;
}

/**
 * A session's simulated user (`GET /_sandbox/sessions/:id/user`), for a driver to act out what the sandbox
 * cannot: typing the code into the host's frontend at `createdAt + completesAfterMs` when `completedBy`
 * is `driver` and `completes` is true. Times are ms after the session's creation, on the sandbox clock.
 */
export interface SandboxControlUserPlan {
  requestId: string;
  phoneNumber: string;
  method: SandboxMethod;
  device: SandboxDevice;
  /** 1 for the number's first session of this method on the account, 2 for the next, ... */
  attempt: number;
  /** Whether the code, call, bot share or push reaches the user; null for reverse_flash_call. */
  delivered: boolean | null;
  /** When it is delivered; undelivered, when the channel gives up (a failure, the SMS fallback), or null. */
  deliveredAfterMs: number | null;
  /** Whether the user completes (a user slower than the TTL finds the session expired). */
  completes: boolean;
  completesAfterMs: number | null;
  /** `sandbox`: the sandbox completes it by itself (the reverse call, the push approval); `driver`: code entry. */
  completedBy: SandboxCompletedBy;
  /** The code the user holds now: null until delivered (read the plan again at `completesAfterMs`). */
  code: string | null;
}

/** A phone number's declared device (`PUT /_sandbox/users/:phone_number`); null = the population draws it. */
export interface SandboxControlUserDevice {
  phoneNumber: string;
  device: SandboxDevice | null;
}

/** The sandbox clock: ms since the epoch, and the same instant in ISO. */
export interface SandboxControlClock {
  now: number;
  nowIso: string;
}

/** One line of the webhook log: a delivery attempt, or a message a fault dropped. */
export interface SandboxControlWebhookDelivery {
  webhookId: string;
  event: WebhookEvent;
  requestId: string;
  url: string;
  attempt: number;
  /** HTTP status of the receiver's answer, or what happened instead. */
  status: number | 'error' | 'timeout' | 'dropped';
  /** Sandbox-clock time of the attempt (ISO). */
  at: string;
}

/** A fault on API routes: the next `count` requests to `route` get `kind` instead of their answer. */
export interface SandboxControlRouteFault {
  /** An API route key, or '*' for every API route (control routes never). */
  route: ApiRoute | '*';
  kind: RouteFaultKind;
  /** Requests affected; default 1; 0 = until cleared. */
  count?: number;
  /** `latency`: real-time delay before the answer. */
  latencyMs?: number;
  /** `status` (and `html`): the HTTP status answered. */
  status?: number;
  /** `status` 429: the `Retry-After` seconds. */
  retryAfterS?: number;
  /** `field`: the request is processed, then its answer's `field` says `value`. */
  field?: string;
  value?: unknown;
}

/** Webhook faults, merged into the current settings until `clearFaults`. */
export interface SandboxControlWebhookFaults {
  /** Share (0..1) of messages never delivered (logged `dropped`). */
  dropRate?: number;
  /** Share (0..1) of messages delivered `duplicates` times concurrently. */
  duplicateRate?: number;
  /** Copies of a duplicated message. Default 2. */
  duplicates?: number;
  /** Sandbox-clock delay before a message's first attempt. */
  delayMs?: number;
  /** Hold messages and release them newest first once `reorderWindowMs` of sandbox time has passed. */
  reorder?: boolean;
  /** Default 1000 ms of sandbox clock, counted from the first held message. */
  reorderWindowMs?: number;
  /** The next N messages are dropped. */
  dropNext?: number;
  /** The next N messages are duplicated. */
  duplicateNext?: number;
}

export type SandboxControlFault = SandboxControlRouteFault | { webhooks: SandboxControlWebhookFaults };

const toCamel = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const toSnake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A wire body with its own keys in camelCase. Shallow on purpose: nested keys are data, not field names
 * (`prices` is keyed by method, money is `amount`/`currency` on both sides).
 */
export function camelKeys<T>(wire: unknown): T {
  return Object.fromEntries(
    Object.entries(wire as Record<string, unknown>).map(([key, value]) => [toCamel(key), value]),
  ) as T;
}

/** The reverse of `camelKeys`, for request bodies. */
export function snakeKeys(input: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).map(([key, value]) => [toSnake(key), value]));
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every key converted, all the way down. */
function deepKeys(value: unknown, convert: (key: string) => string): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [convert(key), deepKeys(inner, convert)]),
  );
}

/** A population's keys converted, except the keys of `methods`: method names are data (`reverse_flash_call`). */
function populationKeys(value: unknown, convert: (key: string) => string): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      const name = convert(key);
      if (name !== 'methods' || !isRecord(inner)) return [name, deepKeys(inner, convert)];
      const methods = Object.entries(inner).map(([method, entry]) => [method, deepKeys(entry, convert)]);
      return [name, Object.fromEntries(methods)];
    }),
  );
}

/** A population from the wire (snake_case) in camelCase; unknown keys are converted too and refused later. */
export function camelPopulation(wire: unknown): SandboxPopulation {
  return populationKeys(wire, toCamel) as SandboxPopulation;
}

/** A population in the wire's snake_case. */
export function snakePopulation(population: SandboxPopulation): Record<string, unknown> {
  return populationKeys(population, toSnake) as Record<string, unknown>;
}
