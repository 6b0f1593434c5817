import { createCommandRunner, detectRedisDriver } from './redis-command-runner.js';
import { ArgumentTypeError } from '../core/phone-verification.error.js';
import { VerificationStoreUnavailableError } from './store-unavailable.error.js';

/** What the subscriber needs of an ioredis connection (a duplicate of the client, or of one cluster node). */
interface IoRedisSubscriberLike {
  readonly status: string;
  /** Its socket: `disconnect()` only ends it, which a peer that went silent never answers. */
  readonly stream?: { destroy(): void };
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error' | 'ready' | 'end', listener: () => void): unknown;
  once(event: 'ready' | 'end', listener: () => void): unknown;
  off(event: 'ready' | 'end', listener: () => void): unknown;
}

/** What the subscriber needs of a node-redis connection (a duplicate of the client, or of one cluster node). */
interface NodeRedisSubscriberLike {
  connect(): Promise<unknown>;
  destroy(): void;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  on(event: 'error' | 'ready' | 'terminated', listener: () => void): unknown;
}

/** The nodes of an ioredis `Cluster` (`Cluster#nodes()`), each a connection that can be duplicated. */
interface IoRedisClusterLike {
  nodes(role: 'all'): {
    readonly options: { host?: string; port?: number };
    duplicate(override: { lazyConnect: boolean }): unknown;
  }[];
  /** `wait` until a cluster made with `lazyConnect` connects. */
  readonly status: string;
  connect(): Promise<void>;
  once(event: 'ready' | 'end' | 'error', listener: () => void): unknown;
  off(event: 'ready' | 'end' | 'error', listener: () => void): unknown;
}

/** The masters of a node-redis cluster and the client of one (`RedisCluster#masters`, `#nodeClient`). */
interface NodeRedisClusterLike {
  readonly masters: readonly unknown[];
  nodeClient(node: unknown): unknown;
}

/** One connection in subscriber mode, to one Redis (a cluster's: to one of its nodes). */
export interface SubscriberLink {
  /** A cluster node's `host:port`: the node a link found deaf is not drawn again while there are others. */
  readonly node?: string;
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  close(graceMs: number): Promise<void>;
  /** Closed at once, its socket destroyed (a link that no longer hears would not answer a QUIT or a FIN). */
  destroy(): void;
}

export interface LinkEvents {
  message(channel: string, message: string): void;
  /** The driver connected again and the link is subscribed again to every channel. */
  back(): void;
  /** The link will never connect again (its retry strategy gave up, or it has none: a cluster node's). */
  ended(): void;
}

/**
 * How to open a subscriber link for the store's `client`: a `duplicate()` of it, or on a cluster, of one of
 * its nodes (Redis Cluster forwards every PUBLISH to every node, so one node's connection hears them all).
 */
export function linkOpener(client: unknown): (events: LinkEvents, avoid?: string) => Promise<SubscriberLink> {
  const driver = detectRedisDriver(client);
  const duplicate = (client as { duplicate?: (override?: { lazyConnect: boolean }) => unknown }).duplicate;
  if (driver === undefined || typeof duplicate !== 'function')
    throw new ArgumentTypeError(
      'RedisStore: subscribing needs a client with duplicate() (ioredis or node-redis)',
    );
  return (events, avoid) => {
    if (driver === 'node-redis-cluster')
      return openNodeRedisClusterLink(client as NodeRedisClusterLike, events, avoid);
    if (driver === 'node-redis') return Promise.resolve(openNodeRedisLink(duplicate.call(client), events));
    // An ioredis `Cluster` has nodes(); a `Redis` has not.
    if (typeof (client as Partial<IoRedisClusterLike>).nodes === 'function')
      return openIoRedisClusterLink(client as IoRedisClusterLike, events, avoid);
    // Connected at once, whatever the host's client was made with: the link waits for it to be ready before
    // its first SUBSCRIBE, which would otherwise be what connects a lazy copy.
    return Promise.resolve(openIoRedisLink(duplicate.call(client, { lazyConnect: false }), events));
  };
}

