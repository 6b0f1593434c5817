import { storeBatch, type StoreBatchResults, type StoreOperation } from './store-batch.js';
import type { StoreWriteOptions, VerificationStore } from './verification-store.interface.js';

/**
 * Key families two registrations on one store share on purpose: protection's counters (limits, spend
 * cap, pumping), which a host pools by giving both registrations one prefix or one store.
 */
const SHARED_FAMILIES = ['protect:'];

/**
 * One registration's view of a store it may share with other registrations (one `keyPrefix` the host
 * chose for several, or one store instance): every key, due-queue and channel of the registration's own
 * state (session records, the reconcile queue, in-doubt starts, test sessions, history, guard records…)
 * goes under `<scope>:`, so that one registration never reads, claims or drops another's; protection's
 * counters stay shared. Closing it closes the store it wraps.
 */
export class RegistrationScopedStore implements VerificationStore {
  readonly batch?: VerificationStore['batch'];
  readonly replaceIfEquals?: VerificationStore['replaceIfEquals'];
  readonly publish?: (channel: string, message: string) => Promise<void>;
  readonly subscribe?: VerificationStore['subscribe'];

  constructor(
    private readonly inner: VerificationStore,
    private readonly scope: string,
  ) {
    if (inner.batch) {
      this.batch = <const T extends readonly StoreOperation[]>(operations: T) =>
        storeBatch(
          inner,
          operations.map((operation) => ({ ...operation, key: this.key(operation.key) })) as unknown as T,
        ) as Promise<StoreBatchResults<T>>;
    }
    if (inner.replaceIfEquals) {
      const replace = inner.replaceIfEquals.bind(inner);
      this.replaceIfEquals = (key, expected, value, ttlMs, options) =>
        replace(this.key(key), expected, value, ttlMs, options);
    }
    if (inner.publish) {
      const publish = inner.publish.bind(inner);
      this.publish = (channel, message) => publish(this.own(channel), message);
    }
    if (inner.subscribe) {
      const subscribe = inner.subscribe.bind(inner);
      this.subscribe = (channel, listener, onGap) => subscribe(this.own(channel), listener, onGap);
    }
  }

  /** The key in the wrapped store: the registration's own under its scope, a shared family as given. */
  private key(key: string): string {
    return SHARED_FAMILIES.some((family) => key.startsWith(family)) ? key : this.own(key);
  }

  private own(name: string): string {
    return `${this.scope}:${name}`;
  }

  now(): number {
    return this.inner.now();
  }
  get(key: string): Promise<string | null> {
    return this.inner.get(this.key(key));
  }
  set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<void> {
    return this.inner.set(this.key(key), value, ttlMs, options);
  }
  setIfAbsent(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<boolean> {
    return this.inner.setIfAbsent(this.key(key), value, ttlMs, options);
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(this.key(key));
  }
  increment(
    key: string,
    by: number,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<{ value: number; expiresAt: number }> {
    return this.inner.increment(this.key(key), by, ttlMs, options);
  }
  schedule(queue: string, member: string, dueAt: number): Promise<void> {
    return this.inner.schedule(this.own(queue), member, dueAt);
  }
  claimDue(queue: string, limit: number, leaseMs: number): Promise<string[]> {
    return this.inner.claimDue(this.own(queue), limit, leaseMs);
  }
  unschedule(queue: string, member: string): Promise<void> {
    return this.inner.unschedule(this.own(queue), member);
  }
  queueSize(queue: string): Promise<number> {
    return this.inner.queueSize(this.own(queue));
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
