import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import { SandboxControlClient } from '../../src/testing/index.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { createTestApp, type TestApp } from '../support/verification-app.js';
import { settledHeapUsed } from './support/heap.js';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.js';
import { runSoak, type SoakReport } from './support/soak.js';
import { soakFetch } from './support/short-keep-alive.js';

/**
 * Seconds of measured traffic: half a minute in `npm test`, two halves of 15 s after a 5 s warm-up (the long
 * soak is `npm run bench -- soak`, ten minutes); `SOAK_SECONDS=300` for a five-minute run.
 */
const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 30);
const API_KEY = 'soak_key';
const API_SECRET = 'sk_soak_1a2b3c4d5e6f708192a3b4c5d6e7f809';
const WEBHOOK_SECRET = `whsec_${Buffer.from('soak-webhook-secret-0123456789abc').toString('base64')}`;
const TIMEOUT_MS = 1000;
const TTL_SECONDS = 60;
/** Heap the second half may keep over the first once their sessions are gone (collector and JIT noise). */
const HEAP_TOLERANCE = 2 * 1024 * 1024;

/**
 * The soak of issue 8: mixed traffic across every method with 10% of the API calls faulted (some
 * initiations answered only after the module's time-out: in-doubt starts) and 30% of the webhooks lost. Every session ends with exactly one terminal event matching the API, the
 * module shows what the API shows, the money adds up, and the host's store comes back once the
 * sessions are over and its heap with it: after a warm-up, the second half of the run leaves the
 * heap where the first half left it. The sandbox runs in its own process (it keeps every session), so
 * the heap measured here is the host app's and the test's.
 */
/**
 * The method figures are day counters (`stats:{day}:{method}:{country}[~{cell}]:{field}`, kept 35 days):
 * their number grows with days, methods, countries and operator prefixes, not with sessions. The soak counts them apart, so that
 * "the store forgets each session" is checked on everything else, and checks they stay that few.
 */
class FiguresAwareStore extends MemoryStore {
  /** The method figures' day counters. */
  readonly figureKeys = new Set<string>();
  /** Every key kept past the sessions by design (KEPT_APART), the figures' included. */
  readonly keptApart = new Set<string>();

  override increment(key: string, by: number, ttlMs: number, options?: StoreWriteOptions) {
    this.#note(key);
    return super.increment(key, by, ttlMs, options);
  }

  override set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions) {
    this.#note(key);
    return super.set(key, value, ttlMs, options);
  }

  override setIfAbsent(key: string, value: string, ttlMs: number, options?: StoreWriteOptions) {
    this.#note(key);
    return super.setIfAbsent(key, value, ttlMs, options);
  }

  /** How many of the keys kept apart are still held (a read drops an expired one). */
  async keptApartHeld(): Promise<number> {
    const held = await Promise.all([...this.keptApart].map((key) => this.get(key)));
    return held.filter((value) => value !== null).length;
  }

  #note(key: string): void {
    if (key.startsWith('stats:')) this.figureKeys.add(key);
    if (KEPT_APART.test(key)) this.keptApart.add(key);
  }
}

/**
 * Kept past the sessions by design, so counted apart with the figures: the method figures' day counters,
 * a caller's record of having verified (`stats-record`, what the figures learn from), an erasure
 * index's day counter (`subject:{…}:<day>:n`, kept until the last record it indexes is gone), the ops
 * page's day counts of incidents, and the pumping defence's days and week: the day's counters of places
 * (`dv`, `ds`, `dr`, `drm`) and of networks past their share (`pn`, `pnm`), a caller's share of the places
 * (`sh`), a number's give-back of the week (`gb`) and a country's week counters (`ws`, `wv`), kept as long
 * as the slowest drip it must see; and a network's share of each figure cell in the UTC week (`stats-cell-net`,
 * kept until the week ends). Counted while held: one that expired is not subtracted.
 */
const KEPT_APART =
  /^(stats:|stats-cell-net:|stats-record:|subject:\{[no]:[^}]+\}:\d+:n$|ops:[^:]+:incident:|protect:pump:(sh|ws|wv|dv|ds|dr|drm|pn|pnm|gb):)/;

