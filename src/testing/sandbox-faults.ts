import { validationError } from './problem.js';

/** Routes a fault can target ('*' = every API route, control routes never). */
export type ApiRoute =
  | 'POST /v1/verify'
  | 'GET /v1/verify/:id'
  | 'POST /v1/verify/check'
  | 'GET /v1/balance'
  | 'GET /v1/usage'
  | 'GET /v1/prices'
  | 'GET /dashboard/prices';
export const API_ROUTES = [
  'POST /v1/verify',
  'GET /v1/verify/:id',
  'POST /v1/verify/check',
  'GET /v1/balance',
  'GET /v1/usage',
  'GET /v1/prices',
  'GET /dashboard/prices',
] as const satisfies readonly ApiRoute[];

export type RouteFaultKind = 'latency' | 'status' | 'reset' | 'garbage' | 'html' | 'empty' | 'field';
const ROUTE_FAULT_KINDS: readonly RouteFaultKind[] = [
  'latency',
  'status',
  'reset',
  'garbage',
  'html',
  'empty',
  'field',
];

/** Body of `POST /_sandbox/faults` for a route fault. */
export interface RouteFaultInput {
  route: ApiRoute | '*';
  kind: RouteFaultKind;
  /** Requests affected; default 1; 0 = until cleared. */
  count?: number;
  latency_ms?: number;
  status?: number;
  retry_after_s?: number;
  /** `field`: the request is processed, then its answer's `field` says `value` (a hostile or broken answer). */
  field?: string;
  value?: unknown;
}

/** Body of `POST /_sandbox/faults` for webhook faults (merged into the current webhook fault settings). */
export interface WebhookFaultInput {
  /** Share (0..1) of messages never delivered (logged `dropped`). */
  drop_rate?: number;
  /** Share (0..1) of messages delivered `duplicates` times concurrently. */
  duplicate_rate?: number;
  /** Copies of a duplicated message. Default 2. */
  duplicates?: number;
  /** Sandbox-clock delay before a message's first attempt. */
  delay_ms?: number;
  /** Hold messages and release them newest first once `reorder_window_ms` of sandbox time has passed. */
  reorder?: boolean;
  /** Default 1000 ms of sandbox clock, counted from the first held message. */
  reorder_window_ms?: number;
  /** The next N messages are dropped. */
  drop_next?: number;
  /** The next N messages are duplicated. */
  duplicate_next?: number;
}

export type SandboxFaultInput = RouteFaultInput | { webhooks: WebhookFaultInput };

export interface RouteFault {
  route: ApiRoute | '*';
  kind: RouteFaultKind;
  /** Remaining uses; Infinity when added with count 0. */
  remaining: number;
  latencyMs: number;
  status: number | undefined;
  retryAfterS: number;
  /** `field` faults: the answer's field and what it says. */
  field?: { name: string; value: unknown };
}

/** What happens to one webhook message. */
export interface WebhookPlan {
  drop: boolean;
  copies: number;
  delayMs: number;
  reorder: boolean;
  reorderWindowMs: number;
}

interface WebhookFaultState {
  dropRate: number;
  duplicateRate: number;
  duplicates: number;
  delayMs: number;
  reorder: boolean;
  reorderWindowMs: number;
  dropNext: number;
  duplicateNext: number;
}

const NO_WEBHOOK_FAULTS: WebhookFaultState = {
  dropRate: 0,
  duplicateRate: 0,
  duplicates: 2,
  delayMs: 0,
  reorder: false,
  reorderWindowMs: 1000,
  dropNext: 0,
  duplicateNext: 0,
};

/** Injected faults: per-route answers for the next N requests, and what happens to webhook messages. */
export class SandboxFaults {
  private routeFaults: RouteFault[] = [];
  private webhook: WebhookFaultState = { ...NO_WEBHOOK_FAULTS };

