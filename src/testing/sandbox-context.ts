import type { SandboxClock } from './sandbox-clock.js';
import type { SandboxFaults } from './sandbox-faults.js';
import type { SandboxRequestCounts } from './sandbox-request-counts.js';
import type { SandboxScheduler } from './sandbox-scheduler.js';
import type { SandboxState } from './sandbox-state.js';
import type { SandboxWebhooks } from './sandbox-webhooks.js';
import type { ResolvedSandboxOptions } from './sandbox.options.js';

/** The parts of one sandbox instance that request handlers work with. */
export interface SandboxContext {
  options: ResolvedSandboxOptions;
  clock: SandboxClock;
  scheduler: SandboxScheduler;
  state: SandboxState;
  webhooks: SandboxWebhooks;
  faults: SandboxFaults;
  counts: SandboxRequestCounts;
  /** Moves the clock and processes everything due by then. */
  advance(ms: number): void;
}
