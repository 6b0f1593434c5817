/**
 * The verified-phone guard: answers, bounds, reads, registrations, the rebuild's meter and reserve.
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/verified-phone/<part>.part.ts'`.
 */
import './guard-answers.e2e.part.js';
import './guard-bounds.e2e.part.js';
import './guard-rebuild-reserve.e2e.part.js';
import './rebuild-meter-bounds.e2e.part.js';
import './verified-phone-guard.e2e.part.js';
import './guard-reads.e2e.part.js';
import './guard-registrations.e2e.part.js';