  /** Validates and adds a fault (a bad body changes nothing). */
  add(input: unknown): void {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw validationError('a fault is an object: { route, kind, ... } or { webhooks: { ... } }');
    }
    if ('webhooks' in input)
      this.webhook = mergeWebhookFaults(this.webhook, (input as { webhooks: unknown }).webhooks);
    else this.routeFaults.push(parseRouteFault(input as Record<string, unknown>));
  }

  clear(): void {
    this.routeFaults = [];
    this.webhook = { ...NO_WEBHOOK_FAULTS };
  }

  /** The first fault that applies to `route`, consuming one of its uses. */
  takeRouteFault(route: string): RouteFault | undefined {
    const fault = this.routeFaults.find((f) => f.route === '*' || f.route === route);
    if (!fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.routeFaults = this.routeFaults.filter((f) => f !== fault);
    return fault;
  }

  /** Decides the fate of one new webhook message. */
  planWebhook(random: () => number = Math.random): WebhookPlan {
    const w = this.webhook;
    let drop = false;
    if (w.dropNext > 0) {
      w.dropNext -= 1;
      drop = true;
    } else if (w.dropRate > 0 && random() < w.dropRate) drop = true;
    let duplicate = false;
    if (!drop && w.duplicateNext > 0) {
      w.duplicateNext -= 1;
      duplicate = true;
    } else if (!drop && w.duplicateRate > 0 && random() < w.duplicateRate) duplicate = true;
    return {
      drop,
      copies: duplicate ? w.duplicates : 1,
      delayMs: w.delayMs,
      reorder: w.reorder,
      reorderWindowMs: w.reorderWindowMs,
    };
  }
}

function parseRouteFault(input: Record<string, unknown>): RouteFault {
  const { route, kind, count = 1, latency_ms: latencyMs = 0, status, retry_after_s: retryAfterS = 1 } = input;
  if (route !== '*' && !(API_ROUTES as readonly unknown[]).includes(route)) {
    throw validationError(`route must be '*' or one of: ${API_ROUTES.join(', ')}`);
  }
  if (!(ROUTE_FAULT_KINDS as readonly unknown[]).includes(kind)) {
    throw validationError(`kind must be one of: ${ROUTE_FAULT_KINDS.join(', ')}`);
  }
  if (!isNonNegativeInteger(count))
    throw validationError('count must be an integer >= 0 (0 = until cleared)');
  if (!isNonNegativeInteger(latencyMs) || latencyMs > 120_000) {
    throw validationError('latency_ms must be an integer from 0 to 120000');
  }
  if (kind === 'latency' && latencyMs === 0) throw validationError('a latency fault needs latency_ms > 0');
  if (
    status !== undefined &&
    (!Number.isInteger(status) || (status as number) < 200 || (status as number) > 599)
  ) {
    throw validationError('status must be an HTTP status from 200 to 599');
  }
  if (kind === 'status' && status !== undefined && (status as number) < 400) {
    throw validationError('a status fault answers an error: status must be from 400 to 599');
  }
  if (kind === 'status' && status === undefined) throw validationError('a status fault needs status');
  if (!isNonNegativeInteger(retryAfterS)) throw validationError('retry_after_s must be an integer >= 0');
  if (kind === 'field' && (typeof input.field !== 'string' || input.field === '' || !('value' in input)))
    throw validationError('a field fault needs field (a name of the answer) and value');
  return {
    ...(kind === 'field' ? { field: { name: input.field as string, value: input.value } } : {}),
    route: route as ApiRoute | '*',
    kind: kind as RouteFaultKind,
    remaining: count === 0 ? Infinity : (count as number),
    latencyMs: latencyMs as number,
    status: status as number | undefined,
    retryAfterS: retryAfterS as number,
  };
}

function mergeWebhookFaults(current: WebhookFaultState, input: unknown): WebhookFaultState {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw validationError('webhooks must be an object');
  }
  const w = input as Record<string, unknown>;
  const next = { ...current };
  const rate = (name: string): number | undefined => {
    const v = w[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1))
      throw validationError(`${name} must be a number from 0 to 1`);
    return v;
  };
  const count = (name: string, min = 0): number | undefined => {
    const v = w[name];
    if (v === undefined) return undefined;
    if (!isNonNegativeInteger(v) || (v as number) < min)
      throw validationError(`${name} must be an integer >= ${min}`);
    return v as number;
  };
  for (const key of Object.keys(w)) {
    const known = ['drop_rate', 'duplicate_rate', 'duplicates', 'delay_ms', 'reorder', 'reorder_window_ms'];
    if (![...known, 'drop_next', 'duplicate_next'].includes(key))
      throw validationError(`unknown webhook fault ${key}`);
  }
  next.dropRate = rate('drop_rate') ?? next.dropRate;
  next.duplicateRate = rate('duplicate_rate') ?? next.duplicateRate;
  next.duplicates = count('duplicates', 2) ?? next.duplicates;
  next.delayMs = count('delay_ms') ?? next.delayMs;
  next.reorderWindowMs = count('reorder_window_ms') ?? next.reorderWindowMs;
  next.dropNext += count('drop_next') ?? 0;
  next.duplicateNext += count('duplicate_next') ?? 0;
  if (w.reorder !== undefined) {
    if (typeof w.reorder !== 'boolean') throw validationError('reorder must be a boolean');
    next.reorder = w.reorder;
  }
  return next;
}

function isNonNegativeInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}
