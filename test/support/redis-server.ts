import { createClient } from 'redis';
import { REDIS_REQUIRED_MESSAGE } from '../global-setup.js';

export {
  freePort,
  REDIS_REQUIRED_MESSAGE,
  ThrowawayRedisServer,
  type RedisServerOptions,
} from '../global-setup.js';

/** The Redis every suite shares: `REDIS_URL`, set by the caller or by test/global-setup.ts. */
export function sharedRedisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error(REDIS_REQUIRED_MESSAGE);
  return url;
}

/**
 * A host's node-redis client on `url`, connected (return type left to inference: node-redis client
 * types are generic over modules and RESP version).
 */
export async function connectNodeRedis(url: string) {
  const client = createClient({ url });
  // A host's client has an error listener; without one node-redis throws on a lost connection.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * Resolves with the first value `attempt` yields, trying again every 50 ms (real time) for up to
 * `withinMs`: for a Redis, or a client of one, coming up or going down.
 */
export async function eventually<T>(attempt: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
