import { DueQueue } from './due-queue.js';
import { EntrySlab } from './entry-slab.js';
import { FlatCopies } from './flat-copies.js';
import { storedKey } from './stored-keys.js';
import { WriteOrder } from './write-order.js';
import {
  assertBatch,
  assertClaim,
  assertDueAt,
  assertIncrement,
  assertWrite,
  notACounter,
} from './store-arguments.js';
import { VerificationStoreUnavailableError } from './store-unavailable.error.js';
import { LocalChannels } from './local-channels.js';
import { runOne, type StoreBatchResults, type StoreOperation } from './store-batch.js';
import type {
  StoreMessageListener,
  StoreWriteOptions,
  VerificationStore,
} from './verification-store.interface.js';
import { ArgumentRangeError } from '../core/phone-verification.error.js';

export interface MemoryStoreOptions {
  /** Milliseconds since the epoch; every TTL and due time is measured on it. Default `Date.now`. */
  clock?: () => number;
  /**
   * Most key–value entries held (evictable ones apart), and most members of each due-queue. When
   * full, the entry written least recently (for a queue: the member scheduled least recently) is
   * evicted. Default 1,000,000.
   */
  maxEntries?: number;
  /**
   * Most evictable entries held (the per-client counters, written with `{ evictable: true }`): a
   * budget of their own, so that a flood of callers (one request per address) evicts only other
   * per-client counters, never a session record, a cooldown or a per-phone limit. Default
   * `maxEntries`.
   */
  maxEvictableEntries?: number;
  /** How often (real time) expired entries are swept in slices. Default 1000 ms. */
  sweepIntervalMs?: number;
}

/** Entries examined per sweep tick: bounds the pause of one tick whatever the store's size. */
const SWEEP_SLICE = 10_000;

/** A slab this large, at most a quarter of it in use after a sweep, is compacted. */
const COMPACT_FROM_SLOTS = 4096;

/**
 * The embedded default store: one process, no persistence. Entries expire lazily on read and
 * are reclaimed by one unref'd interval that sweeps a slice of the maps per tick (no timer per
 * key). Operations are synchronous inside, so each is atomic with respect to the others.
 *
 * Entries live in two classes with a bound each: kept entries and evictable ones (see
 * StoreWriteOptions). A full class evicts its own least recently written entry, so filling one
 * class never takes room from the other. A class (WriteOrder) holds each key's slot in one EntrySlab,
 * where its value and expiry time are (no object per entry); keys are held in a shorter form (storedKey).
 */
