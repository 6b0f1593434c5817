/**
 * Benchmark 5b, memory over a soak: the hardening soak's traffic (every method, 10% of the API
 * calls faulted, 30% of the webhooks lost) against a Fastify host in its own process for
 * `--soak-minutes`, then every session expires and the records' retention passes. The host's
 * settled heap and store size are sampled throughout; the goal is no growth once the sessions are
 * over. The same run checks the soak's invariants (one matching terminal event per session,
 * the money adds up).
 */
import { SandboxControlClient } from '../src/testing/index.js';
import { soakFetch } from '../test/hardening/support/short-keep-alive.js';
import { runSoak, type SoakReport } from '../test/hardening/support/soak.js';
import type { ChildServer } from './lib/child-process.js';
import { apiOptions, forkHost, forkSandbox, type BenchContext } from './lib/context.js';
import type { EventTally } from './lib/host-app.js';
import { fmt, type BenchTable } from './lib/report.js';

const TIMEOUT_MS = 1000;
const TTL_SECONDS = 60;
const HEAP_TOLERANCE_MB = 1;
const MB = 1024 * 1024;

export async function soakBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const sandbox = await forkSandbox({ demoAccount: { balance: 10_000_000 } });
  const servers: ChildServer[] = [sandbox];
  try {
    const sb = sandbox.ready;
    const host = await forkHost({
      platform: 'fastify',
      clockOffset: true,
      keyHeader: 'x-soak-user',
      recordEvents: true,
      module: {
        api: { ...apiOptions(sb), timeoutMs: TIMEOUT_MS },
        webhooks: { secret: sb.webhookSecret },
        expirySeconds: TTL_SECONDS,
      },
    });
    servers.push(host);
    const control = new SandboxControlClient(sb.url, { fetch: soakFetch });
    const minutes = ctx.soakMinutes;
    const report: SoakReport = await runSoak(
      {
        hostUrl: host.ready.url,
        control,
        apiKey: sb.apiKey,
        advanceClock: async (ms) => {
          await control.advance(ms);
          await host.call('advanceClock', ms);
        },
        events: async () => (await host.call<EventTally>('tally', true)).perSession ?? {},
        clearEvents: () => host.call('resetTally'),
        recordedCosts: (ids) => host.call('recordedCosts', ids),
        reconcileQueueSize: () => host.call('queueSize', 'reconcile'),
        heapUsed: () => host.call('heapUsed'),
        storeEntries: () => host.call('storeEntries'),
      },
      {
        durationMs: minutes * 60_000,
        warmupMs: ctx.quick ? 5_000 : 15_000,
        users: 8,
        faultRate: 0.1,
        webhookLossRate: 0.3,
        apiTimeoutMs: TIMEOUT_MS,
        sessionTtlMs: TTL_SECONDS * 1000,
        settleTimeoutMs: 120_000,
        heapSampleEveryMs: Math.max(10_000, (minutes * 60_000) / 12),
        log: ctx.log,
      },
    );
    const growthMb = (report.heap.final - report.heap.afterFirstHalf) / MB;
    const sinceWarmupMb = (report.heap.final - report.heap.baseline) / MB;
    const back = report.storeEntries.final <= report.storeEntries.baseline + 5;
    const requests = Object.values(report.requests).reduce((n, c) => n + c, 0);
    return [
      {
        title: `5b. Memory over a ${fmt(minutes, minutes < 1 ? 1 : 0)}-minute soak of mixed traffic (Fastify host, MemoryStore)`,
        columns: ['measure', 'value', 'goal', 'result'],
        rows: [
          [
            'client requests / journeys / sessions started',
            `${fmt(requests)} / ${fmt(report.journeys)} / ${fmt(report.started)}`,
            '',
            '',
          ],
          ['sessions by final status', JSON.stringify(report.sessionsByStatus), '', ''],
          ['one-shot API faults injected; webhooks dropped', `${fmt(report.faultsInjected)}; 30%`, '', ''],
          [
            'settled heap once the sessions are gone: after warm-up → after 1st half → after 2nd half',
            `${fmt(report.heap.baseline / MB, 1)} → ${fmt(report.heap.afterFirstHalf / MB, 1)} → ${fmt(report.heap.final / MB, 1)} MB`,
            '',
            '',
          ],
          [
            'heap growth over the 2nd half (after its sessions expired and were forgotten)',
            `${growthMb >= 0 ? '+' : ''}${fmt(growthMb, 2)} MB (${sinceWarmupMb >= 0 ? '+' : ''}${fmt(sinceWarmupMb, 2)} MB since the warm-up)`,
            `≤ +${HEAP_TOLERANCE_MB} MB`,
            growthMb <= HEAP_TOLERANCE_MB,
          ],
          [
            'store entries: baseline → peak → final',
            `${fmt(report.storeEntries.baseline)} → ${fmt(report.storeEntries.peak)} → ${fmt(report.storeEntries.final)}`,
            'back to baseline',
            back,
          ],
          [
            'invariants (one matching terminal event per session, module = API, money)',
            report.violations.length === 0
              ? 'all held'
              : `${report.violations.length} violations: ${report.violations.slice(0, 3).join('; ')}`,
            'none violated',
            report.violations.length === 0,
          ],
          [
            'in-doubt sessions (made upstream for a start answered 503 after the time-out) / adopted from a webhook',
            `${fmt(report.inDoubt.sessions)} / ${fmt(report.inDoubt.adopted)}`,
            '',
            '',
          ],
          [
            'money: balance drop = charged sessions = costs the API reported + in-doubt charges no webhook revealed',
            `${fmt(report.money.balanceDrop, 2)} = ${fmt(report.money.charged, 2)} = ${fmt(report.money.recorded, 2)} + ${fmt(report.money.unrevealed, 2)} RUB (${report.money.chargedSessions} charged sessions)`,
            '',
            '',
          ],
        ],
        notes: [
          `Heap samples during the traffic (settled, host process; live sessions included; time since the run began): ${report.heap.samples.map((x) => `${fmt(x.atMs / 1000)} s ${fmt(x.heapUsed / MB, 1)} MB / ${fmt(x.storeEntries)} entries`).join('; ')}.`,
          `A warm-up, then two halves of the soak. Sessions live ${TTL_SECONDS} s and records are kept 24 h after that, so after each part the run moves both clocks past the expiry (the reconciler settles what the lost webhooks missed), checks the invariants, then moves them past the retention before reading the heap. What the warm-up leaves is bounded by design (JIT code, Node's HTTP parser pool, the 2,000 remembered handles). Wall time ${fmt(report.wallMs / 60_000, 1)} min.`,
        ],
      },
    ];
  } finally {
    for (const s of servers.reverse()) await s.close();
  }
}
