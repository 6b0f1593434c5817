/**
 * Several module instances of one deployment in one test process: each its own Nest application
 * on its own port, its own store connection, all on one Redis key prefix and one sandbox.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import type { VerificationEvent } from '../../src/core/verification-events.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { createTestApp, type Platform, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

/**
 * How an instance reaches Redis: a `RedisStore` it is given (opened from the URL with ioredis or
 * node-redis, owned by the test), or `store: { redis: client }` with a host's own ioredis or
 * node-redis client (the module builds the store on its clock).
 */
export type StoreWiring =
  | 'store-ioredis-url'
  | 'store-node-redis-url'
  | 'host-ioredis'
  | 'host-node-redis'
  | 'host-ioredis-cluster'
  | 'host-node-redis-cluster';

export interface InstanceOptions {
  platform: Platform;
  wiring: StoreWiring;
  /** Standalone wirings: the Redis to use. */
  redisUrl?: string;
  /** Cluster wirings: the seed nodes of the Redis Cluster. */
  clusterSeeds?: { host: string; port: number }[];
  keyPrefix: string;
  /** Merged over the webhook harness's defaults (sandbox clock, webhooks signed, reconciler tick out of the way). */
  module?: Partial<VerificationModuleOptions>;
  /** `X-Forwarded-For` picks the client IP. */
  trustProxy?: boolean;
  /** RedisStore's deadline per operation (store-* wirings only). */
  commandTimeoutMs?: number;
}

export interface Instance extends TestApp {
  readonly name: string;
  readonly wiring: StoreWiring;
  /** Every verification.* event this instance's listeners received, numbered across all instances. */
  readonly emitted: EmittedEvent[];
  /** Closes the application, then the store and client the test opened for it. Once. */
  shutdown(): Promise<void>;
}

/** A key prefix no other run or file shares (the shared Redis serves every suite at once). */
export function uniqueKeyPrefix(file: string): string {
  return `pv-multi:${file}:${randomUUID()}:`;
}

/** Boots one instance; `name` labels it in assertion messages. */
export async function startInstance(
  sb: VerificationSandbox,
  name: string,
  options: InstanceOptions,
): Promise<Instance> {
  const clock = () => sb.now();
  const cleanups: (() => Promise<unknown>)[] = [];
  let store: NonNullable<VerificationModuleOptions['store']>;
  switch (options.wiring) {
    case 'store-ioredis-url':
    case 'store-node-redis-url': {
      const own = new RedisStore({
        url: redisUrlOf(options),
        driver: options.wiring === 'store-ioredis-url' ? 'ioredis' : 'redis',
        keyPrefix: options.keyPrefix,
        clock,
        commandTimeoutMs: options.commandTimeoutMs,
      });
      await untilAnswering(own);
      cleanups.push(() => own.close());
      store = own;
      break;
    }
    case 'host-ioredis': {
      const client = new Redis(redisUrlOf(options));
      cleanups.push(() => client.quit());
      store = { redis: client, keyPrefix: options.keyPrefix };
      break;
    }
    case 'host-ioredis-cluster': {
      const client = new Cluster(clusterSeedsOf(options));
      cleanups.push(() => client.quit());
      store = { redis: client, keyPrefix: options.keyPrefix };
      break;
    }
    case 'host-node-redis-cluster': {
      const client = createCluster({
        rootNodes: clusterSeedsOf(options).map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      });
      client.on('error', () => undefined);
      await client.connect();
      cleanups.push(() => client.close());
      store = { redis: client, keyPrefix: options.keyPrefix };
      break;
    }
    case 'host-node-redis': {
      const client = createClient({ url: redisUrlOf(options) });
      // A host's client has an error listener; without one node-redis throws on a lost connection.
      client.on('error', () => undefined);
      await client.connect();
      cleanups.push(() => client.close());
      store = { redis: client, keyPrefix: options.keyPrefix };
      break;
    }
  }
  const app = await createTestApp({
    platform: options.platform,
    trustProxy: options.trustProxy,
    module: moduleOptions(sb, { store, ...options.module }),
  });
  let down = false;
  const emitted: EmittedEvent[] = [];
  const emitter = app.app.get(EventEmitter2);
  for (const event of VERIFICATION_EVENTS)
    emitter.on(event, (payload: VerificationEvent) => {
      emitted.push({
        seq: ++emissionSeq,
        instance: name,
        requestId: payload.requestId,
        event,
        source: payload.source,
      });
    });
  return {
    ...app,
    name,
    emitted,
    wiring: options.wiring,
    async shutdown() {
      if (down) return;
      down = true;
      await app.close();
      for (const cleanup of cleanups) await cleanup();
    },
  };
}

function redisUrlOf(options: InstanceOptions): string {
  if (!options.redisUrl) throw new Error(`wiring ${options.wiring} needs redisUrl`);
  return options.redisUrl;
}

function clusterSeedsOf(options: InstanceOptions): { host: string; port: number }[] {
  if (!options.clusterSeeds?.length) throw new Error(`wiring ${options.wiring} needs clusterSeeds`);
  return options.clusterSeeds;
}

/**
 * Waits for a store's own connection: loading the client library and connecting can take longer
 * than a short command deadline on a busy machine, and that start-up is not what is measured.
 */
export async function untilAnswering(store: RedisStore, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await store.get('connection-probe');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** One emitted event and the instance whose listeners received it. */
export interface EmittedEvent {
  /** Order of emission in this process, across instances. */
  seq: number;
  instance: string;
  requestId: string;
  event: string;
  source: VerificationEvent['source'];
}

const VERIFICATION_EVENTS = [
  'verification.verified',
  'verification.failed',
  'verification.expired',
  'verification.code_required',
];
let emissionSeq = 0;

/** Every event of one session over every instance's listeners, in the order they were emitted. */
export function eventsAcross(instances: Instance[], requestId: string): EmittedEvent[] {
  return instances
    .flatMap((instance) => instance.emitted.filter((e) => e.requestId === requestId))
    .sort((a, b) => a.seq - b.seq);
}
