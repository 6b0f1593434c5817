import { toWireMoney, type WireMoney } from './sandbox-money.js';
import { wireMethod, type SandboxSession, type SessionStatus } from './sandbox-session.js';
import { validationError } from './problem.js';

const DAY_MS = 86_400_000;
const STATUSES: readonly SessionStatus[] = ['sent', 'delivered', 'verified', 'expired', 'failed'];

export interface UsageRange {
  from: string;
  to: string;
}

/** `GET /v1/usage` body. */
export interface SandboxUsageSummary {
  from: string;
  to: string;
  total_verifications: number;
  successful: number;
  success_rate: number;
  total_cost: WireMoney;
  by_method: Record<string, number>;
  by_status: Record<SessionStatus, number>;
  daily: { date: string; total: number; verified: number }[];
}

const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** A `YYYY-MM-DD` that names a real calendar day, or undefined. */
function parseDate(value: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(ms) || utcDate(ms) !== value ? undefined : value;
}

/**
 * The inclusive UTC date range of a usage query. Without parameters: the last `defaultDays` days through
 * today on the sandbox clock; with only `to`: `defaultDays` days ending then; with only `from`: through today.
 */
export function usageRange(query: URLSearchParams, now: number, defaultDays: number): UsageRange {
  const read = (name: 'from' | 'to'): string | undefined => {
    const values = query.getAll(name);
    if (values.length === 0) return undefined;
    const date = values.length === 1 ? parseDate(values[0]!) : undefined;
    if (!date) throw validationError(`${name} must be one date of the form YYYY-MM-DD.`);
    return date;
  };
  const fromParam = read('from');
  const toParam = read('to');
  const to = toParam ?? (fromParam && fromParam > utcDate(now) ? fromParam : utcDate(now));
  const from = fromParam ?? utcDate(Date.parse(`${to}T00:00:00Z`) - (defaultDays - 1) * DAY_MS);
  if (from > to) throw validationError('from must not be after to.');
  return { from, to };
}

/**
 * Aggregates the sessions initiated within the range (by their UTC creation date). `total_cost` is what
 * was actually charged for them; `by_method` uses the schema's keys (`msgr1`) and lists methods seen;
 * `by_status` lists all five statuses; `daily` is ordered by date with empty days omitted.
 */
export function summarizeUsage(sessions: readonly SandboxSession[], range: UsageRange): SandboxUsageSummary {
  const byMethod: Record<string, number> = {};
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<SessionStatus, number>;
  const days = new Map<string, { date: string; total: number; verified: number }>();
  let total = 0;
  let successful = 0;
  let costKopecks = 0;
  for (const session of sessions) {
    const date = utcDate(session.createdAt);
    if (date < range.from || date > range.to) continue;
    total += 1;
    const verified = session.status === 'verified';
    if (verified) successful += 1;
    if (session.charged) costKopecks += session.recalculatedKopecks ?? session.costKopecks;
    const key = wireMethod(session.method);
    byMethod[key] = (byMethod[key] ?? 0) + 1;
    byStatus[session.status] += 1;
    const day = days.get(date) ?? { date, total: 0, verified: 0 };
    day.total += 1;
    if (verified) day.verified += 1;
    days.set(date, day);
  }
  return {
    from: range.from,
    to: range.to,
    total_verifications: total,
    successful,
    success_rate: total === 0 ? 0 : Math.round((successful / total) * 10_000) / 10_000,
    total_cost: toWireMoney(costKopecks),
    by_method: byMethod,
    by_status: byStatus,
    daily: [...days.values()].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)),
  };
}