describe('hardening: soak of mixed traffic with faults and lost webhooks', () => {
  let sandbox: SandboxProcess;
  let host: TestApp;
  let offset = 0;
  const clock = (): number => Date.now() + offset;
  /**
   * The module's default store (a MemoryStore), sweeping every 100 ms instead of every second: the
   * soak waits for it to forget each phase's records, and a sweep a second apart made that wait long.
   */
  const store = new FiguresAwareStore({ clock, sweepIntervalMs: 100 });
  let report: SoakReport;

  beforeAll(async () => {
    sandbox = await startSandboxProcess({
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      webhookSecret: WEBHOOK_SECRET,
      balance: 10_000_000,
    });
    host = await createTestApp({
      platform: 'express',
      module: {
        api: { baseUrl: sandbox.url, apiKey: API_KEY, apiSecret: API_SECRET, timeoutMs: TIMEOUT_MS },
        webhooks: { secret: WEBHOOK_SECRET },
        expirySeconds: TTL_SECONDS,
        // Protection on with its defaults; each virtual user is one client. The soak spends about
        // 10,000 RUB in five minutes: the spend cap stays on (its reservations run under the faults)
        // but above that, so that the traffic is not refused by the default 1,000 RUB a day.
        limits: {
          key: (req) => (req as { headers: Record<string, string> }).headers['x-soak-user'],
          spendCap: { amount: 10_000_000, windowMs: 86_400_000 },
          // The pumping defence counts everything (its store entries and heap are part of the soak) but holds
          // nothing: the soak's users start numbers of a few ranges that convert about 60 % (faults, lost
          // codes), which it would rightly hold, and the soak is about invariants, not about holds.
          pumping: { mode: 'monitor' },
        },
        clock,
        store,
      },
    });
    // The soak's client and the host share one event loop: after a stall of a few seconds (a full GC
    // under a loaded CI run), the server's 5 s idle timer and the client's 1 s one both fire late, and
    // the server could close a connection the client was reusing (ECONNRESET on Node 22 and 24 in full
    // runs). Here only the client's pool closes idle connections.
    (host.app.getHttpServer() as { keepAliveTimeout: number }).keepAliveTimeout = 120_000;
  }, 60_000);
  afterAll(async () => {
    await host?.close();
    await store.close();
    await sandbox?.stop();
  });

  it(
    `${SOAK_SECONDS} s of traffic: one matching terminal event per session, money adds up, heap flat`,
    async () => {
      const moduleStore = host.app.get<VerificationStore>(VerificationStore);
      const control = new SandboxControlClient(sandbox.url, { fetch: soakFetch });
      report = await runSoak(
        {
          hostUrl: host.url,
          control,
          apiKey: API_KEY,
          advanceClock: async (ms) => {
            await control.advance(ms);
            offset += ms;
          },
          events: async () => {
            const byId: Record<string, string[]> = {};
            for (const e of host.events) (byId[e.requestId] ??= []).push(e.event);
            return byId;
          },
          clearEvents: async () => {
            host.events.length = 0;
          },
          recordedCosts: async (ids) => {
            const costs: Record<string, number | null> = {};
            for (const id of ids) {
              const raw = await moduleStore.get(`session:{${id}}`);
              // A record's cost is stored as `q: [amount, currency]` (storedRecord).
              costs[id] =
                raw === null ? null : ((JSON.parse(raw) as { q?: [number, string] }).q?.[0] ?? null);
            }
            return costs;
          },
          reconcileQueueSize: () => moduleStore.queueSize('reconcile'),
          heapUsed: async () => settledHeapUsed(),
          storeEntries: async () => {
            const keptApart = await store.keptApartHeld();
            return store.entryCount - keptApart;
          },
        },
        {
          durationMs: SOAK_SECONDS * 1000,
          warmupMs: 5000,
          users: 8,
          faultRate: 0.1,
          webhookLossRate: 0.3,
          apiTimeoutMs: TIMEOUT_MS,
          sessionTtlMs: TTL_SECONDS * 1000,
          settleTimeoutMs: 60_000,
          heapSampleEveryMs: 10_000,
          forgetPollMs: 300,
        },
      );
      // SOAK_REPORT=<file> keeps the figures of a run (bench/README.md, "soak", records a five-minute run).
      if (process.env.SOAK_REPORT) {
        mkdirSync('test-output', { recursive: true });
        writeFileSync(process.env.SOAK_REPORT, JSON.stringify({ seconds: SOAK_SECONDS, ...report }, null, 2));
      }
      expect(report.violations).toEqual([]);
      expect(report.started).toBeGreaterThan(50);
      expect(Object.keys(report.sessionsByStatus).sort()).toEqual(['expired', 'failed', 'verified']);
      expect(report.faultsInjected).toBeGreaterThan(0);
      expect(report.money.chargedSessions).toBeGreaterThan(0);
      // Starts past the API's time-out happened, and webhooks revealed some of their sessions.
      expect(report.inDoubt.sessions).toBeGreaterThan(0);
      expect(report.inDoubt.adopted).toBeGreaterThan(0);
      expect(report.storeEntries.final).toBeLessThanOrEqual(report.storeEntries.baseline + 5);
      // Per day, method, group and field: never per session. A group
      // is the country (+7 and all), its moment group (7~unhinted), or a figure cell of an operator prefix
      // (7~912.unhinted, 7~912) or level (7~.unhinted, all~.unhinted, 7~*): a few per prefix the soak's numbers use.
      const shape =
        /^stats:\d{4}-\d\d-\d\d:[a-z0-9_]+:(all|\d{1,3})(~(\d{0,5}(\.(mobile|desktop|unhinted))?|mobile|desktop|unhinted|\*))?:[a-z0-9]+$/;
      const groups = new Set<string>();
      for (const key of store.figureKeys) {
        if (key === 'stats:currency') continue;
        expect(key).toMatch(shape);
        groups.add(key.split(':').slice(1, 4).join(':'));
      }
      const prefixes = new Set([...groups].map((group) => /:\d+~(\d+)/.exec(group)?.[1]).filter(Boolean));
      const devices = new Set(
        [...groups].map((group) => /(mobile|desktop|unhinted)$/.exec(group)?.[1]).filter(Boolean),
      );
      const days = new Set([...groups].map((group) => group.split(':')[0]));
      // A day (the soak's clock may cross two midnights) and method: country and all; per device its moment
      // group and two levels; the country's health cell; per prefix its cell and one per device.
      const bound = days.size * 8 * (3 + 3 * devices.size + (1 + devices.size) * prefixes.size);
      expect(groups.size).toBeLessThanOrEqual(bound);
      expect(store.figureKeys.size).toBeLessThan(bound * 20);
      // A network's share of a figure cell: per UTC week (the soak's clock may cross one bound; `h`: a health
      // cell's window claim), method, cell and network (the soak's one), each cell one the figures count: never
      // per session.
      const share = /^stats-cell-net:\{(w\d+|h):([a-z0-9_]+:[^:]+):([\w-]+)\}$/;
      const cellGroups = new Set([...groups].map((group) => group.split(':').slice(1).join(':')));
      const weeks = new Set<string>();
      const networks = new Set<string>();
      const shares = [...store.keptApart].filter((key) => key.startsWith('stats-cell-net:'));
      for (const key of shares) {
        const [, week, cell, network] = share.exec(key) ?? [];
        expect({ key, counted: cellGroups.has(cell!) }).toEqual({ key, counted: true });
        if (week !== 'h') weeks.add(week!);
        networks.add(network!);
      }
      expect(weeks.size).toBeLessThanOrEqual(2);
      expect(networks.size).toBe(1);
      expect(report.heap.final - report.heap.afterFirstHalf).toBeLessThan(HEAP_TOLERANCE);
    },
    (SOAK_SECONDS + 240) * 1000,
  );
});