/**
 * On one node of an ioredis cluster picked at random. A cluster made with `lazyConnect` that nothing used yet
 * knows no node: it is connected first, as the store's first command would connect it.
 */
async function openIoRedisClusterLink(
  cluster: IoRedisClusterLike,
  events: LinkEvents,
  avoid: string | undefined,
): Promise<SubscriberLink> {
  if (cluster.status === 'wait') await cluster.connect();
  // Connecting already (another store's subscribe, or the host's first command): its outcome, as a command waits.
  else if (cluster.status === 'connecting' || cluster.status === 'connect') await connectOutcome(cluster);
  const nodes = cluster.nodes('all');
  if (nodes.length === 0)
    throw new VerificationStoreUnavailableError('subscribe', 'the cluster has no node to subscribe on');
  const node = drawNode(nodes, (n) => `${n.options.host}:${n.options.port}`, avoid);
  const key = `${node.options.host}:${node.options.port}`;
  return { ...openIoRedisLink(node.duplicate({ lazyConnect: false }), events), node: key };
}

/**
 * A node at random, other than `avoid` while there is another: the client's own list of nodes may still hold
 * one removed from the cluster (no MOVED told it), which the subscriber just found deaf.
 */
function drawNode<T>(nodes: readonly T[], keyOf: (node: T) => string, avoid: string | undefined): T {
  const others = nodes.filter((node) => keyOf(node) !== avoid);
  const from = others.length > 0 ? others : nodes;
  return from[Math.floor(Math.random() * from.length)]!;
}

function openIoRedisLink(copy: unknown, events: LinkEvents): SubscriberLink {
  const sub = copy as IoRedisSubscriberLike;
  sub.on('error', () => undefined);
  sub.on('message', (channel, message) => events.message(channel, message));
  const channels = new Set<string>();
  let connected = sub.status === 'ready';
  sub.on('ready', () => {
    if (!connected) return void (connected = true);
    // ioredis subscribes again by itself; `back` once every channel surely is (SUBSCRIBE is idempotent).
    void Promise.all([...channels].map((channel) => sub.subscribe(channel))).then(
      () => events.back(),
      () => undefined,
    );
  });
  sub.once('end', () => events.ended());
  // Closed while it waits to reconnect, ioredis never says 'end': the waits for it fail then.
  let abandon = (): void => undefined;
  const abandoned = new Promise<never>((_, reject) => {
    abandon = () =>
      reject(new VerificationStoreUnavailableError('subscribe', 'the subscriber connection is closed'));
  });
  abandoned.catch(() => undefined);
  return {
    async subscribe(channel) {
      channels.add(channel);
      // A copy of a client without an offline queue refuses commands until it is connected.
      await Promise.race([untilReady(sub), abandoned]);
      await sub.subscribe(channel);
    },
    async unsubscribe(channel) {
      channels.delete(channel);
      await sub.unsubscribe(channel);
    },
    close(graceMs) {
      abandon();
      return createCommandRunner(copy).release(true, graceMs);
    },
    destroy() {
      abandon();
      void createCommandRunner(copy).release(true, 0);
      sub.stream?.destroy();
    },
  };
}

/** Resolves once a connecting ioredis cluster is ready; rejects at its first error or end (opened again later). */
function connectOutcome(cluster: IoRedisClusterLike): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (failed: boolean) => (): void => {
      for (const [event, listener] of listeners) cluster.off(event, listener);
      if (failed) reject(new VerificationStoreUnavailableError('subscribe', 'the cluster did not connect'));
      else resolve();
    };
    const listeners = [
      ['ready', settle(false)],
      ['error', settle(true)],
      ['end', settle(true)],
    ] as const;
    for (const [event, listener] of listeners) cluster.once(event, listener);
  });
}

