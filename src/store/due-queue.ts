import { OldestFirst } from '../core/oldest-first.js';

/**
 * An in-memory due-queue: members with a due time, taken in due order. A binary min-heap with
 * lazy deletion gives O(log n) schedule and O(k log n) claim of k members; rescheduling or
 * removing a member only changes its due time in the index, and the stale heap item left behind
 * (its due time no longer the member's) is dropped when it surfaces, or when the heap is compacted,
 * so it stays below twice the size. The heap is two arrays (members, due times unboxed): no object
 * per scheduling. Due times are kept as offsets from the first one scheduled: within 24 days of it they
 * are small integers, which the index holds unboxed too (an epoch time there is a 16-byte heap number).
 */
export class DueQueue {
  /** Each member's current due time. */
  private readonly current = new Map<string, number>();
  readonly #oldest = new OldestFirst(this.current);
  private members: string[] = [];
  private dues: number[] = [];
  /** The epoch time every kept due time is an offset from (the first one scheduled). */
  #base: number | undefined;

  get size(): number {
    return this.current.size;
  }

  /** Removes the member that has been (re)scheduled least recently (a bound was reached); which one. */
  evictOldest(): string | undefined {
    const member = this.#oldest.evict();
    if (member !== undefined) this.compactIfSparse();
    return member;
  }

  has(member: string): boolean {
    return this.current.has(member);
  }

  schedule(member: string, dueAt: number): void {
    this.#base ??= Math.floor(dueAt);
    this.#put(member, dueAt - this.#base);
  }

  /** Schedules `member` at `due`, an offset from the base. */
  #put(member: string, due: number): void {
    // Deleting first moves the member to the end of the index's insertion order (see evictOldest).
    this.current.delete(member);
    this.current.set(member, due);
    this.push(member, due);
    this.compactIfSparse();
  }

  remove(member: string): void {
    if (this.current.delete(member)) this.compactIfSparse();
  }

  /** Takes up to `limit` members due at or before `now`, earliest first, and reschedules each at `nextDueAt`. */
  claim(now: number, limit: number, nextDueAt: number): string[] {
    // MemoryStore makes a queue for its first member: the base is set.
    const [until, next] = [now - this.#base!, nextDueAt - this.#base!];
    const claimed: string[] = [];
    while (claimed.length < limit && this.members.length > 0) {
      const member = this.members[0]!;
      const dueAt = this.dues[0]!;
      if (this.current.get(member) !== dueAt) {
        this.pop();
        continue;
      }
      if (dueAt > until) break;
      this.pop();
      // Out of the index until rescheduled below: another heap item of the same due time (the
      // member scheduled twice at it) is stale now, never claimed a second time.
      this.current.delete(member);
      claimed.push(member);
    }
    for (const member of claimed) this.#put(member, next);
    return claimed;
  }

  private compactIfSparse(): void {
    if (this.members.length <= 2 * this.current.size + 64) return;
    const live = [...this.current].sort((a, b) => a[1] - b[1]);
    this.members = live.map(([member]) => member);
    this.dues = live.map(([, dueAt]) => dueAt);
  }

  private push(member: string, dueAt: number): void {
    const { members, dues } = this;
    let index = members.push(member) - 1;
    dues.push(dueAt);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (dues[parent]! <= dueAt) break;
      members[index] = members[parent]!;
      dues[index] = dues[parent]!;
      index = parent;
    }
    members[index] = member;
    dues[index] = dueAt;
  }

  private pop(): void {
    const { members, dues } = this;
    // Called on a heap that has an item.
    const lastMember = members.pop()!;
    const lastDue = dues.pop()!;
    if (members.length === 0) return;
    let index = 0;
    const length = members.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && dues[right]! < dues[left]! ? right : left;
      if (dues[child]! >= lastDue) break;
      members[index] = members[child]!;
      dues[index] = dues[child]!;
      index = child;
    }
    members[index] = lastMember;
    dues[index] = lastDue;
  }
}
