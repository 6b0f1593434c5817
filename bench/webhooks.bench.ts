/**
 * Benchmark 4, webhook ingest on one core: signed `verification.verified` events per second
 * accepted (2xx), de-duplicated (10% are re-deliveries of an earlier webhook-id) and emitted, with
 * `confirmWithApi` off and on. The host app is pinned to CPU 0; the sandbox and this runner (the
 * sender) to CPU 1. Each round seeds fresh sessions through the start route, verifies them in
 * the sandbox, then sends every webhook once (a fixed amount; the rate is amount / time).
 * `BENCH_AB_TREE=<dist-bench of another tree>` adds that tree's hosts (its module, this harness) to the
 * same rounds, their order rotating: the two trees side by side in one run, as compare-status does for
 * the status route (two runs minutes apart differed by more than 10 % on a shared machine).
 */
import type { ChildServer } from './lib/child-process.js';
import { allCpus, pinProcess, processCpuSeconds } from './lib/child-process.js';
import { apiOptions, forkHost, forkSandbox, PhoneNumbers, type BenchContext } from './lib/context.js';
import type { EventTally } from './lib/host-app.js';
import { sendPrepared } from './lib/raw-sender.js';
import { fmt, median, type BenchTable } from './lib/report.js';
import { signWebhook, webhookBody, type SignedWebhook } from '../test/hardening/support/webhook-signer.js';
import type { HostReady } from './servers/host-process.js';

const CONNECTIONS = 50;
const DUPLICATE_SHARE = 0.1;
const GOALS = { off: 3000, on: 1000 } as const;
type Mode = keyof typeof GOALS;
/** A host measured: its mode, and the other tree it runs (BENCH_AB_TREE) or this one. */
interface Variant {
  mode: Mode;
  tree?: string;
  label: string;
}

interface RoundResult {
  perSecond: number;
  sent: number;
  ok: number;
  notOk: Record<string, number>;
  distinct: number;
  emitted: number;
  repeated: number;
  upstreamGets: number;
  /** CPU time of the host process (every thread) per webhook sent. */
  hostCpuUsPerWebhook: number;
}

