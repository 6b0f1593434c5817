/**
 * Hardening: abuse limits and properties, fuzzed bodies and status streams, upstream faults and links.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/hardening/<part>.part.ts'`.
 */
import './abuse-limits.part.js';
import './abuse-properties.part.js';
import './fuzz-body-rules.part.js';
import './fuzz-status-stream.part.js';
import './upstream-faults.part.js';
import './upstream-links.e2e.part.js';
