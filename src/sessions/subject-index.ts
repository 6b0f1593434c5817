import { randomInt } from 'node:crypto';
import { DAY_MS } from '../core/clock.js';
import type { DataKeys } from '../core/data-keys.js';
import { erasureMarkKey, erasureMarkOfTag, subjectTag, type ErasureSubject } from '../core/erasure-marks.js';
import { MAX_SESSION_TTL_MS, type SessionRecord } from '../core/session-record.js';
import { isSpareTestSession } from '../core/test-session.js';
import { storeBatch, type StoreOperation } from '../store/store-batch.js';
import type { VerificationStore } from '../store/verification-store.interface.js';

/** The erasure index's slots reserved for a session about to be paid for (`SubjectIndex.reserve`), by subject tag. */
export interface IndexReservation {
  /** Store-clock time the slots were asked for: an erasure since then is one the start did not see. */
  readonly at: number;
  readonly slots: ReadonlyMap<string, string>;
  /** Each subject's erasure mark when the slots were reserved (`erasedSince`). */
  readonly marks: ReadonlyMap<string, string | null>;
}

/** What a reserved slot holds until its session's record is written: a gap to `take`. */
const GAP = '';

/** The slot of a subject's first session of the day (`tag`: the subject's, `day`: the UTC day's number). */
function firstSlot(tag: string, day: number): string {
  return `${tag}:${day}:0`;
}

/**
 * Which sessions name a number or an owner, for erasure (`VerificationErasure`): per subject and UTC
 * day, one slot per session started that day (`subject:{n:<digest>}:<day>:<i>` → request id), each
 * kept as long as the session's record. The day's first session takes slot 0 (set-if-absent: one
 * entry, no counter); each later one takes a counter's next value (`:n`), and the counter outlives
 * every slot written under it, so a day's slots are found from slot 0 and the counter alone (a
 * counter without slot 0: an index written before slot 0 existed, read the same). No list is ever
 * rewritten (concurrent starts of one number each take a slot of their own). Keys name subjects by
 * keyed digest only.
 */
export class SubjectIndex {
  constructor(
    private readonly store: VerificationStore,
    private readonly keys: DataKeys,
    /** How long a record outlives its session (the slots are kept as long). */
    private readonly retentionMs: number,
  ) {}

