/**
 * Every key and value a store holds, as text: what a store dump (a Redis RDB, a heap snapshot of a
 * MemoryStore) gives whoever gets hold of it. Redis: SCAN of the run's prefix, each key read by its type.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { MemoryStore } from '../../src/store/memory.store.js';
import { keyOfStored } from '../../src/store/stored-keys.js';

/** `key value` lines of every live entry and queue member of a MemoryStore. */
export function dumpMemoryStore(store: MemoryStore): string[] {
  const inner = store as unknown as {
    entries: Map<string, number>;
    evictableEntries: Map<string, number>;
    slab: { value(slot: number): string };
    queues: Map<string, { current: Map<string, unknown> }>;
  };
  const lines: string[] = [];
  for (const map of [inner.entries, inner.evictableEntries])
    for (const [key, slot] of map) lines.push(`${keyOfStored(key)} ${inner.slab.value(slot)}`);
  for (const [queue, due] of inner.queues)
    for (const member of due.current.keys()) lines.push(`${queue} ${member}`);
  return lines;
}

/** `key value` lines of every key under `prefix`, whatever its type (string, zset, hash, list, set). */
export async function dumpRedisPrefix(url: string, prefix: string): Promise<string[]> {
  const admin = new Redis(url);
  try {
    const lines: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 20_000);
      cursor = next;
      for (const key of keys) {
        const type = await admin.type(key);
        const values =
          type === 'string'
            ? [(await admin.get(key)) ?? '']
            : type === 'zset'
              ? ((await admin.call('ZRANGE', key, '0', '-1', 'WITHSCORES')) as string[])
              : type === 'hash'
                ? Object.entries(await admin.hgetall(key)).flat()
                : type === 'list'
                  ? await admin.lrange(key, 0, -1)
                  : type === 'set'
                    ? await admin.smembers(key)
                    : [`<${type}>`];
        lines.push(`${key} ${values.join(' ')}`);
      }
    } while (cursor !== '0');
    return lines;
  } finally {
    admin.disconnect();
  }
}

/** The forms the unkeyed digests took: SHA-256 in base64url (whole and the 22 characters kept) and hex. */
export function plainDigests(value: string): string[] {
  const hash = createHash('sha256').update(value);
  const bytes = hash.digest();
  const b64 = bytes.toString('base64url');
  return [b64.slice(0, 22), bytes.toString('hex'), bytes.toString('base64').slice(0, 22)];
}

/** A number in the forms a dump could show it: E.164, international digits, national digits, 8-prefixed. */
export function numberForms(e164: string): string[] {
  const digits = e164.slice(1);
  const national = digits.startsWith('7') ? digits.slice(1) : digits;
  return [e164, digits, national, `8${national}`];
}

/**
 * What of `subjects` a dump shows: each clear form found, and each unkeyed digest of a subject, of
 * the caller ids protection built from it (`owner:…`, `client:…`) and of the (caller, number,
 * method) triples the cooldown and coalescing keys were named by.
 */
export function leaks(
  lines: string[],
  subjects: { numbers: string[]; owners: string[]; addresses: string[]; methods: string[] },
): string[] {
  const text = lines.join('\n');
  const found: string[] = [];
  const clear = [...subjects.numbers.flatMap(numberForms), ...subjects.owners, ...subjects.addresses];
  for (const form of clear) if (text.includes(form)) found.push(`clear: ${form}`);
  const callers = [
    ...subjects.owners.flatMap((o) => [`owner:${o}`, o]),
    ...subjects.addresses.flatMap((a) => [`client:${a}`, a]),
  ];
  const hashed = [
    ...subjects.numbers,
    ...callers,
    ...callers.flatMap((c) =>
      subjects.numbers.flatMap((n) => [
        `${c}\n${n}`,
        `${c}\nn:${n}`,
        ...subjects.methods.map((m) => `${c}\n${n}\n${m}`),
      ]),
    ),
  ];
  for (const value of hashed)
    for (const form of plainDigests(value))
      if (text.includes(form)) found.push(`plain digest of ${JSON.stringify(value)}: ${form}`);
  return found;
}

/**
 * Whether a dump line (or a bare key) is an erasure index's day counter, which an erasure leaves named by
 * the subject's keyed digest: a count of the day's starts (no id), kept so that no slot key of the day is
 * handed out twice (src/sessions/subject-index.ts `take`).
 */
export function isErasureIndexCounter(line: string): boolean {
  const [key, value] = line.split(' ');
  return (
    /(^|:)subject:\{[no]:[^}]+\}:\d+:n$/.test(key!) && (value === undefined || /^(\d+:)?\d+$/.test(value))
  );
}
