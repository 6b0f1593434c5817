/**
 * A store whose calls a test can hold, to force the worst interleaving of two racing requests: the
 * first call matching a hold waits (before it runs, or with its result in hand) until the test lets it
 * go. It has no `batch`, so that a batch's operations pass one by one through the holds (the module then
 * issues them by their own methods, all at once). Everything else passes through to the store.
 */
import type { StoreWriteOptions, VerificationStore } from '../../src/store/verification-store.interface.js';

type Method = 'get' | 'increment' | 'write';
type Match = (key: string, value: string) => boolean;

export interface Hold {
  /** Resolves once the held call arrived (`hold`) or has its result (`holdResult`). */
  reached: Promise<void>;
  release(): void;
}

export interface GatedStore {
  store: VerificationStore;
  /** Holds the first next `method` call (`write`: set or setIfAbsent) matching `match`, before it runs. */
  hold(method: Method, match: Match): Hold;
  /** Holds the first next `method` call matching `match` once it ran, before its result is answered. */
  holdResult(method: Method, match: Match): Hold;
}

interface Pending {
  method: Method;
  match: Match;
  after: boolean;
  arrived: () => void;
  gate: Promise<void>;
}

export function gatedStore(inner: VerificationStore): GatedStore {
  const pending: Pending[] = [];
  const add = (method: Method, match: Match, after: boolean): Hold => {
    let arrived!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    pending.push({ method, match, after, arrived, gate });
    return { reached, release };
  };
  const take = (method: Method, key: string, value = ''): Pending | undefined => {
    const index = pending.findIndex((p) => p.method === method && p.match(key, value));
    return index < 0 ? undefined : pending.splice(index, 1)[0];
  };
  async function through<T>(method: Method, key: string, value: string, run: () => Promise<T>): Promise<T> {
    const held = take(method, key, value);
    if (held === undefined) return run();
    if (!held.after) {
      held.arrived();
      await held.gate;
      return run();
    }
    const result = await run();
    held.arrived();
    await held.gate;
    return result;
  }
  const store: VerificationStore = {
    now: () => inner.now(),
    get: (key) => through('get', key, '', () => inner.get(key)),
    set: (key: string, value: string, ttlMs: number, options?: StoreWriteOptions) =>
      through('write', key, value, () => inner.set(key, value, ttlMs, options)),
    setIfAbsent: (key: string, value: string, ttlMs: number, options?: StoreWriteOptions) =>
      through('write', key, value, () => inner.setIfAbsent(key, value, ttlMs, options)),
    delete: (key) => inner.delete(key),
    increment: (key, by, ttlMs, options) =>
      through('increment', key, '', () => inner.increment(key, by, ttlMs, options)),
    schedule: (queue, member, dueAt) => inner.schedule(queue, member, dueAt),
    claimDue: (queue, limit, leaseMs) => inner.claimDue(queue, limit, leaseMs),
    unschedule: (queue, member) => inner.unschedule(queue, member),
    queueSize: (queue) => inner.queueSize(queue),
    close: async () => undefined,
  };
  return {
    store,
    hold: (method, match) => add(method, match, false),
    holdResult: (method, match) => add(method, match, true),
  };
}