  /**
   * Reserves, before a session is paid for, its slot under each subject (slot 0 claimed now, or the
   * day's counter taken when another session holds it; the slot written with the record: `writes`).
   * A reserved slot never written is a gap `take` skips.
   */
  async reserve(subject: { phoneNumber: string; owner?: string | undefined }): Promise<IndexReservation> {
    const subjects: ErasureSubject[] = [{ phoneNumber: subject.phoneNumber }];
    if (subject.owner !== undefined) subjects.push({ owner: subject.owner });
    const at = this.store.now();
    const day = this.#today();
    // Each subject's erasure mark is read before its slot is taken (one node, in this order): an
    // erasure marks the subject before it takes the index (`markForgotten`), so the record's batch of
    // a start reserved before the mark sees it changed (`erasedSince`).
    const tags: string[] = [];
    const operations: StoreOperation[] = [];
    for (const s of subjects) {
      const tag = subjectTag(this.keys, s);
      tags.push(tag);
      operations.push(
        { op: 'get', key: erasureMarkOfTag(tag) },
        { op: 'setIfAbsent', key: firstSlot(tag, day), value: GAP, ttlMs: this.#gapKeptMs() },
      );
    }
    const answers: readonly unknown[] = await storeBatch(this.store, operations);
    const taking: (string | Promise<string>)[] = [];
    for (const [i, tag] of tags.entries())
      taking.push(answers[2 * i + 1] === true ? firstSlot(tag, day) : this.#nextSlot(`${tag}:${day}`));
    const taken = await Promise.all(taking);
    const slots = new Map<string, string>();
    const marks = new Map<string, string | null>();
    for (const [i, tag] of tags.entries()) {
      slots.set(tag, taken[i]!);
      marks.set(tag, answers[2 * i] as string | null);
    }
    return { at, slots, marks };
  }

  /** A later session's slot of a subject's day (`base`): the day's counter's next value. */
  async #nextSlot(base: string): Promise<string> {
    const { value } = await this.store.increment(`${base}:n`, 1, this.#dayKeptMs());
    return `${base}:${value}`;
  }

  /** The reads, for the record's batch, of the erasure marks `reservation` holds (after its slot writes). */
  markReads(reservation: IndexReservation): StoreOperation[] {
    const reads: StoreOperation[] = [];
    for (const tag of reservation.marks.keys()) reads.push({ op: 'get', key: erasureMarkOfTag(tag) });
    return reads;
  }

  /** Whether a subject of `reservation` was erased since it was reserved (`read`: markReads' answers). */
  erasedSince(reservation: IndexReservation, read: readonly unknown[]): boolean {
    let i = 0;
    for (const before of reservation.marks.values()) if (read[i++] !== before) return true;
    return false;
  }

  /**
   * The slot writes of a session whose slots `reservation` holds, for the record's own batch; undefined
   * when it does not hold one under each of the session's subjects (then `add`).
   */
  writes(
    record: SessionRecord,
    callers: readonly string[],
    reservation: IndexReservation,
  ): StoreOperation[] | undefined {
    const value = this.#slotValue(record, callers);
    const ttlMs = this.#slotTtl(record);
    const writes: StoreOperation[] = [];
    for (const s of this.#subjectsOf(record)) {
      const key = reservation.slots.get(subjectTag(this.keys, s));
      if (key === undefined) return undefined;
      writes.push({ op: 'set', key, value, ttlMs });
    }
    return writes;
  }

  /**
   * Indexes a session under its number and its owner, with the browser key it was started by
   * (`browser:…`), sealed in its slot: the coalescing claims it names are the subject's too.
   */
  async add(record: SessionRecord, callers: readonly string[] = []): Promise<void> {
    const ttl = this.#slotTtl(record);
    const day = this.#today();
    const slot = this.#slotValue(record, callers);
    await Promise.all(
      this.#subjectsOf(record).map(async (subject) => {
        const tag = subjectTag(this.keys, subject);
        if (await this.store.setIfAbsent(firstSlot(tag, day), slot, ttl)) return;
        await this.store.set(await this.#nextSlot(`${tag}:${day}`), slot, ttl);
      }),
    );
  }

  /**
   * The subjects a session is indexed under. A spare test session (of a host's own test number, in a
   * slot of its network) is indexed under its owner only: one slot per start under the number is what a
   * flood of free starts must not keep.
   */
  #subjectsOf(record: SessionRecord): ErasureSubject[] {
    const subjects: ErasureSubject[] = isSpareTestSession(record.requestId)
      ? []
      : [{ phoneNumber: record.phoneNumber }];
    if (record.owner !== undefined) subjects.push({ owner: record.owner });
    return subjects;
  }

