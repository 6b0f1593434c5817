import type { SandboxClock } from './sandbox-clock.js';

interface DueTask {
  at: number;
  seq: number;
  run: () => void;
}

/**
 * Work due at a point of the sandbox clock (TTL expiry, auto-delivery, operator results, webhook retries).
 * One queue for the whole sandbox instead of a timer per session: it is drained by `runDue`, which the
 * sandbox calls on every request, on every `advance`, and from a single unref'd interval as real time passes.
 */
export class SandboxScheduler {
  private readonly tasks: DueTask[] = [];
  private seq = 0;
  private running = false;

  constructor(private readonly clock: SandboxClock) {}

  /** Runs `run` once the sandbox clock reaches `at` (ms since the epoch). */
  at(at: number, run: () => void): void {
    const task: DueTask = { at, seq: this.seq++, run };
    // Binary insert keeps the queue ordered by (at, seq): due work runs in time order, ties in creation order.
    let lo = 0;
    let hi = this.tasks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.tasks[mid]!;
      if (t.at < at || (t.at === at && t.seq < task.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.tasks.splice(lo, 0, task);
  }

  /** Runs every task due by now, including tasks that due work itself schedules for no later than now. */
  runDue(): void {
    if (this.running) return; // a task that triggers runDue again must not re-enter the loop
    this.running = true;
    try {
      while (this.tasks.length > 0 && this.tasks[0]!.at <= this.clock.now()) {
        const task = this.tasks.shift()!;
        try {
          task.run();
        } catch (err) {
          // Due work must never take the sandbox down; a failing task is a sandbox bug worth seeing.
          console.error('sandbox: scheduled task failed:', err instanceof Error ? err.message : err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  clear(): void {
    this.tasks.length = 0;
  }
}
