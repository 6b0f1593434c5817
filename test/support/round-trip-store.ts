/**
 * A MemoryStore seen as a store across a network: every operation issued while others are in flight
 * rides the same round trip, and a round trip ends only once the process has nothing left to do now
 * (setImmediate), as a reply from Redis would. `roundTrips` counts them: the sequential round trips a
 * route waits for, whatever the store's latency. No timer, no sleep: a test reads it as a count.
 */
import { MemoryStore, type MemoryStoreOptions } from '../../src/store/memory.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';

/** The operations that cross the network (all but the clock and close). */
export const REMOTE = new Set([
  'get',
  'set',
  'setIfAbsent',
  'replaceIfEquals',
  'delete',
  'increment',
  'batch',
  'schedule',
  'claimDue',
  'unschedule',
  'queueSize',
  'publish',
]);

export interface RoundTripStore {
  store: VerificationStore;
  inner: MemoryStore;
  /** Round trips since the last reset, and the operations each carried. */
  readonly trips: string[][];
  reset(): void;
}

export function roundTripStore(options: MemoryStoreOptions = {}): RoundTripStore {
  const inner = new MemoryStore(options);
  const trips: string[][] = [];
  let pending: { name: string; run: () => void }[] = [];
  const flush = (): void => {
    const batch = pending;
    pending = [];
    trips.push(batch.map((p) => p.name));
    for (const p of batch) p.run();
  };
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || !REMOTE.has(String(property))) return value;
      return (...args: unknown[]) =>
        new Promise((resolve, reject) => {
          if (pending.length === 0) setImmediate(flush);
          const key = String(args[0]).replace(/[:{].*$/, '');
          pending.push({
            name: `${String(property)}(${property === 'batch' ? (args[0] as unknown[]).length : key})`,
            run: () =>
              (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).then(resolve, reject),
          });
        });
    },
  });
  return {
    store,
    inner,
    trips,
    reset: () => {
      trips.length = 0;
    },
  };
}

export interface SlowWritesStore {
  store: VerificationStore;
  inner: MemoryStore;
  /** Lets the writes that were overtaken land now. */
  land(): void;
  /** How many writes took the slow path (a test proves nothing if none did). */
  held(): number;
}

/**
 * A MemoryStore whose writes that `slow` picks (its method and arguments) are slow, as a write on a loaded
 * network is: one lands at the next turn of the event loop when the host waits for it (sends nothing else
 * meanwhile), and is overtaken when the host goes on without it (it lands at `land()`). `once`: only the
 * first write it picks.
 */
export function slowWritesStore(
  clock: () => number,
  slow: (method: string, args: unknown[]) => boolean,
  { once = false }: { once?: boolean } = {},
): SlowWritesStore {
  const inner = new MemoryStore({ clock });
  let operations = 0;
  let held = 0;
  const late: (() => void)[] = [];
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || !REMOTE.has(String(property))) return value;
      const run = (args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      return (...args: unknown[]) => {
        operations += 1;
        if ((once && held > 0) || !slow(String(property), args)) return run(args);
        held += 1;
        const mark = operations;
        return new Promise((resolve, reject) => {
          const write = () => void run(args).then(resolve, reject);
          setImmediate(() => (operations === mark ? write() : late.push(write)));
        });
      };
    },
  });
  return { store, inner, land: () => late.splice(0).forEach((write) => write()), held: () => held };
}
