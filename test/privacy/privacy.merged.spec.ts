/**
 * Privacy: erasure (callers, in doubt, in flight) and the store's dump.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/privacy/<part>.part.ts'`.
 */
import './dump-addresses.e2e.part.js';
import './erasure-callers.e2e.part.js';
import './erasure-claim-lifetime.e2e.part.js';
import './erasure-in-doubt.e2e.part.js';
import './erasure-in-flight.e2e.part.js';
import './erasure-mark-bound.e2e.part.js';
import './erasure-refused-start-slot.e2e.part.js';
import './erasure-report.e2e.part.js';
import './erasure-test-number.e2e.part.js';
import './erasure-wrong-code-budget.e2e.part.js';
import './erasure.e2e.part.js';
import './store-dump.e2e.part.js';
