import { ArgumentTypeError } from '../core/phone-verification.error.js';
/**
 * One small surface over the Redis clients the store accepts: ioredis (standalone or Cluster)
 * and node-redis v4+ (client or cluster). Only raw commands are used, so no client-specific
 * command helpers or script registration are needed, and nothing is changed on a host's client.
 */

/** The shape of an ioredis client (`Redis` or `Cluster`) that the store relies on. */
export interface IoRedisClientLike {
  readonly status: string;
  /** True on an ioredis Cluster. */
  readonly isCluster?: boolean;
  call(command: string, ...args: string[]): Promise<unknown>;
  on(event: 'ready', listener: () => void): unknown;
  removeListener(event: 'ready', listener: () => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/** The shape of a node-redis client (`createClient()`, v4 to v6) that the store relies on. */
export interface NodeRedisClientLike {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(args: string[], options?: object): Promise<unknown>;
  on(event: 'ready', listener: () => void): unknown;
  removeListener(event: 'ready', listener: () => void): unknown;
}

/** The shape of a node-redis cluster (`createCluster()`) that the store relies on. */
export interface NodeRedisClusterLike {
  readonly masters: unknown;
  readonly slots: unknown;
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
    options?: object,
  ): Promise<unknown>;
}

/** A host's Redis client: ioredis or node-redis. */
export type RedisClientLike = IoRedisClientLike | NodeRedisClientLike | NodeRedisClusterLike;

export interface RedisCommandRunner {
  readonly driver: 'ioredis' | 'node-redis' | 'node-redis-cluster';
  /** A cluster: one command cannot span keys of several slots. */
  readonly clustered: boolean;
  /** Sends one command. `key` routes it on a cluster; `signal` drops it if not yet written (node-redis). */
  send(args: string[], key: string | undefined, signal: AbortSignal): Promise<unknown>;
  /** Waits while the client is (re)connecting; returns at once when it is ready or waiting would not help. */
  untilReady(signal: AbortSignal): Promise<void>;
  /**
   * Detaches the store's listeners; closes the client only when `owned`: gracefully when it
   * is ready, and drops the connection if that takes longer than `graceMs` (a hung Redis must
   * not hang the host's shutdown).
   */
  release(owned: boolean, graceMs: number): Promise<void>;
}

/** Anything with ready events: one shared listener, however many operations wait. */
class ReadyGate {
  private readonly waiters = new Set<() => void>();
  private readonly onReady = (): void => {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  };

  constructor(private readonly emitter: Pick<IoRedisClientLike, 'on' | 'removeListener'>) {
    emitter.on('ready', this.onReady);
  }

  wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        this.waiters.delete(wake);
        reject(signal.reason);
      };
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  detach(): void {
    this.emitter.removeListener('ready', this.onReady);
  }
}

/**
 * States in which ioredis will be ready again by itself ('close' comes just before
 * 'reconnecting'). Commands wait for 'ready' rather than being sent, so none sits in the
 * client's offline queue to run after its caller was told it failed.
 */
const IOREDIS_RECONNECTING = new Set(['connecting', 'connect', 'reconnecting', 'close']);

class IoRedisRunner implements RedisCommandRunner {
  readonly driver = 'ioredis';
  readonly clustered: boolean;
  private readonly gate: ReadyGate;

  constructor(private readonly client: IoRedisClientLike) {
    this.gate = new ReadyGate(client);
    this.clustered = client.isCluster === true;
  }

  send(args: string[]): Promise<unknown> {
    const [command, ...rest] = args;
    return this.client.call(command, ...rest);
  }

  async untilReady(signal: AbortSignal): Promise<void> {
    if (IOREDIS_RECONNECTING.has(this.client.status)) await this.gate.wait(signal);
  }

  async release(owned: boolean, graceMs: number): Promise<void> {
    this.gate.detach();
    if (!owned) return;
    if (this.client.status === 'ready') await settledWithin(this.client.quit(), graceMs);
    this.client.disconnect();
  }
}

