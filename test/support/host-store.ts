import type { MemoryStore } from '../../src/store/memory.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';

/** What happens around a host store's operations: a read's aftermath, writes that land a moment later. */
export interface HostStoreHooks {
  /** Runs after a read, before it answers: what another instance does between a read and the next write. */
  afterGet?(key: string): Promise<void>;
  /** `set` and `delete` land a moment after they are issued (a network round trip), and have landed when they answer. */
  delayedWrites?: boolean;
}

/**
 * A host's own store over `inner`, with the required operations only (no `replaceIfEquals`, `batch`,
 * `publish`, `subscribe`): the module's fallbacks run on it (store-replace.ts: a read, then the write).
 */
export function hostStoreOf(inner: MemoryStore, hooks: HostStoreHooks = {}): VerificationStore {
  const write = <T>(work: () => Promise<T>): Promise<T> =>
    hooks.delayedWrites ? new Promise((resolve) => setImmediate(resolve)).then(work) : work();
  return {
    now: () => inner.now(),
    get: async (key) => {
      const value = await inner.get(key);
      await hooks.afterGet?.(key);
      return value;
    },
    set: (key, value, ttlMs, options) => write(() => inner.set(key, value, ttlMs, options)),
    setIfAbsent: (key, value, ttlMs, options) => inner.setIfAbsent(key, value, ttlMs, options),
    delete: (key) => write(() => inner.delete(key)),
    increment: (key, by, ttlMs, options) => inner.increment(key, by, ttlMs, options),
    schedule: (queue, member, dueAt) => inner.schedule(queue, member, dueAt),
    claimDue: (queue, limit, leaseMs) => inner.claimDue(queue, limit, leaseMs),
    unschedule: (queue, member) => inner.unschedule(queue, member),
    queueSize: (queue) => inner.queueSize(queue),
    close: () => inner.close(),
  };
}
