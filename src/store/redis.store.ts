import { openRedisClient, type RedisDriverName } from './open-redis-client.js';
import {
  createCommandRunner,
  type RedisClientLike,
  type RedisCommandRunner,
} from './redis-command-runner.js';
import { CLAIM_DUE, INCREMENT, SET_IF_ABSENT, type RedisScript } from './redis-scripts.js';
import { assertClaim, assertDueAt, assertIncrement, assertTtl, notACounter } from './store-arguments.js';
import { redactSecrets, VerificationStoreUnavailableError } from './store-unavailable.error.js';
import { RedisSubscriber } from './redis-subscriber.js';
import type { StoreBatchResults, StoreOperation } from './store-batch.js';
import type { StoreMessageListener, VerificationStore } from './verification-store.interface.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';
import { VerificationOptionsError } from '../core/option-rules.js';

export interface RedisStoreOptions {
  /** The host's connected client: ioredis (Redis or Cluster) or node-redis (client or cluster). Never closed by the store. */
  client?: RedisClientLike;
  /** `redis://` or `rediss://` URL for a connection the store opens (and closes) itself. */
  url?: string;
  /** Library used to open `url`. Default: ioredis when installed, else redis (node-redis). */
  driver?: RedisDriverName;
  /** Put before every key and queue name. Default `pv:`. */
  keyPrefix?: string;
  /** Milliseconds since the epoch; every TTL and due time is measured on it. Default `Date.now`. */
  clock?: () => number;
  /** Each operation rejects with VerificationStoreUnavailableError when Redis has not answered by then. Default 1000 ms. */
  commandTimeoutMs?: number;
}

interface Connection {
  readonly client: unknown;
  readonly runner: RedisCommandRunner;
  readonly owned: boolean;
}

/**
 * VerificationStore on Redis, shared by every instance of a deployment. Values carry their
 * logical expiry on the store's clock (see redis-scripts.ts); operations that must be atomic
 * are single-key Lua scripts (EVALSHA, falling back to EVAL once per script and node), so keys
 * work on Redis Cluster as given: the module puts `{hash tags}` in keys where it needs them.
 */
export class RedisStore implements VerificationStore {
  private readonly clock: () => number;
  private readonly keyPrefix: string;
  private readonly commandTimeoutMs: number;
  private readonly secrets: string[];
  private readonly connection: Promise<Connection>;
  private closed = false;
  private readonly subscriber: RedisSubscriber;

