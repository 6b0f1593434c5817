/**
 * The spend cap and the store's round trips, floods and timing.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/protection/<part>.part.ts'`.
 */
import './sequential-round-trips.e2e.part.js';
import './refused-reservation.e2e.part.js';
import './shares-together.e2e.part.js';
import './spend-cap-accounts.e2e.part.js';
import './spend-cap-end-store-failure.e2e.part.js';
import './spend-cap-journeys.e2e.part.js';
import './spend-cap-lost-record.e2e.part.js';
import './spend-cap-usage.e2e.part.js';
import './spend-cap.e2e.part.js';
import './store-flooding.e2e.part.js';
import './store-round-trips.e2e.part.js';
import './timing-disclosure.e2e.part.js';
import './upstream-back-off-bound.e2e.part.js';
