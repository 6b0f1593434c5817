/**
 * The attacks on the test numbers (tells, ceilings, lockouts, spare slots).
 *
 * Whole suites (the parts below), merged into one spec file so that jest imports Nest, the module and the
 * sandbox once for all of them (CONTRIBUTING.md, "The suite's time budget"). One part alone:
 * `npx jest --testMatch '<rootDir>/test/attacks/<part>.part.ts'`.
 */
import './test-numbers-browser-resume-tell.e2e.part.js';
import './test-numbers-day-ceiling-lockout.e2e.part.js';
import './test-numbers-hard-ceiling-lockout.e2e.part.js';
import './test-numbers-many-networks-kept.e2e.part.js';
import './test-numbers-network-budget-neighbour.e2e.part.js';
import './test-numbers-never-delivered-tell.e2e.part.js';
import './test-numbers-open-flood.e2e.part.js';
import './test-numbers-overflow-slot-forced.e2e.part.js';
import './test-numbers-redis-spare-kept.e2e.part.js';
import './test-numbers-resend-tell.e2e.part.js';
import './test-numbers-session-attempts.e2e.part.js';
import './test-numbers-spare-slot-eviction.e2e.part.js';
import './test-numbers-spare-slot-race.e2e.part.js';
import './test-numbers-wrong-code-lockout.e2e.part.js';
