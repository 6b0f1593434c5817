/**
 * Hardening without a wall-time bound: abuse of the limits, their properties, the upstream links.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/hardening/<part>.part.ts'`.
 */
import './abuse-limits.part.js';
import './abuse-properties.part.js';
import './upstream-links.e2e.part.js';
