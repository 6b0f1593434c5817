import type { StoreWriteOptions, VerificationStore } from './verification-store.interface.js';

/**
 * One operation of a batch (`VerificationStore.batch`): the single-key operations of the store, each
 * with the meaning and the atomicity of its method.
 */
export type StoreOperation =
  | { readonly op: 'get'; readonly key: string }
  | {
      readonly op: 'set';
      readonly key: string;
      readonly value: string;
      readonly ttlMs: number;
      readonly options?: StoreWriteOptions;
    }
  | {
      readonly op: 'setIfAbsent';
      readonly key: string;
      readonly value: string;
      readonly ttlMs: number;
      readonly options?: StoreWriteOptions;
    }
  | { readonly op: 'delete'; readonly key: string }
  | {
      readonly op: 'increment';
      readonly key: string;
      readonly by: number;
      readonly ttlMs: number;
      readonly options?: StoreWriteOptions;
    };

/** What each operation answers, as its method does. */
export interface StoreOperationResults {
  get: string | null;
  set: undefined;
  setIfAbsent: boolean;
  delete: undefined;
  increment: { value: number; expiresAt: number };
}

/** The answers of a batch, one per operation, in order. */
export type StoreBatchResults<T extends readonly StoreOperation[]> = {
  -readonly [K in keyof T]: T[K] extends { op: infer O extends keyof StoreOperationResults }
    ? StoreOperationResults[O]
    : never;
};

/**
 * Runs `operations` together: with the store's `batch` when it has one (one round trip on Redis),
 * else each by its own method, all issued at once (a host's store without `batch`).
 */
export function storeBatch<const T extends readonly StoreOperation[]>(
  store: VerificationStore,
  operations: T,
): Promise<StoreBatchResults<T>> {
  if (operations.length === 0) return Promise.resolve([] as StoreBatchResults<T>);
  if (store.batch) return store.batch(operations);
  return Promise.all(operations.map((operation) => runOne(store, operation))) as Promise<
    StoreBatchResults<T>
  >;
}

/** One operation by the store's own method. */
export function runOne(store: VerificationStore, operation: StoreOperation): Promise<unknown> {
  switch (operation.op) {
    case 'get':
      return store.get(operation.key);
    case 'set':
      return store.set(operation.key, operation.value, operation.ttlMs, operation.options);
    case 'setIfAbsent':
      return store.setIfAbsent(operation.key, operation.value, operation.ttlMs, operation.options);
    case 'delete':
      return store.delete(operation.key);
    case 'increment':
      return store.increment(operation.key, operation.by, operation.ttlMs, operation.options);
  }
}
