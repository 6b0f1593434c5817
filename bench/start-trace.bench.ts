/**
 * Issue 46's row, the start's weight: the module's files and functions one `POST /start` runs (SMS, a new
 * number, the routes' host: default protection, pumping in monitor mode), from V8's precise coverage of a
 * warm process, the sandbox's own code left out: call counts reset after 20 starts whose users verified, as a
 * host's do, then one start, the fewest of five. Unverified warm starts would make a fresh host judge its
 * country under attack, and the trace would follow the hold path instead of an ordinary start. Beside it, the
 * hops of the start written in docs/ARCHITECTURE.md ("### Start", `Class.method`) that the trace ran: a hop
 * the code no longer takes is a false line in the docs. In a fresh process.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VerificationSandbox } from '../src/testing/index.js';
import { runIsolated, startsHostConfig, PhoneNumbers } from './lib/context.js';
import { startHostApp } from './lib/host-app.js';
import { verdict, type BenchTable } from './lib/report.js';

/** What the start ran before issue 46 (the count). */
const BEFORE = { files: 63, functions: 233 };
const WARM_STARTS = 20;
const SETTLE_MS = 1_500;
const TRACED_STARTS = 5;

export interface StartTraceResult {
  files: number;
  functions: number;
  /** Each `Class.method` hop of ARCHITECTURE's start, and whether the trace ran it. */
  hops: Record<string, boolean>;
}

export async function startTraceBenchmark(): Promise<BenchTable[]> {
  const r = await runIsolated<StartTraceResult>('./start-trace.bench.js', 'runStartTrace', {});
  const hops = Object.entries(r.hops);
  const missing = hops.filter(([, ran]) => !ran).map(([hop]) => hop);
  return [
    {
      title:
        '14 (issue 46). The start’s weight: what one warm POST /start runs of the module (V8 precise coverage)',
      columns: ['measure', 'now', 'before', 'goal', ''],
      rows: [
        [
          'files',
          String(r.files),
          String(BEFORE.files),
          `< ${BEFORE.files}`,
          verdict(r.files < BEFORE.files),
        ],
        [
          'functions',
          String(r.functions),
          String(BEFORE.functions),
          `< ${BEFORE.functions}`,
          verdict(r.functions < BEFORE.functions),
        ],
        [
          'ARCHITECTURE hops the trace ran',
          `${hops.length - missing.length} of ${hops.length}`,
          '',
          'all',
          verdict(missing.length === 0 && hops.length > 0),
        ],
      ],
      notes: missing.length ? [`Hops in the docs the start did not run: ${missing.join(', ')}.`] : [],
    },
  ];
}

const srcRoot = fileURLToPath(new URL('../src/', import.meta.url));
const docsRoot = fileURLToPath(new URL('../../docs/', import.meta.url));

/** `Class.method` names in the start's diagram of ARCHITECTURE.md. */
function documentedHops(): string[] {
  const text = readFileSync(join(docsRoot, 'ARCHITECTURE.md'), 'utf8');
  const section = text.slice(
    text.indexOf('### Start'),
    text.indexOf('\n### ', text.indexOf('### Start') + 1),
  );
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return [...new Set(block.match(/\b[A-Z][A-Za-z]+\.[a-z][A-Za-z]+\b/g) ?? [])];
}

/** The built file (relative to src/) that declares `class Name`. */
function classFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(srcRoot, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const path = join(entry.parentPath, entry.name);
    for (const match of readFileSync(path, 'utf8').matchAll(/\bclass ([A-Z][A-Za-z]+)\b/g))
      files.set(match[1]!, relative(srcRoot, path));
  }
  return files;
}

/** The module's functions a coverage result says ran, by file (relative to src/), the sandbox's left out. */
function functionsRan(
  result: {
    url: string;
    functions: { functionName: string; ranges: { startOffset: number; count: number }[] }[];
  }[],
): Map<string, Set<string>> {
  const ran = new Map<string, Set<string>>();
  for (const script of result) {
    if (!script.url.startsWith('file:')) continue;
    const path = relative(srcRoot, fileURLToPath(script.url));
    if (path.startsWith('..') || path.startsWith('testing/')) continue;
    for (const fn of script.functions) {
      if ((fn.ranges[0]?.count ?? 0) === 0) continue;
      const names = ran.get(path) ?? new Set<string>();
      names.add(`${fn.functionName}@${fn.ranges[0]!.startOffset}`);
      ran.set(path, names);
    }
  }
  return ran;
}

const count = (ran: Map<string, Set<string>>): number =>
  [...ran.values()].reduce((sum, names) => sum + names.size, 0);

export async function runStartTrace(): Promise<StartTraceResult> {
  const sb = await VerificationSandbox.start({ port: 0, demoAccount: { balance: 1_000_000_000 } });
  const host = await startHostApp(
    startsHostConfig({
      url: sb.url,
      apiKey: sb.demoAccount.apiKey,
      apiSecret: sb.demoAccount.apiSecret,
      webhookSecret: sb.demoAccount.webhookSecret,
    }),
  );
  const phones = new PhoneNumbers();
  /** A start; a warm one is then verified with its code, as most of a host's users are. */
  const start = async (client: string, verify: boolean): Promise<void> => {
    const phone = phones.take();
    const post = (path: string, body: object): Promise<Response> =>
      fetch(`${host.url}/verification/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-bench-client': client },
        body: JSON.stringify(body),
      });
    const res = await post('start', { phone_number: phone, method: 'sms' });
    if (res.status !== 201) throw new Error(`start answered ${res.status}: ${await res.text()}`);
    if (!verify) return;
    const { verification_id } = (await res.json()) as { verification_id: string };
    const check = await post('check', { verification_id, code: sb.sessionsFor(phone)[0]?.code });
    if (check.status !== 200) throw new Error(`check answered ${check.status}: ${await check.text()}`);
  };
  const session = new Session();
  session.connect();
  try {
    for (let i = 0; i < WARM_STARTS; i++) await start(`warm-${i}`, true);
    // The checks' own work (webhooks, the figures' count and its 1 s flush) ends before the trace begins.
    await sb.webhooksIdle();
    await new Promise((settled) => setTimeout(settled, SETTLE_MS));
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    // Each traced start alone (counts reset before it); a timer's tick (the store's sweep, the reconciler) that
    // lands in one only adds functions, so the start is the trace with the fewest.
    let ran = new Map<string, Set<string>>();
    for (let i = 0; i < TRACED_STARTS; i++) {
      await session.post('Profiler.takePreciseCoverage'); // resets the counts: only the next start is seen
      await start(`traced-${i}`, false);
      const traced = functionsRan((await session.post('Profiler.takePreciseCoverage')).result);
      if (i === 0 || count(traced) < count(ran)) ran = traced;
    }
    const declared = classFiles();
    const hops: Record<string, boolean> = {};
    for (const hop of documentedHops()) {
      const [name, method] = hop.split('.') as [string, string];
      const file = declared.get(name);
      hops[hop] = file !== undefined && [...(ran.get(file) ?? [])].some((fn) => fn.startsWith(`${method}@`));
    }
    if (process.env.START_TRACE_LIST)
      for (const [file, names] of [...ran].sort())
        console.log(`${file} ${names.size}: ${[...names].join(' ')}`);
    return {
      files: ran.size,
      functions: count(ran),
      hops,
    };
  } finally {
    session.disconnect();
    await host.close();
    await sb.close();
  }
}
