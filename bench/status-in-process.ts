/**
 * `node dist-bench/bench/status-in-process.js [dist-bench of another tree ...]`: the module's own CPU per
 * status answer, with no HTTP on either side: `VerificationService.status()` on pending sessions of a
 * booted module, the API client's `getSession` answering at once, and the answer serialised as the route
 * does (`VerificationStatusResponse.from`, `JSON.stringify`). Without sockets, kernel and load generator,
 * one process's figure moves by a few per cent from run to run instead of the ±10 % of `compare-status`,
 * so a change of one or two microseconds in the module shows. Each tree (this one, then each one named)
 * runs in a child process of its own; a tree from before the layering round (its module at
 * `src/verification.module.js`) is found too. A tool for deciding between variants, not a benchmark.
 * It also prints the bytes allocated per answer, from V8's sampling heap profiler over a few more passes
 * (every allocation sampled, those collected since included); `STATUS_ALLOC_TOP=n` lists the n functions
 * that allocate most. Under load, what a poll allocates is paid again in the host's collector: more
 * frequent young-generation pauses, each with the other requests in flight to trace.
 */
import { execFileSync } from 'node:child_process';
import inspector from 'node:inspector/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SESSIONS = 2_000;
const ROUNDS = 12;
const WARM_ROUNDS = 4;
/** Each round answers every session this many times. */
const PASSES = 10;
const METHODS = ['sms', 'reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'operator_id'];

interface Constructor<T = unknown> {
  new (...args: never[]): T;
}

/** Where a tree keeps each class: this layout first, then the one before the layering round. */
const LAYOUTS: Record<string, string[]> = {
  module: ['src/module/verification.module.js', 'src/verification.module.js'],
  service: ['src/verification/verification.service.js', 'src/sessions/verification.service.js'],
  client: ['src/api/verification-api.client.js'],
  codec: [
    'src/core/verification-handle.codec.js',
    'src/verification/verification-handle.codec.js',
    'src/sessions/verification-handle.codec.js',
  ],
  store: ['src/store/verification-store.interface.js'],
  responses: ['src/http/verification.responses.js'],
};

async function load(
  tree: string,
  part: string,
  name: string,
): Promise<Constructor & Record<string, unknown>> {
  const file = LAYOUTS[part]!.map((path) => join(tree, path)).find((path) => existsSync(path));
  if (!file) throw new Error(`${tree}: no ${part} at ${LAYOUTS[part]!.join(' or ')}`);
  return ((await import(pathToFileURL(file).href)) as Record<string, Constructor & Record<string, unknown>>)[
    name
  ]!;
}

/** One tree's figure: median µs per status answer over the measured rounds. */
async function measure(tree: string): Promise<void> {
  // The tree's own Nest packages: its module's decorators must be read by the same Nest as boots it.
  const nodeModules = join(tree, '..', 'node_modules');
  const packageEntry = (name: string, entry: string) => pathToFileURL(join(nodeModules, name, entry)).href;
  const { Test } = (await import(
    packageEntry('@nestjs/testing', 'index.js')
  )) as typeof import('@nestjs/testing');
  const { Module } = (await import(
    packageEntry('@nestjs/common', 'index.js')
  )) as typeof import('@nestjs/common');
  const { EventEmitterModule } = (await import(
    packageEntry('@nestjs/event-emitter', 'dist/index.js')
  )) as typeof import('@nestjs/event-emitter');
  const VerificationModule = (await load(tree, 'module', 'VerificationModule')) as unknown as {
    forRoot(options: object): object;
  };
  const VerificationService = await load(tree, 'service', 'VerificationService');
  const VerificationApiClient = await load(tree, 'client', 'VerificationApiClient');
  const VerificationHandleCodec = await load(tree, 'codec', 'VerificationHandleCodec');
  const VerificationStore = await load(tree, 'store', 'VerificationStore');
  const Responses = (await load(tree, 'responses', 'VerificationStatusResponse')) as unknown as {
    from(view: unknown): unknown;
  };

  const apiSecret = 'in-process-secret';
  class BenchHost {}
  Module({
    imports: [
      EventEmitterModule.forRoot(),
      VerificationModule.forRoot({
        api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret },
        limits: { enabled: false },
        statusCache: { enabled: false },
        expirySeconds: 600,
        methods: METHODS,
      }),
    ] as never[],
  })(BenchHost);
  const ref = await Test.createTestingModule({ imports: [BenchHost] }).compile();
  const app = ref.createNestApplication({ logger: false });
  await app.init();
  const service = app.get(VerificationService, { strict: false }) as {
    status(handle: string, owner?: string): Promise<unknown>;
  };
  const api = app.get(VerificationApiClient, { strict: false }) as Record<string, unknown>;
  const store = app.get(VerificationStore, { strict: false }) as {
    now(): number;
    set(key: string, value: string, ttlMs: number): Promise<void>;
  };
  const codec = new (
    VerificationHandleCodec as unknown as new (key: string) => {
      seal(id: string, owner?: string): string;
    }
  )(apiSecret);

  const now = store.now();
  api.getPrices = async () => ({
    prices: METHODS.map((method, i) => ({ method, price: { amount: 1 + i, currency: 'RUB' } })),
  });
  const answers = new Map<string, object>();
  const handles: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const requestId = `${String(i).padStart(8, '0')}-aaaa-4bbb-8ccc-dddddddddddd`;
    const phoneNumber = `+7912${String(i).padStart(7, '0')}`;
    const common = { requestId, phoneNumber, method: 'sms', status: 'sent', awaitingCode: true };
    const record = { ...common, codeLength: 6, createdAt: now, expiresAt: now + 600_000, verifiedAt: null };
    await store.set(`session:{${requestId}}`, JSON.stringify(record), 3_600_000);
    answers.set(requestId, {
      ...common,
      createdAt: new Date(now),
      expiresAt: new Date(now + 600_000),
      verifiedAt: null,
    });
    handles.push(codec.seal(requestId, undefined));
  }
  api.getSession = async (requestId: string) => ({ ...answers.get(requestId) });

  const perAnswer: number[] = [];
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const cpu = process.cpuUsage();
    for (let pass = 0; pass < PASSES; pass++)
      for (const handle of handles)
        bytes = JSON.stringify(Responses.from(await service.status(handle))).length;
    const used = process.cpuUsage(cpu);
    if (round >= WARM_ROUNDS) perAnswer.push((used.user + used.system) / (PASSES * handles.length));
  }
  const allocation = await sampleAllocation(PASSES * handles.length, async () => {
    for (let pass = 0; pass < PASSES; pass++)
      for (const handle of handles) JSON.stringify(Responses.from(await service.status(handle)));
  });
  await app.close();
  perAnswer.sort((a, b) => a - b);
  const median = perAnswer[perAnswer.length >> 1]!;
  console.log(
    `${tree}: ${median.toFixed(2)} µs per status answer (${bytes} bytes), ` +
      `${(allocation.total / 1024).toFixed(1)} KB allocated per answer`,
  );
  for (const [where, size] of allocation.top) console.log(`  ${size.toFixed(0).padStart(6)} B  ${where}`);
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/**
 * Bytes allocated per answer while `run` gives `answers` answers, sampled every 128 bytes by V8's
 * heap profiler, and the functions that allocate most (`STATUS_ALLOC_TOP`).
 */
async function sampleAllocation(
  answers: number,
  run: () => Promise<void>,
): Promise<{ total: number; top: [string, number][] }> {
  const session = new inspector.Session();
  session.connect();
  try {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 128,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    await run();
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as {
      profile: { head: ProfileNode };
    };
    const byFunction = new Map<string, number>();
    let total = 0;
    const visit = (node: ProfileNode): void => {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${lineNumber + 1}`;
      total += node.selfSize;
      if (node.selfSize > 0) byFunction.set(where, (byFunction.get(where) ?? 0) + node.selfSize);
      node.children.forEach(visit);
    };
    visit(profile.head);
    const top = [...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, Number(process.env.STATUS_ALLOC_TOP ?? 0))
      .map(([where, size]): [string, number] => [where, size / answers]);
    return { total: total / answers, top };
  } finally {
    session.disconnect();
  }
}

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [, , mode, ...trees] = process.argv;
if (mode === '--tree') await measure(trees[0]!);
else
  for (const tree of [
    here,
    ...[mode, ...trees].filter((t): t is string => Boolean(t)).map((t) => resolve(t)),
  ])
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--tree', tree], { stdio: 'inherit' });
