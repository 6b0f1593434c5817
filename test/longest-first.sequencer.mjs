import TestSequencer from '@jest/test-sequencer';

/**
 * The suites that take longest, longest first. On two cores the run ends when its last file does, so the
 * files that compute most start first, with the ones that mostly wait (the soak's fixed traffic time, npm
 * installs, Chromium, real time-outs) beside them: jest orders by the durations it cached on the last run,
 * but on a fresh clone (CI) it runs the biggest files first, and a merged file is a few import lines.
 * Figures: one worker's CPU per file in a full run (`process.cpuUsage()` from its setup to its last test,
 * 2026-12-06, four workers on a loaded machine, so about 1.2× an idle run's).
 */
const LONGEST = [
  // 167 s: the method-health simulations, each on two shapes (Express with memory, Fastify with Redis).
  'test/attacks/figures-and-priors.merged.spec.ts',
  'test/hardening/soak.spec.ts',
  // Not long alone, but its heap measures collect the whole heap: they belong on a fresh worker, before
  // the modules of other files pile up there (one of the first four).
  'test/store/memory.store.spec.ts',
  // 70 s.
  'test/journeys/switches-and-learning.merged.spec.ts',
  // 38 s; then 26 s of CPU, 224 s on the clock (the in-doubt starts wait out real time-outs).
  'test/history/history.merged.spec.ts',
  'test/events/events.merged.spec.ts',
  // 34, 31, 25 and 25 s.
  'test/attacks/test-numbers.merged.spec.ts',
  'test/verified-phone/verified-phone.merged.spec.ts',
  'test/attacks/history.merged.spec.ts',
  'test/protection/start-rules.merged.spec.ts',
  'test/sample-app/verify-by-each-method.spec.ts',
  'test/hardening/fuzz-client-routes.spec.ts',
  'test/sample-app/page-behaviour.spec.ts',
  'test/api-client/api-client.merged.spec.ts',
  'test/package/built-package.e2e.spec.ts',
  'test/package/lowest-peers.e2e.spec.ts',
  'test/hardening/fuzz-webhook-route.spec.ts',
  'test/sample-app/waits-and-failures.spec.ts',
  'test/operations/optional-peers.spec.ts',
  'test/status-stream/status-stream.merged.spec.ts',
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
