import type { StoreOperation } from './store-batch.js';

/**
 * Runs each operation alone, a key's later operation after its earlier one has answered: a cluster
 * client may write them to Redis out of order.
 */
export function keyInOrder<T>(
  operations: readonly StoreOperation[],
  run: (operation: StoreOperation, i: number) => Promise<T>,
): Promise<T>[] {
  const lastOf = new Map<string, Promise<unknown>>();
  return operations.map((operation, i) => {
    const earlier = lastOf.get(operation.key);
    const ran = earlier ? earlier.then(() => run(operation, i)) : run(operation, i);
    lastOf.set(
      operation.key,
      ran.catch(() => undefined),
    );
    return ran;
  });
}
