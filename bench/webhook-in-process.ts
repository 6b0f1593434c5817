/**
 * `node dist-bench/bench/webhook-in-process.js [dist-bench of another tree ...]`: the module's own CPU per
 * signed `verification.verified` webhook, with no HTTP: `WebhookReceiver.receive` on pending
 * reverse-call sessions of a booted module (MemoryStore, `confirmWithApi` off, limits off, as
 * `npm run bench -- webhooks` configures its host), each session saved and counted by the method
 * figures beforehand, outside the timing; the figures' flush is timed with the webhooks. Every tree
 * (this one, then each one named, with its own Nest packages) boots in this one process and their
 * rounds alternate, so the per-round ratio cancels the drift of a shared machine, which moves the
 * webhooks benchmark's host CPU by ±10 % between runs. A tool for deciding between variants, not a
 * benchmark. `WEBHOOK_SESSIONS`, `WEBHOOK_ROUNDS`; `WEBHOOK_PROFILE=<dir>`: a CPU profile of the
 * measured rounds.
 */
import { randomBytes } from 'node:crypto';
import inspector from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { signWebhook, webhookBody } from '../test/hardening/support/webhook-signer.js';

const SESSIONS = Number(process.env.WEBHOOK_SESSIONS ?? 2_000);
const ROUNDS = Number(process.env.WEBHOOK_ROUNDS ?? 12);
const WARM_ROUNDS = Math.min(4, ROUNDS - 1);

type Loaded = Record<string, unknown>;

async function load(tree: string, path: string, name: string): Promise<unknown> {
  return ((await import(pathToFileURL(join(tree, path)).href)) as Loaded)[name];
}

/** Boots one tree's module (its own Nest packages) and answers how to run a round on it. */
async function boot(
  tree: string,
): Promise<{ round(): Promise<number>; close(rounds: number): Promise<void> }> {
  const nodeModules = join(tree, '..', 'node_modules');
  const pkg = (name: string, entry: string) => pathToFileURL(join(nodeModules, name, entry)).href;
  const { Test } = (await import(pkg('@nestjs/testing', 'index.js'))) as typeof import('@nestjs/testing');
  const { Module } = (await import(pkg('@nestjs/common', 'index.js'))) as typeof import('@nestjs/common');
  const { EventEmitterModule, EventEmitter2 } = (await import(
    pkg('@nestjs/event-emitter', 'dist/index.js')
  )) as typeof import('@nestjs/event-emitter');
  const VerificationModule = (await load(
    tree,
    'src/module/verification.module.js',
    'VerificationModule',
  )) as {
    forRoot(options: object): object;
  };
  const token = (path: string, name: string) => load(tree, path, name) as Promise<never>;
  const VerificationStore = await token('src/store/verification-store.interface.js', 'VerificationStore');
  const WebhookReceiver = await token('src/webhooks/webhook-receiver.js', 'WebhookReceiver');
  const MethodStats = await token('src/account/method-stats.service.js', 'MethodStats');
  const Records = await token('src/sessions/session-record.repository.js', 'SessionRecordRepository');

  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  class BenchHost {}
  Module({
    imports: [
      EventEmitterModule.forRoot({ wildcard: false }),
      VerificationModule.forRoot({
        api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'in-process-secret' },
        webhooks: { secret, confirmWithApi: false },
        limits: { enabled: false },
        reconcile: { lazyIntervalMs: 3_600_000 },
        expirySeconds: 600,
      }),
    ] as never[],
  })(BenchHost);
  const ref = await Test.createTestingModule({ imports: [BenchHost] }).compile();
  const app = ref.createNestApplication({ logger: false });
  await app.init();
  const get = <T>(t: never) => app.get(t, { strict: false }) as T;
  const store = get<{ now(): number }>(VerificationStore);
  const receiver = get<{ receive(body: unknown, headers: object): Promise<string> }>(WebhookReceiver);
  const stats = get<{ tally(record: object): Promise<void>; flush(): Promise<void> }>(MethodStats);
  const records = get<{ save(record: object): Promise<void> }>(Records);
  let emitted = 0;
  get<InstanceType<typeof EventEmitter2>>(EventEmitter2 as never).on('verification.verified', () => {
    emitted++;
  });

  let serial = 0;
  const seed = async () => {
    const now = store.now();
    const messages: { body: Buffer; headers: Record<string, string> }[] = [];
    for (let i = 0; i < SESSIONS; i++, serial++) {
      const requestId = `${String(serial).padStart(8, '0')}-aaaa-4bbb-8ccc-${randomBytes(6).toString('hex')}`;
      const phoneNumber = `+7912${String(serial).padStart(7, '0')}`;
      const record = {
        requestId,
        phoneNumber,
        method: 'reverse_flash_call',
        status: 'pending',
        awaitingCode: false,
        numberToCall: '+70000000000',
        createdAt: now - 5_000,
        expiresAt: now + 600_000,
        verifiedAt: null,
        cost: { amount: 0.25, currency: 'RUB' },
      };
      await records.save(record);
      await stats.tally(record);
      const data = {
        request_id: requestId,
        phone_number: phoneNumber,
        method: 'reverse_flash_call',
        status: 'verified',
        awaiting_code: false,
        verified_at: new Date(now).toISOString(),
        expires_at: new Date(now + 600_000).toISOString(),
      };
      const signed = signWebhook(secret, webhookBody('verification.verified', data, now));
      messages.push({ body: Buffer.from(signed.body), headers: signed.headers });
    }
    await stats.flush();
    return messages;
  };

  /** One round: fresh sessions seeded, then their webhooks received; CPU µs per webhook. */
  const round = async (): Promise<number> => {
    const messages = await seed();
    const cpu = process.cpuUsage();
    for (const m of messages) {
      const outcome = await receiver.receive(m.body, m.headers);
      if (outcome !== 'processed') throw new Error(`${tree}: a webhook answered ${outcome}`);
    }
    await stats.flush();
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / messages.length;
  };
  const close = async (rounds: number): Promise<void> => {
    await app.close();
    if (emitted !== SESSIONS * rounds) throw new Error(`${tree}: emitted ${emitted} of ${SESSIONS * rounds}`);
  };
  return { round, close };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

const thisTree = resolve(fileURLToPath(import.meta.url), '..', '..');
const trees = [thisTree, ...process.argv.slice(2).map((t) => resolve(t))];
const hosts = [];
for (const tree of trees) hosts.push({ tree, host: await boot(tree), figures: [] as number[] });
const profileDir = process.env.WEBHOOK_PROFILE;
const session = profileDir ? new inspector.Session() : undefined;
for (let r = 0; r < ROUNDS; r++) {
  if (session && r === WARM_ROUNDS) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  // The order turns every round: neither tree always runs after the other's garbage.
  for (let k = 0; k < hosts.length; k++) {
    const { host, figures } = hosts[(k + r) % hosts.length]!;
    const figure = await host.round();
    if (r >= WARM_ROUNDS) figures.push(figure);
  }
}
if (session && profileDir) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(join(profileDir, `webhook-in-process-${process.pid}.cpuprofile`), JSON.stringify(profile));
}
for (const { host } of hosts) await host.close(ROUNDS);
const base = hosts[0]!.figures;
for (const { tree, figures } of hosts) {
  // Rounds of the two trees ran next to each other: their ratio cancels the machine's drift.
  const ratio = median(figures.map((f, i) => f / base[i]!));
  console.log(
    `${tree}: ${median(figures).toFixed(1)} µs per webhook (median of ${figures.length} rounds), ÷ this tree ${ratio.toFixed(3)} (median of per-round ratios)`,
  );
}
process.exit(0);
