import type {
  Balance,
  CheckRequest,
  CheckResult,
  InitiateRequest,
  InitiateResult,
  MethodPrice,
  Money,
  Prices,
  UsageDay,
  UsageQuery,
  UsageSummary,
  VerificationSession,
} from './api.types.js';
import type { CheckRequestWire, InitiateRequestWire, ProblemWire } from './api.wire.js';
import { isNumberToCall, isUserLink } from '../core/user-links.js';
import { isKnownMethod, normalizeMethod, toWireMethod } from './method-names.js';
import { WireFormatError } from './wire-format.error.js';
import { ArgumentRangeError } from '../core/phone-verification.error.js';

/** wire ↔ camelCase. Reads defensively: a missing identity field throws WireFormatError, anything else degrades. */

type WireObject = Record<string, unknown>;

export function isWireObject(value: unknown): value is WireObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown, what: string): WireObject {
  if (!isWireObject(value)) throw new WireFormatError(`${what}: expected a JSON object`);
  return value;
}

function requiredString(obj: WireObject, field: string, what: string): string {
  const value = obj[field];
  if (typeof value !== 'string' || value === '') throw new WireFormatError(`${what}: missing "${field}"`);
  return value;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A finite number, or a numeric string (decimals may be serialised as strings). */
function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function toInt(value: unknown): number | undefined {
  const n = toNumber(value);
  return n !== undefined && Number.isInteger(n) ? n : undefined;
}

function toBoolean(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** ISO date-time → Date; anything unparsable → undefined (never an Invalid Date, never a throw). */
export function parseDate(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** `{ amount, currency }` kept as is; `fallbackCurrency` fills a missing currency. Unusable → undefined. */
export function toMoney(value: unknown, fallbackCurrency = 'RUB'): Money | undefined {
  if (!isWireObject(value)) return undefined;
  const amount = toNumber(value.amount);
  if (amount === undefined) return undefined;
  return { amount, currency: optionalString(value.currency) ?? fallbackCurrency };
}

// ---- requests ----

export function toInitiateRequestWire(req: InitiateRequest): InitiateRequestWire {
  const wire: InitiateRequestWire = { phone_number: req.phoneNumber, method: toWireMethod(req.method) };
  if (req.expirySeconds !== undefined) wire.expiry_seconds = req.expirySeconds;
  return wire;
}

export function toCheckRequestWire(req: CheckRequest): CheckRequestWire {
  return { request_id: req.requestId, code: req.code };
}

/** `YYYY-MM-DD` for the usage range; a Date contributes its UTC date, a string is sent as given. */
export function toUsageParams(query: UsageQuery | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  for (const key of ['from', 'to'] as const) {
    const value = query?.[key];
    if (value === undefined) continue;
    if (value instanceof Date) {
      if (Number.isNaN(value.getTime()))
        throw new ArgumentRangeError(`getUsage: "${key}" is an invalid Date`);
      params[key] = value.toISOString().slice(0, 10);
    } else {
      params[key] = value;
    }
  }
  return params;
}

// ---- responses ----

export function toInitiateResult(body: unknown): InitiateResult {
  const what = 'initiate response';
  const wire = asObject(body, what);
  const wireMethod = requiredString(wire, 'method', what);
  const base = {
    requestId: requiredString(wire, 'request_id', what),
    // Only `method` is required of the answer: a session without its number is still the number asked for.
    phoneNumber: optionalString(wire.phone_number) ?? '',
    status: requiredString(wire, 'status', what),
    cost: toMoney(wire.cost),
    expiresAt: parseDate(wire.expires_at),
    codeLength: toInt(wire.code_length),
  };
  const method = normalizeMethod(wireMethod);
  if (!isKnownMethod(method)) return { ...base, method, raw: { ...wire } };
  switch (method) {
    case 'reverse_flash_call':
      return { ...base, method, numberToCall: checked(wire, 'number_to_call', isNumberToCall, what) };
    case 'msgr2_bot':
      return { ...base, method, deepLink: checked(wire, 'deep_link', isUserLink, what) };
    case 'operator_id':
      return { ...base, method, awaitingCode: toBoolean(wire.awaiting_code) };
    default:
      return { ...base, method };
  }
}

/** What a user is handed (`core/user-links.ts`): absent, or what the rule allows; else the answer is unusable. */
function checked(
  wire: Record<string, unknown>,
  field: string,
  allowed: (value: unknown) => value is string,
  what: string,
): string | undefined {
  const value = wire[field];
  if (value === undefined || value === null) return undefined;
  if (!allowed(value)) throw new WireFormatError(`${what}: "${field}" is not what may be shown to a user`);
  return value;
}

export function toVerificationSession(body: unknown): VerificationSession {
  const what = 'session';
  const wire = asObject(body, what);
  return {
    requestId: requiredString(wire, 'request_id', what),
    phoneNumber: requiredString(wire, 'phone_number', what),
    method: normalizeMethod(requiredString(wire, 'method', what)),
    status: requiredString(wire, 'status', what),
    cost: toMoney(wire.cost),
    createdAt: parseDate(wire.created_at),
    verifiedAt: parseDate(wire.verified_at) ?? null,
    expiresAt: parseDate(wire.expires_at),
    awaitingCode: toBoolean(wire.awaiting_code),
  };
}

export function toCheckResult(body: unknown): CheckResult {
  const what = 'check response';
  const wire = asObject(body, what);
  return {
    requestId: requiredString(wire, 'request_id', what),
    status: requiredString(wire, 'status', what),
    phoneNumber: requiredString(wire, 'phone_number', what),
  };
}

export function toBalance(body: unknown): Balance {
  const wire = asObject(body, 'balance response');
  const balance = toMoney(wire.balance);
  if (!balance) throw new WireFormatError('balance response: missing "balance"');
  return { balance };
}

/** Counts keyed by name; invalid counts dropped; keys passed through `normalizeKey`, colliding keys summed. */
function toCounts(value: unknown, normalizeKey: (key: string) => string = (k) => k): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!isWireObject(value)) return counts;
  for (const [key, raw] of Object.entries(value)) {
    const n = toNumber(raw);
    if (n === undefined) continue;
    const name = normalizeKey(key);
    counts[name] = (counts[name] ?? 0) + n;
  }
  return counts;
}

function toUsageDay(value: unknown): UsageDay | undefined {
  if (!isWireObject(value) || typeof value.date !== 'string') return undefined;
  return { date: value.date, total: toNumber(value.total) ?? 0, verified: toNumber(value.verified) ?? 0 };
}

export function toUsageSummary(body: unknown): UsageSummary {
  const wire = asObject(body, 'usage response');
  const total = toNumber(wire.total_verifications) ?? 0;
  const successful = toNumber(wire.successful) ?? 0;
  const daily = Array.isArray(wire.daily)
    ? wire.daily.map(toUsageDay).filter((d): d is UsageDay => d !== undefined)
    : [];
  return {
    from: optionalString(wire.from) ?? '',
    to: optionalString(wire.to) ?? '',
    totalVerifications: total,
    successful,
    successRate:
      toNumber(wire.success_rate) ?? (total > 0 ? Math.round((successful / total) * 10_000) / 10_000 : 0),
    totalCost: toMoney(wire.total_cost) ?? { amount: 0, currency: 'RUB' },
    byMethod: toCounts(wire.by_method, normalizeMethod),
    byStatus: toCounts(wire.by_status),
    daily,
  };
}

/** A price given as Money, as a bare number (currency from the document), or as a numeric string. */
function toPrice(value: unknown, currency: string): Money | undefined {
  const bare = toNumber(value);
  if (bare !== undefined) return { amount: bare, currency };
  return toMoney(value, currency);
}

function toPriceEntry(value: unknown, currency: string): MethodPrice | undefined {
  if (!isWireObject(value) || typeof value.method !== 'string' || value.method === '') return undefined;
  const price = 'price' in value ? toPrice(value.price, currency) : toMoney(value, currency);
  return price ? { method: normalizeMethod(value.method), price } : undefined;
}

/** See PricesWire: a list or a map, top level or under `prices`. Entries that make no sense are skipped. */
export function toPrices(body: unknown): Prices {
  let container: unknown = body;
  let currency = 'RUB';
  if (isWireObject(body) && 'prices' in body) {
    container = body.prices;
    currency = optionalString(body.currency) ?? currency;
  } else if (isWireObject(body) && typeof body.currency === 'string') {
    currency = body.currency;
  }
  let prices: (MethodPrice | undefined)[];
  if (Array.isArray(container)) {
    prices = container.map((entry) => toPriceEntry(entry, currency));
  } else if (isWireObject(container)) {
    prices = Object.entries(container)
      .filter(([key]) => key !== 'currency')
      .map(([method, value]) => {
        const price = toPrice(value, currency);
        return price ? { method: normalizeMethod(method), price } : undefined;
      });
  } else {
    throw new WireFormatError('prices response: expected a list or a map of prices');
  }
  return { prices: prices.filter((p): p is MethodPrice => p !== undefined) };
}

/** A problem document's fields, or undefined when the body is not a JSON object. */
export function toProblem(body: unknown): ProblemWire | undefined {
  return isWireObject(body) ? (body as ProblemWire) : undefined;
}
