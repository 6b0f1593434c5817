import { afterEach } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { Sums } from '../../src/account/method-figures.js';
import { MethodHealthWatch } from '../../src/account/method-health.service.js';
import type { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../../src/core/verification-events.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { resolveVerificationOptions } from '../../src/options/verification-options.resolver.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { CapturingLogger } from './log-capture.js';
import { sums } from './method-stats.fixture.js';
import { telemetryOf } from './telemetry.js';

/**
 * MethodHealthWatch instances over figures a spec sets (an operator prefix's and its country's counters), on
 * one shared clock and MemoryStore: src/account/method-health.watch.spec.ts.
 */
export const NOON = Date.parse('2026-11-30T12:00:00Z');
export const MSK = '+79851234567';
export const SPB = '+79211234567';
const stores: MemoryStore[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

/** A week: 1,000 flash calls started, 950 delivered, 900 verified, 100 rescued by the next step. */
const WEEK = sums({ started: 1000, delivered: 950, verified: 900, rescued: 100 });
const plus = (a: Sums, b: Partial<Sums>): Sums =>
  sums(
    Object.fromEntries(
      Object.entries(a).map(([k, v]) => [
        k,
        k === 'buckets' ? v : (v as number) + ((b as Record<string, number>)[k] ?? 0),
      ]),
    ),
  );

export interface Shared {
  now: number;
  /** Per health cell (`7~985`, its country's `7~*`); or a failure. */
  figures: Record<string, Sums> | Error;
  store: MemoryStore;
}

export function shared(): Shared {
  const s = {
    now: NOON,
    figures: { '7~985': WEEK, '7~921': WEEK, '7~*': WEEK, '375~29': WEEK, '375~*': WEEK },
  } as unknown as Shared;
  s.store = new MemoryStore({ clock: () => s.now });
  stores.push(s.store);
  return s;
}

export function instance(s: Shared, name?: string, listener?: (e: MethodHealthEvent) => void) {
  const host = new CapturingLogger();
  const options = {
    ...resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => s.now,
      logger: host,
    }),
    name,
  };
  const stats = {
    // One day's counters that only grow: the window is what they grew by, at any time of day.
    cellDays: (_method: string, cells: readonly string[]) =>
      s.figures instanceof Error
        ? Promise.reject(s.figures)
        : Promise.resolve(
            cells.map((cell) => ({ day: 0, days: [(s.figures as Record<string, Sums>)[cell]!] })),
          ),
  } as unknown as MethodStats;
  const emitter = new EventEmitter2();
  const events: MethodHealthEvent[] = [];
  emitter.on(VerificationOpsEventName.methodHealth, (e: MethodHealthEvent) => {
    events.push(e);
    listener?.(e);
  });
  const watch = new MethodHealthWatch(
    options,
    s.store,
    stats,
    telemetryOf(new VerificationLogger(options)),
    emitter,
  );
  return { watch, events, lines: host.lines };
}

/** The recent window of +7 985: `own` more on the operator, `country` more on its country. */
export function windowOf(s: Shared, own: Partial<Sums>, country: Partial<Sums> = own): void {
  const figures = s.figures as Record<string, Sums>;
  Object.assign(figures, { '7~985': plus(figures['7~985']!, own), '7~*': plus(figures['7~*']!, country) });
}
/** 20 outcomes, half verified: a drop. */
export const DROP = { started: 20, delivered: 20, verified: 10, rescued: 10 };