  constructor(options: RedisStoreOptions) {
    this.clock = options.clock ?? Date.now;
    this.keyPrefix = options.keyPrefix ?? 'pv:';
    this.commandTimeoutMs = options.commandTimeoutMs ?? 1000;
    if (!Number.isFinite(this.commandTimeoutMs) || this.commandTimeoutMs <= 0) {
      throw new VerificationOptionsError(
        'commandTimeoutMs',
        `must be a positive number (got ${options.commandTimeoutMs})`,
        'RedisStore',
      );
    }
    if ((options.client === undefined) === (options.url === undefined)) {
      throw new VerificationOptionsError(
        'client',
        'or `url`: give exactly one (`client` an ioredis or node-redis client)',
        'RedisStore',
      );
    }
    this.secrets = options.url ? urlSecrets(options.url) : [];
    if (options.client !== undefined) {
      this.connection = Promise.resolve({
        client: options.client,
        runner: createCommandRunner(options.client),
        owned: false,
      });
    } else {
      const url = options.url as string;
      if (!/^rediss?:\/\//i.test(url))
        throw new VerificationOptionsError('url', 'must start with redis:// or rediss://', 'RedisStore');
      const drivers: RedisDriverName[] = options.driver ? [options.driver] : ['ioredis', 'redis'];
      this.connection = openRedisClient(url, { drivers, commandTimeoutMs: this.commandTimeoutMs }).then(
        (client) => ({ client, runner: createCommandRunner(client), owned: true }),
      );
      // A failure is reported by every operation and by ready(); this only keeps it from being unhandled.
      this.connection.catch(() => undefined);
    }
    this.subscriber = new RedisSubscriber(async () => (await this.connection).client, this.commandTimeoutMs);
  }

  /**
   * Resolves once the client library is loaded; rejects when a URL was given and neither
   * ioredis nor redis is installed. Call at boot to fail early; it does not wait for Redis itself.
   */
  async ready(): Promise<void> {
    await this.connection;
  }

  now(): number {
    return this.clock();
  }

  async get(key: string): Promise<string | null> {
    return this.run('get', (send) => this.execute(send, { op: 'get', key })) as Promise<string | null>;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    assertTtl(ttlMs);
    await this.run('set', (send) => this.execute(send, { op: 'set', key, value, ttlMs }));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    assertTtl(ttlMs);
    const op = { op: 'setIfAbsent', key, value, ttlMs } as const;
    return this.run('setIfAbsent', (send) => this.execute(send, op)) as Promise<boolean>;
  }

  async delete(key: string): Promise<void> {
    await this.run('delete', (send) => this.execute(send, { op: 'delete', key }));
  }

  async increment(key: string, by: number, ttlMs: number): Promise<{ value: number; expiresAt: number }> {
    assertIncrement(by);
    assertTtl(ttlMs);
    const op = { op: 'increment', key, by, ttlMs } as const;
    return this.run('increment', (send) => this.execute(send, op)) as Promise<{
      value: number;
      expiresAt: number;
    }>;
  }

  /**
   * The operations under one deadline, every command written at once: the client sends them back to
   * back (a pipeline), a cluster client to each key's node, nodes concurrently. One round trip.
   */
  async batch<const T extends readonly StoreOperation[]>(operations: T): Promise<StoreBatchResults<T>> {
    for (const operation of operations) {
      if (operation.op === 'increment') assertIncrement(operation.by);
      if ('ttlMs' in operation) assertTtl(operation.ttlMs);
    }
    if (operations.length === 0) return [] as StoreBatchResults<T>;
    return this.run('batch', (send) =>
      Promise.all(operations.map((operation) => this.execute(send, operation))),
    ) as Promise<StoreBatchResults<T>>;
  }

  /** One key operation, its answer decoded as its method answers it. */
  private async execute(send: Send, operation: StoreOperation): Promise<unknown> {
    const now = this.clock();
    switch (operation.op) {
      case 'get':
        return decodeLive(asString(await this.command(send, 'GET', operation.key)), this.clock());
      case 'set': {
        const encoded = `${now + operation.ttlMs}:${operation.value}`;
        await this.command(send, 'SET', operation.key, encoded, 'PX', pxOf(operation.ttlMs));
        return undefined;
      }
      case 'setIfAbsent': {
        const encoded = `${now + operation.ttlMs}:${operation.value}`;
        const args = [String(now), encoded, pxOf(operation.ttlMs)];
        return Number(await this.evalScript(send, SET_IF_ABSENT, operation.key, args)) === 1;
      }
      case 'delete':
        await this.command(send, 'DEL', operation.key);
        return undefined;
      case 'increment': {
        const args = [String(now), String(operation.by), pxOf(operation.ttlMs)];
        const [value, expiresAt] = (await this.evalScript(send, INCREMENT, operation.key, args)) as unknown[];
        return { value: Number(asString(value)), expiresAt: Number(asString(expiresAt)) };
      }
    }
  }

  async schedule(queue: string, member: string, dueAt: number): Promise<void> {
    assertDueAt(dueAt);
    await this.run('schedule', (send) => this.command(send, 'ZADD', queue, String(dueAt), member));
  }

  async claimDue(queue: string, limit: number, leaseMs: number): Promise<string[]> {
    assertClaim(limit, leaseMs);
    if (limit === 0) return [];
    const now = this.clock();
    const reply = await this.run('claimDue', (send) =>
      this.evalScript(send, CLAIM_DUE, queue, [String(now), String(limit), String(now + leaseMs)]),
    );
    return (reply as unknown[]).map((member) => asString(member) ?? '');
  }

  async unschedule(queue: string, member: string): Promise<void> {
    await this.run('unschedule', (send) => this.command(send, 'ZREM', queue, member));
  }

  async queueSize(queue: string): Promise<number> {
    const reply = await this.run('queueSize', (send) => this.command(send, 'ZCARD', queue));
    return Number(reply);
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.run('publish', (send) => this.command(send, 'PUBLISH', channel, message));
  }

  /** Listens on a dedicated connection (see RedisSubscriber); rejects when Redis does not answer in time. */
  async subscribe(channel: string, listener: StoreMessageListener): Promise<() => void> {
    if (this.closed) throw new VerificationStoreUnavailableError('subscribe', 'the store is closed');
    const subscribing = this.subscriber.subscribe(this.keyPrefix + channel, listener);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new VerificationStoreUnavailableError(
              'subscribe',
              `no answer within ${this.commandTimeoutMs} ms`,
            ),
          ),
        this.commandTimeoutMs,
      );
    });
    try {
      return await Promise.race([subscribing, deadline]);
    } catch (error) {
      // Subscribed after all, too late: leave no listener behind.
      subscribing.then((unsubscribe) => unsubscribe()).catch(() => undefined);
      throw this.failure('subscribe', error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Closes the subscriber connection and the connection the store opened from a URL; a client it
   * was given stays open. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.subscriber.close();
    let connection: Connection;
    try {
      connection = await this.connection;
    } catch {
      return;
    }
    await connection.runner.release(connection.owned, this.commandTimeoutMs);
  }

  /** A single-key command on the prefixed key, routed by that key on a cluster. */
  private command(send: Send, name: string, key: string, ...args: string[]): Promise<unknown> {
    const redisKey = this.keyPrefix + key;
    return send([name, redisKey, ...args], redisKey);
  }

  /** EVALSHA, and EVAL when this node has not cached the script yet (after a restart or failover). */
  private async evalScript(send: Send, script: RedisScript, key: string, args: string[]): Promise<unknown> {
    const redisKey = this.keyPrefix + key;
    try {
      return await send(['EVALSHA', script.sha1, '1', redisKey, ...args], redisKey);
    } catch (error) {
      if (!errorMessage(error).startsWith('NOSCRIPT')) throw error;
      return send(['EVAL', script.lua, '1', redisKey, ...args], redisKey);
    }
  }

  /**
   * Runs one operation under the store's deadline. Every failure of Redis or of the connection
   * becomes VerificationStoreUnavailableError with a redacted reason.
   */
  private async run(operation: string, body: (send: Send) => Promise<unknown>): Promise<unknown> {
    if (this.closed) throw new VerificationStoreUnavailableError(operation, 'the store is closed');
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new VerificationStoreUnavailableError(
          operation,
          `no answer within ${this.commandTimeoutMs} ms`,
        );
        abort.abort(error);
        reject(error);
      }, this.commandTimeoutMs);
    });
    const attempt = async (): Promise<unknown> => {
      const { runner } = await this.connection;
      await runner.untilReady(abort.signal);
      return body((args, key) => runner.send(args, key, abort.signal));
    };
    try {
      return await Promise.race([attempt(), deadline]);
    } catch (error) {
      throw this.failure(operation, error);
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(operation: string, error: unknown): Error {
    if (error instanceof VerificationStoreUnavailableError) return error;
    const message = errorMessage(error);
    if (message.includes('NOT_A_COUNTER')) return notACounter();
    if (message.startsWith('RedisStore:'))
      return new PhoneVerificationError(redactSecrets(message, this.secrets));
    return new VerificationStoreUnavailableError(
      operation,
      redactSecrets(message, this.secrets) || 'unknown error',
    );
  }
}

type Send = (args: string[], key: string | undefined) => Promise<unknown>;

/** Redis answers a PX of whole milliseconds; rounding up keeps the real expiry after the logical one. */
function pxOf(ttlMs: number): string {
  return String(Math.max(1, Math.ceil(ttlMs)));
}

function asString(reply: unknown): string | null {
  if (reply === null || reply === undefined) return null;
  if (Buffer.isBuffer(reply)) return reply.toString('utf8');
  return String(reply);
}

/** The value of an encoded `<expiresAt>:<value>`, or null when it has expired or does not parse. */
function decodeLive(raw: string | null, now: number): string | null {
  if (raw === null) return null;
  const separator = raw.indexOf(':');
  if (separator <= 0) return null;
  const expiresAt = Number(raw.slice(0, separator));
  if (!Number.isFinite(expiresAt) || expiresAt <= now) return null;
  return raw.slice(separator + 1);
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : '';
}

/** The password in a URL, to scrub them from any error text. */
function urlSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    return [parsed.password, decodeURIComponent(parsed.password)].filter((part) => part.length > 0);
  } catch {
    return [];
  }
}
