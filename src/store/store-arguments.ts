import { ArgumentRangeError, ArgumentTypeError } from '../core/phone-verification.error.js';
import type { StoreOperation } from './store-batch.js';
/**
 * Argument checks shared by every store, so that a programming error in the module fails the
 * same way (a TypeError or RangeError, never a store-unavailable error) on MemoryStore and Redis.
 */

export function assertTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0)
    throw new ArgumentRangeError(`ttlMs must be a positive number, got ${ttlMs}`);
}

/** A write's value is text (a plain-JS caller's `undefined` is refused, never stored as "undefined"), and its TTL. */
export function assertWrite(value: unknown, ttlMs: number): void {
  if (typeof value !== 'string')
    throw new ArgumentTypeError(`value must be a string, got ${value === null ? 'null' : typeof value}`);
  assertTtl(ttlMs);
}

/** An increment's step is a safe integer, and its window's TTL. */
export function assertIncrement(by: number, ttlMs: number): void {
  if (!Number.isSafeInteger(by)) throw new ArgumentRangeError(`increment must be a safe integer, got ${by}`);
  assertTtl(ttlMs);
}

const OPERATIONS = new Set(['get', 'set', 'setIfAbsent', 'delete', 'increment']);

/**
 * A batch's operations are each one of the store's (a plain-JS caller can pass anything), with the
 * arguments its method takes: checked all before any runs, so that a batch refused changes nothing.
 */
export function assertBatch(operations: readonly StoreOperation[]): void {
  for (const operation of operations) {
    if (!OPERATIONS.has(operation.op))
      throw new ArgumentTypeError(`batch: unknown operation ${String(operation.op)}`);
    if (operation.op === 'increment') assertIncrement(operation.by, operation.ttlMs);
    else if (operation.op === 'set' || operation.op === 'setIfAbsent')
      assertWrite(operation.value, operation.ttlMs);
  }
}

export function assertDueAt(dueAt: number): void {
  if (!Number.isFinite(dueAt)) throw new ArgumentRangeError(`dueAt must be a finite number, got ${dueAt}`);
}

export function assertClaim(limit: number, leaseMs: number): void {
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new ArgumentRangeError(`limit must be a non-negative integer, got ${limit}`);
  if (!Number.isFinite(leaseMs) || leaseMs < 0)
    throw new ArgumentRangeError(`leaseMs must be a non-negative number, got ${leaseMs}`);
}

/** Thrown when `increment` meets a key that holds something other than an integer counter. */
export function notACounter(): TypeError {
  return new ArgumentTypeError('increment: the key holds a value that is not an integer counter');
}
