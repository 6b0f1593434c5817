import { randomUUID } from 'node:crypto';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { StoreWriteOptions, VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from './redis-server.js';
import { dumpMemoryStore, dumpRedisPrefix } from './store-dump.js';

/**
 * The two stores a race is played on: a MemoryStore two instances share, and one Redis (each instance its
 * own client on one key prefix). `storeKinds(name)` is the table of a `describe.each` over both; a
 * `GatedPair` holds the writer's first count of a key matching `at` until the test releases it.
 */

/** `[label, make]` for a MemoryStore and a RedisStore on a fresh prefix under `name`. */
export function storeKinds(name: string): [string, (clock: () => number) => VerificationStore][] {
  return [
    ['MemoryStore', (clock) => new MemoryStore({ clock })],
    [
      'RedisStore',
      (clock) =>
        new RedisStore({
          url: sharedRedisUrl(),
          keyPrefix: `${name}:${randomUUID()}:`,
          clock,
          commandTimeoutMs: 10_000,
        }),
    ],
  ];
}

/** Holds, once armed, the first count of a key matching its pattern until released. */
export class CountGate {
  #armed = false;
  #reached: () => void = () => undefined;
  #gate: Promise<void> = Promise.resolve();
  release: () => void = () => undefined;
  constructor(private readonly at: RegExp) {}
  /** Arms the gate: answers once a count reaches it (and waits there until `release`). */
  arm(): Promise<void> {
    this.#armed = true;
    this.#gate = new Promise<void>((resolve) => (this.release = resolve));
    return new Promise((resolve) => (this.#reached = resolve));
  }
  async pass(key: string): Promise<void> {
    if (!this.#armed || !this.at.test(key)) return;
    this.#armed = false;
    this.#reached();
    await this.#gate;
  }
}

/** A writer whose counts pass its gate, an eraser on the same data, and a dump of what they hold. */
export interface GatedPair {
  writer: VerificationStore & { gate: CountGate };
  eraser: VerificationStore;
  dump: () => Promise<string[]>;
}

/** `[label, make]` of the two shapes (one MemoryStore; one Redis, two clients), the writer's counts gated at `at`. */
export function gatedPairs(name: string, at: RegExp): [string, (clock: () => number) => GatedPair][] {
  return [
    [
      'one MemoryStore',
      (clock) => {
        const store = Object.assign(new MemoryStore({ clock }), { gate: new CountGate(at) });
        gateIncrements(store);
        return { writer: store, eraser: store, dump: async () => dumpMemoryStore(store) };
      },
    ],
    [
      'one Redis',
      (clock) => {
        const keyPrefix = `${name}:${randomUUID()}:`;
        const options = { url: sharedRedisUrl(), keyPrefix, clock, commandTimeoutMs: 10_000 };
        const writer = Object.assign(new RedisStore(options), { gate: new CountGate(at) });
        gateIncrements(writer);
        return {
          writer,
          eraser: new RedisStore(options),
          dump: () => dumpRedisPrefix(sharedRedisUrl(), keyPrefix),
        };
      },
    ],
  ];
}

/** Makes the store's `increment` pass its gate first. */
function gateIncrements(store: VerificationStore & { gate: CountGate }): void {
  const increment = store.increment.bind(store);
  store.increment = async (key: string, by: number, ttlMs: number, options?: StoreWriteOptions) => {
    await store.gate.pass(key);
    return increment(key, by, ttlMs, options);
  };
}