export async function webhooksBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const perRound = ctx.quick ? 2_000 : 10_000;
  const runnerPinned = pinProcess(process.pid, '1');
  const sandbox = await forkSandbox({ demoAccount: { balance: 1_000_000_000 } }, { cpu: 1 });
  const servers: ChildServer[] = [sandbox];
  try {
    const sb = sandbox.ready;
    const other = process.env.BENCH_AB_TREE;
    const variants: Variant[] = (['off', 'on'] as Mode[]).flatMap((mode) => [
      { mode, label: `confirmWithApi ${mode}` },
      ...(other ? [{ mode, tree: other, label: `confirmWithApi ${mode} (${other})` }] : []),
    ]);
    const hosts = new Map<Variant, ChildServer<HostReady>>();
    for (const variant of variants) {
      const { mode } = variant;
      const host = await forkHost(
        {
          platform: 'fastify',
          recordEvents: true,
          module: {
            api: apiOptions(sb),
            webhooks: { secret: sb.webhookSecret, confirmWithApi: mode === 'on' },
            limits: { enabled: false },
            // The sessions must be settled by the webhooks, not by the reconciler's lazy polls.
            reconcile: { lazyIntervalMs: 3_600_000 },
            expirySeconds: 600,
          },
        },
        { cpu: 0 },
        variant.tree,
      );
      hosts.set(variant, host);
      servers.push(host);
    }
    const phones = new PhoneNumbers();

    const round = async (variant: Variant, count: number): Promise<RoundResult> => {
      const host = hosts.get(variant)!;
      const mode = variant.tree ? `${variant.mode}-ab` : variant.mode;
      const distinct = Math.round(count * (1 - DUPLICATE_SHARE));
      const seeded = Array.from({ length: distinct }, () => phones.take());
      const starts = await sendPrepared(
        `${host.ready.url}/verification/start`,
        seeded.map((phone) => ({
          method: 'POST',
          path: '/verification/start',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ phone_number: phone, method: 'reverse_flash_call' }),
        })),
        CONNECTIONS,
      );
      if (starts.codes['201'] !== distinct)
        throw new Error(`seeding starts answered ${JSON.stringify(starts.codes)}`);
      const sessions = await sandbox.call<Record<string, unknown>[]>('verifyPhones', seeded);
      const messages: SignedWebhook[] = sessions.map((data) =>
        signWebhook(sb.webhookSecret, webhookBody('verification.verified', data)),
      );
      // Re-deliveries of earlier messages, spread through the stream: same webhook-id, same signature.
      const stream: SignedWebhook[] = [];
      const every = Math.round(1 / DUPLICATE_SHARE);
      messages.forEach((m, i) => {
        stream.push(m);
        if (i % (every - 1) === every - 2 && stream.length < count) stream.push(messages[Math.floor(i / 2)]!);
      });
      await host.call('resetTally');
      const getsBefore = await sandbox.call<number>('requestCount', 'GET /v1/verify/:id');
      // BENCH_PROFILE=<dir>: a CPU profile of the host per mode (the last round's), for finding costs.
      const profileDir = process.env.BENCH_PROFILE;
      if (profileDir) await host.call('profileStart');
      const cpuBefore = processCpuSeconds(host.pid);
      const { codes, seconds } = await sendPrepared(
        `${host.ready.url}/verification/webhooks`,
        stream.map((m) => ({ method: 'POST', path: '/verification/webhooks', ...m })),
        CONNECTIONS,
      );
      const hostCpuSeconds = processCpuSeconds(host.pid) - cpuBefore;
      if (profileDir) await host.call('profileStop', `${profileDir}/webhooks-${mode}.cpuprofile`);
      const tally = await host.call<EventTally>('tally');
      const upstreamGets = (await sandbox.call<number>('requestCount', 'GET /v1/verify/:id')) - getsBefore;
      const ok = codes['200'] ?? 0;
      const notOk = Object.fromEntries(Object.entries(codes).filter(([s]) => s !== '200'));
      return {
        perSecond: ok / seconds,
        sent: stream.length,
        ok,
        notOk,
        distinct: sessions.length,
        emitted: tally.byName['verification.verified'] ?? 0,
        repeated: tally.repeated,
        upstreamGets,
        hostCpuUsPerWebhook: (hostCpuSeconds * 1e6) / stream.length,
      };
    };

    for (const variant of variants) await round(variant, Math.min(1000, perRound));
    const results = new Map<Variant, RoundResult[]>(variants.map((v) => [v, []]));
    for (let r = 0; r < ctx.rounds; r++)
      for (let k = 0; k < variants.length; k++) {
        const variant = variants[(k + r) % variants.length]!;
        const result = await round(variant, perRound);
        results.get(variant)!.push(result);
        ctx.log(
          `webhooks round ${r + 1} ${variant.label}: ${fmt(result.perSecond)}/s, ${result.emitted}/${result.distinct} emitted`,
        );
      }

    const rows = variants.map((variant) => {
      const { mode } = variant;
      const rs = results.get(variant)!;
      const rate = median(rs.map((r) => r.perSecond));
      const exact = rs.every((r) => r.emitted === r.distinct && r.repeated === 0 && r.ok === r.sent);
      const getsPerEvent =
        rs.reduce((n, r) => n + r.upstreamGets, 0) / rs.reduce((n, r) => n + r.distinct, 0);
      const cpuUs = median(rs.map((r) => r.hostCpuUsPerWebhook));
      return [
        variant.label,
        fmt(rate),
        fmt(cpuUs),
        fmt(1e6 / cpuUs),
        `≥ ${fmt(GOALS[mode])}/s`,
        rate >= GOALS[mode] && exact,
        rs.map((r) => `${r.emitted}/${r.distinct}`).join(', '),
        rs.reduce((n, r) => n + r.repeated, 0),
        fmt(getsPerEvent, 2),
        rs.map((r) => (Object.keys(r.notOk).length ? JSON.stringify(r.notOk) : '0')).join(', '),
      ];
    });
    return [
      {
        title: `4. Webhook ingest on one core: signed events accepted, de-duplicated and emitted (Fastify, ${CONNECTIONS} connections, medians of ${ctx.rounds} rounds × ${fmt(perRound)} webhooks)`,
        columns: [
          'mode',
          'accepted events/s',
          'host CPU µs per webhook',
          "one core's capacity (1 s / CPU per webhook)",
          'goal',
          'result',
          'emitted / distinct sessions per round',
          'emitted twice',
          'upstream GETs per event',
          'non-200 per round',
        ],
        rows,
        notes: [
          `Host app pinned to CPU 0 ${hosts.get(variants[0]!)!.pinnedCpu === 0 ? '(taskset)' : '(taskset unavailable: NOT pinned)'}; sandbox and sender on CPU 1${runnerPinned ? '' : ' (not pinned)'}.`,
          "Accepted events/s is what the host answered with 200 while its core was the only one it had; the sender writes pre-serialised requests (bench/lib/raw-sender.ts), so the rate is the host's, not the load generator's. \"One core's capacity\" is 1 s divided by the host's CPU time (all threads) per webhook.",
          `${DUPLICATE_SHARE * 100}% of the webhooks repeat an earlier webhook-id (answered 200 \`duplicate\`, no second event). Reconciler at a 1 h lazy interval so that every event comes from its webhook.`,
        ],
      },
    ];
  } finally {
    for (const s of servers.reverse()) await s.close();
    if (runnerPinned) pinProcess(process.pid, allCpus());
  }
}