  /** A slot's value: the request id, and the callers sealed beside it. */
  #slotValue(record: SessionRecord, callers: readonly string[]): string {
    return callers.length === 0
      ? record.requestId
      : `${record.requestId} ${this.keys.seal(JSON.stringify(callers))}`;
  }

  /** A slot is kept as long as its session's record. */
  #slotTtl(record: SessionRecord): number {
    return Math.max(record.expiresAt - this.store.now(), 0) + this.retentionMs;
  }

  #today(): number {
    return Math.floor(this.store.now() / DAY_MS);
  }

  /**
   * The request ids of the subject's sessions whose records may still be kept, and the callers they
   * were started by; the index of them is removed. Days are read from tomorrow's (an instance whose
   * clock is ahead may have started it) back to the oldest a slot outlives.
   */
  async take(subject: ErasureSubject): Promise<{ ids: string[]; callers: string[] }> {
    const tomorrow = this.#today() + 1;
    const days = Math.ceil(this.#dayKeptMs() / DAY_MS) + 2;
    const ids = await Promise.all(
      Array.from({ length: days }, async (_, back) => {
        const base = `${subjectTag(this.keys, subject)}:${tomorrow - back}`;
        const count = Number(await this.store.get(`${base}:n`)) || 0;
        const slots = Array.from({ length: count + 1 }, (_, i) => `${base}:${i}`);
        const found = await Promise.all(slots.map((key) => this.store.get(key)));
        // Only written slots go. A reserved slot (a start in flight) is left to its start, which removes
        // it; the day's counter stays (a count, no id) so that no slot key of the day is handed out twice:
        // freed, one could go to a start begun after this erasure, which the start in flight would then
        // overwrite and, finding itself erased, delete.
        const written = (slot: string | null): slot is string => slot !== null && slot !== GAP;
        await Promise.all(slots.filter((_, i) => written(found[i]!)).map((key) => this.store.delete(key)));
        return found.filter(written);
      }),
    );
    const slots = ids.flat().map((slot) => this.#slot(slot));
    return {
      ids: [...new Set(slots.map((s) => s.id))],
      callers: [...new Set(slots.flatMap((s) => s.callers))],
    };
  }

  /**
   * Frees what `reservation` holds when its session will not be written with it (the start refused, or
   * its API call failed): slot 0's gap, which would otherwise outlive the start and read as one in
   * flight. A counter's slot holds nothing until written.
   */
  async release(reservation: IndexReservation): Promise<void> {
    await Promise.all(
      [...reservation.slots.values()]
        .filter((slot) => slot.endsWith(':0'))
        .map((slot) => this.store.delete(slot)),
    );
  }

  /** A slot's request id and the callers sealed beside it (none when it does not open). */
  #slot(value: string): { id: string; callers: string[] } {
    const [id, sealed] = value.split(' ');
    if (sealed === undefined) return { id: id!, callers: [] };
    try {
      const callers: unknown = JSON.parse(this.keys.open(sealed) ?? '[]');
      const valid = Array.isArray(callers) && callers.every((c) => typeof c === 'string');
      return { id: id!, callers: valid ? (callers as string[]) : [] };
    } catch {
      return { id: id!, callers: [] };
    }
  }

  /**
   * Remembers that the subject was erased at `at`, for `ttlMs`: what it verified before no longer counts.
   * Written before the erasure takes the index: each erasure's mark is its own (a random suffix), so a
   * start that reserved its slot before finds the mark changed (`erasedSince`) when its record lands.
   */
  async markForgotten(subject: ErasureSubject, at: number, ttlMs: number): Promise<void> {
    await this.store.set(erasureMarkKey(this.keys, subject), `${at}:${randomInt(1e9)}`, ttlMs);
  }

  /**
   * When the number or the owner was last erased, or the number last taken off the owner's account
   * (`revoke`), if still remembered (the latest): what it verified before no longer counts.
   */
  async forgottenAt(phoneNumber: string, owner: string | undefined): Promise<number | undefined> {
    const subjects: ErasureSubject[] = [{ phoneNumber }, ...(owner === undefined ? [] : [{ owner }])];
    const keys = subjects.map((s) => erasureMarkKey(this.keys, s));
    if (owner !== undefined) keys.push(this.#revokedKey(owner, phoneNumber));
    const marks = await Promise.all(keys.map((key) => this.store.get(key)));
    const times = marks.filter((m): m is string => m !== null).map((m) => Number(m.split(':')[0]));
    return times.length === 0 ? undefined : Math.max(...times);
  }

  /**
   * Remembers, for `ttlMs`, that `phoneNumber` left `owner`'s account at `at` (a change of phone):
   * what the owner verified of it before no longer counts (its claims, its verifications at the guard).
   * Answers the undo, which puts back what was remembered before (a rebind that failed).
   */
  async revoke(owner: string, phoneNumber: string, at: number, ttlMs: number): Promise<() => Promise<void>> {
    const key = this.#revokedKey(owner, phoneNumber);
    const before = await this.store.get(key);
    await this.store.set(key, String(at), ttlMs);
    return () => (before === null ? this.store.delete(key) : this.store.set(key, before, ttlMs));
  }

  /** Forgets that each number left its owner's account (an erasure of either: its own mark supersedes these). */
  async forgetRevoked(pairs: readonly { owner: string; phoneNumber: string }[]): Promise<void> {
    await Promise.all(pairs.map((p) => this.store.delete(this.#revokedKey(p.owner, p.phoneNumber))));
  }

  /** The mark of one number on one owner's account, on the owner's slot. */
  #revokedKey(owner: string, phoneNumber: string): string {
    return `${subjectTag(this.keys, { owner })}:revoked:${this.keys.digest(phoneNumber)}`;
  }

  /**
   * A reserved slot 0 never written (the start refused or lost after it): no longer than a written slot
   * could live, since `take` reads a day's slots from 0 to its counter whether slot 0 is there or not.
   */
  #gapKeptMs(): number {
    return MAX_SESSION_TTL_MS + this.retentionMs;
  }

  /** A day's counter outlives the last slot written that day: a day, the longest session and the retention. */
  #dayKeptMs(): number {
    return DAY_MS + MAX_SESSION_TTL_MS + this.retentionMs;
  }
}
