/**
 * The status stream across instances, and its subscriber's recovery.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/multi-instance/<part>.part.ts'`.
 */
import './status-stream.e2e.part.js';
import './subscriber-recovery.e2e.part.js';
