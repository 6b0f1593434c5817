import TestSequencer from '@jest/test-sequencer';

/**
 * The suites that take longest, longest first (measured; the soak far ahead of the rest).
 * Two workers finish together only when these start early: jest orders by the durations it cached on
 * the last run, but on a fresh clone, or for a file it has not timed yet, it runs the biggest files
 * first, which would start the soak last and leave one worker alone with it at the end.
 */
const LONGEST = [
  'test/hardening/soak.spec.ts',
  // Not long alone, but its heap measures collect the whole heap: they belong on a fresh worker, before
  // the modules of other files pile up there.
  'test/store/memory.store.spec.ts',
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