export class MemoryStore implements VerificationStore {
  private readonly clock: () => number;
  private readonly maxEntries: number;
  private readonly maxEvictableEntries: number;
  private readonly slab = new EntrySlab();
  private readonly flat = new FlatCopies();
  private readonly entries = new WriteOrder();
  private readonly evictableEntries = new WriteOrder();
  private readonly queues = new Map<string, DueQueue>();
  private readonly channels = new LocalChannels();
  private sweepCursor: Iterator<[Map<string, number>, string, number]> | undefined;
  private sweepTimer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.maxEntries = options.maxEntries ?? 1_000_000;
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new ArgumentRangeError(
        `MemoryStore: maxEntries must be a positive integer, got ${options.maxEntries}`,
      );
    }
    this.maxEvictableEntries = options.maxEvictableEntries ?? this.maxEntries;
    if (!Number.isSafeInteger(this.maxEvictableEntries) || this.maxEvictableEntries < 1) {
      throw new ArgumentRangeError(
        `MemoryStore: maxEvictableEntries must be a positive integer, got ${options.maxEvictableEntries}`,
      );
    }
    const sweepIntervalMs = options.sweepIntervalMs ?? 1000;
    if (!Number.isFinite(sweepIntervalMs) || sweepIntervalMs <= 0) {
      throw new ArgumentRangeError(
        `MemoryStore: sweepIntervalMs must be a positive number, got ${sweepIntervalMs}`,
      );
    }
    this.sweepTimer = setInterval(() => this.sweepSlice(), sweepIntervalMs);
    this.sweepTimer.unref();
  }

  now(): number {
    return this.clock();
  }

  /** Number of key–value entries held (evictable ones included), expired ones not yet swept included. */
  get entryCount(): number {
    return this.entries.size + this.evictableEntries.size;
  }

  async get(key: string): Promise<string | null> {
    this.assertOpen('get');
    const slot = this.live(storedKey(key), this.clock());
    return slot === undefined ? null : this.slab.value(slot);
  }

  async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<void> {
    this.assertOpen('set');
    assertWrite(value, ttlMs);
    this.write(storedKey(key), this.flat.of(value), this.clock() + ttlMs, options);
  }

  async setIfAbsent(
    key: string,
    value: string,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<boolean> {
    this.assertOpen('setIfAbsent');
    assertWrite(value, ttlMs);
    const now = this.clock();
    const stored = storedKey(key);
    if (this.live(stored, now) !== undefined) return false;
    this.write(stored, this.flat.of(value), now + ttlMs, options);
    return true;
  }

  async replaceIfEquals(
    key: string,
    expected: string,
    value: string | null,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<boolean> {
    this.assertOpen('replaceIfEquals');
    if (value !== null) assertWrite(value, ttlMs);
    const now = this.clock();
    const stored = storedKey(key);
    const slot = this.live(stored, now);
    if (slot === undefined || this.slab.value(slot) !== expected) return false;
    if (value === null) this.drop(stored);
    else this.write(stored, this.flat.of(value), now + ttlMs, options);
    return true;
  }

  async delete(key: string): Promise<void> {
    this.assertOpen('delete');
    this.drop(storedKey(key));
  }

  async increment(
    key: string,
    by: number,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<{ value: number; expiresAt: number }> {
    this.assertOpen('increment');
    assertIncrement(by, ttlMs);
    const now = this.clock();
    const stored = storedKey(key);
    const slot = this.live(stored, now);
    let value = by;
    let expiresAt = now + ttlMs;
    if (slot !== undefined) {
      const current = this.slab.value(slot);
      const count = Number(current);
      if (!/^-?\d+$/.test(current) || !Number.isSafeInteger(count)) throw notACounter();
      value = count + by;
      if (options?.renew !== true) expiresAt = this.slab.expiresAt(slot);
    }
    this.write(stored, String(value), expiresAt, options);
    return { value, expiresAt };
  }

  /** Runs the operations in one step: no other operation comes between them. */
  async batch<const T extends readonly StoreOperation[]>(operations: T): Promise<StoreBatchResults<T>> {
    this.assertOpen('batch');
    assertBatch(operations);
    // Each method does its work before its first await: they all run now, in order.
    const answers: Promise<unknown>[] = [];
    for (const operation of operations) answers.push(runOne(this, operation));
    return Promise.all(answers) as Promise<StoreBatchResults<T>>;
  }

  async schedule(queue: string, member: string, dueAt: number): Promise<void> {
    this.assertOpen('schedule');
    assertDueAt(dueAt);
    let due = this.queues.get(queue);
    if (!due) {
      due = new DueQueue();
      this.queues.set(queue, due);
    }
    if (!due.has(member) && due.size >= this.maxEntries) due.evictOldest();
    due.schedule(this.flat.of(member), dueAt);
  }

  async claimDue(queue: string, limit: number, leaseMs: number): Promise<string[]> {
    this.assertOpen('claimDue');
    assertClaim(limit, leaseMs);
    const due = this.queues.get(queue);
    if (!due || limit === 0) return [];
    const now = this.clock();
    return due.claim(now, limit, now + leaseMs);
  }

  async unschedule(queue: string, member: string): Promise<void> {
    this.assertOpen('unschedule');
    const due = this.queues.get(queue);
    if (!due) return;
    due.remove(member);
    if (due.size === 0) this.queues.delete(queue);
  }

  async queueSize(queue: string): Promise<number> {
    this.assertOpen('queueSize');
    return this.queues.get(queue)?.size ?? 0;
  }

  /** Delivers to this process's listeners of `channel`, after the caller's current step; rejects once closed. */
  async publish(channel: string, message: string): Promise<void> {
    this.assertOpen('publish');
    this.channels.publish(channel, message);
  }

  async subscribe(channel: string, listener: StoreMessageListener): Promise<() => void> {
    this.assertOpen('subscribe');
    return this.channels.subscribe(channel, listener);
  }

  /** Stops the sweep timer and drops every entry; later operations reject. Idempotent. */
  async close(): Promise<void> {
    this.channels.clear();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sweepCursor = undefined;
    this.closed = true;
    this.entries.clear();
    this.evictableEntries.clear();
    this.slab.clear();
    this.queues.clear();
  }

  /** The entry's slot when present and not expired; an expired one is dropped on the way. Keys here are stored forms (storedKey). */
  private live(key: string, now: number): number | undefined {
    // A key is in one of the maps at most (see write): a kept key, the usual one, is one lookup.
    const slot = this.entries.get(key) ?? this.evictableEntries.get(key);
    if (slot === undefined || this.slab.expiresAt(slot) > now) return slot;
    this.drop(key);
    return undefined;
  }

  /** Removes the key from whichever map holds it and frees its slot. */
  private drop(key: string): void {
    const slot = this.entries.get(key) ?? this.evictableEntries.get(key);
    if (slot === undefined) return;
    this.entries.delete(key);
    this.evictableEntries.delete(key);
    this.slab.release(slot);
  }

  private write(key: string, value: string, expiresAt: number, options: StoreWriteOptions | undefined): void {
    const evictable = options?.evictable === true;
    const [own, other, bound] = evictable
      ? [this.evictableEntries, this.entries, this.maxEvictableEntries]
      : [this.entries, this.evictableEntries, this.maxEntries];
    // The last write decides the class; a key rewritten keeps its slot.
    let slot = own.get(key) ?? other.get(key);
    other.delete(key);
    if (!own.has(key) && own.size >= bound) {
      const evicted = own.evictOldest();
      if (evicted !== undefined) this.slab.release(evicted[1]);
    }
    if (slot === undefined) slot = this.slab.add(value, expiresAt);
    else this.slab.put(slot, value, expiresAt);
    // The key is the most recently written of its class now (the eviction order).
    own.written(this.flat.of(key), slot);
  }

  /** Drops expired entries among the next slice of the maps, resuming where the last tick stopped. */
  private sweepSlice(): void {
    const now = this.clock();
    this.sweepCursor ??= this.everyEntry();
    for (let examined = 0; examined < SWEEP_SLICE; examined++) {
      const next = this.sweepCursor.next();
      if (next.done) {
        this.sweepCursor = undefined;
        // A pass over every entry ended: a slab mostly free after a peak gives its room back.
        const slab = this.slab;
        if (slab.capacity >= COMPACT_FROM_SLOTS && slab.size * 4 <= slab.capacity)
          slab.compact([...this.entries.maps(), ...this.evictableEntries.maps()]);
        return;
      }
      const [map, key, slot] = next.value;
      if (this.slab.expiresAt(slot) <= now) {
        map.delete(key);
        this.slab.release(slot);
      }
    }
  }

  private *everyEntry(): Generator<[Map<string, number>, string, number]> {
    for (const map of [...this.entries.maps(), ...this.evictableEntries.maps()])
      for (const [key, slot] of map) yield [map, key, slot];
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new VerificationStoreUnavailableError(operation, 'the store is closed');
  }
}
