import { OldestFirst } from '../core/oldest-first.js';

/** One scheduling of a member; a member's current ticket is the one its index points to. */
interface Ticket {
  readonly member: string;
  readonly dueAt: number;
}

/**
 * An in-memory due-queue: members with a due time, taken in due order. A binary min-heap with
 * lazy deletion gives O(log n) schedule and O(k log n) claim of k members; rescheduling or
 * removing a member only replaces its ticket in the index, and the stale ticket left in the heap
 * is dropped when it surfaces (or when the heap is compacted, so it stays below twice the size).
 */
export class DueQueue {
  private readonly current = new Map<string, Ticket>();
  readonly #oldest = new OldestFirst(this.current);
  private heap: Ticket[] = [];

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
    const ticket: Ticket = { member, dueAt };
    // Deleting first moves the member to the end of the index's insertion order (see evictOldest).
    this.current.delete(member);
    this.current.set(member, ticket);
    this.push(ticket);
    this.compactIfSparse();
  }

  remove(member: string): void {
    if (this.current.delete(member)) this.compactIfSparse();
  }

  /** Takes up to `limit` members due at or before `now`, earliest first, and reschedules each at `nextDueAt`. */
  claim(now: number, limit: number, nextDueAt: number): string[] {
    const claimed: string[] = [];
    while (claimed.length < limit && this.heap.length > 0) {
      const top = this.heap[0];
      if (this.current.get(top.member) !== top) {
        this.pop();
        continue;
      }
      if (top.dueAt > now) break;
      this.pop();
      claimed.push(top.member);
    }
    for (const member of claimed) this.schedule(member, nextDueAt);
    return claimed;
  }

  private compactIfSparse(): void {
    if (this.heap.length <= 2 * this.current.size + 64) return;
    this.heap = [...this.current.values()].sort((a, b) => a.dueAt - b.dueAt);
  }

  private push(ticket: Ticket): void {
    const heap = this.heap;
    let index = heap.push(ticket) - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent].dueAt <= ticket.dueAt) break;
      heap[index] = heap[parent];
      index = parent;
    }
    heap[index] = ticket;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let index = 0;
    const length = heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && heap[right].dueAt < heap[left].dueAt ? right : left;
      if (heap[child].dueAt >= last.dueAt) break;
      heap[index] = heap[child];
      index = child;
    }
    heap[index] = last;
  }
}
