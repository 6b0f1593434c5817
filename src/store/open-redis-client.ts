/**
 * Opens the store's own Redis connection from a URL. Both client libraries are optional peer
 * dependencies, so they are imported only here, on demand. The client queues nothing while Redis is
 * away: the store waits for the connection up to `commandTimeoutMs`, then answers 503, and never runs a
 * command late. It reconnects by itself, so that operations work again when Redis returns.
 */

import { PhoneVerificationError } from '../core/phone-verification.error.js';
import { isModuleNotFound } from '../core/module-not-found.js';

/** A Redis client library the store can open a URL with (an optional peer dependency). */
export type RedisDriverName = 'ioredis' | 'redis';

export interface OpenRedisClientOptions {
  /** Libraries to try, in order. */
  drivers: readonly RedisDriverName[];
  commandTimeoutMs: number;
}

/** Longest pause between reconnection attempts: bounds how long the store stays down after Redis returns. */
const MAX_RECONNECT_DELAY_MS = 1000;

function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** Math.min(attempt, 10), MAX_RECONNECT_DELAY_MS);
}

async function openIoRedis(url: string, commandTimeoutMs: number): Promise<unknown> {
  const ioredis = await import('ioredis');
  const Redis = ioredis.Redis ?? ioredis.default;
  const client = new Redis(url, {
    enableOfflineQueue: false,
    // No auto-pipelining: ioredis holds a command back while its previous auto-pipeline is unanswered
    // (a round trip more under concurrency) and writes QUIT ahead of what waits
    // (test/store/redis-autopipelining.attack.spec.ts).
    // Commands cut off by a lost connection fail now rather than run late, after the caller was told they failed.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 1000),
    retryStrategy: (attempt: number) => reconnectDelay(attempt),
  });
  // Failures reach callers as rejected operations; without a listener ioredis would print each one.
  client.on('error', () => undefined);
  return client;
}

async function openNodeRedis(url: string, commandTimeoutMs: number): Promise<unknown> {
  const { createClient } = await import('redis');
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: Math.max(commandTimeoutMs, 1000),
      reconnectStrategy: (retries: number) => reconnectDelay(retries),
    },
  });
  // node-redis throws an unhandled 'error' event without a listener; failures reach callers as rejected operations.
  client.on('error', () => undefined);
  // Connection problems surface per operation; the client keeps reconnecting on its own.
  client.connect().catch(() => undefined);
  return client;
}

export async function openRedisClient(url: string, options: OpenRedisClientOptions): Promise<unknown> {
  for (const driver of options.drivers) {
    try {
      return driver === 'ioredis'
        ? await openIoRedis(url, options.commandTimeoutMs)
        : await openNodeRedis(url, options.commandTimeoutMs);
    } catch (error) {
      if (!isModuleNotFound(error)) throw error;
    }
  }
  throw new RedisDriverMissingError(options.drivers);
}

/** Neither Redis client library the store may open a URL with is installed. */
export class RedisDriverMissingError extends PhoneVerificationError {
  constructor(readonly drivers: readonly RedisDriverName[]) {
    super(
      `RedisStore: connecting by URL needs a Redis client library; install one of: ${drivers.join(', ')} (npm i ${drivers[0]})`,
    );
  }
}
