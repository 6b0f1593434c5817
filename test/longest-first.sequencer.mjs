import TestSequencer from '@jest/test-sequencer';

/**
 * The suites that take longest, longest first: on two cores the run ends when its last file does. A suite's
 * time is on the clock, whether it computes (the method-health simulations) or waits (Redis restarts and
 * cluster fail-overs, the in-doubt starts' real time-outs, the soak's fixed traffic time, npm installs,
 * Chromium); one that mostly waits takes little from the files beside it. jest orders by the durations it
 * cached on the last run, but on a fresh clone (CI) it runs the biggest files first, and a merged file is a
 * few import lines. Figures: each file's wall time in `npm test` on an idle 2-core machine, four workers
 * (e6a62e6a, 2026-12-07), where test/store's merged file, started 310 s in, ended the run at 472 s.
 */
const LONGEST = [
  // 202 s and 162 s (test/store: 21 s of CPU).
  'test/attacks/figures-and-priors.merged.spec.ts',
  'test/store/store.merged.spec.ts',
  // 134 s.
  'test/events/events.merged.spec.ts',
  // Not long alone, but its heap measures collect the whole heap: they belong on a fresh worker, before
  // the modules of other files pile up there (one of the first four).
  'test/store/memory.store.spec.ts',
  // 68, 56, 42, 41, 40, 38 and 34 s.
  'test/journeys/switches-and-learning.merged.spec.ts',
  'test/hardening/soak.spec.ts',
  'test/history/history.merged.spec.ts',
  'test/privacy/privacy.merged.spec.ts',
  'test/status-stream/status-stream.merged.spec.ts',
  'test/api-client/api-client.merged.spec.ts',
  'test/element/phone-verification.e2e.spec.ts',
  // 30 s down to 20 s.
  'test/attacks/routes-meters-money.merged.spec.ts',
  'test/protection/abuse.merged.spec.ts',
  'test/package/lowest-peers.e2e.spec.ts',
  'test/test-numbers/test-numbers.merged.spec.ts',
  'test/protection/pumping.merged.spec.ts',
  'test/attacks/erasure.merged.spec.ts',
  'test/attacks/test-numbers.merged.spec.ts',
  'test/multi-instance/instances.merged.spec.ts',
  'test/sample-app/verify-by-each-method.spec.ts',
  'test/protection/start-rules.merged.spec.ts',
  'test/package/built-package.e2e.spec.ts',
  // 19 s down to 15 s.
  'test/sample-app/waits-and-failures.spec.ts',
  'test/attacks/history.merged.spec.ts',
  'test/hardening/fuzz-client-routes.spec.ts',
  'test/operations/close-leaves-nothing-running.e2e.spec.ts',
  'test/verified-phone/verified-phone.merged.spec.ts',
  'test/webhooks/webhooks.merged.spec.ts',
  'test/sample-app/page-behaviour.spec.ts',
  'test/hardening/fuzz-webhook-route.spec.ts',
];

/**
 * Then the merged spec files (test/merged-parts.mjs), each several suites long: on a fresh clone jest would
 * order them by their own size, a few import lines, and start them last.
 */
const rank = (path) => {
  const index = LONGEST.findIndex((suffix) => path.endsWith(suffix));
  if (index !== -1) return index;
  return path.endsWith('.merged.spec.ts') ? LONGEST.length : LONGEST.length + 1;
};

/** Jest's own order (failed first, then longest last time), with the suites above ahead of it. */
export default class LongestFirstSequencer extends (TestSequencer.default ?? TestSequencer) {
  sort(tests) {
    const ordered = super.sort(tests);
    // Array.prototype.sort is stable: the other suites keep jest's order.
    return [...ordered].sort((a, b) => rank(a.path) - rank(b.path));
  }
}