interface OwnedNodeRedisClient extends NodeRedisClientLike {
  once(event: 'ready', listener: () => void): unknown;
  close?(): Promise<void>;
  quit?(): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<void>;
}

class NodeRedisRunner implements RedisCommandRunner {
  readonly driver = 'node-redis';
  readonly clustered = false;
  private readonly gate: ReadyGate;

  constructor(private readonly client: OwnedNodeRedisClient) {
    this.gate = new ReadyGate(client);
  }

  send(args: string[], _key: string | undefined, signal: AbortSignal): Promise<unknown> {
    return this.client.sendCommand(args, { abortSignal: signal });
  }

  async untilReady(signal: AbortSignal): Promise<void> {
    if (this.client.isOpen && !this.client.isReady) await this.gate.wait(signal);
  }

  async release(owned: boolean, graceMs: number): Promise<void> {
    this.gate.detach();
    if (!owned) return;
    const client = this.client;
    // node-redis can complete a connection attempt that was under way when it was destroyed: drop it then.
    client.once('ready', () => dropNodeRedisConnection(client));
    if (client.isReady) await settledWithin(client.close ? client.close() : client.quit?.(), graceMs);
    dropNodeRedisConnection(client);
  }
}

/** Ends whatever is left of the connection, at once (a no-op when it is already closed). */
function dropNodeRedisConnection(client: OwnedNodeRedisClient): void {
  try {
    if (client.destroy) client.destroy();
    else client.disconnect?.().catch(() => undefined);
  } catch {
    // node-redis v4 throws when disconnecting a client that is already closed.
  }
}

class NodeRedisClusterRunner implements RedisCommandRunner {
  readonly driver = 'node-redis-cluster';
  readonly clustered = true;

  constructor(
    private readonly cluster: NodeRedisClusterLike & { close?(): Promise<void>; quit?(): Promise<unknown> },
  ) {}

  send(args: string[], key: string | undefined, signal: AbortSignal): Promise<unknown> {
    return this.cluster.sendCommand(key, false, args, { abortSignal: signal });
  }

  async untilReady(): Promise<void> {
    // The cluster client routes and reconnects per node; it has no single ready state to wait for.
  }

  async release(owned: boolean, graceMs: number): Promise<void> {
    if (!owned) return;
    await settledWithin(this.cluster.close ? this.cluster.close() : this.cluster.quit?.(), graceMs);
  }
}

/** Waits for `promise` to settle, or `ms` at most; its outcome does not matter. */
async function settledWithin(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise?.catch(() => undefined), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Which client this is, or undefined when it is neither ioredis nor node-redis. */
export function detectRedisDriver(client: unknown): RedisCommandRunner['driver'] | undefined {
  if (!isObject(client)) return undefined;
  // ioredis also has a `sendCommand`, so it is recognised first, by `call` and `status`.
  if (typeof client.call === 'function' && typeof client.status === 'string') return 'ioredis';
  if (typeof client.sendCommand !== 'function') return undefined;
  if ('masters' in client && 'slots' in client) return 'node-redis-cluster';
  if ('isReady' in client && 'isOpen' in client) return 'node-redis';
  return undefined;
}

export function isRedisClient(client: unknown): client is RedisClientLike {
  return detectRedisDriver(client) !== undefined;
}

export function createCommandRunner(client: unknown): RedisCommandRunner {
  switch (detectRedisDriver(client)) {
    case 'ioredis':
      return new IoRedisRunner(client as IoRedisClientLike);
    case 'node-redis':
      return new NodeRedisRunner(client as OwnedNodeRedisClient);
    case 'node-redis-cluster':
      return new NodeRedisClusterRunner(client as NodeRedisClusterLike);
    default:
      throw new ArgumentTypeError(
        'RedisStore: the client must be an ioredis client (Redis or Cluster) or a node-redis client (createClient or createCluster)',
      );
  }
}
