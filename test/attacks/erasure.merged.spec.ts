/**
 * The attacks around erasure.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/attacks/<part>.part.ts'`.
 */
import './erasure-counter-slot-in-flight.part.js';
import './erasure-drops-phone-change-revocation.e2e.part.js';
import './erasure-in-doubt-adopted-during.part.js';
import './erasure-in-doubt-two-starts.part.js';
import './erasure-index-midnight-skew.part.js';
import './erasure-owner-derived-keys.e2e.part.js';
import './erasure-purpose-claim-outlives-mark.e2e.part.js';
import './erasure-record-lands-before-mark.part.js';
import './erasure-resets-address-limits.e2e.part.js';
import './erasure-slot-outlived-by-record.part.js';
import './erasure-slot-taken-after-erasure.part.js';
import './erasure-start-in-flight.e2e.part.js';
import './erasure-in-doubt-forgotten-session.e2e.part.js';
import './in-doubt-remembered-together.part.js';
import './in-doubt-two-owners-one-number.e2e.part.js';
import './in-doubt-one-session-twice.part.js';
