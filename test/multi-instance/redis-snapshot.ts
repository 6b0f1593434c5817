/**
 * Carries a key prefix's data over a redis-server restart. The throwaway test server runs without
 * persistence; a production Redis comes back with its RDB/AOF data, and that is what a test of
 * "Redis went away and returned" needs (an empty Redis is data loss, a different failure).
 */
import { Redis } from 'ioredis';

export interface RedisSnapshot {
  entries: { key: string; dump: Buffer; pttl: number }[];
}

/** DUMP of every key under `prefix`, with its remaining real TTL. */
export async function snapshotPrefix(url: string, prefix: string): Promise<RedisSnapshot> {
  const admin = new Redis(url);
  try {
    const entries: RedisSnapshot['entries'] = [];
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 20_000);
      cursor = next;
      for (const key of keys) {
        const [dump, pttl] = await Promise.all([admin.dumpBuffer(key), admin.pttl(key)]);
        if (dump !== null && pttl !== -2) entries.push({ key, dump, pttl: Math.max(pttl, 0) });
      }
    } while (cursor !== '0');
    return { entries };
  } finally {
    admin.disconnect();
  }
}

/** RESTOREs a snapshot (0 = no TTL, as RESTORE reads it). */
export async function restoreSnapshot(url: string, snapshot: RedisSnapshot): Promise<void> {
  const admin = new Redis(url);
  try {
    for (const { key, dump, pttl } of snapshot.entries) await admin.restore(key, pttl, dump, 'REPLACE');
  } finally {
    admin.disconnect();
  }
}
