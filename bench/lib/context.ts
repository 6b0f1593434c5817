import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { SandboxOptions } from '../../src/testing/index.js';
import type { HostReady } from '../servers/host-process.js';
import type { SandboxReady } from '../servers/sandbox-process.js';
import { ChildServer, type ForkOptions } from './child-process.js';
import type { HostConfig } from './host-app.js';

/** What `bench/run.ts` hands every benchmark. */
export interface BenchContext {
  /** A fast smoke: fewer rounds, shorter runs, smaller populations. */
  quick: boolean;
  /** Rounds per measurement (medians are reported). */
  rounds: number;
  /** Seconds per load round. */
  roundSeconds: number;
  /** Soak length of benchmark 5, in minutes. */
  soakMinutes: number;
  /** Redis for the RedisStore rows: REDIS_URL or a throwaway redis-server started by the runner. */
  redisUrl: () => Promise<string>;
  log(line: string): void;
}

const server = (name: string): URL => new URL(`../servers/${name}.js`, import.meta.url);

export function forkSandbox(
  options: SandboxOptions = {},
  fork?: ForkOptions,
): Promise<ChildServer<SandboxReady>> {
  return ChildServer.fork<SandboxReady>(server('sandbox-process'), options, fork);
}

/**
 * A host app with the module, in its own process. `BENCH_MODULE_TREE=<dist-bench of another tree>` forks
 * that tree's host instead (its module, this harness): an earlier tree measured exactly as this one is;
 * `tree` names one for this host alone.
 */
export function forkHost(
  config: HostConfig,
  fork?: ForkOptions,
  tree = process.env.BENCH_MODULE_TREE,
): Promise<ChildServer<HostReady>> {
  const host = tree ? pathToFileURL(`${tree}/bench/servers/host-process.js`) : server('host-process');
  return ChildServer.fork<HostReady>(host, config, fork);
}

export function forkMinimalProxy(
  sandbox: SandboxReady,
  fork?: ForkOptions,
): Promise<ChildServer<{ url: string }>> {
  return ChildServer.fork(
    server('minimal-proxy'),
    { upstream: sandbox.url, apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
    fork,
  );
}

/** A TCP proxy to Redis at `target` holding every chunk `delayMs` each way (bench/servers/delaying-proxy.ts). */
export function forkDelayingProxy(target: string, delayMs: number): Promise<ChildServer<{ url: string }>> {
  return ChildServer.fork(server('delaying-proxy'), { target, delayMs });
}

/** A bare Nest app doing the status hop (bench/servers/platform-floor.ts): the platform's own cost. */
export function forkPlatformFloor(
  platform: 'express' | 'fastify',
  sandbox: SandboxReady,
  fork?: ForkOptions,
): Promise<ChildServer<{ url: string }>> {
  return ChildServer.fork(
    server('platform-floor'),
    { platform, upstream: sandbox.url, apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
    fork,
  );
}

/**
 * Runs `exportName(arg)` of a compiled benchmark module in a fresh process and returns its JSON
 * result: isolation for heap figures and for work that must not share the runner's event loop.
 */
export async function runIsolated<T>(
  modulePath: string,
  exportName: string,
  arg: unknown,
  fork?: ForkOptions,
): Promise<T> {
  const worker = await ChildServer.fork(server('isolated-run'), { modulePath, exportName }, fork);
  try {
    return await worker.call<T>('run', arg);
  } finally {
    await worker.close();
  }
}

/** The module options every benchmark host shares: the sandbox as upstream, no logs. */
export function apiOptions(sandbox: SandboxReady): HostConfig['module']['api'] {
  return { baseUrl: sandbox.url, apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret };
}

/**
 * A Fastify host whose every start is counted and judged and none refused (the routes benchmark's
 * and compare-start's), on RedisStore at `redisUrl` (a key prefix of its own) or on MemoryStore.
 */
export function startsHostConfig(sandbox: SandboxReady, redisUrl?: string): HostConfig {
  return {
    platform: 'fastify',
    keyHeader: 'x-bench-client',
    module: {
      api: apiOptions(sandbox),
      expirySeconds: 600,
      // The default spend cap (1,000 RUB a day) would refuse most of a round's starts: a cap is
      // still reserved and settled on every start, above what the rounds spend.
      // Pumping in monitor mode: every start is counted and judged as under enforcement, and none is
      // held (a thousand unconverted starts a round is what the defence exists to hold).
      limits: {
        spendCap: { amount: 100_000_000, windowMs: 86_400_000 },
        pumping: { mode: 'monitor' },
      },
    },
    ...(redisUrl ? { redis: { url: redisUrl, keyPrefix: `bench:${randomBytes(4).toString('hex')}:` } } : {}),
  };
}

/** JSON over loopback (fetch), for setting up sessions before a load round. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

export function basicAuth(apiKey: string, apiSecret: string): string {
  return `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`;
}

export { PhoneNumbers } from '../../test/hardening/support/phone-numbers.js';
