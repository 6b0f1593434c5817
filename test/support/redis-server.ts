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
