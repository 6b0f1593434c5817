/**
 * The attacks on the verified-phone guard and the phone change.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/attacks/<part>.part.ts'`.
 */
import './guard-anonymous-meter-shared.e2e.part.js';
import './guard-recovery-unmetered.e2e.part.js';
import './guard-registrations-one-account.e2e.part.js';
import './phone-change-attacks.e2e.part.js';
import './phone-change-enumeration-retry.e2e.part.js';
import './phone-change-in-flight.e2e.part.js';
import './phone-change-stale-undo.e2e.part.js';
import './phone-change-two-instances.e2e.part.js';