/** Resolves once an ioredis connection is ready; rejects if it ends first. */
function untilReady(sub: IoRedisSubscriberLike): Promise<void> {
  if (sub.status === 'ready') return Promise.resolve();
  if (sub.status === 'end')
    return Promise.reject(
      new VerificationStoreUnavailableError('subscribe', 'the subscriber connection ended'),
    );
  return new Promise((resolve, reject) => {
    const onReady = (): void => {
      sub.off('end', onEnd);
      resolve();
    };
    const onEnd = (): void => {
      sub.off('ready', onReady);
      reject(new VerificationStoreUnavailableError('subscribe', 'the subscriber connection ended'));
    };
    sub.once('ready', onReady);
    sub.once('end', onEnd);
  });
}

function openNodeRedisLink(copy: unknown, events: LinkEvents): SubscriberLink {
  const sub = copy as NodeRedisSubscriberLike;
  const listeners = new Map<string, (message: string) => void>();
  sub.on('error', () => undefined);
  let connected = false;
  // node-redis subscribes again by itself before it is ready.
  sub.on('ready', () => (connected ? events.back() : (connected = true)));
  // Its reconnectStrategy gave up (returned false or an Error): it never connects again.
  sub.on('terminated', () => events.ended());
  // Not awaited here: a connection that waits for Redis (its strategy retrying) is closed at once by close(),
  // which its subscribes then fail on, as an ioredis link's.
  const connecting = sub.connect().then(() => undefined);
  connecting.catch(() => undefined);
  let abandon = (): void => undefined;
  const abandoned = new Promise<never>((_, reject) => {
    abandon = () =>
      reject(new VerificationStoreUnavailableError('subscribe', 'the subscriber connection is closed'));
  });
  abandoned.catch(() => undefined);
  return {
    async subscribe(channel) {
      let listener = listeners.get(channel);
      if (!listener) listeners.set(channel, (listener = (message) => events.message(channel, message)));
      await Promise.race([connecting, abandoned]);
      await sub.subscribe(channel, listener);
    },
    async unsubscribe(channel) {
      const listener = listeners.get(channel);
      listeners.delete(channel);
      // With its listener: node-redis then subscribes again a channel subscribed while this UNSUBSCRIBE is
      // under way. Without one, its answer drops every listener the channel has by then, the new one's too.
      if (listener) await sub.unsubscribe(channel, listener);
    },
    close(graceMs) {
      abandon();
      return createCommandRunner(copy).release(true, graceMs);
    },
    destroy() {
      abandon();
      sub.destroy();
    },
  };
}

/**
 * On a node-redis cluster, a connection of our own to one master: the cluster's own pub/sub connection
 * reconnects and moves without telling (its node events do not say which connection), while Redis Cluster
 * forwards every PUBLISH to every node, so one node's connection hears them all.
 */
async function openNodeRedisClusterLink(
  cluster: NodeRedisClusterLike,
  events: LinkEvents,
  avoid: string | undefined,
): Promise<SubscriberLink> {
  const masters = cluster.masters as readonly { host?: string; port?: number }[];
  if (masters.length === 0)
    throw new VerificationStoreUnavailableError('subscribe', 'the cluster has no node to subscribe on');
  const master = drawNode(masters, (m) => `${m.host}:${m.port}`, avoid);
  const node = (await cluster.nodeClient(master)) as NodeClientLike;
  // Without a reconnect strategy, as an ioredis cluster's node connections: a node lost for good (failed over,
  // removed) ends the link instead of being retried for ever, and the subscriber opens one on another node.
  const socket = { ...node.options?.socket, reconnectStrategy: false };
  return { ...openNodeRedisLink(node.duplicate({ socket }), events), node: `${master.host}:${master.port}` };
}

/** A node-redis cluster's client of one node: its options (the socket's address) and `duplicate`. */
interface NodeClientLike {
  readonly options?: { socket?: Record<string, unknown> };
  duplicate(overrides: { socket: Record<string, unknown> }): unknown;
}
