/**
 * The reconciler: dropped webhooks, instances and lifecycle, the spec's pace.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/reconciler/<part>.part.ts'`.
 */
import './dropped-webhooks.e2e.part.js';
import './instances-and-lifecycle.e2e.part.js';
import './spec-pace.e2e.part.js';
